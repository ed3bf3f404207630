package bench

import (
	"reflect"
	"testing"

	"iolab/bench/hist"
)

// cmdprio_bssplit reads as fio's split_parse_prio_ddir reads it.
func TestParseCmdprioBSSplit(t *testing.T) {
	rt0, idle7 := int(IOPrioValue(IOPrioClassRT, 0)), int(IOPrioValue(IOPrioClassIdle, 7))
	for _, c := range []struct {
		in   string
		want [2][]PrioSplit
		err  bool
	}{
		// fio's example: one list per direction, the 0 % entries dropped.
		{"64k/100:1024k/0,1024k/0", [2][]PrioSplit{{{BS: 64 << 10, Percent: 100, Prio: -1}}, nil}, false},
		// One list is both directions'; sorted by block size, equal ones
		// kept in order; class and level their own, clamped to Linux's.
		{"16k/25/3/9:4k/50:4k/10/1/0", [2][]PrioSplit{
			{{BS: 4 << 10, Percent: 50, Prio: -1}, {BS: 4 << 10, Percent: 10, Prio: rt0}, {BS: 16 << 10, Percent: 25, Prio: idle7}},
			{{BS: 4 << 10, Percent: 50, Prio: -1}, {BS: 4 << 10, Percent: 10, Prio: rt0}, {BS: 16 << 10, Percent: 25, Prio: idle7}},
		}, false},
		// bs alone or "bs/" is 0 %; a share above 100 is 100; a third
		// list, trims', is dropped; parsing stops at an empty entry.
		{"4k:8k/:1m/150,,x", [2][]PrioSplit{{{BS: 1 << 20, Percent: 100, Prio: -1}}, nil}, false},
		{"4k/50::8k/50", [2][]PrioSplit{{{BS: 4 << 10, Percent: 50, Prio: -1}}, {{BS: 4 << 10, Percent: 50, Prio: -1}}}, false},
		{"4k/50/1", [2][]PrioSplit{}, true},
		{"4k/x", [2][]PrioSplit{}, true},
		{"zz/5", [2][]PrioSplit{}, true},
	} {
		got, err := ParseCmdprioBSSplit(c.in)
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%q: %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// cmdprio_percentage and kin split their values as fio's parser does.
func TestPerDirInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [2]int
		err  bool
	}{
		{"50", [2]int{50, 50}, false},
		{"50,20", [2]int{50, 20}, false},
		{"50:20", [2]int{50, 20}, false},
		{"50,", [2]int{50, 50}, false},
		{",20", [2]int{7, 20}, false}, // an empty value keeps the direction's
		{"50,20,10", [2]int{50, 20}, false},
		{"101", [2]int{}, true},
		{"x,20", [2]int{}, true},
	} {
		j := NewJob()
		j.CmdprioPercentage = [2]int{7, 7}
		err := perDirInt(0, 100, func(j *Job) *[2]int { return &j.CmdprioPercentage })(&j, c.in)
		if (err != nil) != c.err || (!c.err && j.CmdprioPercentage != c.want) {
			t.Errorf("%q: %v, %v; want %v (error %v)", c.in, j.CmdprioPercentage, err, c.want, c.err)
		}
	}
}

// A job's priorities per direction are fio's clat_prio order: the job's
// own first, then each cmdprio priority as it is first named, once.
func TestCmdprioPrios(t *testing.T) {
	j := NewJob()
	j.RW, j.IOPrioSet, j.IOPrioClass, j.IOPrio = "randrw", true, IOPrioClassBE, 7
	j.CmdprioBSSplit, _ = ParseCmdprioBSSplit("64k/25/1/1:64k/75/3/2:4k/10,1m/50/1/1")
	j.CmdprioBSSplitText = "set"
	c := newCmdPrio(&j, 1)
	be7, rt1, idle2, rt0 := IOPrioValue(2, 7), IOPrioValue(1, 1), IOPrioValue(3, 2), IOPrioValue(1, 0)
	if want := [2][]uint16{{be7, rt0, rt1, idle2}, {be7, rt1}}; !reflect.DeepEqual(c.prios, want) {
		t.Errorf("priorities %v, want %v", c.prios, want)
	}
	// Only I/Os of a listed size draw; each lands in its entry's share.
	counts := map[uint16]int{}
	for range 10000 {
		if ch, ok := c.pick(Read, 64<<10); ok {
			counts[ch.prio]++
			if c.prios[Read][ch.idx] != ch.prio {
				t.Fatalf("priority %#x at index %d of %v", ch.prio, ch.idx, c.prios[Read])
			}
		}
		if _, ok := c.pick(Read, 16<<10); ok {
			t.Fatal("a 16k read, which cmdprio_bssplit does not list, drew a priority")
		}
	}
	if counts[rt1] < 2200 || counts[rt1] > 2800 || counts[idle2] < 7200 || counts[idle2] > 7800 {
		t.Errorf("64k reads: %d at 1/1, %d at 3/2 of 10000; want about 2500 and 7500", counts[rt1], counts[idle2])
	}
	// A direction the job does not do gets nothing.
	j.RW = "randread"
	if c := newCmdPrio(&j, 1); c.prios[Write] != nil {
		t.Errorf("a read job's writes have priorities %v", c.prios[Write])
	}
}

// group_reporting's latencies per priority follow fio's
// init_per_prio_stats and sum_clat_prio_stats.
func TestGroupPrios(t *testing.T) {
	lat := func(ns ...uint64) hist.Lat {
		var l hist.Lat
		for _, v := range ns {
			l.Add(v)
		}
		return l
	}
	job := func(prio uint16, clat hist.Lat, prios []PrioLat) JobResult {
		var r JobResult
		r.Job = NewJob()
		if prio != 0 {
			r.Job.IOPrioSet, r.Job.IOPrioClass, r.Job.IOPrio = true, IOPrioClassOf(prio), IOPrioLevelOf(prio)
		}
		r.Dirs[Read].Clat, r.Dirs[Read].Prios = clat, prios
		return r
	}
	be1, be6, rt0 := IOPrioValue(2, 1), IOPrioValue(2, 6), IOPrioValue(1, 0)
	// Jobs at one priority and no cmdprio: none.
	if p := groupPrios([]JobResult{job(be1, lat(1, 2), nil), job(be1, lat(3), nil)}); p[Read] != nil {
		t.Errorf("one priority: %v", p[Read])
	}
	// At two: each job's clat under its own.
	p := groupPrios([]JobResult{job(be1, lat(1, 2), nil), job(be6, lat(3), nil), job(be1, lat(4), nil)})
	if len(p[Read]) != 2 || p[Read][0].Prio != be1 || p[Read][0].Lat.Stat.N != 3 || p[Read][1].Prio != be6 || p[Read][1].Lat.Stat.N != 1 {
		t.Errorf("two priorities: %+v", p[Read])
	}
	// A cmdprio job's own per priority, merged with the other's whole.
	p = groupPrios([]JobResult{job(0, lat(1, 2, 3), []PrioLat{{Prio: 0, Lat: lat(1)}, {Prio: rt0, Lat: lat(2, 3)}}), job(0, lat(5), nil)})
	if len(p[Read]) != 2 || p[Read][0].Lat.Stat.N != 2 || p[Read][1].Prio != rt0 || p[Read][1].Lat.Stat.N != 2 {
		t.Errorf("cmdprio and not: %+v", p[Read])
	}
	if p[Write] != nil && p[Write][0].Lat.Stat.N != 0 {
		t.Errorf("writes: %+v", p[Write])
	}
}
