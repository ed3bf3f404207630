package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/handlers/report"
)

// warnRun is a synthetic run for CompareWarnings: one job, one target,
// three repeats, all fields equal unless edit changes them.
func warnRun(id int64, edit func(*db.Run, *bench.Job)) chart.LoadedRun {
	j := bench.NewJob()
	j.Name, j.Filename, j.RW, j.BS, j.IODepth, j.IOEngine = "j", "/dev/nvme0n1", "randread", 4096, 1, "io_uring"
	j.Direct, j.Runtime, j.RampTime = true, 30*time.Second, 5*time.Second
	r := db.Run{ID: id, Name: "r" + strconv.FormatInt(id, 10), Hostname: "lab", Kernel: "6.12.0",
		Host:    system.HostInfo{Hostname: "lab", KernelRelease: "6.12.0", IOMMU: system.IOMMUInfo{Mode: "passthrough"}, Governor: "performance"},
		Targets: []system.Target{{Path: "/dev/nvme0n1", Model: "Test NVMe", Driver: "nvme", Scheduler: "none", IOPoll: true}},
		Plan:    sweep.Plan{Repeat: 3, Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "8"}}}}}
	if edit != nil {
		edit(&r, &j)
	}
	r.Plan.Base.Jobs = []bench.Job{j}
	return chart.LoadedRun{Run: r}
}

