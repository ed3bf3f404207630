package testdev

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// NewHostileEnv builds what HostileTargets are replayed against, all
// removed when the test ends: two loop devices of size bytes (the allowed
// one, blank, and the victim, of random bytes), an allowed file of size
// bytes, a symlink and a device node (made with mknod in a test
// directory) to the allowed device, a victim file of size random bytes,
// and dataDir (made if "", else used as it is).
func NewHostileEnv(t testing.TB, dataDir string, size int64) HostileEnv {
	t.Helper()
	// The victims hold random bytes: a write of zeros (a job's buffers may
	// be) must change them too.
	noise := make([]byte, size)
	rand.Read(noise)
	e := HostileEnv{DataDir: dataDir, Allowed: Loop(t, size), Victim: AttachLoop(t, size, noise, false)}
	if e.DataDir == "" {
		e.DataDir, _ = filepath.EvalSymlinks(t.TempDir())
	}
	allowed, _ := filepath.EvalSymlinks(t.TempDir())
	e.AllowedFile = TempFileIn(t, allowed, "allowed.img", size)
	e.AllowedLink = filepath.Join(allowed, "by-id-allowed")
	if err := os.Symlink(e.Allowed, e.AllowedLink); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(e.Allowed, &st); err != nil {
		t.Fatal(err)
	}
	e.AllowedNode = filepath.Join(allowed, "allowed-node")
	if err := unix.Mknod(e.AllowedNode, unix.S_IFBLK|0o600, int(st.Rdev)); err != nil {
		t.Fatal(err)
	}
	victims, _ := filepath.EvalSymlinks(t.TempDir())
	e.VictimFile = filepath.Join(victims, "victim.dat")
	rand.Read(noise)
	if err := os.WriteFile(e.VictimFile, noise, 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// Targets are the allow-list entries of e: the allowed device, file,
// symlink and node.
func (e HostileEnv) Targets() []string {
	return []string{e.Allowed, e.AllowedFile, e.AllowedLink, e.AllowedNode}
}

// Victims fingerprints e's victims (Fingerprint), to compare after.
func (e HostileEnv) Victims(t testing.TB) map[string]string {
	t.Helper()
	return map[string]string{e.Victim: Fingerprint(t, e.Victim), e.VictimFile: Fingerprint(t, e.VictimFile)}
}

// CheckVictims fails t if a victim's content differs from before.
func (e HostileEnv) CheckVictims(t testing.TB, before map[string]string) {
	t.Helper()
	for p, sum := range before {
		if got := Fingerprint(t, p); got != sum {
			t.Errorf("victim %s was written (%s, now %s)", p, sum[:12], got[:12])
		}
	}
}
