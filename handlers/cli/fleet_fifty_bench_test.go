package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"iolab/bench/fioserver/fleettest"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// BenchmarkFiftyAgents runs one plan on fifty iolab agents, each in a
// namespace host of its own (fleettest), against `iolab serve` as a child
// process with its defaults (the agents' lease, heartbeat and poll, the
// HTTP limits): BENCHMARKS.md, "Fifty agents". Run it alone:
//
//	go test -run '^$' -bench BenchmarkFiftyAgents -benchtime 1x -v ./handlers/cli
//
// Each agent reads its own small file in /dev/shm at a modest rate for a
// sweep of three short steps, so that fifty of them fit beside the
// dashboard on two cores: the point is the control plane. It fails unless
// every host's run ends done with every step stored done and its I/Os,
// and unless the group's API (what its page polls) showed every host's
// progress move on while the group ran. It reports the dashboard's peak
// RSS, its CPU over the group (/proc/PID/stat), the agents' requests a
// second each, and how long the group's API and page took.
func BenchmarkFiftyAgents(b *testing.B) {
	fleettest.NeedNamespaces(b)
	const hosts = 50
	plan := fiftyPlan{steps: []string{"4k", "16k", "64k"}, runtime: "3s", rateIOPS: 100}
	f := newFiftyFleet(b, hosts)
	var last fiftyFigures
	b.ResetTimer() // ns/op: a group's time, from its launch to its end
	for range b.N {
		last = f.runGroup(b, plan)
	}
	b.StopTimer()
	f.stopAgents()
	b.ReportMetric(float64(last.peakRSS)/(1<<20), "serve-peak-RSS-MiB")
	b.ReportMetric(float64(last.hwm)/(1<<20), "serve-VmHWM-MiB")
	b.ReportMetric(last.cpu.Seconds(), "serve-CPU-s")
	b.ReportMetric(100*last.cpu.Seconds()/last.wall.Seconds(), "serve-CPU-%")
	b.ReportMetric(last.wall.Seconds(), "group-s")
	b.ReportMetric(last.agentRate, "agent-req/s/agent")
	b.ReportMetric(float64(last.apiP99.Microseconds())/1000, "group-API-p99-ms")
	b.ReportMetric(float64(last.pageMax.Microseconds())/1000, "group-page-max-ms")
	b.ReportMetric(float64(last.fails), "agent-req-refused")
	b.ReportMetric(float64(last.stepP99.Microseconds())/1000, "step-upload-p99-ms")
	b.ReportMetric(last.machineBusy, "machine-busy-%")
	b.ReportMetric(float64(last.fds), "serve-fds-max")
}

// fiftyLog keeps the dashboard's whole log (its request log: every
// agent's request with its status and time).
var (
	fiftyLog   = flag.String("fifty.log", "", "BenchmarkFiftyAgents: write iolab serve's log to this file")
	fiftyPprof = flag.String("fifty.pprof", "", "BenchmarkFiftyAgents: serve iolab serve's profiler on this loopback address")
)

// fiftyPlan is the group's plan: a bs sweep of runtime steps on each
// host's own file, paced at rateIOPS.
type fiftyPlan struct {
	steps    []string
	runtime  string
	rateIOPS int
}

// body is POST /api/runs's request for the plan on hosts.
func (p fiftyPlan) body(hosts []string) map[string]any {
	return map[string]any{
		"name": "fifty",
		// tmpfs takes no O_DIRECT: buffered psync reads of a 4 MiB file.
		"options": map[string]any{"filename": fleettest.DataDir + "/f", "size": "4m", "rw": "randread",
			"ioengine": "psync", "rate_iops": p.rateIOPS, "runtime": p.runtime, "time_based": 1},
		"sweep": map[string][]string{"bs": p.steps}, "hosts": hosts,
	}
}

// fiftyFleet is the dashboard (a child `iolab serve`) and its agents.
type fiftyFleet struct {
	serve  *exec.Cmd
	base   string // the dashboard as this process reaches it
	token  string
	hc     *http.Client
	log    *requestLog
	names  []string
	agents []*fleettest.Process
}

// fiftyFigures are one group's measurements.
type fiftyFigures struct {
	peakRSS, hwm     int64
	cpu, wall        time.Duration
	agentRate        float64
	apiP99, pageMax  time.Duration
	agentReqs, fails int64
	// The agents' step uploads' and event batches' times (answered ones).
	stepP50, stepP99, eventsP99 time.Duration
	// machineBusy is the whole machine's CPU over the group, in percent of
	// all its CPUs: the agents are on it too.
	machineBusy float64
	// fds is the most descriptors the dashboard had open (its store's,
	// fifty agents' connections and long polls, the pages').
	fds int
}

