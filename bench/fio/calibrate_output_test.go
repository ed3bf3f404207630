package fio

import (
	"context"
	"strings"
	"testing"
)

// Calibrate refuses job options that would redirect or reformat fio's
// output, naming the one given: --minimal is terse output.
func TestCalibrateRefusesOutputOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--name=x", "--minimal"}, "--output-format=terse (or fio's --minimal)"},
		{[]string{"--name=x", "--output-format=json"}, "--output-format=json"},
		{[]string{"--name=x", "--output=/tmp/x"}, "--output=/tmp/x"},
	} {
		_, err := Calibrate(context.Background(), nil, "fio", tc.args, 1, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "calibrate's own --output-format=json") {
			t.Errorf("calibrate %v: %v, want it to name %s", tc.args, err, tc.want)
		}
	}
	// Its reports would be fio's and iolab's runs' alike, and neither is
	// what calibrate prints.
	if _, err := Calibrate(context.Background(), nil, "fio", []string{"--name=x", "--status-interval=1"}, 1, nil); err == nil || !strings.Contains(err.Error(), "--status-interval") {
		t.Errorf("calibrate --status-interval=1: %v, want it refused by name", err)
	}
}
