package db

import (
	"context"
	"os"
	"slices"
	"testing"
)

// TestImportGroup: fio's client output of three servers is three runs,
// each its server's, stored as one group; one server's output is no
// group; imported again, the same runs and group.
func TestImportGroup(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile("../bench/fio/testdata/client/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if exps, _ := ClientExports(read("client-one.jsonplus.json"), ImportOptions{}); exps != nil {
		t.Errorf("one server's output: %d runs, want none (one run, as ever)", len(exps))
	}
	exps, hosts := ClientExports(read("client-three.jsonplus.json"), ImportOptions{Hostname: "everyone"})
	want := []string{"10.213.241.2", "10.213.243.2", "10.213.242.2"}
	if len(exps) != 3 || !slices.Equal(hosts, want) {
		t.Fatalf("%d runs of %v, want 3 of %v", len(exps), hosts, want)
	}
	for i, e := range exps {
		if e.Run.Hostname != want[i] {
			t.Errorf("run %d's host %q, want its server %s", i, e.Run.Hostname, want[i])
		}
	}
	store, _ := openTest(t)
	ctx := context.Background()
	uid, ids, existed, err := store.ImportGroup(ctx, exps, hosts, "three", SourceFio)
	if err != nil || existed || len(ids) != 3 {
		t.Fatalf("import: %s %v %v %v", uid, ids, existed, err)
	}
	g, err := store.GetFleetRun(ctx, uid)
	if err != nil || g.Name != "three" || len(g.Members) != 3 || g.Members[2].RunID != ids[2] || g.Members[2].HostName != want[2] || g.Members[2].HostKind != HostFio {
		t.Fatalf("group %+v, %v", g, err)
	}
	again, ids2, existed, err := store.ImportGroup(ctx, exps, hosts, "three", SourceFio)
	if err != nil || !existed || again != uid || !slices.Equal(ids, ids2) {
		t.Errorf("again: %s %v %v %v; want %s %v, existing", again, ids2, existed, err, uid, ids)
	}
}
