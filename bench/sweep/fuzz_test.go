package sweep

import (
	"errors"
	"strings"
	"testing"

	"iolab/bench"
)

// FuzzParseSweep: any --sweep value is a sweep on a known axis with
// values the axis takes, or an OptionError; never a panic, never an
// unbounded list.
func FuzzParseSweep(f *testing.F) {
	for _, s := range []string{"iodepth=1..256", "ioengine=io_uring+sqpoll+hipri,libaio", "scheduler=none,bfq",
		"numjobs=1,2,4", "bs=4k,1m", "rw=randread,randwrite", "iodepth=1..9223372036854775807", "iodepth=0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sw, err := ParseSweep(s)
		if err != nil {
			var oe *bench.OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("%q: error %v is not an OptionError", s, err)
			}
			return
		}
		spec, ok := LookupAxis(sw.Axis)
		if !ok || len(sw.Values) == 0 || len(sw.Values) > maxSweepValues {
			t.Fatalf("%q: axis %q with %d values", s, sw.Axis, len(sw.Values))
		}
		for _, v := range sw.Values {
			if strings.Contains(v, ",") {
				t.Fatalf("%q: value %q", s, v)
			}
			if err := spec.Check(v); err != nil {
				t.Fatalf("%q: value %q accepted, then refused: %v", s, v, err)
			}
		}
	})
}

// FuzzParseRepeat: --repeat is a count in range or auto within its
// bounds, or an error.
func FuzzParseRepeat(f *testing.F) {
	for _, s := range []string{"3", "auto", "auto:5%", "auto:2.5%:20", "auto:0%", "-1", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, a, err := ParseRepeat(s)
		switch {
		case err != nil:
		case a != nil && (a.Within <= 0 || a.Within >= 1 || a.Max < MinAutoRepeat || a.Max > maxRepeat):
			t.Fatalf("%q: %+v", s, *a)
		case a == nil && (n < 1 || n > maxRepeat):
			t.Fatalf("%q: %d repeats", s, n)
		}
	})
}
