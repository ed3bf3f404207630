package cli

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
	"path/filepath"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/fioserver"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
	"iolab/db"
	"iolab/handlers"
)

var serveCommand = command{
	name:    "serve",
	summary: "the dashboard: launch and watch runs, charts, compare, CSV, a JSON API (the default)",
	usage:   "[flags]",
	about: `The dashboard serves the run store the other commands use. Launching, cancelling and deleting
runs and adding agents need the token, on every address, 127.0.0.1 (the default) included: --token,
or one generated and printed at start, given at /login or as Authorization: Bearer TOKEN. Reading is
open unless --read-token. --no-token opens a loopback dashboard to anyone on the machine, and says so
at start. Web runs may use only the targets of --allow-target and the files under --data-dir. Other hosts run plans too, from the Hosts page: iolab agents (iolab
agent, each with its own token) and fio servers on the addresses of --fio-allow.`,
	flags: func(fs *flag.FlagSet) runFunc {
		var o serveOptions
		fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "the `ADDRESS` to listen on")
		fs.Var((*storePath)(&o.dbPath), "db", storePathUsage)
		fs.StringVar(&o.token, "token", "", "the `TOKEN` for launching, cancelling and deleting (default $IOLAB_TOKEN, else generated and printed at start)")
		fs.BoolVar(&o.readToken, "read-token", false, "require the token for reading too")
		fs.BoolVar(&o.noToken, "no-token", false, "no token on a loopback address: anyone on this machine may launch, cancel and delete runs")
		fs.StringVar(&o.dataDir, "data-dir", "", "the `DIR` whose files web runs may make and use as targets: a directory of yours alone (mode 0700), never a system one (default: data/ beside the store, made 0700; an old 0755 one is tightened)")
		fs.Var(&o.allow, "allow-target", "a device or file web runs may use, by its `PATH` (repeatable)")
		fs.Var(&o.fioAllow, "fio-allow", "the addresses fio servers may have, a `PREFIX` or address such as 10.0.0.0/24 (repeatable; none: no fio server)")
		limitFlags(fs, &o.limits)
		quotaFlags(fs, &o.quota)
		fs.StringVar(&o.pprof, "pprof", "", "serve Go's profiler (net/http/pprof) on this loopback `ADDRESS`")
		memoryFlags(fs, &o.memory)
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return e.usage()
			}
			return serve(ctx, &o, e.runner, e.stdout, e.logger)
		}
	},
}

// serveOptions are `iolab serve`'s flags.
type serveOptions struct {
	listen, dbPath, token, dataDir string
	pprof                          string
	memory                         serveMemory
	readToken, noToken             bool
	allow, fioAllow                stringList
	limits                         sweep.Limits
	quota                          launch.Quota
}

// quotaFlags are serve's and agent's flags for the data directory's
// quota (launch.Quota).
func quotaFlags(fs *flag.FlagSet, q *launch.Quota) {
	d := launch.DefaultQuota()
	*q = d
	size := func(name string, to *int64, usage string) {
		fs.Func(name, fmt.Sprintf(usage+" (default %s)", units.FormatSize(*to)), func(v string) error {
			n, err := units.ParseSize(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("--%s %q: a size such as 64g", name, v)
			}
			*to = n
			return nil
		})
	}
	size("data-max-size", &q.Bytes, "the most `SIZE` the data directory may hold: a run that would take it past is refused before anything is written (at launch, and again as it starts)")
	fs.IntVar(&q.Files, "data-max-files", d.Files, "the most files (`N`) the data directory may hold, checked as --data-max-size is")
	size("run-max-size", &q.RunBytes, "the most `SIZE` one run may lay out or add in the data directory (its files at their size= or top filesize, over numjobs and the sweep's steps)")
	fs.IntVar(&q.RunFiles, "run-max-files", d.RunFiles, "the most files (`N`) one run may make in the data directory (nrfiles × numjobs)")
}