// fiftyDir is where a benchmark process keeps its files, in /dev/shm
// (the hosts' data directories and the agents' stores) and in the
// temporary directory (the dashboard's store, on the disk, and every
// TempDir: TMPDIR points there while it runs). Its pid ends the name:
// what a process that is gone left (one killed runs no cleanup) is
// removed at the next start, as fleettest removes its namespaces.
const fiftyDir = "iolab-fifty-"

// newFiftyFleet makes n namespace hosts, starts the dashboard on the
// first one's gateway (every other host routed to it, fleettest.Reach),
// issues each host an agent token and starts its agent, and waits until
// all n have said hello from a hostname of their own.
func newFiftyFleet(b *testing.B, n int) *fiftyFleet {
	b.Helper()
	// Other work on the machine slows the dashboard as much as the agents.
	b.Logf("the machine's load average before the hosts: %s", loadAvg())
	var shm, tmp string
	for _, dir := range []*string{&shm, &tmp} {
		parent := "/dev/shm"
		if dir == &tmp {
			parent = os.TempDir()
		}
		reapFifty(parent)
		*dir = filepath.Join(parent, fiftyDir+strconv.Itoa(os.Getpid()))
		if err := os.Mkdir(*dir, 0o700); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(*dir) })
	}
	b.Setenv("TMPDIR", tmp)

	made := time.Now()
	hosts := make([]*fleettest.Host, n)
	names := make([]string, n)
	for i := range hosts {
		names[i] = fmt.Sprintf("fifty-%02d", i+1)
		h := fleettest.NewHost(b, names[i])
		// Each host's data directory in /dev/shm: fifty agents' I/O stays
		// off the disk the dashboard's store is on.
		h.Data = filepath.Join(shm, names[i])
		if err := os.Mkdir(h.Data, 0o700); err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			if err := h.Reach(hosts[0].Gateway); err != nil {
				b.Fatal(err)
			}
		}
		hosts[i] = h
	}
	b.Logf("%d namespace hosts made in %v", n, time.Since(made).Round(time.Millisecond))

	f := &fiftyFleet{names: names, hc: &http.Client{Timeout: 30 * time.Second}}
	f.startServe(b, hosts[0])
	for i, h := range hosts {
		token := f.addAgent(b, names[i])
		// Device locks are per machine: each host its own, or the fifty
		// files on one tmpfs would take turns (TryLockDevice).
		p := h.Start(b, "env", "IOLAB_TEST_MAIN=1", "IOLAB_LOCK_DIR="+filepath.Join(shm, names[i]+".locks"), os.Args[0], "agent", "--dashboard", "http://"+f.listen(),
			"--token", token, "--name", names[i], "--data-dir", fleettest.DataDir, "--db", filepath.Join(shm, names[i]+".db"))
		f.agents = append(f.agents, p)
	}
	b.Cleanup(f.stopAgents) // all at once, before each waits for its own
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var hs []db.Host
		f.get(b, "/api/hosts", &hs)
		ready := 0
		for _, h := range hs {
			// Its hostname is its namespace's (UTS), said in its hello.
			if h.Kind == db.HostAgent && h.State == "idle" && h.Hostname == h.Name {
				ready++
			}
		}
		if ready == n {
			break
		}
		for i, p := range f.agents {
			if p.Exited() {
				b.Fatalf("agent %s exited:\n%s", names[i], p.Output())
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d agents ready after 2 minutes", ready, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Logf("%d agents connected %v after the first host was made", n, time.Since(made).Round(time.Millisecond))
	return f
}

// reapFifty removes the directories in parent of benchmark processes
// that are gone.
func reapFifty(parent string) {
	prefix := filepath.Join(parent, fiftyDir)
	old, _ := filepath.Glob(prefix + "*")
	for _, dir := range old {
		pid, err := strconv.Atoi(strings.TrimPrefix(dir, prefix))
		if err != nil {
			continue
		}
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			os.RemoveAll(dir)
		}
	}
}

// listen is the dashboard's address: the first host's gateway.
func (f *fiftyFleet) listen() string { return strings.TrimPrefix(f.base, "http://") }

