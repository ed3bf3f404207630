package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesDataDir: `iolab serve` and `iolab agent` do not start
// on a data directory runs must not write into, and say which and what
// to do; nothing is made, not even the store.
func TestServeRefusesDataDir(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	etc := filepath.Join(dir, "etc")
	os.Symlink("/etc", etc)
	tests := []struct{ dataDir, want string }{
		{"/", "--data-dir /: it is a system directory"},
		{"/sys/block/loop0/queue", "--data-dir /sys/block/loop0/queue: it is in /sys, which is never data"},
		{"/dev/shm", "it is in /dev"},
		{etc, "symlink to /etc"},
		{open, "chmod 700 " + open},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{
			{"serve", "--listen", "127.0.0.1:0"},
			{"agent", "--dashboard", "http://127.0.0.1:9", "--token", "iolab_1_x"},
		} {
			t.Run(cmd[0]+" "+tt.dataDir, func(t *testing.T) {
				store := filepath.Join(dir, cmd[0]+".db")
				var out, errOut bytes.Buffer
				err := run(append(cmd, "--db", store, "--data-dir", tt.dataDir), &out, &errOut)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("%s --data-dir %s: %v; want a refusal saying %q", cmd[0], tt.dataDir, err, tt.want)
				}
				if _, err := os.Stat(store); err == nil {
					t.Errorf("the store %s was made before the data directory was refused", store)
				}
			})
		}
	}
}
