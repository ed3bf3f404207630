package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// owner identifies a process across pid reuse and reboots: the boot's
// random id (/proc/sys/kernel/random/boot_id), the pid, and the pid's start
// time in clock ticks since boot (field 22 of /proc/PID/stat, proc(5)).
// Where /proc is missing the owner is incomplete and never counts as alive,
// so runs left unfinished there are marked interrupted at the next open.
type owner struct {
	Boot  string
	PID   int
	Start uint64
}

// processOwner reads pid's owner from the /proc tree at proc; the zero Boot
// when it cannot.
func processOwner(proc string, pid int) owner {
	o := owner{PID: pid}
	boot, err := os.ReadFile(filepath.Join(proc, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return o
	}
	start, ok := processStart(proc, pid)
	if !ok {
		return o
	}
	o.Boot, o.Start = strings.TrimSpace(string(boot)), start
	return o
}

// processStart is starttime from /proc/PID/stat. The command name (field 2)
// is in parentheses and may hold spaces and parentheses itself, so fields
// are counted from the last ')'.
func processStart(proc string, pid int) (uint64, bool) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	// After ')': field 3 (state) onwards, so starttime (22) is the 20th.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	return v, err == nil
}

// alive reports whether o's process still runs: same boot, the pid
// started at the same time (so not a reused pid), and not a zombie — a
// process killed with SIGKILL keeps its /proc entry, start time included,
// until its parent reaps it, yet it will never finish its runs.
func (o owner) alive(proc string) bool {
	if o.Boot == "" || o.PID <= 0 {
		return false
	}
	if processOwner(proc, o.PID) != o {
		return false
	}
	switch processState(proc, o.PID) {
	case 'Z', 'X', 'x':
		return false
	}
	return !dying(proc, o.PID)
}

// settle waits, up to limit, for a dying owner (SIGKILL pending, or
// exiting) to finish dying: a process killed in the middle of a write to
// a disk's scheduler file finishes that write in the kernel first, and the
// scheduler must be put back after it, not before.
func (o owner) settle(proc string, limit time.Duration) {
	if o.PID <= 0 {
		return
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && processOwner(proc, o.PID) == o {
		if threadsDead(proc, o.PID) {
			return
		}
		if !dying(proc, o.PID) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// threadsDead reports whether every thread of pid has exited. The leader's
// state alone does not say it: in a process of several threads the leader
// turns zombie as soon as it exits itself, while another thread may still
// be finishing a write to a scheduler file in the kernel.
func threadsDead(proc string, pid int) bool {
	tasks, err := os.ReadDir(filepath.Join(proc, strconv.Itoa(pid), "task"))
	if err != nil {
		return true // gone
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		switch processState(filepath.Join(proc, strconv.Itoa(pid), "task"), tid) {
		case 'Z', 'X', 'x', 0:
		default:
			return false
		}
	}
	return true
}

// dying reports whether pid is on its way out though not yet a zombie:
// SIGKILL pending (kill(2) queues it on every thread before it returns) or
// PF_EXITING set (do_exit has begun). A restart right after a kill -9 must
// not take the dying process for a live owner.
func dying(proc string, pid int) bool {
	const pfExiting = 0x4 // include/linux/sched.h PF_EXITING
	if b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat")); err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
			// After ')': state (field 3) … flags is field 9, the 7th.
			if f := strings.Fields(string(b[i+1:])); len(f) > 6 {
				if flags, err := strconv.ParseUint(f[6], 10, 64); err == nil && flags&pfExiting != 0 {
					return true
				}
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	const sigkill = uint64(1) << (9 - 1)
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "SigPnd" && k != "ShdPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&sigkill != 0 {
			return true
		}
	}
	return false
}

// processState is field 3 of /proc/PID/stat: R, S, D, Z (zombie), X
// (dead)…; 0 when it cannot be read.
func processState(proc string, pid int) byte {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// RunOwnedElsewhere tells whether run id is queued or running in another
// process that still lives — another dashboard, or `iolab run` — and that
// process's pid: such a run is that process's to cancel or to finish, and
// deleting it would fail its next step's save. alive is false for a run
// that has ended, for one of this process, and for one whose process is
// gone (Open and MarkInterrupted mark those interrupted); pid is then the
// recorded owner's, if any.
func (s *Store) RunOwnedElsewhere(ctx context.Context, id int64) (pid int, alive bool, err error) {
	var (
		status string
		boot   sql.NullString
		opid   sql.NullInt64
		start  sql.NullInt64
	)
	err = s.read.QueryRowContext(ctx, `SELECT status, owner_boot, owner_pid, owner_start FROM runs WHERE id = ?`, id).
		Scan(&status, &boot, &opid, &start)
	if err != nil {
		return 0, false, fmt.Errorf("db: owner of run %d: %w", id, notFound(err))
	}
	o := owner{Boot: boot.String, PID: int(opid.Int64), Start: uint64(start.Int64)}
	if (status != StatusQueued && status != StatusRunning) || o == s.self {
		return o.PID, false, nil
	}
	return o.PID, o.alive(s.proc), nil
}
