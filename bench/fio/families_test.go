package fio

import (
	"slices"
	"testing"

	"iolab/bench"
)

// TestFamiliesCoverAllOptions: help lists the options by family and then
// by engine; together they must be AllOptions, in its order.
func TestFamiliesCoverAllOptions(t *testing.T) {
	var listed []string
	for _, f := range OptionFamilies() {
		if f.Name == "" || f.Help == "" {
			t.Errorf("family %q has no name or help", f.Name)
		}
		for _, o := range f.Options {
			listed = append(listed, o.Name)
		}
	}
	for _, e := range bench.Engines() {
		for _, o := range e.Options {
			listed = append(listed, o.Name)
		}
	}
	var all []string
	for _, o := range AllOptions() {
		all = append(all, o.Name)
	}
	if !slices.Equal(listed, all) {
		t.Errorf("families and engines list\n%v\nAllOptions\n%v", listed, all)
	}
}
