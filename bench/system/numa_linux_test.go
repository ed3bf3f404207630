package system

import (
	"errors"
	"io/fs"
	"reflect"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNUMANodesFixture: a machine of four nodes — two of CPUs and memory,
// one of memory alone (CXL), one of CPUs alone.
func TestNUMANodesFixture(t *testing.T) {
	got, err := sysFixture("numa").NUMANodes()
	if err != nil {
		t.Fatal(err)
	}
	want := []NUMANode{
		{ID: 0, CPUs: []int{0, 1, 2, 3, 8, 9, 10, 11}, Memory: true},
		{ID: 1, CPUs: []int{4, 5, 6, 7, 12, 13, 14, 15}, Memory: true},
		{ID: 2, CPUs: []int{}, Memory: true},
		{ID: 3, CPUs: []int{16, 17}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// The server fixture has no node directory: a kernel without NUMA.
	if _, err := sysFixture("server").NUMANodes(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no node directory: %v, want fs.ErrNotExist", err)
	}
}

// TestNUMANodesLive: this machine has node 0 at least, and every CPU it
// runs on belongs to one of its nodes.
func TestNUMANodesLive(t *testing.T) {
	nodes, err := FS{}.NUMANodes()
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, n := range nodes {
		for _, c := range n.CPUs {
			seen[c] = true
		}
	}
	if len(nodes) == 0 || nodes[0].ID != 0 || !nodes[0].Memory {
		t.Fatalf("nodes %+v: want node 0, with memory, first", nodes)
	}
	for c := range runtime.NumCPU() {
		if set.IsSet(c) && !seen[c] {
			t.Errorf("CPU %d is in no node of %+v", c, nodes)
		}
	}
}

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0", []int{0}, true}, {"0-3,8", []int{0, 1, 2, 3, 8}, true}, {"", []int{}, true}, {" 2,1,2 ", []int{1, 2}, true},
		{"3-1", nil, false}, {"a", nil, false}, {"1,", nil, false}, {"-1", nil, false},
	} {
		got, err := ParseList(tc.in)
		if (err == nil) != tc.ok || tc.ok && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseList(%q) = %v, %v", tc.in, got, err)
		}
	}
}
