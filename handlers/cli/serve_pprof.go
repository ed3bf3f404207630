package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"iolab/handlers"
)

// servePprof serves Go's profiler (net/http/pprof) on addr, a loopback
// address only: profiles show what the server is doing, and a CPU
// profile costs it time. It returns a func that closes the listener.
func servePprof(addr string, stdout io.Writer, logger *slog.Logger) (func() error, error) {
	if !handlers.IsLoopback(addr) {
		return nil, fmt.Errorf("--pprof %s: give a loopback address (127.0.0.1:PORT)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	fmt.Fprintf(stdout, "profiler on http://%s/debug/pprof/\n", ln.Addr())
	go func() {
		if err := http.Serve(ln, mux); err != nil && !errors.Is(err, net.ErrClosed) {
			logger.Warn("profiler stopped", "err", err)
		}
	}()
	return ln.Close, nil
}
