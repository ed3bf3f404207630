package db

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseImport: any bytes given to iolab import or POST /api/import are
// a run to store or an error; never a panic. What it accepts stores.
func FuzzParseImport(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "randrw-io_uring-qd8.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"iolab_export":1,"run":{"name":"x","status":"done"},"steps":[]}`))
	f.Add([]byte(`{"fio version":"fio-3.33","jobs":[{"jobname":"a","groupid":0}]}`))
	store, err := Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, source, err := ParseImport(data, ImportOptions{})
		if err != nil {
			return
		}
		if _, _, err := store.ImportRun(context.Background(), doc, source); err != nil {
			t.Logf("accepted but not stored: %v", err)
		}
	})
}
