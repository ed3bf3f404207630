package fioserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
)

// Runner runs jobs on fio servers with this machine's fio client. Its
// zero value allows no server: set Allow.
type Runner struct {
	// Fio is the fio binary; "" finds fio in PATH.
	Fio string
	// Allow holds the addresses fio servers may have.
	Allow AllowList
	// ProbeTimeout is how long a server has to answer the probe; 0: 10 s.
	ProbeTimeout time.Duration
	// KillGrace is how long fio's client has, once cancelled, to stop its
	// server's jobs before it is killed; 0: 5 s.
	KillGrace time.Duration
	// ProgressEvery is how often a running host's progress is reported;
	// 0: 1 s.
	ProgressEvery time.Duration
}

// Phase is where a host is in a run.
type Phase string

// A host's phases, in order; it ends in one of the last three.
const (
	PhaseProbing   Phase = "probing"
	PhaseRunning   Phase = "running"
	PhaseDone      Phase = "done"
	PhaseFailed    Phase = "failed"
	PhaseCancelled Phase = "cancelled"
)

// Progress is one host's progress.
type Progress struct {
	Host  string // Host.Name (its address when it has none)
	Phase Phase
	// Elapsed is the time since the host's jobs started (0 before).
	Elapsed time.Duration
	// Percent is the share of the run done: fio's own while it runs
	// (FromFio), else estimated from the jobs' ramp_time and runtime when
	// every job is time_based; -1 when it cannot be told.
	Percent float64
	// IOPS is the host's jobs' IOPS added up, every direction: while it
	// runs, fio's own figure of the last second (FromFio); once it is
	// done, from its results; 0 before fio has said.
	IOPS float64
	// FromFio: Percent and IOPS are what the server said of its running
	// jobs (Status), not an estimate.
	FromFio bool
	Err     error // the host's error, when it failed or was cancelled
}

// HostResult is one host's part of a run.
type HostResult struct {
	Host Host
	// Addr is what fio's client was given; invalid when the host was
	// refused before that.
	Addr netip.AddrPort
	Info HostInfo // what the server said of itself; zero if it did not answer
	// Import is the host's results through iolab's fio import: one step
	// (its jobs as the server ran them, per job, never added to another
	// host's), Result.Host.Hostname the server's own hostname. It may be
	// set with Err when fio printed results for jobs that then failed.
	Import *fio.FioImport
	// Messages are what the server said ("<fleet-a> …") and what fio's
	// client said of it ("client <10.0.0.2>: exited with error 1").
	Messages []string
	// Notes say what the caller should know, e.g. that the server runs
	// another fio release.
	Notes      []string
	Start, End time.Time // the jobs' run on this host (zero if they did not start)
	Err        error     // *HostError; nil when the host ran its jobs
}

// prepared is a run checked and ready.
type prepared struct {
	addrs   []netip.AddrPort
	jobText string
	errs    []error // per host, nil when it may run
}

// Check says, before anything starts, whether cfg may run on hosts: every
// address on the allow-list (names resolved), a job file whose every
// target is one the host allows and no option of which reaches beyond
// them (checkJobFile), no server given twice, and jobs a fio job file can say. It
// contacts no server. The error joins every problem found.
func (r *Runner) Check(ctx context.Context, hosts []Host, cfg *bench.Config) error {
	p, err := r.prepare(ctx, hosts, cfg)
	if err != nil {
		return err
	}
	return errors.Join(p.errs...)
}

func (r *Runner) prepare(ctx context.Context, hosts []Host, cfg *bench.Config) (*prepared, error) {
	if len(hosts) == 0 {
		return nil, errors.New("fleet: no hosts")
	}
	if r.Fio == "" {
		if _, err := exec.LookPath("fio"); err != nil {
			return nil, errNoFio
		}
	}
	sent, err := noCreateOnDevices(cfg)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	text, err := fio.FormatJobFile(sent)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	p := &prepared{addrs: make([]netip.AddrPort, len(hosts)), jobText: text, errs: make([]error, len(hosts))}
	seen := map[netip.AddrPort]string{}
	for i, h := range hosts {
		addr, err := h.resolve(ctx, r.Allow)
		if err == nil {
			err = checkJobFile(h, text)
		}
		if err == nil {
			if other, dup := seen[addr]; dup {
				err = hostError(h, addr.String(), ErrNotAllowed, "the same fio server as "+other, nil)
			}
			seen[addr] = h.label()
		}
		if he, ok := errors.AsType[*HostError](err); ok && he.Addr == "" && addr.IsValid() {
			he.Addr = addr.String()
		}
		p.addrs[i], p.errs[i] = addr, err
	}
	return p, nil
}

