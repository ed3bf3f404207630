package fioserver_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/fioserver"
	"iolab/bench/fioserver/fleettest"
)

// server is a namespace host running fio's server.
type server struct {
	ns   *fleettest.Host
	proc *fleettest.Process
	host fioserver.Host
}

func servers(t *testing.T, names ...string) []server {
	t.Helper()
	out := make([]server, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		h := fleettest.NewHost(t, name)
		out[i] = server{ns: h, host: fioserver.Host{Name: name, Addr: h.Addr.String(), AllowTargets: []string{fleettest.DataDir + "/data"}}}
		wg.Go(func() { out[i].proc = h.FioServer(t, fleettest.DefaultFioPort) })
	}
	wg.Wait()
	return out
}

func hosts(s []server) []fioserver.Host {
	out := make([]fioserver.Host, len(s))
	for i := range s {
		out[i] = s[i].host
	}
	return out
}

func runner(t *testing.T, extra ...string) *fioserver.Runner {
	t.Helper()
	allow, err := fioserver.ParseAllowList(append([]string{fleettest.Range.String()}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &fioserver.Runner{Allow: allow, ProbeTimeout: 10 * time.Second, ProgressEvery: 200 * time.Millisecond}
}

// randread is a small random read of a file each host has its own of.
func randread(t *testing.T, runtime string) *bench.Config {
	t.Helper()
	cfg, err := fio.ParseArgs([]string{"--name=reader", "--filename=" + fleettest.DataDir + "/data", "--rw=randread",
		"--bs=4k", "--size=4m", "--ioengine=psync", "--runtime=" + runtime, "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// progressLog keeps every progress report.
type progressLog struct {
	mu  sync.Mutex
	all []fioserver.Progress
}

func (l *progressLog) add(p fioserver.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, p)
}

func (l *progressLog) of(host string) []fioserver.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []fioserver.Progress
	for _, p := range l.all {
		if p.Host == host {
			out = append(out, p)
		}
	}
	return out
}

func (l *progressLog) last(host string) fioserver.Progress {
	ps := l.of(host)
	if len(ps) == 0 {
		return fioserver.Progress{}
	}
	return ps[len(ps)-1]
}

// TestRun: one job on two hosts, each host's results imported apart with
// its own hostname, progress reported.
func TestRun(t *testing.T) {
	t.Parallel() // each test has hosts of its own
	srv := servers(t, "fleet-a", "fleet-b")
	r := runner(t)
	var log progressLog
	results, err := r.Run(context.Background(), hosts(srv), randread(t, "1"), log.add)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	for i, res := range results {
		name := srv[i].host.Name
		if res.Info.Hostname != name || res.Info.FioVersion == "" || res.Info.OS != "Linux" {
			t.Errorf("%s: probe %+v", name, res.Info)
		}
		imp := res.Import
		if imp == nil {
			t.Fatalf("%s: no results", name)
		}
		if imp.Result.Host.Hostname != name || imp.Server.Hostname != srv[i].ns.Addr.String() {
			t.Errorf("%s: results of host %q, server %v", name, imp.Result.Host.Hostname, imp.Server)
		}
		if len(imp.Result.Groups) != 1 || len(imp.Result.Groups[0].Jobs) != 1 {
			t.Fatalf("%s: %d groups: want one job", name, len(imp.Result.Groups))
		}
		j := imp.Result.Groups[0].Jobs[0]
		if j.Name != "reader" || j.Dirs[bench.Read].IOs == 0 || j.Dirs[bench.Read].Clat.Hist.N() != j.Dirs[bench.Read].IOs || !imp.Plus {
			t.Errorf("%s: job %s: %d reads, histogram of %d, json+ %v", name, j.Name, j.Dirs[bench.Read].IOs, j.Dirs[bench.Read].Clat.Hist.N(), imp.Plus)
		}
		if j.Job.Filename != fleettest.DataDir+"/data" || j.Job.Runtime != time.Second {
			t.Errorf("%s: job %+v", name, j.Job)
		}
		if res.Start.IsZero() || res.End.Sub(res.Start) < time.Second {
			t.Errorf("%s: ran from %v to %v", name, res.Start, res.End)
		}
		// Each host read its own file.
		if st, err := os.Stat(filepath.Join(srv[i].ns.Data, "data")); err != nil || st.Size() != 4<<20 {
			t.Errorf("%s's file: %v", name, err)
		}

		ps := log.of(name)
		var phases []fioserver.Phase
		for _, p := range ps {
			if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
				phases = append(phases, p.Phase)
			}
			if p.Phase == fioserver.PhaseRunning && (p.Percent < 0 || p.Percent >= 100) {
				t.Errorf("%s: running at %v%%", name, p.Percent)
			}
		}
		if !slices.Equal(phases, []fioserver.Phase{fioserver.PhaseProbing, fioserver.PhaseRunning, fioserver.PhaseDone}) {
			t.Errorf("%s: phases %v", name, phases)
		}
		iops, _ := imp.Result.Totals()
		if last := ps[len(ps)-1]; last.IOPS != iops || last.Percent != 100 || last.Err != nil {
			t.Errorf("%s: last progress %+v, want %v IOPS", name, last, iops)
		}
	}
	if _, err := os.Stat(filepath.Join(fleettest.DataDir, "data")); err == nil {
		t.Error("a job wrote to this machine's own DataDir")
	}

	info, err := r.Probe(context.Background(), srv[1].host)
	if err != nil || info.Hostname != "fleet-b" {
		t.Errorf("Probe: %+v, %v", info, err)
	}
}

// TestRunCancel: cancelling stops both hosts' jobs, on the servers too,
// and says so per host.
func TestRunCancel(t *testing.T) {
	t.Parallel() // each test has hosts of its own
	srv := servers(t, "fleet-a", "fleet-b")
	r := runner(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log progressLog
	running := make(chan struct{})
	var once sync.Once
	progress := func(p fioserver.Progress) {
		log.add(p)
		if p.Phase == fioserver.PhaseRunning && p.Elapsed > time.Second {
			once.Do(func() { close(running) })
		}
	}
	go func() {
		select {
		case <-running:
			cancel()
		case <-time.After(20 * time.Second):
			cancel()
		}
	}()
	start := time.Now()
	results, err := r.Run(ctx, hosts(srv), randread(t, "60"), progress)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("Run took %v after a cancel", took)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	for i, res := range results {
		name := srv[i].host.Name
		if !errors.Is(res.Err, context.Canceled) || !strings.Contains(res.Err.Error(), name) || res.Import != nil {
			t.Errorf("%s: err %v, import %v", name, res.Err, res.Import != nil)
		}
		if last := log.last(name); last.Phase != fioserver.PhaseCancelled || last.Err == nil {
			t.Errorf("%s: last progress %+v", name, last)
		}
		// The server lives on; the child that ran the jobs is gone.
		deadline := time.Now().Add(5 * time.Second)
		for len(srv[i].proc.Members()) > 1 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if m := srv[i].proc.Members(); len(m) != 1 || srv[i].proc.Exited() {
			t.Errorf("%s: the server's processes after the cancel: %v (exited %v)", name, m, srv[i].proc.Exited())
		}
	}
}

// TestRunHostDown: a host with no server is named in the error; the other
// host's results are kept.
func TestRunHostDown(t *testing.T) {
	t.Parallel() // each test has hosts of its own
	srv := servers(t, "fleet-a", "fleet-b")
	srv[1].proc.Stop()
	var log progressLog
	results, err := runner(t).Run(context.Background(), hosts(srv), randread(t, "500ms"), log.add)
	if !errors.Is(err, fioserver.ErrUnreachable) || !strings.Contains(err.Error(), "fio host fleet-b ("+srv[1].ns.Addr.String()+":8765): no answer") {
		t.Fatalf("err = %v; want fleet-b named as not answering", err)
	}
	if strings.Contains(err.Error(), "fleet-a") {
		t.Errorf("err = %v names fleet-a too", err)
	}
	if results[0].Err != nil || results[0].Import == nil || results[0].Import.Result.Host.Hostname != "fleet-a" {
		t.Errorf("fleet-a: err %v, results %v", results[0].Err, results[0].Import != nil)
	}
	if results[1].Import != nil || !results[1].Start.IsZero() {
		t.Error("fleet-b has results or started")
	}
	if last := log.last("fleet-b"); last.Phase != fioserver.PhaseFailed || !errors.Is(last.Err, fioserver.ErrUnreachable) {
		t.Errorf("fleet-b: last progress %+v", last)
	}
}

// TestRunNoAnswer: a host cut off the network does not answer the probe.
func TestRunNoAnswer(t *testing.T) {
	t.Parallel() // each test has hosts of its own
	srv := servers(t, "fleet-cut")
	if err := srv[0].ns.SetLink(false); err != nil {
		t.Fatal(err)
	}
	r := runner(t)
	r.ProbeTimeout = time.Second
	_, err := r.Run(context.Background(), hosts(srv), randread(t, "500ms"), nil)
	if !errors.Is(err, fioserver.ErrUnreachable) || !strings.Contains(err.Error(), "fleet-cut") {
		t.Fatalf("err = %v; want fleet-cut named as not answering", err)
	}
}

// TestRunOtherVersion: a server of another fio protocol version is named;
// the other host runs.
func TestRunOtherVersion(t *testing.T) {
	t.Parallel() // each test has hosts of its own
	srv := servers(t, "fleet-a")
	lo := netip.MustParseAddr("127.0.0.1")
	port := fleettest.FakeFioServer(t, lo, fleettest.FioServerVersion+1)
	hs := append(hosts(srv), fioserver.Host{Name: "fleet-new", Addr: lo.String(), Port: port, AllowTargets: []string{fleettest.DataDir + "/data"}})
	results, err := runner(t, "127.0.0.1").Run(context.Background(), hs, randread(t, "500ms"), nil)
	if !errors.Is(err, fioserver.ErrVersion) || !strings.Contains(err.Error(), "fio host fleet-new") || !strings.Contains(err.Error(), "version mismatch (98 != 97)") {
		t.Fatalf("err = %v; want fleet-new named with fio's version mismatch", err)
	}
	if results[0].Err != nil || results[0].Import == nil {
		t.Errorf("fleet-a: %v", results[0].Err)
	}
}

// TestRunJobFails: a job the server cannot run fails on that host with
// what the server said.
func TestRunJobFails(t *testing.T) {
	t.Parallel() // each test has hosts of its own
	srv := servers(t, "fleet-a")
	cfg, err := fio.ParseArgs([]string{"--name=r", "--filename=" + fleettest.DataDir + "/data", "--rw=randread", "--size=1m", "--ioengine=psync",
		"--allow_file_create=0"})
	if err != nil {
		t.Fatal(err)
	}
	results, err := runner(t).Run(context.Background(), hosts(srv), cfg, nil)
	if !errors.Is(err, fioserver.ErrFailed) || !strings.Contains(err.Error(), "<fleet-a> fio: file creation disallowed by allow_file_create=0") {
		t.Fatalf("err = %v; want the server's message", err)
	}
	if !slices.ContainsFunc(results[0].Messages, func(m string) bool { return strings.Contains(m, "exited with error") }) {
		t.Errorf("messages %q", results[0].Messages)
	}
}

// TestRunStatusFromFio: while a host runs, its progress is fio's own:
// the server's status as its client asks for it each second (the IOPS of
// the last second and the share done), read on its way to the client;
// the jobs' results are imported as ever, naming the server itself.
func TestRunStatusFromFio(t *testing.T) {
	t.Parallel() // each test has hosts of its own
	srv := servers(t, "fleet-s")
	r := runner(t)
	cfg, err := fio.ParseArgs([]string{"--name=paced", "--filename=" + fleettest.DataDir + "/data", "--rw=randread",
		"--bs=4k", "--size=4m", "--ioengine=psync", "--rate_iops=2000", "--runtime=5", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	var log progressLog
	results, err := r.Run(context.Background(), hosts(srv), cfg, log.add)
	if err != nil {
		t.Fatal(err)
	}
	var live []fioserver.Progress
	for _, p := range log.of("fleet-s") {
		if p.Phase == fioserver.PhaseRunning && p.FromFio {
			live = append(live, p)
		}
	}
	if len(live) < 3 {
		t.Fatalf("%d reports of fio's own status in a run of 5 s: %+v", len(live), log.of("fleet-s"))
	}
	paced, prev := 0, -1.0
	for _, p := range live {
		if p.IOPS >= 1800 && p.IOPS <= 2200 {
			paced++
		}
		if p.Percent < prev || p.Percent >= 100 {
			t.Errorf("fio's share done went %v → %v", prev, p.Percent)
		}
		prev = p.Percent
	}
	if paced < 2 || prev < 40 {
		t.Errorf("fio's status: %d of %d reports at the paced 2000 IOPS, last at %v %%: %+v", paced, len(live), prev, live)
	}
	imp := results[0].Import
	if imp == nil || imp.Server == nil || imp.Server.Hostname != srv[0].ns.Addr.String() || imp.Server.Port != fleettest.DefaultFioPort {
		t.Fatalf("results of server %+v", imp)
	}
	if iops, _ := imp.Result.Totals(); iops < 1800 || iops > 2200 {
		t.Errorf("the imported result: %v IOPS, paced at 2000", iops)
	}
	t.Logf("%d reports of fio's status, e.g. %+v", len(live), live[len(live)/2])
}
