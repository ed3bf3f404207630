package report

import (
	"testing"

	"iolab/bench/system"
)

// iostat's awaits are latencies in ms; the step table writes them in the
// unit that suits them, as every latency is: a zram read of 0.00155 ms is
// 1.55 µs, and a direction without I/O has none.
func TestStepRowAwait(t *testing.T) {
	for _, c := range []struct {
		d            system.DiskUtilization
		read, writes string
	}{
		{system.DiskUtilization{ReadsPerSec: 1000, ReadAwait: 0.00155}, "1.55 µs", "–"},
		{system.DiskUtilization{ReadsPerSec: 10, ReadAwait: 2.5, WritesPerSec: 5, WriteAwait: 0.25}, "2.50 ms", "250 µs"},
	} {
		r := stepRowOf(stepFigures{HasResult: true, HasDisk: true, Disk: c.d})
		if r.RAwait != c.read || r.WAwait != c.writes {
			t.Errorf("r_await %g ms, w_await %g ms: %q, %q; want %q, %q", c.d.ReadAwait, c.d.WriteAwait, r.RAwait, r.WAwait, c.read, c.writes)
		}
	}
}
