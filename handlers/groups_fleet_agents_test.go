package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"iolab/bench/hist"
	"iolab/bench/launch"
	"iolab/bench/summary"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/agent"
)

// TestGroupFleetOfAgents runs one plan on three agents of this machine
// at once (ioengine=null, paced at 2,000 reads a second each, so that
// none waits for another's device) and reads the group's fleet: the
// hosts' real per-second samples lined up, the fleet's IOPS those of the
// three together, its percentiles the hosts' stored histograms merged.
func TestGroupFleetOfAgents(t *testing.T) {
	ts := newTestServer(t, Config{Fleet: FleetConfig{Agents: agent.Timing{Poll: 2 * time.Second}}})
	hs := httptest.NewServer(ts.e)
	t.Cleanup(hs.Close) // after the agents stop: their long polls end first
	ctx := context.Background()
	post := func(path string, body any, out any) int {
		b, _ := json.Marshal(body)
		resp, err := http.Post(hs.URL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	names := []string{"ag-a", "ag-b", "ag-c"}
	for _, name := range names {
		var added struct {
			Token string `json:"token"`
		}
		if code := post("/api/hosts", map[string]string{"kind": db.HostAgent, "name": name}, &added); code != http.StatusCreated {
			t.Fatalf("add %s: %d", name, code)
		}
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		os.Mkdir(data, 0o755)
		store, err := db.Open(ctx, filepath.Join(dir, "agent.db"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Dashboard: hs.URL, Token: added.Token, Name: name, Allow: launch.AllowList{DataDir: data},
			Store: store, Sys: system.FS{}, ProgressEvery: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		actx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.Run(actx) }()
		t.Cleanup(func() { cancel(); <-done; store.Close() })
	}
	for _, name := range names { // every agent heard from before the plan is checked
		deadline := time.Now().Add(10 * time.Second)
		for h, err := ts.store.HostByName(ctx, name); err != nil || h.Details.Env == nil; h, err = ts.store.HostByName(ctx, name) {
			if time.Now().After(deadline) {
				t.Fatalf("agent %s never said hello: %v", name, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var c createdGroup
	plan := map[string]any{"name": "null fleet", "hosts": names, "repeat": 1,
		"options": map[string]any{"rw": "randread", "bs": "4k", "ioengine": "null", "size": "1g", "rate_iops": "2000", "runtime": "3s", "time_based": 1}}
	if code := post("/api/runs", plan, &c); code != http.StatusCreated || len(c.Runs) != 3 {
		t.Fatalf("launch: %d %+v", code, c)
	}
	var own float64 // the hosts' own IOPS added up
	var merged hist.Lat
	for _, r := range c.Runs {
		deadline := time.Now().Add(60 * time.Second)
		for {
			run, err := ts.store.GetRun(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != db.StatusQueued && run.Status != db.StatusRunning {
				if run.Status != db.StatusDone {
					t.Fatalf("run %d on %s: %s %s", r.ID, r.Host, run.Status, run.Error)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d on %s still %s", r.ID, r.Host, run.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
		steps, err := ts.store.Steps(ctx, r.ID)
		if err != nil || len(steps) != 1 {
			t.Fatalf("run %d: %d steps, %v", r.ID, len(steps), err)
		}
		j := &steps[0].Result.Groups[0].Jobs[0]
		if len(j.Samples) < 2 {
			t.Fatalf("%s kept %d samples", r.Host, len(j.Samples))
		}
		own += j.IOPS(0)
		merged.Merge(&j.Dirs[0].Lat)
	}
	resp, err := http.Get(hs.URL + "/api/groups/" + c.Group + "/fleet")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc groupFleetJSON
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	j := doc.Fleet.Steps[0].Jobs[0]
	t.Logf("fleet %.0f IOPS over %v (coverage %.2f), the hosts' own %.0f; %d points", j.Fleet.IOPS, j.End.Sub(j.Start), j.Coverage, own, len(j.Series))
	if !j.Aligned || j.Apart || j.Coverage < 0.5 || len(j.Series) < 3 {
		t.Fatalf("the agents' windows: aligned %v, apart %v, coverage %.2f, %d points", j.Aligned, j.Apart, j.Coverage, len(j.Series))
	}
	// Paced reads: the fleet's rate over the window all three ran is
	// their own rates added, within 5 %.
	if math.Abs(j.Fleet.IOPS-own) > 0.05*own {
		t.Errorf("fleet %.0f IOPS, the hosts' own add up to %.0f", j.Fleet.IOPS, own)
	}
	read := j.Fleet.Dirs["read"]
	if want := merged.Percentiles(summary.FleetPercentiles); !slices.Equal(read.Lat.P, want) || read.Lat.N != merged.Stat.N {
		t.Errorf("fleet lat %v of %d, want the stored histograms merged: %v of %d", read.Lat.P, read.Lat.N, want, merged.Stat.N)
	}
}
