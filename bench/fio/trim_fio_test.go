package fio

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/testdev"
)

// trimArgs are four jobs, one after another, one of each trimming rw
// mode on engine (a trims' block size of its own in randtrim's), all
// size-based: fio 3.33 and iolab must issue the same trims and writes.
// No offset for randtrimwrite: fio 3.33 adds it twice to the paired
// write's offset and ends the job after one trim (docs/fio.md).
func trimArgs(dev, engine string) []string {
	depth := "--iodepth=4"
	if engine == "psync" {
		depth = "--iodepth=1" // fio notes a sync engine's depth of 4
	}
	return []string{"--filename=" + dev, "--bs=4k", "--size=2m", "--ioengine=" + engine, depth,
		"--name=trim", "--rw=trim",
		"--name=randtrim", "--stonewall", "--rw=randtrim", "--bs=4k,4k,16k",
		"--name=trimwrite", "--stonewall", "--rw=trimwrite",
		"--name=randtrimwrite", "--stonewall", "--rw=randtrimwrite", "--size=512k"}
}

// TestTrimsMatchFio runs the trimming modes with fio 3.33 and with iolab,
// on each of the engines fio trims with inside ->queue, on one loop device
// (which discards): the JSON's values that do not depend on timing —
// each direction's I/Os and bytes, trimwrite's writes included, the
// depths, submits and reaps — are equal, every member in fio's place;
// the normal outputs have one shape (the trim and TRIM lines, issued
// rwts); the terse lines (version 5, which has trims) match field by
// field.
func TestTrimsMatchFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	for _, engine := range []string{"io_uring", "libaio", "psync"} {
		t.Run(engine, func(t *testing.T) {
			args := trimArgs(dev, engine)
			fioJSON := runFio(t, fio, "", append([]string{"--output-format=json"}, args...)...)
			cfg, res := runIolab(t, args...)
			ours := writtenJSON(t, NewReport(res, cfg, false))
			c := &jsonComparison{t: t}
			c.compare("", decodeOrdered(t, fioJSON), decodeOrdered(t, ours))

			// What the comparison rests on: trims and writes were done.
			// randtrim's 16k trims look their blocks up in a random map of
			// 4k bits, as fio's do (randpick.go uniform): fewer than 128.
			want := map[string][3]uint64{ // I/Os read, written, trimmed
				"trim": {0, 0, 512}, "randtrim": {0, 0, 0}, "trimwrite": {0, 512, 512}, "randtrimwrite": {0, 128, 128},
			}
			for _, g := range res.Groups {
				for _, j := range g.Jobs {
					got := [3]uint64{j.Dirs[bench.Read].IOs, j.Dirs[bench.Write].IOs, j.Dirs[bench.Trim].IOs}
					if j.Name == "randtrim" && got[bench.Trim] > 0 && got[bench.Trim] < 128 {
						got[bench.Trim] = 0
					}
					if got != want[j.Name] || j.Error != "" {
						t.Errorf("%s: %v I/Os (%s), want %v", j.Name, got, j.Error, want[j.Name])
					}
				}
			}

			// fio's own JSON imported keeps its trims.
			imp, err := ParseFio(fioJSON)
			if err != nil {
				t.Fatal(err)
			}
			for gi, g := range imp.Result.Groups {
				for ji, j := range g.Jobs {
					if ours := res.Groups[gi].Jobs[ji].Dirs; j.Dirs[bench.Trim].IOs != ours[bench.Trim].IOs || j.Dirs[bench.Trim].Bytes != ours[bench.Trim].Bytes ||
						j.Dirs[bench.Trim].Clat.Stat.N != ours[bench.Trim].IOs {
						t.Errorf("%s imported: trims %d (%d bytes, %d clat), iolab's %d", j.Name, j.Dirs[bench.Trim].IOs, j.Dirs[bench.Trim].Bytes, j.Dirs[bench.Trim].Clat.Stat.N, ours[bench.Trim].IOs)
					}
				}
			}

			fioNormal := runFio(t, fio, "", args...)
			var normal bytes.Buffer
			if err := WriteNormal(&normal, res, cfg); err != nil {
				t.Fatal(err)
			}
			if w, g := normalShape(string(fioNormal)), normalShape(normal.String()); !slices.Equal(w, g) {
				t.Errorf("the normal outputs differ in shape\nfio:\n%s\niolab:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
			}
			if !strings.Contains(normal.String(), "  trim: IOPS=") || !strings.Contains(normal.String(), "   TRIM: bw=") ||
				!strings.Contains(normal.String(), "issued rwts: total=0,512,512,0") {
				t.Errorf("iolab's normal output lacks the trims:\n%s", normal.Bytes())
			}

			fioTerse := runFio(t, fio, "", append([]string{"--output-format=terse", "--terse-version=5"}, args...)...)
			var terse bytes.Buffer
			if err := WriteTerse(&terse, res, cfg, 5); err != nil {
				t.Fatal(err)
			}
			compareTerse(t, 5, fioTerse, terse.Bytes())
			if t.Failed() {
				t.Logf("fio:\n%s\niolab:\n%s\n%s", fioJSON, ours, normal.Bytes())
			}
		})
	}
}

// TestTrimWritePassesMatchFio: trimwrite jobs of several passes issue
// what fio 3.33's do — io_size counts trims and writes between passes
// (keep_running), the writes alone within one (io_bytes_exceeded), loops
// run the region again, number_ios counts both — per direction, I/Os and
// bytes. (The depth shares of a job of several passes differ from fio's
// for every rw mode: iolab does not drain the queue between passes.)
func TestTrimWritePassesMatchFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	args := []string{"--filename=" + dev, "--bs=4k", "--ioengine=io_uring", "--iodepth=4",
		"--name=io_size", "--rw=trimwrite", "--size=1m", "--io_size=3m",
		"--name=loops", "--stonewall", "--rw=randtrimwrite", "--size=256k", "--loops=2",
		"--name=short-io_size", "--stonewall", "--rw=randtrimwrite", "--size=1m", "--io_size=1536k",
		"--name=number_ios", "--stonewall", "--rw=trimwrite", "--size=1m", "--number_ios=10"}
	imp, err := ParseFio(runFio(t, fio, "", append([]string{"--output-format=json"}, args...)...))
	if err != nil {
		t.Fatal(err)
	}
	_, res := runIolab(t, args...)
	for gi, g := range imp.Result.Groups {
		for ji, theirs := range g.Jobs {
			ours := res.Groups[gi].Jobs[ji]
			for d, name := range dirNames {
				if w, o := theirs.Dirs[d], ours.Dirs[d]; w.IOs != o.IOs || w.Bytes != o.Bytes {
					t.Errorf("%s: iolab %s %d I/Os of %d bytes, fio %d of %d", theirs.Name, name, o.IOs, o.Bytes, w.IOs, w.Bytes)
				}
			}
			if ours.Dirs[bench.Trim].IOs == 0 || ours.Dirs[bench.Trim].IOs != ours.Dirs[bench.Write].IOs {
				t.Errorf("%s: %d trims, %d writes; want as many of each", ours.Name, ours.Dirs[bench.Trim].IOs, ours.Dirs[bench.Write].IOs)
			}
		}
	}
}
