package sweep

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/guard"
	"iolab/bench/pts"
	"iolab/bench/system"
)

// precondition purges a PTS plan's device and writes its active range
// WIPC times with 128 KiB sequential writes (the specification's
// workload-independent preconditioning), as the plan's jobs would reach
// it: opened through the runner's guard, refused when mounted or held
// (O_EXCL).
func precondition(ctx context.Context, rn *bench.Runner, plan *Plan) (*Prep, error) {
	paths := bench.ConfigPaths(&plan.Base)
	if len(paths) != 1 || !system.IsBlockDevice(paths[0]) {
		return nil, &bench.OptionError{Option: "filename", Msg: fmt.Sprintf("a PTS test runs on one block device (it purges and writes all of it), not %s", strings.Join(paths, ", "))}
	}
	dev := paths[0]
	g := rn.Guard
	if g == nil {
		g = guard.Unrestricted()
	}
	id, _, err := g.Check(dev)
	if err != nil {
		return nil, err
	}
	fd, err := g.Open(dev, id, unix.O_WRONLY|unix.O_EXCL)
	if err != nil {
		if errors.Is(err, unix.EBUSY) {
			return nil, fmt.Errorf("%s is in use (mounted, or held by another device): a PTS test writes all of it", dev)
		}
		return nil, fmt.Errorf("open %s to purge it: %w", dev, err)
	}
	capacity, err := unix.IoctlGetUint64(fd, unix.BLKGETSIZE64)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: BLKGETSIZE64: %w", dev, err)
	}
	prep := &Prep{Device: dev, Capacity: int64(capacity), ActiveRange: int64(capacity), WIPCLoops: plan.PTS.WIPC(), Purge: pts.PurgeNone}
	if s := plan.PTS.Size; s > 0 && s < int64(capacity) {
		prep.ActiveRange = s
	}
	if way := plan.PTS.PurgeMethod(); way != pts.PurgeNone {
		ways := []string{way}
		if way == pts.PurgeAuto {
			ways = []string{system.PurgeSecure, system.PurgeDiscard, system.PurgeZero}
		}
		note(rn, fmt.Sprintf("pts: purging %s (%s)", dev, way))
		began := time.Now()
		// The whole device, as the specification's device-level purge,
		// whatever the active range.
		prep.Purge, prep.PurgeSkipped, err = system.Purge(fd, dev, ways, 0)
		prep.PurgeTime = time.Since(began)
	}
	unix.Close(fd)
	if err != nil {
		return nil, err
	}
	if prep.WIPCLoops == 0 {
		return prep, ctx.Err()
	}
	args := []string{"--name=pts-wipc", "--filename=" + dev, "--rw=write", "--bs=128k", "--ioengine=libaio", "--direct=1",
		"--iodepth=32", "--size=" + strconv.FormatInt(prep.ActiveRange, 10), "--loops=" + strconv.Itoa(prep.WIPCLoops)}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		return nil, fmt.Errorf("preconditioning: %w", err)
	}
	note(rn, fmt.Sprintf("pts: preconditioning %s: %d× %d bytes, 128 KiB sequential writes", dev, prep.WIPCLoops, prep.ActiveRange))
	res, err := rn.Run(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("preconditioning %s: %w", dev, err)
	}
	for _, gr := range res.Groups {
		for k := range gr.Jobs {
			j := &gr.Jobs[k]
			prep.WIPCBytes += j.Dirs[bench.Write].Bytes
			prep.WIPCTime = max(prep.WIPCTime, j.Runtime)
		}
	}
	if want := uint64(prep.WIPCLoops) * uint64(prep.ActiveRange); prep.WIPCBytes < want {
		return nil, fmt.Errorf("preconditioning %s wrote %d bytes of %d: stopped early", dev, prep.WIPCBytes, want)
	}
	return prep, nil
}

// note tells the user what the runner is doing, where it has a way to.
func note(rn *bench.Runner, msg string) {
	if rn.Notice != nil {
		rn.Notice(msg)
	}
}
