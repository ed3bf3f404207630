package fio

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"iolab/bench/testdev"
)

// TestPrioLatsMatchFio: the latency per I/O priority, side by side with
// fio 3.33 on a loop device — JSON's "prios" and the normal output's
// "clat prio" lines: the same priorities in the same order, under
// clat_ns or (lat_percentiles) lat_ns, and, where the draws are fio's,
// the same I/Os in each; none where a job ran at one priority; a
// group_reporting group of jobs at two priorities shows each job's I/Os
// under its own.
func TestPrioLatsMatchFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 4<<20)
	common := []string{"--filename=" + dev, "--direct=1", "--size=512k"}
	for _, c := range []struct {
		name  string
		args  []string
		exact bool // the same I/Os in each priority as fio's
		prios int  // fio's priorities of the first entry's reads
	}{
		{"cmdprio_percentage, libaio", []string{"--name=p", "--ioengine=libaio", "--iodepth=4", "--rw=randread", "--prioclass=3", "--cmdprio_percentage=37"}, true, 2},
		{"lat_percentiles, io_uring", []string{"--name=p", "--ioengine=io_uring", "--iodepth=4", "--rw=randread", "--cmdprio_percentage=60", "--cmdprio_class=2", "--cmdprio=1", "--lat_percentiles=1"}, true, 2},
		{"clat_percentiles=0", []string{"--name=p", "--ioengine=libaio", "--rw=randread", "--cmdprio_percentage=50", "--clat_percentiles=0"}, true, 2},
		{"cmdprio_bssplit", []string{"--name=p", "--ioengine=libaio", "--rw=randread", "--bssplit=4k/50:16k/50", "--cmdprio_bssplit=4k/100:16k/25/3/7"}, false, 3},
		{"one priority", []string{"--name=p", "--ioengine=psync", "--rw=randread", "--prio=3"}, true, 0},
		{"a group at two priorities", []string{"--ioengine=psync", "--rw=randread", "--group_reporting", "--name=p", "--prio=1", "--name=q", "--prio=6"}, true, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(slices.Clone(common), c.args...)
			fioOut := runFio(t, fio, "", append(slices.Clone(args), "--output-format=normal,json")...)
			reps, err := ParseReports(bytes.NewReader(fioOut))
			if err != nil {
				t.Fatal(err)
			}
			theirs := reps[0].Jobs
			if n := len(theirs[0].Read.Prios); n != c.prios {
				t.Fatalf("fio reports %d priorities, the test expects %d", n, c.prios)
			}
			// fio's output imports with its latencies per priority.
			imp, err := ImportFio(reps)
			if err != nil {
				t.Fatal(err)
			}
			if got := NewReport(imp.Result, &imp.Config, false).Jobs[0].Read.Prios; len(got) != c.prios {
				t.Errorf("fio's output imported: %d priorities written back, fio's %d", len(got), c.prios)
			}
			cfg, res := runIolab(t, args...)
			ours := NewReport(res, cfg, false).Jobs
			if len(ours) != len(theirs) {
				t.Fatalf("iolab reports %d jobs, fio %d", len(ours), len(theirs))
			}
			for i := range theirs {
				for d, dirs := range [][2]DirReport{{theirs[i].Read, ours[i].Read}, {theirs[i].Write, ours[i].Write}} {
					comparePrios(t, d, dirs[0].Prios, dirs[1].Prios, c.exact)
				}
			}
			var normal bytes.Buffer
			if err := WriteNormal(&normal, res, cfg); err != nil {
				t.Fatal(err)
			}
			want := prioLines(string(fioOut), c.exact)
			if (len(want) > 0) != (c.prios > 0) {
				t.Fatalf("fio's normal output has %d priority lines", len(want))
			}
			if got := prioLines(normal.String(), c.exact); !slices.Equal(got, want) {
				t.Errorf("normal output's priority lines:\niolab %q\nfio   %q", got, want)
			}
		})
	}
}

// comparePrios compares a direction's "prios" with fio's: the same
// priorities, in order, each under the same latency; with exact the
// same count of I/Os in each.
func comparePrios(t *testing.T, d int, theirs, ours []PrioReport, exact bool) {
	t.Helper()
	key := func(p PrioReport) (string, *LatReport) {
		if p.Lat != nil {
			return "lat_ns", p.Lat
		}
		return "clat_ns", p.Clat
	}
	if len(ours) != len(theirs) {
		t.Fatalf("%s: iolab has %d priorities, fio %d: %+v vs %+v", dirNames[d], len(ours), len(theirs), ours, theirs)
	}
	for i := range theirs {
		w, g := theirs[i], ours[i]
		wk, wl := key(w)
		gk, gl := key(g)
		if w.PrioClass != g.PrioClass || w.Prio != g.Prio || wk != gk || gl == nil {
			t.Errorf("%s priority %d: iolab %d/%d under %s, fio %d/%d under %s", dirNames[d], i, g.PrioClass, g.Prio, gk, w.PrioClass, w.Prio, wk)
			continue
		}
		if exact && gl.N != wl.N {
			t.Errorf("%s priority %d/%d: iolab %d I/Os, fio %d", dirNames[d], g.PrioClass, g.Prio, gl.N, wl.N)
		}
		if (len(gl.Percentile) == 0) != (len(wl.Percentile) == 0) {
			t.Errorf("%s priority %d/%d: iolab %d percentiles, fio %d", dirNames[d], g.PrioClass, g.Prio, len(gl.Percentile), len(wl.Percentile))
		}
	}
}

// prioLines are the normal output's per-priority lines, up to their
// unit ("clat prio 3/0 (", "clat prio 1/0 (37.11% of IOs) percentiles
// ("), without the share where the I/Os are not fio's.
func prioLines(out string, exact bool) []string {
	re := regexp.MustCompile(`^\s+(c?lat prio \d/\d( \([\d.]+% of IOs\))?( percentiles)? )\(`)
	share := regexp.MustCompile(` \([\d.]+% of IOs\)`)
	var lines []string
	for l := range strings.SplitSeq(out, "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			s := m[1]
			if !exact {
				s = share.ReplaceAllString(s, "")
			}
			lines = append(lines, s)
		}
	}
	return lines
}
