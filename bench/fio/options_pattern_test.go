package fio

import (
	"slices"
	"testing"

	"iolab/bench"
)

func TestOptionPercentageRandom(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "80", want: []int{80, 80}},
		{in: "80,20", want: []int{80, 20}},
		{in: "80,20,5", want: []int{80, 20}}, // trims: iolab does none
		{in: "0", want: []int{0, 0}},
		{in: "100", want: []int{100, 100}},
		{in: "101", wantErr: "not a percentage from 0 to 100"},
		{in: "-1", wantErr: "not a percentage"},
		{in: "50,", wantErr: `"" is not a percentage`},
		{in: "1,2,3,4", wantErr: "at most three values"},
		{in: "50%", wantErr: "not a percentage"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			j := bench.NewJob()
			err := ApplyOption(&j, "percentage_random", tc.in)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !slices.Equal(j.PercentageRandom, tc.want) {
				t.Errorf("percentage_random=%s gave %v, want %v", tc.in, j.PercentageRandom, tc.want)
			}
		})
	}
}

// TestPatternOptionsReadBack: each pattern option reads back as it was
// set, so sweeps and the web form show it.
func TestPatternOptionsReadBack(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"random_distribution", "zipf:1.2", "zipf:1.2"},
		{"random_distribution", "zoned:60/10:40", "zoned:60/10:40/90"},
		{"random_generator", "lfsr", "lfsr"},
		{"percentage_random", "80,20", "80,20"},
		{"allrandrepeat", "1", "1"},
	} {
		j := bench.NewJob()
		o, _ := LookupOption(tc.name)
		if got := o.Get(&j); got != o.Default {
			t.Errorf("%s on fio's defaults reads %q, want its default %q", tc.name, got, o.Default)
		}
		if err := ApplyOption(&j, tc.name, tc.value); err != nil {
			t.Fatal(err)
		}
		if got := o.Get(&j); got != tc.want {
			t.Errorf("%s=%s reads back %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}

// TestLFSRZonedRefused: fio 3.33's LFSR walks the whole region from a
// zone's start; iolab refuses the pair.
func TestLFSRZonedRefused(t *testing.T) {
	_, err := ParseArgs([]string{"--name=e", "--filename=/dev/null", "--rw=randread", "--random_generator=lfsr", "--random_distribution=zoned_abs:100/1m"})
	checkErr(t, err, "fio 3.33's LFSR ignores the zones' bounds")
	if _, err := ParseArgs([]string{"--name=e", "--filename=/dev/null", "--rw=randread", "--random_generator=lfsr", "--random_distribution=zipf:1.2"}); err != nil {
		t.Error(err)
	}
}
