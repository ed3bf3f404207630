package handlers

import (
	"slices"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/handlers/report"
)

// TestGroupWarnings: between a group's hosts a scheduler that differs
// is one more warning, named by the hosts; on the compare page it is
// what may be compared, and a scheduler the plan sweeps differs nowhere.
func TestGroupWarnings(t *testing.T) {
	a := warnRun(1, nil)
	b := warnRun(2, func(r *db.Run, _ *bench.Job) { r.Targets[0].Scheduler = "mq-deadline" })
	a.Host, b.Host = "lab-a", "lab-b"
	ws := report.GroupWarnings([]chart.LoadedRun{a, b})
	i := slices.IndexFunc(ws, func(w report.Warning) bool { return w.Field == "scheduler" })
	if i < 0 || !strings.Contains(ws[i].Msg, "lab-a (run 1) none") || !strings.Contains(ws[i].Msg, "lab-b (run 2) mq-deadline") {
		t.Fatalf("group warnings %+v", ws)
	}
	if slices.ContainsFunc(report.CompareWarnings([]chart.LoadedRun{a, b}), func(w report.Warning) bool { return w.Field == "scheduler" }) {
		t.Error("the compare page warns about the scheduler it may be comparing")
	}
	// An unknown scheduler (a fio server's) against a known one: no warning.
	c := warnRun(3, func(r *db.Run, _ *bench.Job) { r.Targets = nil })
	if slices.ContainsFunc(report.GroupWarnings([]chart.LoadedRun{a, c}), func(w report.Warning) bool { return w.Field == "scheduler" }) {
		t.Error("warned about a scheduler one side does not know")
	}
}

// TestGroupWarningsUnchecked: the warnings that compare hosts are silent
// where one side does not know, so the group's page says which hosts
// recorded none of it — a fio server's run knows no IOMMU mode, device,
// scheduler or governor — and agents that did record theirs are not named.
func TestGroupWarningsUnchecked(t *testing.T) {
	a := warnRun(1, nil)
	fio := func(r *db.Run, _ *bench.Job) {
		r.Source, r.Kernel, r.Targets = db.SourceFio, "", nil
		r.Host = system.HostInfo{Hostname: r.Hostname, Arch: "x86_64"}
	}
	b, c := warnRun(2, fio), warnRun(3, fio)
	a.Host, b.Host, c.Host = "agent-a", "fio-a", "fio-b"
	ws := report.GroupWarnings([]chart.LoadedRun{a, b, c})
	var unchecked []string
	for _, w := range ws {
		if w.Field == "not checked" {
			unchecked = append(unchecked, w.Msg)
		}
	}
	if len(unchecked) != 1 {
		t.Fatalf("unchecked warnings %q (all: %+v)", unchecked, ws)
	}
	for _, want := range []string{"IOMMU mode, device model, firmware, scheduler, CPU governor unknown for fio-a (run 2), fio-b (run 3)", "a fio server reports only"} {
		if !strings.Contains(unchecked[0], want) {
			t.Errorf("%q does not say %q", unchecked[0], want)
		}
	}
	if strings.Contains(unchecked[0], "agent-a") {
		t.Errorf("%q names the agent, which recorded everything", unchecked[0])
	}
	// An agent whose device has no model (virtio, loop) and whose host has
	// no cpufreq recorded them as none: nothing is unchecked.
	d := warnRun(4, func(r *db.Run, _ *bench.Job) { r.Host.Governor, r.Targets[0].Model = "", "" })
	if ws := report.GroupWarnings([]chart.LoadedRun{a, d}); slices.ContainsFunc(ws, func(w report.Warning) bool { return w.Field == "not checked" }) {
		t.Errorf("unchecked warned about facts the host has none of: %+v", ws)
	}
}
