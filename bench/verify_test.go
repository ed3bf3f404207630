package bench

import (
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench/guard"
	"iolab/bench/verify"
)

func TestVerifyState(t *testing.T) {
	v := &verifier{job: &Job{Name: "a/b"}, thread: 3, numberio: 10, writes: 10,
		lastComp: [][]int64{make([]int64, 4)}, lastIdx: []int{0}}
	for i := range 10 {
		v.lastComp[0][v.lastIdx[0]] = int64(i) * 4096
		v.lastIdx[0] = (v.lastIdx[0] + 1) % 4
	}
	name := filepath.Join(t.TempDir(), verifyStateName("a/b", 2))
	if !strings.HasSuffix(name, "local-a.b-2-verify.state") {
		t.Errorf("state name %s", name)
	}
	if err := v.saveState(name); err != nil {
		t.Fatal(err)
	}
	s, err := loadVerifyState(guard.Unrestricted(), name)
	if err != nil {
		t.Fatal(err)
	}
	if s.numberio != 10 || s.depth != 4 || len(s.comps) != 4 || s.comps[0].off != 9*4096 {
		t.Fatalf("loaded %+v", s)
	}
	// Pieces 0..9 are verified, 10 is not.
	for i := range 11 {
		stop := s.shouldStop(uint64(i), verifyPiece{off: int64(i) * 4096})
		if stop != (i == 10) {
			t.Errorf("piece %d: stop=%v", i, stop)
		}
	}
}

func TestLatestPieces(t *testing.T) {
	ps := []verifyPiece{{off: 0, numberio: 0}, {off: 4096, numberio: 1}, {off: 0, numberio: 2}}
	got := latestPieces(ps)
	if len(got) != 2 || got[0].off != 4096 || got[1].numberio != 2 {
		t.Errorf("latest = %+v", got)
	}
}

func TestMergeVerify(t *testing.T) {
	a := &VerifyResult{Reads: DirResult{IOs: 2, Bytes: 8192}, Runtime: 3}
	b := &VerifyResult{Reads: DirResult{IOs: 1, Bytes: 4096}, Runtime: 5, Failed: &verify.Error{Offset: 4096}}
	a.Reads.Clat.Add(100)
	b.Reads.Clat.Add(300)
	m := mergeVerify(a, b)
	if m.Reads.IOs != 3 || m.Reads.Bytes != 12288 || m.Runtime != 5 || m.Failed == nil || m.Reads.Clat.Stat.N != 2 || a.Reads.IOs != 2 {
		t.Errorf("merged %+v (a now %+v)", m, a)
	}
	if mergeVerify(nil, nil) != nil || mergeVerify(nil, b).Reads.IOs != 1 {
		t.Error("merging with nothing")
	}
}
