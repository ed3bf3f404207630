package cli

import (
	"context"
	"database/sql"
	"flag"
	"fmt"

	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/db"
)

var (
	pruneSpace      = flag.Bool("prunespace", false, "run the retention benchmark (TestPruneSpace): the store's size per step, and what prune gives back")
	pruneSpaceRuns  = flag.Int("prunespace.runs", 20, "load runs to store")
	pruneSpaceSteps = flag.Int("prunespace.steps", 50, "steps of each load run (a multiple of 50)")
	pruneSpaceKeep  = flag.Int("prunespace.keep", 5, "runs iolab prune --keep keeps")
)

// TestPruneSpace is the retention benchmark (BENCHMARKS.md, "Retention"):
// it stores -prunespace.runs load runs of -prunespace.steps steps each
// (seedLoadRun: three job results a step with their histograms, a
// sample a second over a minute), measures the store's bytes per step,
// prunes all but the newest -prunespace.keep with iolab prune --delete,
// and measures what the file gave back; then the same on a store made
// before incremental vacuum (auto_vacuum none), which gives nothing back
// until iolab prune --vacuum.
//
//	go test -run TestPruneSpace -prunespace -count=1 -v ./handlers/cli
func TestPruneSpace(t *testing.T) {
	if !*pruneSpace {
		t.Skip("the retention benchmark: go test -run TestPruneSpace -prunespace ./handlers/cli")
	}
	for _, mode := range []string{"incremental", "none"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "space.db")
			store, err := db.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if mode == "none" {
				// A store as iolab made them before: rewritten without
				// auto_vacuum before any run is stored.
				raw, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range []string{"PRAGMA auto_vacuum = NONE", "VACUUM"} {
					if _, err := raw.ExecContext(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
				raw.Close()
			}
			empty := settledSize(t, store)
			var steps int
			for range *pruneSpaceRuns {
				seedLoadRun(t, store, *pruneSpaceSteps)
				steps += *pruneSpaceSteps
			}
			full := settledSize(t, store)
			store.Close()
			perStep := float64(full.Bytes()-empty.Bytes()) / float64(steps)
			t.Logf("auto_vacuum %s: %d runs, %d steps: %d bytes (%.1f MiB), %.0f bytes a step, %.2f MiB a %d-step run",
				full.AutoVacuum, *pruneSpaceRuns, steps, full.Bytes(), mib(full.Bytes()), perStep, perStep*float64(*pruneSpaceSteps)/(1<<20), *pruneSpaceSteps)

			start := time.Now()
			if code, _, stderr := runOut(t, "prune", "--db", path, "--keep", strconv.Itoa(*pruneSpaceKeep)); code != 0 {
				t.Fatal(stderr)
			}
			t.Logf("the dry run (open, plan, sizes): %s", time.Since(start).Round(time.Millisecond))
			start = time.Now()
			code, out, stderr := runOut(t, "prune", "--db", path, "--keep", strconv.Itoa(*pruneSpaceKeep), "--delete")
			t.Logf("the prune (plan, delete, give back): %s", time.Since(start).Round(time.Millisecond))
			if code != 0 {
				t.Fatal(stderr)
			}
			t.Logf("iolab prune --keep %d --delete:\n%s", *pruneSpaceKeep, lastLines(out, 3))
			after := fileSize(t, path)
			pruned := *pruneSpaceRuns - *pruneSpaceKeep
			rows := pruneRowBytes(t, out)
			t.Logf("after prune: %d bytes (%.1f MiB): %.1f MiB given back for %d runs, their rows about %.1f MiB",
				after, mib(after), mib(full.Bytes()-after), pruned, mib(rows))
			want := full.Bytes() * int64(pruned) / int64(*pruneSpaceRuns)
			switch mode {
			case "incremental":
				if full.Bytes()-after < want*9/10 {
					t.Errorf("gave back %d bytes, want at least 90%% of the pruned runs' share %d", full.Bytes()-after, want)
				}
			case "none":
				if full.Bytes()-after > want/10 {
					t.Errorf("a store without auto_vacuum gave back %d bytes", full.Bytes()-after)
				}
				code, out, stderr := runOut(t, "prune", "--db", path, "--vacuum")
				if code != 0 {
					t.Fatal(stderr)
				}
				vac := fileSize(t, path)
				t.Logf("iolab prune --vacuum: %s → %d bytes (%.1f MiB), %.1f MiB given back", strings.TrimSpace(out), vac, mib(vac), mib(after-vac))
				if after-vac < want*9/10 {
					t.Errorf("--vacuum gave back %d bytes, want at least 90%% of %d", after-vac, want)
				}
			}
		})
	}
}

// settledSize is the store's space with its WAL copied back.
func settledSize(t *testing.T, store *db.Store) db.Space {
	t.Helper()
	_, sp, err := store.GiveBack(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// pruneRowBytes reads "about X of rows" from the prune's output.
func pruneRowBytes(t *testing.T, out string) int64 {
	m := regexp.MustCompile(`deleted \d+ runs \(about ([0-9.]+)(KiB|MiB|GiB)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no deleted line in\n%s", out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return int64(v * map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[2]])
}

// TestPruneLab is the retention benchmark at a lab's scale: 30,000 runs
// (a year of nights on fifty hosts × ten workloads, their plans as the
// CLI stores them, no steps), a dry run of --older-than 90d --keep 3
// and the prune, timed.
//
//	go test -run TestPruneLab -prunespace -count=1 -v ./handlers/cli
func TestPruneLab(t *testing.T) {
	if !*pruneSpace {
		t.Skip("the retention benchmark: go test -run TestPruneLab -prunespace ./handlers/cli")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lab.db")
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rws := []string{"randread", "randwrite", "read", "write", "randrw"}
	bss := []string{"4k", "1m"}
	var plans []sweep.Plan
	for _, rw := range rws {
		for _, bs := range bss {
			args := []string{"--name=nightly", "--filename=/dev/nvme0n1", "--direct=1", "--ioengine=io_uring", "--rw=" + rw, "--bs=" + bs,
				"--iodepth=32", "--runtime=60", "--time_based"}
			cfg, err := fio.ParseArgs(args)
			if err != nil {
				t.Fatal(err)
			}
			plans = append(plans, sweep.Plan{Name: "nightly " + rw + " " + bs, Args: args, Base: *cfg})
		}
	}
	const runs = 30_000
	start := time.Now()
	year := 365 * 24 * time.Hour
	for i := range runs {
		r := &db.Run{Name: plans[i%len(plans)].Name, Status: db.StatusDone, Plan: plans[i%len(plans)],
			Hostname: fmt.Sprintf("lab-%02d", (i/len(plans))%50), Created: start.Add(-year + time.Duration(i)*(year/runs))}
		if i%7 == 0 {
			r.Status = db.StatusFailed
		}
		if _, err := store.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	t.Logf("stored %d runs in %s: %.1f MiB", runs, time.Since(start).Round(time.Millisecond), mib(fileSize(t, path)))
	for _, args := range [][]string{
		{"--older-than", "90d", "--keep", "3"},
		{"--older-than", "90d", "--keep", "3", "--delete"},
	} {
		start := time.Now()
		code, out, stderr := runOut(t, append([]string{"prune", "--db", path}, args...)...)
		if code != 0 {
			t.Fatal(stderr)
		}
		t.Logf("iolab prune %s: %s\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), lastLines(out, 3))
	}
}