func TestCompareWarnings(t *testing.T) {
	same := func(*db.Run, *bench.Job) {}
	tests := []struct {
		name   string
		a, b   func(*db.Run, *bench.Job)
		fields []string // the warnings' fields, in order
		want   []string // texts some warning must contain
	}{
		{"equal", same, same, nil, nil},
		{"kernel only", same, func(r *db.Run, _ *bench.Job) { r.Kernel, r.Host.KernelRelease = "6.1.0", "6.1.0" }, nil, nil},
		{"iommu", same, func(r *db.Run, _ *bench.Job) { r.Host.IOMMU.Mode = "translated" }, []string{"IOMMU mode"},
			[]string{"run 1 passthrough", "run 2 translated", "~30 %"}},
		{"iommu unknown on one side", same, func(r *db.Run, _ *bench.Job) { r.Host.IOMMU.Mode = "" }, nil, nil},
		{"device model", same, func(r *db.Run, _ *bench.Job) { r.Targets[0].Model = "Other SSD" }, []string{"device model"}, []string{"Other SSD"}},
		{"firmware", func(r *db.Run, _ *bench.Job) { r.Targets[0].Firmware = "E2010325" },
			func(r *db.Run, _ *bench.Job) { r.Targets[0].Firmware = "E2010600" }, []string{"firmware"}, []string{"run 2 E2010600", "run 1 E2010325"}},
		{"firmware unknown on one side", same, func(r *db.Run, _ *bench.Job) { r.Targets[0].Firmware = "E2010600" }, nil, nil},
		{"firmware of another model", same, func(r *db.Run, _ *bench.Job) { r.Targets[0].Model, r.Targets[0].Firmware = "Other SSD", "X1" },
			[]string{"device model"}, nil},
		{"driver", same, func(r *db.Run, _ *bench.Job) { r.Targets[0].Driver = "virtio_blk" }, []string{"device driver"}, []string{"virtio_blk"}},
		{"block size", same, func(_ *db.Run, j *bench.Job) { j.BS = 65536 }, []string{"block size"}, []string{"64k"}},
		{"block size swept", same, func(r *db.Run, _ *bench.Job) {
			r.Plan.Sweeps = append(r.Plan.Sweeps, sweep.Sweep{Axis: sweep.AxisBS, Values: []string{"4k", "64k"}})
		}, []string{"block size"}, nil},
		{"rw", same, func(_ *db.Run, j *bench.Job) { j.RW = "randwrite" }, []string{"rw"}, []string{"randwrite"}},
		{"direct", same, func(_ *db.Run, j *bench.Job) { j.Direct = false }, []string{"direct"}, []string{"page cache"}},
		{"hipri", same, func(_ *db.Run, j *bench.Job) { j.Hipri = true }, []string{"engine options"}, []string{"run 2 hipri", "run 1 none"}},
		{"sqpoll and fixedbufs", func(_ *db.Run, j *bench.Job) { j.SQThreadPoll = true },
			func(_ *db.Run, j *bench.Job) { j.FixedBufs = true }, []string{"engine options"}, []string{"sqpoll", "fixedbufs"}},
		{"engine sweep with sqpoll", same, func(r *db.Run, _ *bench.Job) {
			r.Plan.Sweeps = append(r.Plan.Sweeps, sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"io_uring", "io_uring+sqpoll"}})
		}, []string{"engine options"}, []string{"sqpoll"}},
		{"engines differ but no options", same, func(_ *db.Run, j *bench.Job) { j.IOEngine = "libaio" }, nil, nil},
		{"runtime much shorter", same, func(_ *db.Run, j *bench.Job) { j.Runtime = 10 * time.Second }, []string{"runtime"},
			[]string{"run 2 (10s)", "run 1 (30s)"}},
		{"runtime a bit shorter", same, func(_ *db.Run, j *bench.Job) { j.Runtime = 20 * time.Second }, nil, nil},
		{"plan runtime overrides", same, func(r *db.Run, _ *bench.Job) { r.Plan.Runtime = 2 * time.Minute }, []string{"runtime"}, nil},
		{"ramp much shorter", same, func(_ *db.Run, j *bench.Job) { j.RampTime = time.Second }, []string{"ramp time"}, nil},
		{"single repeat", same, func(r *db.Run, _ *bench.Job) { r.Plan.Repeat = 1 }, []string{"repeats"}, []string{"run 2", "no spread"}},
		{"governor", same, func(r *db.Run, _ *bench.Job) { r.Host.Governor = "powersave" }, []string{"CPU governor"}, []string{"powersave"}},
		{"io_poll", same, func(r *db.Run, _ *bench.Job) { r.Targets[0].IOPoll = false }, []string{"poll queues (io_poll)"}, []string{"run 2 false"}},
		{"hipri without poll queues", func(r *db.Run, j *bench.Job) { j.Hipri, r.Targets[0].IOPoll = true, false },
			func(r *db.Run, j *bench.Job) { j.Hipri, r.Targets[0].IOPoll = true, false },
			[]string{"poll queues (io_poll)", "poll queues (io_poll)"}, []string{"fell back to interrupts"}},
		{"several", same, func(r *db.Run, j *bench.Job) { r.Host.IOMMU.Mode, j.BS, r.Plan.Repeat = "translated", 8192, 1 },
			[]string{"IOMMU mode", "block size", "repeats"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := report.CompareWarnings([]chart.LoadedRun{warnRun(1, tt.a), warnRun(2, tt.b)})
			var fields []string
			var all strings.Builder
			for _, w := range ws {
				fields = append(fields, w.Field)
				all.WriteString(w.Msg + "\n")
				if w.Msg == "" {
					t.Errorf("%s: empty message", w.Field)
				}
			}
			if !slices.Equal(fields, tt.fields) {
				t.Errorf("fields = %q, want %q\n%s", fields, tt.fields, all.String())
			}
			for _, s := range tt.want {
				if !strings.Contains(all.String(), s) {
					t.Errorf("no warning says %q:\n%s", s, all.String())
				}
			}
		})
	}
	// A single run warns only about itself.
	if ws := report.CompareWarnings([]chart.LoadedRun{warnRun(1, func(r *db.Run, _ *bench.Job) { r.Plan.Repeat = 1 })}); len(ws) != 1 || ws[0].Field != "repeats" {
		t.Errorf("single run: %+v", ws)
	}
}

