package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"iolab/bench/launch"
	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
)

var ptsCommand = command{
	name:    "pts",
	summary: "qualify a device by SNIA's PTS: purge, precondition, rounds until steady state, every round stored",
	usage:   "TEST --filename=DEV --yes-destroy DEV [flags] [fio options…]",
	about: `Runs one test of SNIA's Solid State Storage Performance Test Specification on a block device: the
device purged (BLKSECDISCARD where offered, else BLKDISCARD, else BLKZEROOUT), written twice with
128 KiB sequential writes, then the test's matrix round after round until its tracking variable is
steady by the specification's rule (5 rounds within 20 % of their average, their fit within 10 %), at
most 25 rounds. Every round's elements are stored steps of one run (tagged pts); iolab report draws
the specification's report from it. The tests: iops, throughput, latency, wsat, dirth.

The test writes the whole device: --yes-destroy must name it again. --runtime (each element's time
in a round, default 1m), --size (the active range), --numjobs and --iodepth (the outstanding I/O; for
dirth, lists replace its matrix) are fio's options; --rounds, --wipc and --purge scale the rest down.
The report lists what was scaled down from the specification.

  iolab pts iops --filename=/dev/nvme1n1 --yes-destroy /dev/nvme1n1
  iolab pts iops --filename=/dev/loop0 --yes-destroy /dev/loop0 --runtime=2s --rounds=6 --size=64m \
            --bs=4k,64k --rwmixread=100,0
  iolab pts dirth --filename=/dev/loop0 --yes-destroy /dev/loop0 --numjobs=4,2,1 --iodepth=16,4,1`,
	fioArgs: true,
	flags:   ptsFlags,
}

func ptsFlags(fs *flag.FlagSet) runFunc {
	var o runOptions
	var spec pts.Spec
	var destroy, purge string
	var wipc int
	fs.StringVar(&destroy, "yes-destroy", "", "the `DEV` the test purges and overwrites, named again (required)")
	fs.IntVar(&spec.MaxRounds, "rounds", 0, "at most `N` rounds (default 25; at least 5, the steady-state window; wsat: until it has written --wsat × the capacity)")
	fs.StringVar(&purge, "purge", "", "how to purge the device first: `auto` (secure, else discard, else zero), secure, discard, zero or none")
	fs.IntVar(&wipc, "wipc", 2, "write the active range `N` times with 128 KiB sequential writes before the rounds (0: none)")
	fs.Float64Var(&spec.WSAT, "wsat", 0, "wsat: write `N` × the capacity (default 4)")
	fs.Var(&o.tags, "tag", "a `TAG` for the stored run besides pts (repeatable)")
	fs.Var((*storePath)(&o.dbPath), "db", storePathUsage)
	limitFlags(fs, &o.limits)
	return func(ctx context.Context, e *env, args []string) error {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return usageError{"iolab pts: name the test first: " + strings.Join(pts.TestNames(), ", ")}
		}
		spec.Test, args = args[0], args[1:]
		if _, err := pts.Lookup(spec.Test); err != nil {
			return usageError{"iolab pts: " + err.Error()}
		}
		spec.Purge = purge
		switch wipc {
		case pts.WIPCLoops: // the specification's: the spec's zero value
		case 0:
			spec.WIPCLoops = -1
		default:
			spec.WIPCLoops = wipc
		}
		if err := checkDestroy(args, destroy); err != nil {
			return err
		}
		o.pts = &spec
		o.tags = append(o.tags, "pts")
		if err := runJobs(ctx, e.runner, &o, args, e.stdout, e.stderr); err != nil {
			return err
		}
		return nil
	}
}

// checkDestroy refuses a PTS run whose --yes-destroy does not name the
// device --filename gives: the same path, or another name of the same
// device.
func checkDestroy(args []string, destroy string) error {
	var dev string
	for i := 0; i < len(args); i++ {
		name, value, has := strings.Cut(args[i], "=")
		if name == "--filename" || name == "-filename" {
			if !has && i+1 < len(args) {
				value = args[i+1]
			}
			dev = value
		}
	}
	switch {
	case dev == "":
		return usageError{"iolab pts: give the device: --filename=DEV"}
	case destroy == "":
		return usageError{fmt.Sprintf("iolab pts: the test purges and overwrites all of %s: add --yes-destroy %s to say so", dev, dev)}
	case launch.NamesDevice(dev, destroy):
		return nil
	}
	return usageError{fmt.Sprintf("iolab pts: --yes-destroy %s does not name the device the test overwrites, %s: give --yes-destroy %s", destroy, dev, dev)}
}

// writePTSOutcome says what the rounds came to (ptsLines).
func writePTSOutcome(w io.Writer, plan *sweep.Plan, results []sweep.StepResult) {
	for _, l := range ptsLines(plan, results) {
		fmt.Fprintln(w, l)
	}
}

// ptsLines say what a PTS run did before its rounds (the purge, the
// preconditioning) and what the rounds came to: steady state reached (at
// which round, each tracking variable's window against the rule) or
// not; WSAT's rounds and bytes written.
func ptsLines(plan *sweep.Plan, results []sweep.StepResult) []string {
	t, err := pts.Lookup(plan.PTS.Test)
	if err != nil {
		return nil
	}
	var out []string
	if len(results) > 0 && results[0].Prep != nil {
		p := results[0].Prep
		purge := "no purge"
		if p.Purge != pts.PurgeNone {
			purge = "purged with " + system.PurgeIoctl(p.Purge)
		}
		wipc := "no preconditioning"
		if p.WIPCLoops > 0 {
			wipc = fmt.Sprintf("preconditioned: %s written sequentially (128 KiB) in %s, %s", units.Bytes(float64(p.WIPCBytes)),
				p.WIPCTime.Round(time.Millisecond), units.Rate(p.WIPCBandwidth()))
		}
		out = append(out, fmt.Sprintf("pts %s on %s: active range %s of %s; %s; %s", t.Name, p.Device,
			units.Bytes(float64(p.ActiveRange)), units.Bytes(float64(p.Capacity)), purge, wipc))
	}
	rounds := 0
	for i := range results {
		rounds = max(rounds, results[i].Step.Repeat+1)
	}
	if t.Saturate {
		return append(out, fmt.Sprintf("pts %s: %d rounds, %s written", t.Name, rounds, units.Bytes(float64(sweep.PTSWritten(results)))))
	}
	o := plan.PTSOutcome(results)
	if o.Reached {
		out = append(out, fmt.Sprintf("pts %s: steady state reached at round %d of %d (window: rounds %d–%d)", t.Name, o.Round+1, plan.PTS.Rounds(), o.Round-3, o.Round+1))
	} else {
		out = append(out, fmt.Sprintf("pts %s: steady state NOT reached in %d rounds (the last %d rounds are the window)", t.Name, o.Rounds, min(o.Rounds, pts.WindowRounds)))
	}
	for k, tr := range plan.PTS.Tracking(t) {
		if k >= len(o.Windows) {
			break
		}
		win := &o.Windows[k]
		out = append(out, fmt.Sprintf("  %s: average %s, range %.1f %% of it (limit 20 %%), fit excursion %.1f %% (limit 10 %%)", tr,
			units.Significant(win.Average, 4), 100*win.RangePct(), 100*win.ExcursionPct()))
	}
	return out
}