// Run runs cfg (one step's jobs) on every host with fio's client and
// returns each host's result, in the order of hosts (see the package doc
// for how). Nothing starts when Check fails. Each host is probed first;
// the hosts that answered and took the jobs then start together. progress,
// if not nil, is called with each host's progress, one call at a time.
// The error joins the hosts' errors (*HostError, each naming its host);
// the results of the hosts that ran are kept whatever happened to the
// others. Cancelling ctx stops every host's jobs.
func (r *Runner) Run(ctx context.Context, hosts []Host, cfg *bench.Config, progress func(Progress)) ([]HostResult, error) {
	p, err := r.prepare(ctx, hosts, cfg)
	if err != nil {
		return nil, err
	}
	results := make([]HostResult, len(hosts))
	for i := range hosts {
		results[i].Host, results[i].Addr = hosts[i], p.addrs[i]
	}
	if err := errors.Join(p.errs...); err != nil {
		for i := range results {
			results[i].Err = p.errs[i]
		}
		return results, err
	}
	dir, err := os.MkdirTemp("", "iolab-fleet-")
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	defer os.RemoveAll(dir)
	jobFile := filepath.Join(dir, "jobs.fio")
	if err := os.WriteFile(jobFile, []byte(p.jobText), 0o600); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	rep := &reporter{fn: progress}
	expected := expectedRuntime(cfg)

	var (
		wg       sync.WaitGroup
		localFio string
	)
	wg.Go(func() { localFio = r.version(ctx) })
	for i := range results {
		res := &results[i]
		rep.report(Progress{Host: res.Host.label(), Phase: PhaseProbing, Percent: -1})
		wg.Go(func() {
			pr := r.probe(ctx, res.Host, res.Addr, jobFile)
			res.Info, res.Messages, res.Err = pr.info, pr.messages, pr.err
		})
	}
	wg.Wait()
	for i := range results {
		res := &results[i]
		if res.Err != nil {
			rep.report(endProgress(res, expected))
			continue
		}
		if localFio != "" && res.Info.FioVersion != "" && res.Info.FioVersion != localFio {
			res.Notes = append(res.Notes, fmt.Sprintf("the server runs %s, this machine's client %s: fio checks only that they speak one protocol version", res.Info.FioVersion, localFio))
		}
		wg.Go(func() {
			r.runHost(ctx, res, jobFile, expected, rep)
			rep.report(endProgress(res, expected))
		})
	}
	wg.Wait()
	var errs []error
	for i := range results {
		if results[i].Err != nil {
			errs = append(errs, results[i].Err)
		}
	}
	return results, errors.Join(errs...)
}

// runHost runs the jobs on one host and fills in its result.
func (r *Runner) runHost(ctx context.Context, res *HostResult, jobFile string, expected time.Duration, rep *reporter) {
	label, addr := res.Host.label(), res.Addr.String()
	fail := func(kind error, msg string, err error) {
		res.Err = hostError(res.Host, addr, kind, msg, err)
	}
	res.Start = time.Now()
	// fio's own status of the jobs, read on its way to the client: the
	// progress reports carry it from its first answer on.
	var (
		mu     sync.Mutex
		status *Status
		ended  bool
	)
	target, args := res.Addr, []string{"--output-format=json+"}
	relay, rerr := newStatusRelay(res.Addr, func(s Status) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		status = &s
		rep.report(runningProgress(label, time.Since(res.Start), expected, status))
	})
	if rerr == nil {
		defer relay.Close()
		target, args = relay.Addr(), append(args, "--eta=always") // --eta: the client asks for the status
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(r.progressEvery())
		defer tick.Stop()
		rep.report(Progress{Host: label, Phase: PhaseRunning, Percent: percent(0, expected)})
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				mu.Lock()
				if status == nil {
					rep.report(runningProgress(label, now.Sub(res.Start), expected, nil))
				}
				mu.Unlock()
			}
		}
	}()
	var stdout, stderr bytes.Buffer
	err := r.fio(ctx, &stdout, &stderr, append([]string{clientArg(target)}, append(args, jobFile)...)...)
	close(done)
	<-stopped // no running report after the end's
	mu.Lock()
	ended = true
	mu.Unlock()
	res.End = time.Now()
	if target != res.Addr {
		// fio's client named the relay: its messages and results name the server.
		stdout = *bytes.NewBuffer(bytes.ReplaceAll(stdout.Bytes(), []byte("<"+target.Addr().String()+">"), []byte("<"+res.Addr.Addr().String()+">")))
	}
	if ctx.Err() != nil {
		fail(ctx.Err(), "cancelled: fio's client told the server to stop the jobs", nil)
		return
	}
	res.Messages = append(res.Messages, fio.ClientMessages(stdout.Bytes())...)
	imps, perr := fio.ParseFioHosts(stdout.Bytes())
	switch {
	case perr != nil && bytes.Contains(stdout.Bytes(), []byte(`"client_stats"`)):
		fail(ErrRefused, "fio printed no results: "+oneLine(strings.Join(res.Messages, "\n")+"\n"+stderr.String()), nil)
		return
	case perr != nil:
		fail(ErrFailed, oneLine(stderr.String()+"\n"+strings.Join(res.Messages, "\n")), perr)
		return
	case len(imps) != 1:
		fail(ErrFailed, fmt.Sprintf("fio's client printed the results of %d servers, want this one's", len(imps)), nil)
		return
	}
	imp := imps[0]
	if target != res.Addr && imp.Server != nil && imp.Server.Hostname == target.Addr().String() && imp.Server.Port == int(target.Port()) {
		imp.Server = &fio.Server{Hostname: res.Addr.Addr().String(), Port: int(res.Addr.Port())}
	}
	if imp.Server == nil || imp.Server.Hostname != res.Addr.Addr().String() {
		res.Notes = append(res.Notes, fmt.Sprintf("fio's client output names the server %v, not %s", imp.Server, res.Addr.Addr()))
	}
	if res.Info.Hostname != "" {
		imp.Result.Host.Hostname = res.Info.Hostname
	}
	res.Import = imp
	var exited []string
	for _, m := range res.Messages {
		if strings.HasPrefix(m, "client <") && strings.Contains(m, "exited with error") {
			exited = append(exited, m)
		}
	}
	if len(exited) > 0 || err != nil {
		fail(ErrFailed, oneLine(strings.Join(res.Messages, "\n")+"\n"+stderr.String()), err)
	}
}

