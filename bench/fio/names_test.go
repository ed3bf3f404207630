package fio

import "testing"

func TestKnownToFio(t *testing.T) {
	for name, want := range map[string]bool{
		"iodepth": true, "readwrite": true, "hipri": true, // taken, an alias, an engine's
		"fsync": true, "debug": true, "minimal": true, "output-format": true, // fio's, not taken
		"iodeph": false, "sweep": false, "": false,
	} {
		if got := KnownToFio(name); got != want {
			t.Errorf("KnownToFio(%q) = %v, want %v", name, got, want)
		}
	}
}
