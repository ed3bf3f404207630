package fio

import (
	"slices"
	"strings"
	"testing"
)

// TestOutputFormats: --output-format takes several formats joined by
// commas and --append-terse adds terse to those chosen so far, as fio
// 3.33 does (a later --output-format replaces them, a later
// --append-terse adds to them); the run writes them in fio's order,
// terse, JSON, normal, whatever order they were given in.
func TestOutputFormats(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"normal"}},
		{[]string{"--output-format=json,normal"}, []string{"json", "normal"}},
		{[]string{"--output-format=normal,terse"}, []string{"terse", "normal"}},
		{[]string{"--output-format=normal,csv,minimal"}, []string{"terse", "normal"}},
		{[]string{"--output-format=json+,json,terse"}, []string{"terse", "json+"}},
		{[]string{"--append-terse"}, []string{"terse", "normal"}},
		{[]string{"--append-terse=1"}, []string{"terse", "normal"}},
		{[]string{"--append-terse", "--output-format=json"}, []string{"json"}},
		{[]string{"--output-format=json", "--append-terse"}, []string{"terse", "json"}},
		{[]string{"--minimal", "--append-terse"}, []string{"terse"}},
		{[]string{"--append-terse", "--minimal"}, []string{"terse"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cfg, err := ParseArgs(append(slices.Clone(tc.args), "--name=a", "--filename=f", "--size=1m"))
			if err != nil {
				t.Fatal(err)
			}
			if got := OutputFormats(cfg); !slices.Equal(got, tc.want) {
				t.Errorf("formats %q, want %q", got, tc.want)
			}
		})
	}
}