// fio runs this machine's fio with args, stdout and stderr to the
// buffers. Cancelling ctx sends it SIGINT (fio's client then stops its
// server's jobs); after KillGrace it is killed.
func (r *Runner) fio(ctx context.Context, stdout, stderr io.Writer, args ...string) error {
	bin := r.Fio
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("fio"); err != nil {
			return errNoFio
		}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = r.killGrace()
	return cmd.Run()
}

// version is this machine's fio version ("fio-3.33"), "" if unknown.
func (r *Runner) version(ctx context.Context) string {
	var out bytes.Buffer
	if r.fio(ctx, &out, io.Discard, "--version") != nil {
		return ""
	}
	return strings.TrimSpace(out.String())
}

func (r *Runner) killGrace() time.Duration {
	if r.KillGrace > 0 {
		return r.KillGrace
	}
	return 5 * time.Second
}

func (r *Runner) progressEvery() time.Duration {
	if r.ProgressEvery > 0 {
		return r.ProgressEvery
	}
	return time.Second
}

// expectedRuntime is how long cfg's jobs run when every job is
// time_based: the steps one after the other (a group that waits starts
// one), each as long as its longest ramp_time + runtime; 0 when a job is
// not time_based.
func expectedRuntime(cfg *bench.Config) time.Duration {
	var total, step time.Duration
	for gi, g := range cfg.Groups {
		if gi > 0 && g.Wait {
			total, step = total+step, 0
		}
		for _, j := range g.Jobs {
			if !j.TimeBased || j.Runtime <= 0 {
				return 0
			}
			step = max(step, j.RampTime+j.Runtime)
		}
	}
	return total + step
}

// percent estimates the share done after el of expected; -1 when
// expected is unknown. It stays below 100 until the host is done.
func percent(el, expected time.Duration) float64 {
	if expected <= 0 {
		return -1
	}
	return min(99, 100*el.Seconds()/expected.Seconds())
}

// runningProgress is a running host's progress after el: fio's status
// when it has said one, else the estimate.
func runningProgress(label string, el, expected time.Duration, s *Status) Progress {
	p := Progress{Host: label, Phase: PhaseRunning, Elapsed: el, Percent: percent(el, expected)}
	if s != nil {
		// fio's share, 0 as fio's own line says while it cannot tell
		// (its jobs setting up): never the estimate beside it.
		p.FromFio, p.IOPS, p.Percent = true, s.TotalIOPS(), min(99, s.Percent())
	}
	return p
}

// endProgress is a host's last progress.
func endProgress(res *HostResult, expected time.Duration) Progress {
	p := Progress{Host: res.Host.label(), Phase: PhaseDone, Percent: 100, Err: res.Err}
	if !res.Start.IsZero() {
		p.Elapsed = res.End.Sub(res.Start)
	}
	switch {
	case res.Err != nil && (errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded)):
		p.Phase, p.Percent = PhaseCancelled, percent(p.Elapsed, expected)
	case res.Err != nil:
		p.Phase, p.Percent = PhaseFailed, percent(p.Elapsed, expected)
	}
	if res.Import != nil {
		iops, _ := res.Import.Result.Totals()
		p.IOPS = iops
	}
	return p
}

// reporter calls the progress function one call at a time.
type reporter struct {
	mu sync.Mutex
	fn func(Progress)
}

func (r *reporter) report(p Progress) {
	if r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fn(p)
}
