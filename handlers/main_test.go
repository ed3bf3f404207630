package handlers

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"iolab/db"
)

// TestMain keeps the device locks of this package's runs apart from other
// packages' tests, which run at the same time on the same disks.
func TestMain(m *testing.M) {
	if path := os.Getenv("IOLAB_TEST_HOLD_RUN"); path != "" {
		os.Exit(holdRun(path))
	}
	dir, err := os.MkdirTemp("", "iolab-handlers-locks")
	if err != nil {
		panic(err)
	}
	os.Setenv("IOLAB_LOCK_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// holdRun is the other process of the attack tests: it records a running
// run in the store at path, prints its id, and holds it until its stdin
// closes — as `iolab run` holds the run it is running.
func holdRun(path string) int {
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer store.Close()
	id, err := store.CreateRun(ctx, &db.Run{Name: "held elsewhere", Status: db.StatusRunning})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(id)
	io.Copy(io.Discard, os.Stdin)
	return 0
}
