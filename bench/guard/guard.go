// Package guard owns every open of a benchmark target on this machine: it
// is the only way a run looks a target up, opens it for I/O, lays a file
// out, creates one (create_on_open), removes one (unlink=1) or writes its
// verify state beside it.
//
// What is checked is never a path but what a path opened: the guard opens
// the name with O_PATH (no side effect, so a character device such as
// /dev/watchdog is never opened for real), fstats the descriptor and
// compares its identity — a block device's device number, a regular file's
// filesystem and inode — with what is allowed; it then reopens that very
// descriptor through /proc/self/fd with the job's flags and compares the
// identity again. The runner checks when a run is queued and again when
// each step opens its files, so a name swapped in between (a symlink to
// another device in place of an allowed file) is refused at the open.
//
// A guard built by New holds an allow-list pinned when it is built (the
// dashboard's or an agent's start): a block device by its device number,
// a regular file by its filesystem and inode, a symlink by what it pointed
// to then. An allowed device that is not there is an error at start: it
// is never created. An allowed regular file that is not there yet is
// pinned by its directory, which must exist; the file is made beneath that
// directory, never through a symlink, and only a regular file with one
// link is taken there afterwards. Files under the data directory are
// reached from its descriptor, opened once, with openat2 and
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS: only regular
// files with one link (another link could be a file outside it), and every
// directory made, file laid out or removed there goes through that
// descriptor.
//
// Unrestricted is the CLI's guard: any block device or regular file, with
// the same identity check between the look-up and the open.
package guard

import (
	"errors"
	"fmt"
	"strings"
)

// Identity is what a target is whatever its name: a block device by its
// device number (any node with that number is the same device), a regular
// file by its filesystem's device number and its inode.
type Identity struct {
	Block bool
	Dev   uint64 // the device's rdev, or the file's st_dev
	Ino   uint64 // 0 for a block device
}

func (id Identity) String() string {
	if id.Block {
		return fmt.Sprintf("block device %d:%d", id.Dev>>8&0xfff|id.Dev>>32&^0xfff, id.Dev&0xff|id.Dev>>12&^0xff)
	}
	return fmt.Sprintf("file %d:%d inode %d", id.Dev>>8&0xfff|id.Dev>>32&^0xfff, id.Dev&0xff|id.Dev>>12&^0xff, id.Ino)
}

// RefusedError is a target the guard will not open: Path as the job
// names it, Reason what is there, Whose the allow-list ("" for the CLI's
// guard, which refuses only what cannot be a target) and Allowed what it
// allows.
type RefusedError struct {
	Path    string
	Reason  string
	Whose   string
	Allowed string
}

func (e *RefusedError) Error() string {
	if e.Whose == "" {
		return fmt.Sprintf("%s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("%s: %s; refused: it is not on %s allow-list, which allows %s", e.Path, e.Reason, e.Whose, e.Allowed)
}

// ErrChanged is wrapped by the error of an open that found, under a
// checked name, something other than what was checked.
var ErrChanged = errors.New("changed since it was checked")

// allowedText lists what a restricted guard allows, for refusals.
func allowedText(entries []string, dataDir string) string {
	var parts []string
	if len(entries) > 0 {
		parts = append(parts, strings.Join(entries, ", "))
	}
	if dataDir != "" {
		parts = append(parts, "regular files under "+dataDir)
	}
	if len(parts) == 0 {
		return "nothing (start it with --allow-target or --data-dir)"
	}
	return strings.Join(parts, "; ")
}