// serve starts the dashboard: the HTTP server over the same store the CLI
// uses; on SIGINT/SIGTERM it shuts down in order — HTTP server, the running
// plan (its step cancelled, its scheduler restored, the run marked
// cancelled), the store.
func serve(ctx context.Context, o *serveOptions, runner *bench.Runner, stdout io.Writer, logger *slog.Logger) error {
	dbPath := o.dbPath
	if dbPath == "" {
		var err error
		if dbPath, err = db.DefaultPath(); err != nil {
			return err
		}
	}
	// The data directory is checked before anything starts: a web run
	// may write any file in it.
	var err error
	if o.dataDir == "" {
		o.dataDir, err = launch.DefaultDataDir(filepath.Join(filepath.Dir(dbPath), "data"), logger, dbPath)
	} else {
		o.dataDir, err = launch.CheckDataDir(o.dataDir, dbPath)
	}
	if err != nil {
		return err
	}
	store, err := openStore(ctx, dbPath, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	go launch.KeepRecovering(ctx, store, system.FS{}, logger, 2*time.Second)
	generated, err := o.checkToken()
	if err != nil {
		return err
	}
	fioAllow, err := fioserver.ParseAllowList(o.fioAllow...)
	if err != nil {
		return usageError{"--fio-allow: " + err.Error()}
	}
	o.memory.apply()
	srv, err := handlers.New(handlers.Config{
		Store: store, Runner: runner, Token: o.token, RequireToken: !o.noToken, ReadNeedsToken: o.readToken,
		AllowTargets: o.allow, DataDir: o.dataDir, Quota: o.quota, Logger: logger, Limits: o.limits, Listen: o.listen,
		Fleet: handlers.FleetConfig{FioAllow: fioAllow},
		HTTP:  handlers.HTTPLimits{CacheBytes: o.memory.cache},
	})
	if err != nil {
		return err
	}
	if o.pprof != "" {
		stop, err := servePprof(o.pprof, stdout, logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	hs := srv.HTTPServer()
	targets := "files under " + o.dataDir
	if len(o.allow) > 0 {
		targets = strings.Join(o.allow, ", ") + " and " + targets
	}
	fleetNote := ""
	if !fioAllow.Empty() {
		fleetNote = ", fio servers on " + fioAllow.String()
	}
	fmt.Fprintf(stdout, "iolab dashboard on http://%s/ (store %s, web targets: %s%s)\n", ln.Addr(), store.Path(), targets, fleetNote)
	fmt.Fprintln(stdout, o.accessNote(ln.Addr().String(), generated))
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

// checkToken settles what protects the dashboard: the --token given (or
// $IOLAB_TOKEN, which iolab run --push and iolab push send too), a
// generated one (generated true), or, with --no-token on a loopback
// address only, nothing. A token is never dropped for the address it
// listens on: on 127.0.0.1 every user of the machine is a client.
func (o *serveOptions) checkToken() (generated bool, err error) {
	if !o.noToken {
		o.token = envDefault(o.token, "IOLAB_TOKEN")
	}
	if o.noToken {
		switch {
		case o.token != "":
			return false, usageError{"--no-token and --token: give one of them"}
		case o.readToken:
			return false, usageError{"--no-token and --read-token: reading cannot need a token there is not"}
		case !handlers.IsLoopback(o.listen):
			return false, usageError{fmt.Sprintf("--no-token on --listen %s: an address other machines reach needs a token (drop --no-token, one is generated)", o.listen)}
		}
		return false, nil
	}
	if o.token != "" {
		return false, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return false, err
	}
	o.token = hex.EncodeToString(b)
	return true, nil
}

// accessNote is the line that says at start what protects the dashboard
// listening on addr.
func (o *serveOptions) accessNote(addr string, generated bool) string {
	if o.noToken {
		return "no token (--no-token): anyone on this machine can launch, cancel and delete runs and add agents"
	}
	reading := "reading is open to anyone who reaches " + addr
	if handlers.IsLoopback(addr) {
		reading = "reading is open to anyone on this machine"
	}
	if o.readToken {
		reading = "reading needs it too"
	}
	token := "the token given (--token or $IOLAB_TOKEN)"
	if generated {
		token = "this token: " + o.token
	}
	return fmt.Sprintf("launching, cancelling, deleting and adding agents need %s (log in at http://%s/login, or send Authorization: Bearer TOKEN); %s", token, addr, reading)
}
