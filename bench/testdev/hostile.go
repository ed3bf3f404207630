package testdev

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// HostileEnv is what the hostile targets are built from: what a front
// door allows (a device, a regular file, a symlink to the device, a data
// directory) and what nobody allowed (a device and a file) — the victims
// whose bytes must not change.
type HostileEnv struct {
	DataDir     string // runs may make and use regular files inside it
	Allowed     string // an allowed block device
	AllowedFile string // an allowed regular file, outside DataDir
	AllowedLink string // an allowed symlink to Allowed (as /dev/disk/by-id/… would be)
	AllowedNode string // an allowed device node of Allowed's number, made outside /dev
	Victim      string // a block device nobody allowed
	VictimFile  string // a regular file outside DataDir nobody allowed
}

// HostileTarget is one way an attacker or a careless user names a target
// that is not allowed. Every front door that opens targets (the local
// CLI with an allow-list, the dashboard, an agent, a fio server host)
// replays the whole table: each must be refused, and no byte of a victim
// may change.
type HostileTarget struct {
	Name string
	// Filename is the job's filename (fio's: a ':' separates files).
	Filename func(e HostileEnv) string
	// Directory, when set, is the job's directory option.
	Directory func(e HostileEnv) string
	// Swap, when set, is the attack made while the run waits in the queue,
	// after it was accepted and before it opens its targets: the allowed
	// thing at Filename is replaced by a way to a victim. A fio server
	// host opens its files itself, on its own machine, so a swap there is
	// the host's to prevent; its path replays the rest of the table.
	Swap func(e HostileEnv) error
}

// HostileTargets is the table every write guard test replays.
var HostileTargets = []HostileTarget{
	{Name: "victim device by name", Filename: func(e HostileEnv) string { return e.Victim }},
	{Name: "victim through /proc/self/root", Filename: func(e HostileEnv) string { return "/proc/self/root" + e.Victim }},
	{Name: "victim through /proc/thread-self/root", Filename: func(e HostileEnv) string { return "/proc/thread-self/root" + e.Victim }},
	{Name: "victim with doubled slashes", Filename: func(e HostileEnv) string { return "/" + strings.ReplaceAll(e.Victim, "/", "//") }},
	{Name: "victim through the allowed device and ..", Filename: func(e HostileEnv) string { return e.Allowed + "/../" + filepath.Base(e.Victim) }},
	{Name: "victim through /dev/./", Filename: func(e HostileEnv) string { return "/dev/./" + filepath.Base(e.Victim) }},
	{Name: "victim after the allowed device in a : list", Filename: func(e HostileEnv) string { return e.Allowed + ":" + e.Victim }},
	{Name: "victim after a data file in a : list", Filename: func(e HostileEnv) string { return "x.dat:" + e.Victim }},
	{Name: "victim relative to the data directory", Filename: func(e HostileEnv) string {
		rel, _ := filepath.Rel(e.DataDir, e.Victim)
		return rel
	}},
	{Name: "victim file outside the data directory", Filename: func(e HostileEnv) string { return e.VictimFile }},
	{Name: "victim file relative to the data directory", Filename: func(e HostileEnv) string {
		rel, _ := filepath.Rel(e.DataDir, e.VictimFile)
		return rel
	}},
	{Name: "victim file by directory", Filename: func(e HostileEnv) string { return filepath.Base(e.VictimFile) },
		Directory: func(e HostileEnv) string { return filepath.Dir(e.VictimFile) }},
	{Name: "kernel setting in /sys", Filename: func(e HostileEnv) string {
		return "/sys/block/" + filepath.Base(e.Victim) + "/queue/read_ahead_kb"
	}},
	{Name: "symlink in the data directory to the victim", Filename: func(e HostileEnv) string {
		link := filepath.Join(e.DataDir, "link-to-victim.dat")
		os.Remove(link)
		os.Symlink(e.Victim, link)
		return "link-to-victim.dat"
	}},
	{Name: "data subdirectory that is a symlink out", Filename: func(e HostileEnv) string {
		link := filepath.Join(e.DataDir, "escape")
		os.Remove(link)
		os.Symlink(filepath.Dir(e.VictimFile), link)
		return "escape/" + filepath.Base(e.VictimFile)
	}},
	{Name: "hard link in the data directory to the victim file", Filename: func(e HostileEnv) string {
		link := filepath.Join(e.DataDir, "hardlink.dat")
		os.Remove(link)
		os.Link(e.VictimFile, link)
		return "hardlink.dat"
	}},
	{Name: "allowed device that does not exist", Filename: func(e HostileEnv) string { return "/dev/iolab-gone-" + filepath.Base(e.Victim) }},
	{Name: "allowed file swapped for a symlink to the victim", Filename: func(e HostileEnv) string { return e.AllowedFile },
		Swap: func(e HostileEnv) error {
			if err := os.Rename(e.AllowedFile, e.AllowedFile+".orig"); err != nil {
				return err
			}
			return os.Symlink(e.Victim, e.AllowedFile)
		}},
	{Name: "allowed symlink re-pointed to the victim", Filename: func(e HostileEnv) string { return e.AllowedLink },
		Swap: func(e HostileEnv) error {
			if err := os.Remove(e.AllowedLink); err != nil {
				return err
			}
			return os.Symlink(e.Victim, e.AllowedLink)
		}},
	{Name: "allowed device node replaced by a symlink to the victim", Filename: func(e HostileEnv) string { return e.AllowedNode },
		Swap: func(e HostileEnv) error {
			if err := os.Remove(e.AllowedNode); err != nil {
				return err
			}
			return os.Symlink(e.Victim, e.AllowedNode)
		}},
	{Name: "data file swapped for a symlink to the victim", Filename: func(e HostileEnv) string {
		// O_NOFOLLOW: asked again after the swap, it must not write the
		// victim through the symlink itself.
		if f, err := os.OpenFile(filepath.Join(e.DataDir, "swapped.dat"), os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600); err == nil {
			f.Write(make([]byte, 1<<20))
			f.Close()
		}
		return "swapped.dat"
	}, Swap: func(e HostileEnv) error {
		p := filepath.Join(e.DataDir, "swapped.dat")
		if err := os.Remove(p); err != nil {
			return err
		}
		return os.Symlink(e.Victim, p)
	}},
}

// Fingerprint is the SHA-256 of a file's or device's whole content, to
// show that a victim did not change.
func Fingerprint(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
