package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/db"
)

// smallMount mounts a tmpfs of size bytes on a directory under
// t.TempDir(), unmounted when the test ends.
func smallMount(t *testing.T, size int) string {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("mount a tmpfs (the test needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt
}

// fill writes a file on mnt's file system until it is full.
func fill(t *testing.T, mnt string) {
	t.Helper()
	f, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// Whatever is left, in smaller pieces.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
}

// TestStoreDiskFull: with the store's disk full, an import and a launch
// are the server's fault, not the request's: 507 with the store's path
// and what to do, and nothing half-stored.
func TestStoreDiskFull(t *testing.T) {
	mnt := smallMount(t, 8<<20)
	path := filepath.Join(mnt, "iolab.db")
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ts := newTestServer(t, Config{Store: store})
	fill(t, mnt)

	doc := exportDoc(t, func(e *db.Export) {
		e.Run.Plan = sweep.Plan{Name: "big", Repeat: 50}
		for i := range 50 {
			e.Steps = append(e.Steps, numbersStep(i, func(*bench.JobResult) {}))
			e.Steps[i].Step.Repeat = i
			e.Steps[i].Error = strings.Repeat("x", 8000)
		}
	})
	want := "the store's disk is full (" + path + "): free space, then retry"
	rec := ts.do(t, http.MethodPost, "/api/import", string(doc))
	if rec.Code != http.StatusInsufficientStorage || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("import on a full disk: %d %s", rec.Code, rec.Body)
	}
	plan := `{"name":"full","options":{"filename":"x.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"1s","time_based":1}}`
	rec = ts.do(t, http.MethodPost, "/api/runs", plan)
	if rec.Code != http.StatusInsufficientStorage || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("launch on a full disk: %d %s", rec.Code, rec.Body)
	}
	if err := os.Remove(filepath.Join(mnt, "fill")); err != nil {
		t.Fatal(err)
	}
	rec = ts.do(t, http.MethodPost, "/api/import", string(doc))
	if rec.Code != http.StatusCreated {
		t.Errorf("import once space is freed: %d %s", rec.Code, rec.Body)
	}
}

// TestStoreReadOnly: a store on a file system remounted read-only opens
// read-only: the dashboard's pages and the API's reads answer, every
// write answers 503 "read-only store" with the path.
func TestStoreReadOnly(t *testing.T) {
	mnt := smallMount(t, 32<<20)
	path := filepath.Join(mnt, "iolab.db")
	rw, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	run, _ := seedRun(t, rw, "kept", []string{"1", "4"}, 1)
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("", mnt, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open a read-only store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	if !store.ReadOnly() {
		t.Fatal("a store on a read-only mount is not ReadOnly")
	}
	ts := newTestServer(t, Config{Store: store})
	id := fmt.Sprint(run.ID)
	for _, page := range []string{"/", "/api/runs", "/runs/" + id, "/api/runs/" + id, "/runs/" + id + "/steps.csv", "/compare?run=" + id} {
		rec := ts.do(t, http.MethodGet, page, "")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "kept") {
			t.Errorf("GET %s on a read-only store: %d %.300s", page, rec.Code, rec.Body)
		}
	}
	want := "read-only store (" + path + ")"
	for _, w := range []struct{ method, target, body string }{
		{http.MethodPost, "/api/runs", `{"name":"new","options":{"filename":"x.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"1s","time_based":1}}`},
		{http.MethodPost, "/api/import", string(exportDoc(t, func(*db.Export) {}))},
		{http.MethodPatch, "/api/runs/" + id, `{"name":"renamed"}`},
		{http.MethodDelete, "/api/runs/" + id, ""},
	} {
		rec := ts.do(t, w.method, w.target, w.body)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s %s on a read-only store: %d %s", w.method, w.target, rec.Code, rec.Body)
		}
	}
	// Pruning is refused up front, even to the token's holder.
	admin := newTestServer(t, Config{Store: store, Token: "t0k"})
	for _, target := range []string{"/prune?keep=1", "/api/prune?keep=1"} {
		rec := admin.do(t, http.MethodGet, target, "", "Authorization", "Bearer t0k")
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only store") {
			t.Errorf("GET %s on a read-only store: %d %.300s", target, rec.Code, rec.Body)
		}
	}
	if r, err := store.GetRun(context.Background(), run.ID); err != nil || r.Name != "kept" {
		t.Errorf("the run after the refused writes: %+v %v", r, err)
	}
}
