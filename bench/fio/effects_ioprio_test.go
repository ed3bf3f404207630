package fio

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"iolab/bench/testdev"
)

// The priority options' effect probes, side by side with fio 3.33 on one
// loop device: the witness is the block layer's own account of each
// request it issues (the block_rq_issue tracepoint, which shows the
// request's I/O priority), so a priority is seen where the device gets
// it — through ioprio_set on the job's thread, an io_uring SQE's ioprio
// or a libaio iocb's aio_reqprio alike. fio and iolab draw cmdprio's
// I/Os from the same seeded generator over the same random offsets, so
// the same sectors carry the same priorities.

// prioRuns runs the same job with fio and with iolab on a fresh loop
// device and returns the requests each issued to it.
func prioRuns(t *testing.T, args ...string) (fio, ours []testdev.Request) {
	t.Helper()
	fioBin := lookFio(t)
	dev := testdev.Loop(t, 8<<20)
	bt := testdev.TraceRequests(t, dev)
	job := append([]string{"--name=p", "--filename=" + dev, "--direct=1", "--size=1m"}, args...)
	runFio(t, fioBin, "", append(slices.Clone(job), "--output=/dev/null")...)
	fio = bt.Take()
	run(t, job...)
	ours = bt.Take()
	if len(fio) == 0 || len(ours) == 0 {
		t.Fatalf("%v: fio issued %d requests, iolab %d", args, len(fio), len(ours))
	}
	return fio, ours
}

// prioCounts counts requests per priority ("rt/0") and size.
func prioCounts(reqs []testdev.Request) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		out[fmt.Sprintf("%s %dk", r.Prio(), r.Bytes>>10)]++
	}
	return out
}

// prioBySector is each sector's request's priority.
func prioBySector(reqs []testdev.Request) map[uint64]string {
	out := map[uint64]string{}
	for _, r := range reqs {
		out[r.Sector] = r.Prio()
	}
	return out
}

// samePrios fails unless iolab's requests carry fio's priorities: the
// same number per priority and size, and with sectors each sector the
// same priority.
func samePrios(t *testing.T, fio, ours []testdev.Request, sectors bool) {
	t.Helper()
	if f, o := prioCounts(fio), prioCounts(ours); !maps.Equal(f, o) {
		t.Errorf("requests per priority: iolab %v, fio %v", o, f)
	}
	if !sectors {
		return
	}
	f, o := prioBySector(fio), prioBySector(ours)
	diff := 0
	for s, p := range f {
		if o[s] != p {
			diff++
		}
	}
	if diff > 0 || len(f) != len(o) {
		t.Errorf("%d of %d sectors carry another priority than fio's", diff, len(f))
	}
}

// onlyPrios fails unless every request carries one of want.
func onlyPrios(t *testing.T, reqs []testdev.Request, want ...string) {
	t.Helper()
	for _, r := range reqs {
		if !slices.Contains(want, r.Prio()) {
			t.Fatalf("a request at sector %d carries %s, want %s", r.Sector, r.Prio(), strings.Join(want, " or "))
		}
	}
}

// writes are the write requests of reqs.
func writes(reqs []testdev.Request) []testdev.Request {
	var out []testdev.Request
	for _, r := range reqs {
		if strings.HasPrefix(r.RWBS, "W") {
			out = append(out, r)
		}
	}
	return out
}

// share is the fraction of requests that carry prio.
func share(reqs []testdev.Request, prio string) float64 {
	n := 0
	for _, r := range reqs {
		if r.Prio() == prio {
			n++
		}
	}
	return float64(n) / float64(len(reqs))
}

