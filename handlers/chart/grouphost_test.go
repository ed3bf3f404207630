package chart

import (
	"slices"
	"testing"
)

// A group's runs are named by the fleet's names for their hosts, and the
// kernel is left out of legends when a fio server's run does not know
// its own: "fio-a" beside "agent-a", not beside "agent-a 6.12.0".
func TestChartLegendsGroupHosts(t *testing.T) {
	runs := make([]LoadedRun, 3)
	for i, h := range []struct{ host, hostname, kernel string }{
		{"agent-a", "lab-a.example", "6.12.0"}, {"agent-b", "lab-b.example", "6.12.0"}, {"fio-a", "fio-a", ""}} {
		runs[i] = engineSweep([]string{"io_uring"})
		runs[i].Run.ID, runs[i].Host, runs[i].Run.Hostname, runs[i].Run.Kernel = int64(10+i), h.host, h.hostname, h.kernel
	}
	c := mustBuild(t, Query{Kind: IOPS}, runs...)
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, []string{"agent-a", "agent-b", "fio-a"}) {
		t.Errorf("group series %q", got)
	}
	// The run pickers name the hosts too.
	var picked []string
	for _, p := range c.Pickers {
		if p.Param == "showrun" {
			for _, o := range p.Options {
				picked = append(picked, o.Label)
			}
		}
	}
	if !slices.Equal(picked, []string{"agent-a", "agent-b", "fio-a"}) {
		t.Errorf("run pickers %q", picked)
	}
	// Every run knows its kernel, and they differ: hosts and kernels.
	runs[2].Run.Kernel = "6.1.0"
	c = mustBuild(t, Query{Kind: IOPS}, runs...)
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, []string{"agent-a 6.12.0", "agent-b 6.12.0", "fio-a 6.1.0"}) {
		t.Errorf("group series %q", got)
	}
	// Hosts on one kernel get one colour each, not the kernel's.
	k := newLayout(Query{Kind: IOPS}, views(runs[:2]), "")
	v := views(runs[:2])
	if k.colorKey(v[0], nil) == k.colorKey(v[1], nil) {
		t.Errorf("agent-a and agent-b share the colour key %q", k.colorKey(v[0], nil))
	}
}

// The charts that prefix each series with its run (the QoS curve, CPU,
// latency and IOPS over time) name a group's runs by host too, coloured
// as the other charts colour that host; two compared runs of one host
// keep their run numbers apart.
func TestChartNamesGroupHosts(t *testing.T) {
	a, b := qosRun(3), qosRun(4)
	a.Host, b.Host = "agent-a", "fio-a"
	c := mustBuild(t, Query{Kind: QoS}, a, b)
	want := []string{"agent-a reader p50", "agent-a reader p99", "agent-a reader p99.9", "fio-a reader p50", "fio-a reader p99", "fio-a reader p99.9"}
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, want) {
		t.Errorf("qos series %q, want %q", got, want)
	}
	// Hosts by name: agent-a the palette's first colour, fio-a its second.
	if colour := seriesColours(t, c.Option); colour["agent-a reader p50"] != palette[0] || colour["fio-a reader p99"] != palette[1] {
		t.Errorf("hosts' colours %q, want agent-a %s and fio-a %s", colour, palette[0], palette[1])
	}
	b.Host = "agent-a"
	plain := qosRun(5)
	if got := Names([]LoadedRun{a, b, plain}); !slices.Equal(got, []string{"agent-a (run 3)", "agent-a (run 4)", "run 5"}) {
		t.Errorf("names %q", got)
	}
}