// The poll-queue fallback is said of I/O that was done: hipri steps
// that all failed did none, polled or not.
func TestCompareWarningsHipriFailed(t *testing.T) {
	withSteps := func(id int64, status string) chart.LoadedRun {
		r := warnRun(id, func(r *db.Run, j *bench.Job) {
			j.Hipri, r.Targets[0].IOPoll = true, false
			r.Plan.Sweeps = nil
		})
		steps, err := r.Run.Plan.Steps()
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			res := sweep.StepResult{Step: st, Status: status}
			if status == sweep.StepDone {
				res.Result = &bench.Result{Groups: []bench.GroupResult{{Jobs: []bench.JobResult{{Name: "j", Runtime: time.Second, Jobs: 1}}}}}
			} else {
				res.Error = "io_uring+hipri: IORING_SETUP_IOPOLL: operation not supported"
			}
			r.Steps = append(r.Steps, res)
		}
		return r
	}
	ws := report.CompareWarnings([]chart.LoadedRun{withSteps(1, sweep.StepDone), withSteps(2, sweep.StepFailed)})
	var fallback []string
	for _, w := range ws {
		if strings.Contains(w.Msg, "fell back to interrupts") {
			fallback = append(fallback, w.Msg)
		}
	}
	if len(fallback) != 1 || !strings.HasPrefix(fallback[0], "run 1 ") {
		t.Errorf("fallback warnings = %q, want run 1's alone: run 2's hipri steps all failed", fallback)
	}
	// Nor does run 2 count as using hipri against run 1.
	for _, w := range ws {
		if w.Field == "engine options" && strings.Contains(w.Msg, "run 2 hipri") {
			t.Errorf("run 2's failed hipri steps count as hipri: %s", w.Msg)
		}
	}
	if ws := report.CompareWarnings([]chart.LoadedRun{withSteps(2, sweep.StepFailed)}); slices.ContainsFunc(ws, func(w report.Warning) bool { return strings.Contains(w.Msg, "fell back") }) {
		t.Errorf("a run whose hipri steps all failed warns of a fallback: %+v", ws)
	}
}