func init() {
	// The thread's priority (ioprio_set) reaches every engine's I/O,
	// io_uring's with SQPOLL too, whose kernel thread submits them (it
	// shares the job thread's I/O context; iolab's SQEs carry the
	// priority as well, as fio's do). Without prio, the kernel takes the
	// thread's from its CPU nice (be/4).
	effects["prio"] = func(t *testing.T) {
		for _, engine := range [][]string{{"--ioengine=psync"}, {"--ioengine=libaio", "--iodepth=4"}, {"--ioengine=io_uring", "--sqthread_poll"}} {
			t.Run(engine[0], func(t *testing.T) {
				fio, ours := prioRuns(t, append(engine, "--rw=randread", "--size=256k", "--prio=6")...)
				onlyPrios(t, ours, "be/6")
				samePrios(t, fio, ours, true)
			})
		}
		refused(t, runErr(t, psyncJob(t, "--prio=8")...), "out of range")
	}
	effects["prioclass"] = func(t *testing.T) {
		fio, ours := prioRuns(t, "--ioengine=psync", "--rw=randread", "--size=256k", "--prioclass=3")
		onlyPrios(t, ours, "idle/0")
		samePrios(t, fio, ours, true)
		// A write job's checks read the device's first blocks before it
		// starts (its signatures): the job's requests are its writes.
		fio, ours = prioRuns(t, "--ioengine=io_uring", "--rw=write", "--bs=64k", "--prioclass=1", "--prio=2")
		fio, ours = writes(fio), writes(ours)
		onlyPrios(t, ours, "rt/2")
		samePrios(t, fio, ours, true)
		refused(t, runErr(t, psyncJob(t, "--prioclass=4")...), "out of range")
	}
	// cmdprio's share of a randread's I/Os go real-time (its default
	// class), each I/O its own, the others keep the thread's class: the
	// same I/Os as fio's.
	effects["cmdprio_percentage"] = func(t *testing.T) {
		for _, engine := range []string{"libaio", "io_uring"} {
			t.Run(engine, func(t *testing.T) {
				fio, ours := prioRuns(t, "--ioengine="+engine, "--iodepth=4", "--rw=randread", "--prioclass=3", "--cmdprio_percentage=30")
				onlyPrios(t, ours, "rt/0", "idle/0")
				if s := share(ours, "rt/0"); s < 0.2 || s > 0.4 {
					t.Errorf("cmdprio_percentage=30: %.0f%% of the requests real-time", 100*s)
				}
				samePrios(t, fio, ours, true)
			})
		}
		// loops=3 goes over the region three times, each pass re-seeded
		// (fio's clear_io_state, with randrepeat), the draws too: every
		// pass gives the same blocks the same priorities. (A time_based
		// job's passes are not re-seeded, in fio or iolab.)
		t.Run("loops", func(t *testing.T) {
			fio, ours := prioRuns(t, "--ioengine=libaio", "--iodepth=4", "--rw=randread", "--size=64k", "--loops=3", "--cmdprio_percentage=50")
			for tool, reqs := range map[string][]testdev.Request{"fio": fio, "iolab": ours} {
				seen := map[uint64]string{}
				for _, r := range reqs {
					if p, ok := seen[r.Sector]; ok && p != r.Prio() {
						t.Fatalf("%s: sector %d carried %s in one pass, %s in another", tool, r.Sector, p, r.Prio())
					}
					seen[r.Sector] = r.Prio()
				}
				if len(reqs) != 3*len(seen) {
					t.Fatalf("%s: %d requests over %d blocks, want 3 passes", tool, len(reqs), len(seen))
				}
			}
			samePrios(t, fio, ours, true)
		})
		// Reads and writes each their own share: randrw's writes only.
		// Which I/O is a write is the mix's draw, not fio's sequence:
		// fio's requests pass the same checks.
		fio, ours := prioRuns(t, "--ioengine=libaio", "--iodepth=4", "--rw=randrw", "--cmdprio_percentage=0,50")
		for tool, reqs := range map[string][]testdev.Request{"fio": fio, "iolab": ours} {
			for _, r := range reqs {
				if r.Class == "rt" && !strings.HasPrefix(r.RWBS, "W") {
					t.Fatalf("%s, cmdprio_percentage=0,50: a %s request at sector %d is real-time", tool, r.RWBS, r.Sector)
				}
			}
			if s := share(reqs, "rt/0"); s < 0.15 || s > 0.35 {
				t.Errorf("%s, cmdprio_percentage=0,50 of randrw: %.0f%% of all requests real-time, want about 25%%", tool, 100*s)
			}
		}
		refused(t, runErr(t, psyncJob(t, "--cmdprio_percentage=50")...), "cmdprio_percentage is an io_uring and libaio option")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--ioengine=libaio", "--cmdprio_percentage=101"), "out of range")
	}
	effects["cmdprio_class"] = func(t *testing.T) {
		fio, ours := prioRuns(t, "--ioengine=libaio", "--iodepth=4", "--rw=randread", "--cmdprio_percentage=50", "--cmdprio_class=3")
		onlyPrios(t, ours, "idle/0", "be/4")
		if s := share(ours, "idle/0"); s < 0.35 || s > 0.65 {
			t.Errorf("cmdprio_class=3 on half the I/Os: %.0f%% of the requests idle", 100*s)
		}
		samePrios(t, fio, ours, true)
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--ioengine=libaio", "--cmdprio_percentage=50", "--cmdprio_class=0"), "out of range")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--ioengine=libaio", "--cmdprio_class=3"), "no effect without cmdprio_percentage")
	}
	effects["cmdprio"] = func(t *testing.T) {
		fio, ours := prioRuns(t, "--ioengine=io_uring", "--iodepth=4", "--rw=randread", "--cmdprio_percentage=50", "--cmdprio_class=2", "--cmdprio=7")
		onlyPrios(t, ours, "be/7", "be/4")
		if s := share(ours, "be/7"); s < 0.35 || s > 0.65 {
			t.Errorf("cmdprio=7 on half the I/Os: %.0f%% of the requests at level 7", 100*s)
		}
		samePrios(t, fio, ours, true)
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--ioengine=io_uring", "--cmdprio=7"), "no effect without cmdprio_percentage")
	}
	// Per block size: every 4k read real-time; a quarter of the 16k ones
	// idle at level 7 (an entry's own class and level), the rest keep the
	// thread's, and so do 16k reads the random map cut short (fio matches
	// an I/O's length). Which reads are 4k is bssplit's draw, not fio's
	// sequence: fio's requests pass the same checks.
	effects["cmdprio_bssplit"] = func(t *testing.T) {
		fio, ours := prioRuns(t, "--ioengine=libaio", "--iodepth=4", "--rw=randread", "--size=4m", "--bssplit=4k/50:16k/50",
			"--cmdprio_bssplit=4k/100:16k/25/3/7")
		for tool, reqs := range map[string][]testdev.Request{"fio": fio, "iolab": ours} {
			n16, idle := 0, 0
			for _, r := range reqs {
				switch {
				case r.Bytes == 4096 && r.Prio() != "rt/0", r.Bytes != 4096 && r.Bytes != 16384 && r.Prio() != "be/4":
					t.Fatalf("%s: a %d-byte request at sector %d carries %s", tool, r.Bytes, r.Sector, r.Prio())
				case r.Bytes == 16384:
					n16++
					switch r.Prio() {
					case "idle/7":
						idle++
					case "be/4":
					default:
						t.Fatalf("%s: a 16k request at sector %d carries %s", tool, r.Sector, r.Prio())
					}
				}
			}
			if s := float64(idle) / float64(n16); n16 < 50 || s < 0.15 || s > 0.35 {
				t.Errorf("%s, 16k/25/3/7: %d of %d 16k requests idle/7, want about 25%%", tool, idle, n16)
			}
		}
		aio := func(extra ...string) []string {
			return append([]string{"--name=e", "--filename=" + file(t, 1<<20), "--ioengine=libaio"}, extra...)
		}
		refused(t, runErr(t, aio("--cmdprio_bssplit=4k/50", "--cmdprio_percentage=10")...), "mutually exclusive")
		refused(t, runErr(t, aio("--cmdprio_bssplit=4k/60:4k/50")...), "exceeds 100")
		refused(t, runErr(t, aio("--cmdprio_bssplit=4k/50/1")...), "bs/percent/class/level")
	}
}
