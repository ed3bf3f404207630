package cli

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
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
