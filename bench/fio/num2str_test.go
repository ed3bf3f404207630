package fio

import "testing"

// TestNum2Str checks num2str against what fio 3.33 printed for the same
// numbers (its normal output's IOPS, bandwidth, sizes and latencies).
func TestNum2Str(t *testing.T) {
	for _, c := range []struct {
		num    uint64
		maxlen int
		pow2   bool
		unit   string
		want   string
	}{
		{9868, 4, false, "", "9868"},        // IOPS=9868
		{64000, 4, false, "", "64.0k"},      // IOPS=64.0k
		{21333, 4, false, "", "21.3k"},      // IOPS=21.3k
		{4096, 4, true, "B", "4096B"},       // bs=(R) 4096B-4096B
		{65536, 4, true, "B", "64.0KiB"},    // bs=(R) 64.0KiB-64.0KiB
		{1 << 20, 4, true, "B", "1024KiB"},  // bs=(R) 1024KiB-1024KiB
		{4 << 20, 4, true, "B", "4096KiB"},  // (4096KiB/16msec)
		{8 << 20, 4, false, "B", "8389kB"},  // io=8192KiB (8389kB)
		{80848896, 4, true, "B", "77.1MiB"}, // (77.1MiB/2001msec)
		{1000 * (4 << 20) / 16, 4, true, "B/s", "250MiB/s"},
		{1000 * (4 << 20) / 16, 4, false, "B/s", "262MB/s"},
		{1000 * (8 << 20) / 19, 4, true, "B/s", "421MiB/s"},
		{1000 * (8 << 20) / 19, 4, false, "B/s", "442MB/s"},
		{1774, 6, false, "", "1774"},               // slat min=1774
		{4572123, 6, false, "", "4572.1k"},         // slat max=4572.1k
		{13302400, 6, false, "", "13302k"},         // clat max=13302k
		{13302600, 6, false, "", "13303k"},         // carried
		{999_999_999, 4, false, "", "1000M"},       // 999999.999k does not fit: M, carried
		{30926, 6, false, "", "30926"},             // IOPS=30926 (significant_figures=6)
		{126673501, 6, true, "B/s", "123705KiB/s"}, // BW=123705KiB/s
		{126673501, 6, false, "B/s", "126674kB/s"},
		{90000, 4, false, "", "90.0k"},        // fio keeps the zero
		{50123, 2, false, "", "50k"},          // IOPS=50k (significant_figures=2)
		{50823, 2, false, "", "51k"},          // no decimals fit: rounded
		{209715200, 2, true, "B/s", "0GiB/s"}, // fio: "BW=0GiB/s" at 200 MiB/s
		{100270000, 4, true, "B/s", "95.6MiB/s"},
		{1638400000, 4, true, "B/s", "1563MiB/s"},
		{0, 4, false, "", "0"},
	} {
		if got := num2str(c.num, c.maxlen, 1, c.pow2, c.unit); got != c.want {
			t.Errorf("num2str(%d, %d, pow2 %v, %q) = %q, want %q", c.num, c.maxlen, c.pow2, c.unit, got, c.want)
		}
	}
}
