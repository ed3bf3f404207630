package launch

import (
	"os"
	"testing"
)

// TestMain keeps the device locks of this package's runs apart from other
// packages' tests, which run at the same time on the same disks.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "iolab-launch-locks")
	if err != nil {
		panic(err)
	}
	os.Setenv("IOLAB_LOCK_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
