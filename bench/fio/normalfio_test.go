package fio

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"iolab/bench/testdev"
)

// TestNormalMatchesFio runs the same jobs with fio 3.33 and with iolab on
// one loop device and compares their normal output line by line, numbers
// left out: the same lines in the same order, each with the same words
// and punctuation. Lines whose count depends on the numbers (clat
// percentile rows, lat buckets) count as one, units (KiB/s or MiB/s, usec
// or msec) are left out as the numbers are, and so are the bw and iops
// lines, which fio prints only once it has 500 ms samples. The
// differences iolab means are normalised first: its version line,
// "threads" for fio's "processes", and its iostat line after each disk.
func TestNormalMatchesFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	args := []string{"--filename=" + dev, "--direct=1", "--bs=4k", "--size=2m",
		"--name=aio", "--rw=randrw", "--ioengine=libaio", "--iodepth=4",
		"--name=sync", "--stonewall", "--rw=read", "--ioengine=psync", "--numjobs=2", "--description=the sync jobs",
		"--name=fsync", "--stonewall", "--rw=write", "--ioengine=pvsync2", "--fsync=16", "--fdatasync=5"}
	fioOut := runFio(t, fio, "", args...)
	cfg, res := runIolab(t, args...)
	var ours bytes.Buffer
	if err := WriteNormal(&ours, res, cfg); err != nil {
		t.Fatal(err)
	}
	want, got := normalShape(string(fioOut)), normalShape(ours.String())
	if !slices.Equal(want, got) {
		t.Errorf("the outputs differ in shape\nfio:\n%s\niolab:\n%s\n\nfio's output:\n%s\niolab's:\n%s",
			strings.Join(want, "\n"), strings.Join(got, "\n"), fioOut, ours.Bytes())
	}
}

var (
	numbers     = regexp.MustCompile(`\d+(\.\d+)?([kKMGTPE]i?)?(B|bit)?(/s)?|\((nsec|usec|msec)\)`)
	spaces      = regexp.MustCompile(` +`)
	padded      = regexp.MustCompile(`= +`) // %5.02f and the like
	shapeRenams = strings.NewReplacer("processes", "threads", "process", "thread")
)

// normalShape is each line of a normal output with its numbers and dates
// replaced, repeated rows counted once, and iolab's own lines dropped.
func normalShape(out string) []string {
	var shape []string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "fio-"), strings.HasPrefix(line, Version+" on "):
			line = "VERSION"
		case strings.HasPrefix(line, "    iostat: "), strings.HasPrefix(line, "   bw ("), strings.HasPrefix(line, "   iops   "):
			continue
		}
		if i := strings.Index(line, ": pid="); i >= 0 {
			line = line[:i] + ": pid=N: DATE"
		}
		switch {
		case strings.HasPrefix(line, "     |"):
			line = "PERCENTILES"
		case strings.HasPrefix(line, "  lat ("):
			line = "LATENCY BUCKETS"
		}
		line = shapeRenams.Replace(line)
		line = numbers.ReplaceAllString(line, "N")
		line = spaces.ReplaceAllString(padded.ReplaceAllString(line, "="), " ")
		if n := len(shape); n > 0 && shape[n-1] == line && (line == "PERCENTILES" || line == "LATENCY BUCKETS") {
			continue
		}
		shape = append(shape, line)
	}
	return shape
}