// startServe starts `iolab serve` (this test binary as iolab) with a token
// on a free port of first's gateway, its store on this machine's disk,
// and reads its request log.
func (f *fiftyFleet) startServe(b *testing.B, first *fleettest.Host) {
	b.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(first.Gateway.String(), "0"))
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tok := make([]byte, 16)
	rand.Read(tok)
	f.token = hex.EncodeToString(tok)
	dir := b.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		b.Fatal(err)
	}
	args := []string{"serve", "--listen", addr, "--token", f.token, "--db", filepath.Join(dir, "dash.db"), "--data-dir", data}
	if *fiftyPprof != "" {
		args = append(args, "--pprof", *fiftyPprof)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	f.serve, f.base = cmd, "http://"+addr
	var logTo io.Reader = stderr
	if *fiftyLog != "" {
		file, err := os.Create(*fiftyLog)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { file.Close() })
		logTo = io.TeeReader(stderr, file)
	}
	f.log = readRequestLog(logTo)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	b.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if b.Failed() {
			b.Logf("iolab serve's warnings and errors:\n%s", f.log.problems())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := f.hc.Get(f.base + "/api/hosts")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			b.Fatalf("iolab serve exited: %s\n%s", out.String(), f.log.problems())
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("iolab serve not answering on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call sends a request with the dashboard's token and decodes a JSON
// answer into out; it returns the status.
func (f *fiftyFleet) call(b *testing.B, method, path string, body, out any) int {
	b.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, f.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := f.hc.Do(req)
	if err != nil {
		b.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			b.Fatalf("%s %s: %v: %.200s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

func (f *fiftyFleet) get(b *testing.B, path string, out any) { f.call(b, "GET", path, nil, out) }

// addAgent adds an agent host and returns its token.
func (f *fiftyFleet) addAgent(b *testing.B, name string) string {
	b.Helper()
	var added struct{ Token string }
	f.call(b, "POST", "/api/hosts", map[string]string{"kind": db.HostAgent, "name": name}, &added)
	return added.Token
}

// stopAgents stops every agent at once (each Stop waits for its own).
func (f *fiftyFleet) stopAgents() {
	var wg sync.WaitGroup
	for _, p := range f.agents {
		wg.Go(func() { p.Stop() })
	}
	wg.Wait()
}

// groupState is GET /api/groups/UID as the group's page reads it.
type groupState struct {
	Active  bool `json:"active"`
	Members []struct {
		RunID    int64  `json:"run_id"`
		Host     string `json:"host"`
		Hostname string `json:"hostname"`
		Status   string `json:"status"`
		Steps    int    `json:"steps"`
		Planned  int    `json:"planned"`
		Progress string `json:"progress"`
	} `json:"members"`
}

// hostSeen is what the group's API showed of one host while it ran.
type hostSeen struct {
	running   bool
	progSteps map[string]bool // the "step N/M" its progress named
	stored    map[int]bool    // its stored steps' counts
}

var progressStep = regexp.MustCompile(`^step (\d+/\d+)`)

// runGroup launches the plan on every host, follows the group as its page
// does (its API every second, the page itself every five) until it ends,
// checks every run and step stored, and returns the figures.
func (f *fiftyFleet) runGroup(b *testing.B, plan fiftyPlan) fiftyFigures {
	b.Helper()
	pid := f.serve.Process.Pid
	rss := watchRSS(pid)
	fdsPeak := make(chan int)
	stopFds := make(chan struct{})
	go func() {
		peak := 0
		for {
			if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
				peak = max(peak, len(ents))
			}
			select {
			case <-stopFds:
				fdsPeak <- peak
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	cpu0, reqs0, fails0 := procCPU(pid), f.log.agentRequests(), f.log.agentFailures()
	machine0, err := system.FS{}.CPUTimes()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var g struct {
		Group string
		Runs  []struct {
			ID   int64
			Host string
		}
	}
	if code := f.call(b, "POST", "/api/runs", plan.body(f.names), &g); code != http.StatusCreated {
		b.Fatalf("launch: %d", code)
	}
	if len(g.Runs) != len(f.names) {
		b.Fatalf("the group has %d runs, want %d", len(g.Runs), len(f.names))
	}
	// Said now, not with the benchmark's log at its end: to open the
	// group's page while it runs.
	fmt.Fprintf(os.Stderr, "BenchmarkFiftyAgents: group %s/groups/%s\n", f.base, g.Group)
	seen := map[string]*hostSeen{}
	for _, n := range f.names {
		seen[n] = &hostSeen{progSteps: map[string]bool{}, stored: map[int]bool{}}
	}
	// The page itself, every five seconds, as someone opening it
	// meanwhile: apart from the API's polls, so a slow page does not
	// space them out.
	var pageMax time.Duration
	pageErr := make(chan error, 1)
	stopPages := make(chan struct{})
	go func() {
		defer close(pageErr)
		for {
			d, err := f.fetchPage("/groups/" + g.Group)
			if err != nil {
				pageErr <- err
				return
			}
			pageMax = max(pageMax, d)
			select {
			case <-stopPages:
				return
			case <-time.After(5 * time.Second):
			}
		}
	}()
	var apiTimes []time.Duration
	deadline := start.Add(5 * time.Minute)
	var st groupState
	for {
		t0 := time.Now()
		f.get(b, "/api/groups/"+g.Group, &st)
		apiTimes = append(apiTimes, time.Since(t0))
		for _, m := range st.Members {
			s := seen[m.Host]
			if s == nil {
				b.Fatalf("the group has a host %q it was not given", m.Host)
			}
			if m.Status == db.StatusRunning {
				s.running = true
				if p := progressStep.FindStringSubmatch(m.Progress); p != nil {
					s.progSteps[p[1]] = true
				}
			}
			s.stored[m.Steps] = true
		}
		if !st.Active {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the group still active after 5 minutes: %+v", st.Members)
		}
		time.Sleep(time.Until(t0.Add(time.Second)))
	}
	wall := time.Since(start)
	close(stopPages)
	if err := <-pageErr; err != nil {
		b.Fatal(err)
	}
	fig := fiftyFigures{wall: wall, cpu: procCPU(pid) - cpu0, agentReqs: f.log.agentRequests() - reqs0, fails: f.log.agentFailures() - fails0}
	fig.peakRSS, fig.hwm = rss.done()
	close(stopFds)
	fig.fds = <-fdsPeak
	if machine1, err := (system.FS{}).CPUTimes(); err == nil {
		fig.machineBusy = 100 - system.CPUDelta(machine0, machine1).Idle
	}
	fig.stepP50 = f.log.quantile("PUT /api/agent/runs/ID/steps/ID", 0.5)
	fig.stepP99 = f.log.quantile("PUT /api/agent/runs/ID/steps/ID", 0.99)
	fig.eventsP99 = f.log.quantile("POST /api/agent/runs/ID/events", 0.99)
	fig.agentRate = float64(fig.agentReqs) / wall.Seconds() / float64(len(f.names))
	slices.Sort(apiTimes)
	fig.apiP99 = apiTimes[(len(apiTimes)*99)/100]
	d, err := f.fetchPage("/groups/" + g.Group)
	if err != nil {
		b.Fatal(err)
	}
	fig.pageMax = max(pageMax, d)

	// Live: every host was seen running with its progress naming its
	// step, and moving on while the group ran — at two steps of its
	// progress, or with its stored steps growing (a dashboard slow to
	// answer polls less often than a step lasts).
	var still []string
	for _, n := range f.names {
		s := seen[n]
		if !s.running || len(s.progSteps) == 0 || (len(s.progSteps) < 2 && len(s.stored) < 2) {
			still = append(still, fmt.Sprintf("%s (running %v, progress at %v, stored counts %v)", n, s.running, keys(s.progSteps), keys(s.stored)))
		}
	}
	if len(still) > 0 {
		b.Errorf("the group's API did not show %d hosts' progress move:\n%s", len(still), strings.Join(still, "\n"))
	}
	// Done: every run, every step, each with its I/Os, from its own host.
	for _, r := range g.Runs {
		var doc struct {
			Run   db.Run
			Steps []sweep.StepResult
		}
		f.get(b, fmt.Sprintf("/api/runs/%d", r.ID), &doc)
		if doc.Run.Status != db.StatusDone || doc.Run.Hostname != r.Host || len(doc.Steps) != len(plan.steps) {
			b.Errorf("host %s: run %d %s %q from %q, %d steps stored", r.Host, r.ID, doc.Run.Status, doc.Run.Error, doc.Run.Hostname, len(doc.Steps))
			continue
		}
		for i, s := range doc.Steps {
			if s.Step.Seq != i || s.Status != sweep.StepDone || s.Result == nil || len(s.Result.Groups) == 0 ||
				len(s.Result.Groups[0].Jobs) == 0 || s.Result.Groups[0].Jobs[0].Dirs[0].IOs == 0 {
				b.Errorf("host %s: run %d step %d: seq %d %s %q", r.Host, r.ID, i, s.Step.Seq, s.Status, s.Error)
			}
		}
	}
	b.Logf("group of %d hosts × %d steps of %s: %v; the dashboard: peak RSS %d MiB (VmHWM %d MiB), CPU %.1f s (%.0f %% of a core), "+
		"%d agent requests (%.2f a second each, %d failed; step uploads p50 %v p99 %v, event batches p99 %v), group API p99 %v over %d polls, group page at most %v; "+
		"at most %d descriptors open; the machine %.0f %% busy",
		len(f.names), len(plan.steps), plan.runtime, wall.Round(time.Millisecond), fig.peakRSS>>20, fig.hwm>>20, fig.cpu.Seconds(),
		100*fig.cpu.Seconds()/wall.Seconds(), fig.agentReqs, fig.agentRate, fig.fails,
		fig.stepP50.Round(time.Millisecond), fig.stepP99.Round(time.Millisecond), fig.eventsP99.Round(time.Millisecond),
		fig.apiP99.Round(time.Millisecond), len(apiTimes), fig.pageMax.Round(time.Millisecond), fig.fds, fig.machineBusy)
	b.Logf("agent requests by route: %s", f.log.byRoute())
	b.Logf("the machine's load average at the group's end: %s", loadAvg())
	if p := f.log.problems(); p != "" {
		b.Logf("iolab serve's warnings and errors:\n%s", p)
	}
	return fig
}

// fetchPage GETs a page as a browser would and returns how long it took;
// anything but 200 with every host named is an error.
func (f *fiftyFleet) fetchPage(path string) (time.Duration, error) {
	req, _ := http.NewRequest("GET", f.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	t0 := time.Now()
	resp, err := f.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", path, err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("GET %s: %d %.300s", path, resp.StatusCode, page)
	}
	for _, n := range f.names {
		if !bytes.Contains(page, []byte(">"+n+"<")) {
			return d, fmt.Errorf("GET %s: no row names %s", path, n)
		}
	}
	return d, nil
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func keys[K cmp.Ordered](m map[K]bool) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// procCPU is a process's user and system time, all its threads
// (proc(5): /proc/PID/stat fields 14 and 15, utime and stime, in clock
// ticks of sysconf(_SC_CLK_TCK), 100 on Linux); 0 when unreadable.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command's name (field 2) may hold spaces: count from its ')'.
	rest := data[bytes.LastIndexByte(data, ')')+1:]
	fields := strings.Fields(string(rest)) // fields 3 on
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100)
}

// requestLog reads `iolab serve`'s log (slog's text lines on stderr): it
// counts the agents' requests (/api/agent/…) by route and those that did
// not succeed, and keeps the warnings and errors.
type requestLog struct {
	mu     sync.Mutex
	agent  int64
	failed int64
	routes map[string]int64
	took   map[string][]time.Duration // the answered requests' times, by method and route
	warn   []string
}

var (
	logPath   = regexp.MustCompile(` path=(\S+)`)
	logStatus = regexp.MustCompile(` status=(\d+)`)
	logMethod = regexp.MustCompile(` method=(\S+)`)
	logDur    = regexp.MustCompile(` dur=(\S+)`)
	logRunID  = regexp.MustCompile(`/\d+(/|$)`)
)

func readRequestLog(r io.Reader) *requestLog {
	l := &requestLog{routes: map[string]int64{}, took: map[string][]time.Duration{}}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			l.mu.Lock()
			if strings.Contains(line, " level=WARN ") || strings.Contains(line, " level=ERROR ") {
				if len(l.warn) < 200 {
					l.warn = append(l.warn, line)
				}
			}
			if p := logPath.FindStringSubmatch(line); p != nil && strings.Contains(line, " msg=request ") && strings.HasPrefix(p[1], "/api/agent/") {
				l.agent++
				route := logRunID.ReplaceAllString(p[1], "/ID$1")
				l.routes[route]++
				s := logStatus.FindStringSubmatch(line)
				if m, d := logMethod.FindStringSubmatch(line), logDur.FindStringSubmatch(line); s != nil && s[1][0] == '2' && m != nil && d != nil {
					if took, err := time.ParseDuration(d[1]); err == nil {
						l.took[m[1]+" "+route] = append(l.took[m[1]+" "+route], took)
					}
				}
				if s == nil || s[1][0] != '2' {
					l.failed++
					if len(l.warn) < 200 {
						l.warn = append(l.warn, line)
					}
				}
			}
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *requestLog) agentRequests() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.agent
}

func (l *requestLog) agentFailures() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// quantile is the q quantile of the times of the answered requests to
// route ("PUT /api/agent/runs/ID/steps/ID") since the log's start.
func (l *requestLog) quantile(route string, q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := slices.Clone(l.took[route])
	if len(ts) == 0 {
		return 0
	}
	slices.Sort(ts)
	return ts[min(len(ts)-1, int(q*float64(len(ts))))]
}

func (l *requestLog) byRoute() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for r, n := range l.routes {
		parts = append(parts, fmt.Sprintf("%s %d", r, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func (l *requestLog) problems() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.warn, "\n")
}