func TestCompareDiffs(t *testing.T) {
	a := warnRun(1, nil)
	b := warnRun(2, func(r *db.Run, j *bench.Job) { r.Kernel, r.Host.IOMMU.Mode, j.BS = "6.1.0", "translated", 8192 })
	got := map[string][]string{}
	for _, d := range report.EnvDiffs([]chart.LoadedRun{a, b}) {
		got[d.Field] = d.Values
	}
	want := map[string][]string{"kernel": {"6.12.0", "6.1.0"}, "IOMMU mode": {"passthrough", "translated"}, "block size": {"4k", "8k"}}
	if len(got) != len(want) {
		t.Errorf("diffs = %q, want %q", got, want)
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// Two QoS runs under different objectives, at different rates: the
// difference that moves their knees is listed.
func TestCompareDiffsQoS(t *testing.T) {
	qos := func(id int64, slo string, rates ...string) chart.LoadedRun {
		return warnRun(id, func(r *db.Run, _ *bench.Job) {
			o, err := sweep.ParseSLO(slo)
			if err != nil {
				t.Fatal(err)
			}
			r.Plan.SLO, r.Plan.Sweeps = &o, []sweep.Sweep{{Axis: sweep.AxisRateIOPS, Values: rates}}
		})
	}
	got := map[string][]string{}
	for _, d := range report.EnvDiffs([]chart.LoadedRun{qos(1, "p99<1ms", "max", "50%"), qos(2, "p99.9<2ms", "max", "50%", "90%")}) {
		got[d.Field] = d.Values
	}
	if !slices.Equal(got["QoS objective"], []string{"p99<1ms", "p99.9<2ms"}) || !slices.Equal(got["rate_iops"], []string{"max, 50%", "max, 50%, 90%"}) || len(got) != 2 {
		t.Errorf("diffs = %q", got)
	}
}

// seedHostRun stores a finished null-engine run on the given host, with
// IOPS scaled by factor.
func seedHostRun(t testing.TB, store *db.Store, name string, host system.HostInfo, factor float64) *db.Run {
	t.Helper()
	ctx := context.Background()
	args := []string{"--name=" + name, "--ioengine=null", "--size=1m", "--rw=randread", "--bs=4k"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	plan := &sweep.Plan{Name: name, Args: args, Base: *cfg, Repeat: 2,
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "4"}}}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	run := &db.Run{Name: name, Status: db.StatusRunning, Plan: *plan, Host: host}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	for i, st := range steps {
		job := bench.JobResult{Name: name, Job: st.Config.Jobs[0], Start: start, Runtime: time.Second, Jobs: 1, Interval: time.Second}
		ios := uint64(factor * float64(1000*(i+1)))
		job.Dirs[bench.Read].IOs = ios
		job.Dirs[bench.Read].Bytes = ios * 4096
		for k := range ios {
			job.Dirs[bench.Read].Clat.Add(10000 + k*10)
		}
		res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(time.Second),
			Result: &bench.Result{Start: start, Groups: []bench.GroupResult{{ID: 0, Jobs: []bench.JobResult{job}}}}}
		if err := store.SaveStep(ctx, run.ID, &res); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return run
}

func compareHosts() (a, b system.HostInfo) {
	a = system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-a", IOMMU: system.IOMMUInfo{Mode: "passthrough"}}
	b = system.HostInfo{Hostname: "lab-b", KernelRelease: "6.1.0-b", IOMMU: system.IOMMUInfo{Mode: "translated"}}
	return a, b
}

func TestComparePage(t *testing.T) {
	ts := newTestServer(t, Config{})
	ha, hb := compareHosts()
	r1 := seedHostRun(t, ts.store, "cmp-one", ha, 1)
	r2 := seedHostRun(t, ts.store, "cmp-two", hb, 0.7)
	id1, id2 := strconv.FormatInt(r1.ID, 10), strconv.FormatInt(r2.ID, 10)
	for _, tt := range []struct {
		name, path string
		status     int
		contains   []string
	}{
		{"run=", "/compare?run=" + id1 + "&run=" + id2, 200, []string{"cmp-one", "cmp-two", "IOMMU mode", "~30 %", `id="diffs"`,
			`data-kind="iops"`, `data-kind="latency"`, `data-kind="distribution"`, `data-kind="maxiops"`, "6.12.0-a", "translated"}},
		{"runs=", "/compare?runs=" + id1 + "," + id2, 200, []string{"cmp-one", "cmp-two", "IOMMU mode"}},
		{"qd", "/compare?runs=" + id1 + "," + id2 + "&qd=4", 200, []string{"iodepth"}},
		{"bad qd", "/compare?runs=" + id1 + "&qd=x", 400, nil},
		{"bad runs", "/compare?runs=1,x", 400, []string{"not a run id"}},
		{"missing run", "/compare?run=999", 404, []string{"run 999 not found"}},
		{"diff csv", "/compare/export.csv?table=diff&run=" + id1 + "&run=" + id2, 200, []string{"field,run " + id1 + ",run " + id2, "IOMMU mode,passthrough,translated"}},
		{"maxiops csv", "/compare/export.csv?table=maxiops&run=" + id1 + "&run=" + id2, 200, []string{"kernel,ioengine,job,max_iops,at", "6.12.0-a,null,cmp-one,3000,iodepth=4", "6.1.0-b,null,cmp-two,2100,iodepth=4"}},
		{"bad table", "/compare/export.csv?table=nope&run=" + id1, 400, []string{"use diff, stats, maxiops"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			ts.e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body.String())
			}
			for _, s := range tt.contains {
				if !strings.Contains(rec.Body.String(), s) {
					t.Errorf("body lacks %q:\n%s", s, rec.Body.String())
				}
			}
		})
	}
}

