package system

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTraceDevice(t *testing.T) {
	root := t.TempDir()
	write := func(name, attr, v string) {
		d := filepath.Join(root, "class", "block", name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, attr), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sda", "dev", "8:0")
	write("sda2", "dev", "8:2")
	write("sda2", "start", "2099200")
	s := FS{Sys: root}
	for _, c := range []struct {
		name string
		t    Target
		want TraceDevice
		err  bool
	}{
		{"disk", Target{Path: "/dev/sda", IsBlock: true, Disk: "sda"}, TraceDevice{Dev: [2]uint32{8, 0}, Disk: [2]uint32{8, 0}}, false},
		{"partition", Target{Path: "/dev/sda2", IsBlock: true, Disk: "sda", Partition: "sda2"}, TraceDevice{Dev: [2]uint32{8, 2}, Disk: [2]uint32{8, 0}, Start: 2099200}, false},
		{"file", Target{Path: "/tmp/f", Disk: "sda", Partition: "sda2"}, TraceDevice{Dev: [2]uint32{8, 2}, Disk: [2]uint32{8, 0}, Start: 2099200}, false},
		{"tmpfs", Target{Path: "/dev/shm/f", Filesystem: "tmpfs"}, TraceDevice{}, true},
		{"missing", Target{Path: "/dev/sdb", IsBlock: true, Disk: "sdb"}, TraceDevice{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.TraceDevice(c.t)
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if err == nil && got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
