package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/db/launch"
	"iolab/handlers"
)

// serve starts the dashboard: the HTTP server over the same store the CLI
// uses; on SIGINT/SIGTERM it shuts down in order — HTTP server, the running
// plan (its step cancelled, its scheduler restored, the run marked
// cancelled), the store.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on")
	dbPath := dbFlag(fs)
	token := fs.String("token", "", "token for launching, cancelling and deleting (default: generated when not on loopback)")
	readToken := fs.Bool("read-token", false, "require the token for reading too")
	dataDir := fs.String("data-dir", "", "directory whose files web runs may use as targets (default: next to the store)")
	var allow stringList
	fs.Var(&allow, "allow-target", "a device or file web runs may use (repeatable)")
	var limits sweep.Limits
	limitFlags(fs, &limits)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	runner := &bench.Runner{Sys: system.FS{}, Log: logger}
	store, err := openStore(ctx, *dbPath, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	go launch.KeepRecovering(ctx, store, system.FS{}, logger, 2*time.Second)
	if *dataDir == "" {
		path := *dbPath
		if path == "" {
			if path, err = db.DefaultPath(); err != nil {
				return err
			}
		}
		*dataDir = filepath.Join(filepath.Dir(path), "data")
	}
	if err := os.MkdirAll(*dataDir, 0o755); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	loopback := handlers.IsLoopback(*listen)
	if *token == "" && !loopback {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		*token = hex.EncodeToString(b)
		fmt.Fprintf(stdout, "token for launching, cancelling and deleting: %s\n", *token)
	}
	srv, err := handlers.New(handlers.Config{
		Store: store, Runner: runner, Token: *token, RequireToken: !loopback, ReadNeedsToken: *readToken,
		AllowTargets: allow, DataDir: *dataDir, Logger: logger, Limits: limits, Listen: *listen,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", *listen, err)
	}
	hs := srv.HTTPServer()
	fmt.Fprintf(stdout, "iolab dashboard on http://%s/ (store %s, web targets: %s and files under %s)\n",
		ln.Addr(), store.Path(), strings.Join(allow, ", "), *dataDir)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(srv.Listener(ln)) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return errors.Join(hs.Shutdown(shutdown), srv.Shutdown(shutdown))
}