func TestLabelsAndRename(t *testing.T) {
	ts := newTestServer(t, Config{Token: "sekrit", RequireToken: true})
	ha, _ := compareHosts()
	r := seedHostRun(t, ts.store, "lbl", ha, 1)
	id := strconv.FormatInt(r.ID, 10)
	do := func(method, path, ctype, body string, auth bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer sekrit")
		}
		rec := httptest.NewRecorder()
		ts.e.ServeHTTP(rec, req)
		return rec
	}
	const form = "application/x-www-form-urlencoded"
	for _, tt := range []struct {
		name, method, path, ctype, body string
		auth                            bool
		status                          int
		wantName                        string
		wantTags                        []string
	}{
		{"rename needs token", "POST", "/runs/" + id + "/rename", form, "name=new", false, 401, "lbl", nil},
		{"rename", "POST", "/runs/" + id + "/rename", form, "name=+renamed+", true, 303, "renamed", nil},
		{"rename empty", "POST", "/runs/" + id + "/rename", form, "name=+", true, 400, "renamed", nil},
		{"rename missing", "POST", "/runs/999/rename", form, "name=x", true, 404, "renamed", nil},
		{"add labels", "POST", "/runs/" + id + "/labels", form, "add=iommu%3Doff,+after+firmware+update&add=iommu%3Doff", true, 303, "renamed", []string{"iommu=off", "after firmware update"}},
		{"remove label", "POST", "/runs/" + id + "/labels", form, "remove=iommu%3Doff", true, 303, "renamed", []string{"after firmware update"}},
		{"labels need token", "POST", "/runs/" + id + "/labels", form, "add=x", false, 401, "renamed", []string{"after firmware update"}},
		{"patch", "PATCH", "/api/runs/" + id, "application/json", `{"name":"api name","labels":["a","b"]}`, true, 200, "api name", []string{"a", "b"}},
		{"patch labels only", "PATCH", "/api/runs/" + id, "application/json", `{"labels":[]}`, true, 200, "api name", nil},
		{"patch needs token", "PATCH", "/api/runs/" + id, "application/json", `{"name":"x"}`, false, 401, "api name", nil},
		{"patch bad json", "PATCH", "/api/runs/" + id, "application/json", `{"nom":"x"}`, true, 400, "api name", nil},
		{"patch empty", "PATCH", "/api/runs/" + id, "application/json", `{}`, true, 400, "api name", nil},
		{"patch bad label", "PATCH", "/api/runs/" + id, "application/json", `{"labels":[" "]}`, true, 400, "api name", nil},
		{"patch missing", "PATCH", "/api/runs/999", "application/json", `{"name":"x"}`, true, 404, "api name", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(tt.method, tt.path, tt.ctype, tt.body, tt.auth)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body.String())
			}
			got, err := ts.store.GetRun(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.wantName || !slices.Equal(got.Tags, tt.wantTags) {
				t.Errorf("run is %q %q, want %q %q", got.Name, got.Tags, tt.wantName, tt.wantTags)
			}
		})
	}
	// The list filters by label and shows it.
	do("PATCH", "/api/runs/"+id, "application/json", `{"labels":["iommu=off"]}`, true)
	rec := do("GET", "/runs?tag=iommu%3Doff", "", "", true)
	if !strings.Contains(rec.Body.String(), "api name") || !strings.Contains(rec.Body.String(), "iommu=off") {
		t.Errorf("runs?tag= lacks the run or its label:\n%s", rec.Body.String())
	}
	if rec := do("GET", "/runs?tag=nope", "", "", true); strings.Contains(rec.Body.String(), "api name") {
		t.Errorf("runs?tag=nope lists the run")
	}
	// label= is the page's name for it, with a select of the labels.
	rec = do("GET", "/runs?label=iommu%3Doff", "", "", true)
	if !strings.Contains(rec.Body.String(), "api name") || !strings.Contains(rec.Body.String(), `<option selected>iommu=off</option>`) {
		t.Errorf("runs?label= lacks the run or the label's filter:\n%s", rec.Body.String())
	}
	if rec := do("GET", "/runs?label=nope", "", "", true); strings.Contains(rec.Body.String(), "api name") {
		t.Errorf("runs?label=nope lists the run")
	}
}
