package db

import (
	"context"
	"reflect"
	"testing"
)

// TestRunsByID: the runs named, in the order named (twice when named
// twice), each as GetRun reads it; runs not stored are left out.
func TestRunsByID(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	var ids []int64
	for range 3 {
		id, err := s.CreateRun(ctx, testRun())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	runs, err := s.RunsByID(ctx, []int64{ids[2], 999, ids[0], ids[2]})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range runs {
		got = append(got, r.ID)
		one, err := s.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*one, r) {
			t.Errorf("run %d: %+v, GetRun reads %+v", r.ID, r, *one)
		}
	}
	if want := []int64{ids[2], ids[0], ids[2]}; !reflect.DeepEqual(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if runs, err := s.RunsByID(ctx, nil); err != nil || len(runs) != 0 {
		t.Errorf("no ids: %v %v", runs, err)
	}
}
