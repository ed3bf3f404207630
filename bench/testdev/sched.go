package testdev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OtherScheduler returns the active I/O scheduler of block device dev and
// another one it offers ("none [mq-deadline] kyber" in its sysfs
// scheduler file), failing the test when it offers one only.
func OtherScheduler(t testing.TB, dev string) (original, other string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "queue", "scheduler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range strings.Fields(string(b)) {
		if strings.HasPrefix(s, "[") {
			original = strings.Trim(s, "[]")
		} else if other == "" {
			other = s
		}
	}
	if original == "" || other == "" {
		t.Fatalf("%s: %q offers no second scheduler", dev, strings.TrimSpace(string(b)))
	}
	return original, other
}
