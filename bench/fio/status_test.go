package fio

import (
	"testing"
	"time"
)

// TestParseStatusInterval: --status-interval's value in fio's units (a bare
// number is seconds, as init.c's check_str_time reads it), kept in whole
// milliseconds as fio keeps it, on the command line before or after the
// jobs. Its refusals are rows of TestParseArgsErrors.
func TestParseStatusInterval(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--name=a"}, 0},
		{[]string{"--status-interval=1", "--name=a"}, time.Second},
		{[]string{"--status-interval", "2", "--name=a"}, 2 * time.Second},
		{[]string{"--name=a", "--status-interval=500ms"}, 500 * time.Millisecond},
		{[]string{"--status-interval=100ms", "--name=a"}, 100 * time.Millisecond},
		{[]string{"--status-interval=250500us", "--name=a"}, 250 * time.Millisecond},
		{[]string{"--status-interval=1m", "--name=a"}, time.Minute},
		{[]string{"--status-interval=24h", "--name=a"}, 24 * time.Hour},
	} {
		cfg, err := ParseArgs(tc.args)
		if err != nil {
			t.Errorf("ParseArgs(%q): %v", tc.args, err)
			continue
		}
		if cfg.StatusInterval != tc.want {
			t.Errorf("ParseArgs(%q).StatusInterval = %v, want %v", tc.args, cfg.StatusInterval, tc.want)
		}
	}
}
