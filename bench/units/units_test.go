package units

import (
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr string // substring of the error; "" for success
	}{
		{in: "0", want: 0},
		{in: "512", want: 512},
		{in: "4096b", want: 4096},
		{in: "4096B", want: 4096},
		{in: "4k", want: 4096},
		{in: "4K", want: 4096},
		{in: "4kb", want: 4096},
		{in: "4KB", want: 4096},
		{in: "1m", want: 1 << 20},
		{in: "1M", want: 1 << 20},
		{in: "2g", want: 2 << 30},
		{in: "1t", want: 1 << 40},
		{in: "1p", want: 1 << 50},
		{in: "0x100000", want: 1 << 20},
		{in: "4q", wantErr: `"4q" is not a size (use e.g. 4k, 1m)`},
		{in: "k", wantErr: "is not a size"},
		{in: "-4k", wantErr: "is not a size"},
		{in: "1.5m", wantErr: "is not a size"},
		{in: "4 k", wantErr: "is not a size"},
		{in: "4kbb", wantErr: "is not a size"},
		{in: "0x", wantErr: "is not a size"},
		{in: "0xfg", wantErr: "is not a size"},
		{in: "4KiB", wantErr: "1KiB is 1000 bytes"},
		{in: "1mib", wantErr: "write 1m for powers of 1024"},
		{in: "1Mi", wantErr: "power of 1024"},
		{in: "50%", wantErr: "percentages"},
		{in: "$pagesize", wantErr: "$keywords"},
		{in: "8192p", wantErr: "too large"},
		{in: "99999999999999999999", wantErr: "too large"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && got != tc.want {
				t.Errorf("ParseSize(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "10", want: 10 * time.Second},
		{in: "10s", want: 10 * time.Second},
		{in: "10S", want: 10 * time.Second},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "500msec", want: 500 * time.Millisecond},
		{in: "1000MS", want: time.Second},
		{in: "250us", want: 250 * time.Microsecond},
		{in: "250usec", want: 250 * time.Microsecond},
		{in: "2m", want: 2 * time.Minute},
		{in: "2M", want: 2 * time.Minute},
		{in: "1h", want: time.Hour},
		{in: "1d", want: 24 * time.Hour},
		{in: "10x", wantErr: `"10x" is not a duration (use e.g. 10, 10s, 500ms, 2m)`},
		{in: "s", wantErr: "is not a duration"},
		{in: "-1", wantErr: "is not a duration"},
		{in: "1.5", wantErr: "use a smaller unit (e.g. 1500ms)"},
		{in: "2sec", wantErr: `fio reads the unit "sec" as microseconds; write 2s`},
		{in: "2min", wantErr: "write 2m"},
		{in: "100000000d", wantErr: "too long"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && got != tc.want {
				t.Errorf("ParseDuration(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	for _, b := range []int64{1, 512, 1536, 4096, 1 << 20, 3 << 20, 1 << 30, 5 << 30} {
		s := FormatSize(b)
		got, err := ParseSize(s)
		if err != nil || got != b {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", b, s, got, err)
		}
	}
	if got := FormatSize(2 << 30); got != "2g" {
		t.Errorf("FormatSize(2 GiB) = %q, want 2g", got)
	}
}

func TestFormatDurationRoundTrips(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 90 * time.Second, 1500 * time.Millisecond, 250 * time.Microsecond} {
		s := FormatDuration(d)
		got, err := ParseDuration(s)
		if err != nil || got != d {
			t.Errorf("ParseDuration(FormatDuration(%v) = %q) = %v, %v", d, s, got, err)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"iodepth", "ioengine", "runtime"}
	for in, want := range map[string]string{"iodpeth": "iodepth", "IOENGINE": "ioengine", "xyz": ""} {
		if got := Closest(in, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case wantErr != "" && err == nil:
		t.Fatalf("no error, want one containing %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("error:\n got %s\nwant it to contain %s", err, wantErr)
	}
}

func TestNanos(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{0, "0ns"}, {812, "812ns"}, {1000, "1.00µs"}, {81234, "81.2µs"},
		{812345, "812µs"}, {4.1e6, "4.10ms"}, {12.34e6, "12.3ms"}, {2.5e9, "2.50s"},
	} {
		if got := Nanos(tc.ns); got != tc.want {
			t.Errorf("Nanos(%v) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}
