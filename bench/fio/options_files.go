package fio

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/units"
)

// fileOptions are fio's options for the files a job does I/O on: names,
// directory, counts, sizes, how they are laid out and cleaned up; and for
// what part of them the I/O covers: block sizes, alignment, offsets,
// zones and how much I/O is done (fio's options.c).
var fileOptions = []bench.OptionSpec{
	{Name: "directory", Example: "/mnt/test", Unit: "path", Help: "the directory of the job's files (several: dir1:dir2, shared out among numjobs clones)",
		Set: func(j *bench.Job, v string) error {
			if len(bench.SplitFileList(v)) == 0 {
				return errors.New("names no directory")
			}
			j.Directory = v
			return nil
		}, Get: func(j *bench.Job) string { return j.Directory }},
	{Name: "nrfiles", Aliases: []string{"nr_files"}, Example: "4", Unit: "int", Default: "1",
		Help: "files per job when filename is not set (named by filename_format)",
		Set:  bench.IntField(1, 1<<20, func(j *bench.Job) *int { return &j.NrFiles }),
		Get:  func(j *bench.Job) string { return strconv.Itoa(max(j.NrFiles, 1)) }},
	{Name: "filename_format", Example: "$jobname.$jobnum.$filenum", Unit: "text", Default: "$jobname.$jobnum.$filenum",
		Help: "how files are named when filename is not set ($jobname, $jobnum, $filenum, $clientuid)",
		Set: func(j *bench.Job, v string) error {
			j.FilenameFormat = v
			return nil
		}, Get: func(j *bench.Job) string { return j.FilenameFormat }},
	{Name: "filesize", Example: "64m", Unit: "size", Help: "the size of each file, or a range lo-hi (a random size in it per file)", Set: setFileSize,
		Get: func(j *bench.Job) string { return formatRange(j.FileSize) }},
	{Name: "file_service_type", Example: "random", Unit: "mode", Default: "roundrobin",
		Help: "which file the next I/O goes to: roundrobin, random or sequential, :N for N I/Os per file", Set: setFileService,
		Get: func(j *bench.Job) string { return j.FileService }},
	{Name: "create_on_open", Example: "1", Unit: "bool", Default: "0", Help: "create files when the job opens them, not when laying them out",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.CreateOnOpen })},
	{Name: "allow_file_create", Example: "0", Unit: "bool", Default: "1", Help: "create (or lay out anew) a job's files that are missing or too short; 0: fail the job instead",
		Set: func(j *bench.Job, v string) error {
			on, err := units.ParseFlag(v)
			if err == nil {
				j.NoFileCreate = !on
			}
			return err
		},
		Get: func(j *bench.Job) string {
			if j.NoFileCreate {
				return "0"
			}
			return "1"
		}},
	boolOption("fill_device", []string{"fill_fs"}, "0", "without a size: write until the filesystem is full (ENOSPC ends the job, not as an error); on a device, its size",
		func(j *bench.Job) *bool { return &j.FillDevice }),
	{Name: "create_serialize", Example: "0", Unit: "bool", Default: "1",
		Help: "lay out jobs' files one job at a time before the run (0: each when its group starts, in parallel; a file an earlier group wrote sizes it)",
		Set: func(j *bench.Job, v string) error {
			b, err := units.ParseFlag(v)
			j.CreateParallel = err == nil && !b
			return err
		}, Get: func(j *bench.Job) string {
			if j.CreateParallel {
				return "0"
			}
			return "1"
		}},
	{Name: "unlink", Example: "1", Unit: "bool", Default: "0", Help: "delete the job's files when it ends",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.Unlink })},
	{Name: "fallocate", Example: "none", Unit: "mode", Default: "native",
		Help: "how new files are allocated when laid out: native, posix (1), keep, truncate or none (0)", Set: setFallocate,
		Get: func(j *bench.Job) string { return j.Fallocate }},
	{Name: "invalidate", Example: "0", Unit: "bool", Default: "1", Help: "drop the files' page cache before the job runs",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.Invalidate }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.Invalidate })},

	{Name: "bsrange", Aliases: []string{"blocksize_range"}, Example: "4k-64k", Unit: "range",
		Help: "a random block size in lo-hi for each I/O (reads,writes: 4k-8k,16k-64k)", Set: setBSRange},
	{Name: "bssplit", Example: "4k/10:64k/50:128k/40", Unit: "list",
		Help: "block sizes and their shares (bs/percent:...; reads,writes: list,list)", Set: setBSSplit},
	{Name: "ba", Aliases: []string{"blockalign"}, Example: "512", Unit: "size",
		Help: "align random offsets to this (default: the block size; turns off the random map)", Set: setBlockAlign},
	{Name: "number_ios", Example: "1000", Unit: "int", Default: "0", Help: "end the job after this many I/Os (per loop)",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseSize(v)
			if err == nil {
				j.NumberIOs = uint64(n)
			}
			return err
		}},
	{Name: "loops", Example: "3", Unit: "int", Default: "1", Help: "run the job this many times over",
		Set: bench.IntField(0, 1<<30, func(j *bench.Job) *int { return &j.Loops })},
	{Name: "offset_increment", Example: "1g", Unit: "size", Default: "0",
		Help: "move each numjobs clone's region by this (clone N starts at offset + N * increment)",
		Set:  bench.SizeField(func(j *bench.Job) *int64 { return &j.OffsetIncrement })},
	{Name: "rw_sequencer", Example: "identical", Unit: "mode", Default: "sequential",
		Help: "with rw=randread:N, what the I/Os between random offsets do: sequential or identical",
		Set: func(j *bench.Job, v string) error {
			switch v {
			case "sequential", "identical":
				j.RWSequencer = v
				return nil
			}
			return fmt.Errorf("%q is not one of sequential, identical", v)
		}},
	{Name: "zonemode", Example: "strided", Unit: "mode", Default: "none", Help: "none, or strided: zonesize bytes in each zonerange, then zoneskip",
		Set: func(j *bench.Job, v string) error {
			switch v {
			case "none", "strided":
				j.ZoneMode = v
				return nil
			case "zbd":
				return errors.New(`"zbd": iolab does not drive zoned block devices (use none or strided)`)
			}
			return fmt.Errorf("%q is not one of none, strided", v)
		}},
	{Name: "zonesize", Example: "1m", Unit: "size", Default: "0", Help: "bytes of I/O in each zone (zonemode=strided)",
		Set: bench.SizeField(func(j *bench.Job) *int64 { return &j.ZoneSize })},
	{Name: "zonerange", Example: "16m", Unit: "size", Default: "0", Help: "the size of each zone (default: zonesize)",
		Set: bench.SizeField(func(j *bench.Job) *int64 { return &j.ZoneRange })},
	{Name: "zoneskip", Example: "16m", Unit: "size", Default: "0", Help: "bytes skipped after each zone",
		Set: bench.SizeField(func(j *bench.Job) *int64 { return &j.ZoneSkip })},
}

// setSize reads size: bytes, or N% of each file or device from offset.
func setSize(j *bench.Job, v string) error { return setBytesOrPercent(v, &j.Size, &j.SizePercent) }

func getSize(j *bench.Job) string { return formatBytesOrPercent(j.Size, j.SizePercent) }

// setOffset reads offset: bytes, or N% into each file or device.
func setOffset(j *bench.Job, v string) error {
	return setBytesOrPercent(v, &j.Offset, &j.OffsetPercent)
}

func getOffset(j *bench.Job) string { return formatBytesOrPercent(j.Offset, j.OffsetPercent) }

// setBytesOrPercent sets one of a size and a percentage (fio's
// FIO_OPT_STR_VAL_ZONE with its percent form), clearing the other.
func setBytesOrPercent(v string, bytes *int64, pct *int) error {
	if p, ok, err := parsePercent(v); ok {
		if err == nil {
			*bytes, *pct = 0, p
		}
		return err
	}
	n, err := units.ParseSize(v)
	if err == nil {
		*bytes, *pct = n, 0
	}
	return err
}

func formatBytesOrPercent(bytes int64, pct int) string {
	if pct > 0 {
		return strconv.Itoa(pct) + "%"
	}
	return units.FormatSize(bytes)
}

// parsePercent reads "N%" with N in 1..100; ok is false when v is no
// percentage.
func parsePercent(v string) (p int, ok bool, err error) {
	s, found := strings.CutSuffix(v, "%")
	if !found {
		return 0, false, nil
	}
	p, err = strconv.Atoi(s)
	if err != nil || p < 1 || p > 100 {
		return 0, true, fmt.Errorf("%q: a percentage is a whole number from 1 to 100 (e.g. 50%%)", v)
	}
	return p, true, nil
}

// splitDirs splits a per-direction value the way fio's handle_option
// does for bs and ba: "r,w" (or r:w, r-w); one value is both; an empty
// value leaves its direction alone, and so does a comma after the last
// value ("8k," is 8k for reads only: fio's handle_option drops the comma
// but still takes a value to follow, so the first does not carry over;
// "8k,32k," leaves trims at theirs, which for ba changes nothing, but see
// trimsKeepTheirs). A third (trim) value is refused.
func splitDirs(v string, seps string) ([]string, error) {
	if r, ok := strings.CutSuffix(v, ","); ok && !strings.ContainsAny(r, seps) {
		return []string{r, ""}, nil
	}
	v = strings.TrimSuffix(v, ",")
	i := strings.IndexAny(v, seps)
	if i < 0 {
		return []string{v}, nil
	}
	parts := []string{v[:i], v[i+1:]}
	if strings.ContainsAny(parts[1], seps) {
		return nil, fmt.Errorf("%q: a third value is for trims, which iolab takes in bs only (here, use reads,writes: trims take the writes')", v)
	}
	return parts, nil
}

// trimsKeepTheirs refuses "r,w," for a block size option: fio leaves its
// trims at the size they had (4k by default), and counts it among the
// directions' smallest block size (rw_min_bs, td_min_bs), the unit of
// its random map and of its regions, trims or not. iolab, which does not
// trim, has no trims' size to count.
func trimsKeepTheirs(v string) error {
	if strings.Count(v, ",") == 2 && strings.HasSuffix(v, ",") {
		return fmt.Errorf("%q: the comma after the writes' value leaves trims at their own size, which fio counts in the job's smallest block size (its random map's unit) and iolab, which does not trim, cannot: drop the last comma", v)
	}
	return nil
}

// setDirSizes sets a per-direction size option: set(d, n) for each
// direction a value is given for.
func setDirSizes(v, seps string, set func(d int, n int64)) error {
	parts, err := splitDirs(v, seps)
	if err != nil {
		return err
	}
	for i, p := range parts {
		if p == "" && len(parts) > 1 {
			continue // bs=,64k: reads keep theirs; bs=64k,: writes keep theirs
		}
		n, err := units.ParseSize(p)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("0 is not a block size (use e.g. 4k)")
		}
		if len(parts) == 1 {
			set(bench.Read, n)
			set(bench.Write, n)
		} else {
			set(i, n)
		}
	}
	return nil
}

func setBS(j *bench.Job, v string) error {
	if err := trimsKeepTheirs(v); err != nil {
		return err
	}
	sizes := [3]int64{j.BS, j.BS, j.BS}
	if j.WriteBS > 0 {
		sizes[bench.Write] = j.WriteBS
	}
	sizes[bench.Trim] = sizes[bench.Write]
	if j.TrimBS > 0 {
		sizes[bench.Trim] = j.TrimBS
	}
	// bs=r,w,t: the third value is the trims' (fio's bs takes one per
	// direction); splitDirs refuses it for the options that take two.
	r, w, t, three := splitThird(v)
	if three {
		v = r + "," + w
	}
	err := setDirSizes(v, ",:-", func(d int, n int64) {
		sizes[d] = n
		if d == bench.Write && !three {
			sizes[bench.Trim] = n // trims follow the writes' value
		}
	})
	if err == nil && three && t != "" {
		n, perr := units.ParseSize(t)
		switch {
		case perr != nil:
			err = perr
		case n == 0:
			err = errors.New("0 is not a block size (use e.g. 4k)")
		default:
			sizes[bench.Trim] = n
		}
	}
	if err != nil {
		return err
	}
	j.BS, j.WriteBS, j.TrimBS = sizes[bench.Read], sizes[bench.Write], sizes[bench.Trim]
	if j.TrimBS == j.WriteBS {
		j.TrimBS = 0 // the writes' size: WriteBS (or BS) says it
	}
	if j.WriteBS == j.BS {
		j.WriteBS = 0 // the same for both: Job.BS alone says it
	}
	return nil
}

// splitThird cuts "r,w,t" into its three values; three is false for one
// or two values.
func splitThird(v string) (r, w, t string, three bool) {
	parts := strings.Split(v, ",")
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

func getBS(j *bench.Job) string {
	w := j.BS
	if j.WriteBS > 0 {
		w = j.WriteBS
	}
	if j.TrimBS > 0 && j.TrimBS != w {
		return units.FormatSize(j.BS) + "," + units.FormatSize(w) + "," + units.FormatSize(j.TrimBS)
	}
	if w != j.BS {
		return units.FormatSize(j.BS) + "," + units.FormatSize(w)
	}
	return units.FormatSize(j.BS)
}

func setBlockAlign(j *bench.Job, v string) error {
	return setDirSizes(v, ",:-", func(d int, n int64) { j.BlockAlign[d] = n })
}

// setBSRange reads bsrange: lo-hi (or lo:hi), or reads,writes.
func setBSRange(j *bench.Job, v string) error {
	if err := trimsKeepTheirs(v); err != nil {
		return err
	}
	parts, err := splitDirs(v, ",")
	if err != nil {
		return err
	}
	for i, p := range parts {
		if p == "" && len(parts) > 1 {
			continue // that direction keeps its own
		}
		lo, hi, ok := strings.Cut(p, "-")
		if !ok {
			lo, hi, ok = strings.Cut(p, ":")
		}
		if !ok {
			return fmt.Errorf("%q: a range is lo-hi (e.g. 4k-64k)", v)
		}
		a, err := units.ParseSize(lo)
		if err != nil {
			return err
		}
		b, err := units.ParseSize(hi)
		if err != nil {
			return err
		}
		if a == 0 || b == 0 {
			return fmt.Errorf("%q: 0 is not a block size", v)
		}
		r := [2]int64{min(a, b), max(a, b)}
		if len(parts) == 1 {
			j.BSRange = [2][2]int64{r, r}
		} else {
			j.BSRange[i] = r
		}
	}
	return nil
}

// setBSSplit reads bssplit (fio's str_split_parse and bssplit_ddir):
// bs/percent entries split by ':', an entry without a percentage taking
// an even share of what is left; "reads,writes" gives each direction its
// own list.
func setBSSplit(j *bench.Job, v string) error {
	v = strings.TrimSpace(v)
	if err := trimsKeepTheirs(v); err != nil {
		return err
	}
	r, w, perDir := strings.Cut(v, ",")
	if strings.Contains(w, ",") {
		return fmt.Errorf("%q: a third list is for trims, which iolab takes in bs only (here, use reads,writes: trims take the writes')", v)
	}
	// "r,": writes (and trims) keep theirs (fio's str_split_parse).
	if !perDir {
		w = r
	}
	for d, list := range []string{r, w} {
		s, err := parseBSSplit(list)
		if err != nil {
			return fmt.Errorf("%q: %v", v, err)
		}
		if len(s) > 0 {
			j.BSSplit[d] = s
		}
	}
	return nil
}

// maxBSSplit is fio's BSSPLIT_MAX.
const maxBSSplit = 64

func parseBSSplit(list string) ([]bench.BSSplit, error) {
	var out []bench.BSSplit
	total, missing := 0, 0
	for entry := range strings.SplitSeq(list, ":") {
		if entry == "" {
			break
		}
		bsS, pS, hasP := strings.Cut(entry, "/")
		bs, err := units.ParseSize(bsS)
		if err != nil {
			return nil, err
		}
		if bs == 0 {
			return nil, errors.New("0 is not a block size")
		}
		p := -1
		if hasP {
			// fio reads the share with atoi: 0 or none is "the rest".
			if p, err = strconv.Atoi(pS); err != nil || p < 0 {
				return nil, fmt.Errorf("%q is not a percentage", pS)
			}
			p = min(p, 100)
			if p == 0 {
				p = -1
			}
		}
		if p < 0 {
			missing++
		} else {
			total += p
		}
		out = append(out, bench.BSSplit{BS: bs, Percent: p})
		if len(out) == maxBSSplit {
			break
		}
	}
	if total > 100 {
		// fio takes this with one entry left without a share, whose share
		// then wraps round: refused.
		return nil, errors.New("the percentages add up to more than 100")
	}
	if missing > 0 {
		if missing == 1 && len(out) == 1 {
			total = 100
		}
		for i := range out {
			if out[i].Percent < 0 {
				out[i].Percent = max(100-total, 0) / missing
			}
		}
	}
	// fio sorts the entries by share, for its lookup.
	slices.SortStableFunc(out, func(a, b bench.BSSplit) int { return a.Percent - b.Percent })
	return out, nil
}

func setFileSize(j *bench.Job, v string) error {
	lo, hi, isRange := strings.Cut(v, "-")
	if !isRange {
		lo, hi, isRange = strings.Cut(v, ":")
	}
	a, err := units.ParseSize(lo)
	if err != nil {
		return err
	}
	b := a
	if isRange {
		if b, err = units.ParseSize(hi); err != nil {
			return err
		}
	}
	if a < 1 || b < 1 {
		return fmt.Errorf("%q: a file is at least 1 byte", v)
	}
	j.FileSize = [2]int64{a, b}
	return nil
}

func formatRange(r [2]int64) string {
	if r[0] == r[1] {
		return units.FormatSize(r[0])
	}
	return units.FormatSize(r[0]) + "-" + units.FormatSize(r[1])
}

func setFileService(j *bench.Job, v string) error {
	mode, nr, hasNr := strings.Cut(v, ":")
	switch mode {
	case "roundrobin", "random", "sequential":
	case "zipf", "pareto", "normal", "gauss":
		return fmt.Errorf("%q: iolab picks files roundrobin, random or sequential only", v)
	default:
		return fmt.Errorf("%q is not one of roundrobin, random, sequential", v)
	}
	n := 1
	if hasNr {
		var err error
		if n, err = strconv.Atoi(nr); err != nil || n < 1 {
			return fmt.Errorf("%q: :N is a number of I/Os, at least 1", v)
		}
	}
	j.FileService, j.FileServiceNr = mode, n
	return nil
}

func setFallocate(j *bench.Job, v string) error {
	switch v {
	case "none", "native", "posix", "keep", "truncate":
		j.Fallocate = v
	case "0":
		j.Fallocate = "none"
	case "1":
		j.Fallocate = "posix"
	default:
		return fmt.Errorf("%q is not one of none, native, posix, keep, truncate, 0, 1", v)
	}
	return nil
}

// setRWModifier reads rw's :N suffix (fio's str_rw_cb): for random modes
// a count — a new random offset every N I/Os; for sequential ones a size
// skipped after each I/O (negative: backwards).
func setRWModifier(j *bench.Job, suffix string) error {
	j.RWSeqNr, j.RWSeqAdd = 0, 0
	if j.Random() {
		n, err := strconv.Atoi(suffix)
		if err != nil || n < 1 {
			return fmt.Errorf("rw=%s:%s: for a random mode :N is a number of I/Os per random offset, at least 1", j.RW, suffix)
		}
		j.RWSeqNr = n
		return nil
	}
	neg := strings.HasPrefix(suffix, "-")
	n, err := units.ParseSize(strings.TrimPrefix(suffix, "-"))
	if err != nil {
		return fmt.Errorf("rw=%s:%s: for a sequential mode :N is the bytes skipped after each I/O (e.g. rw=write:4k)", j.RW, suffix)
	}
	if neg {
		n = -n
	}
	j.RWSeqAdd = n
	return nil
}

// finishFiles is FinishJob's part for these options (fio's fixup_options).
func finishFiles(j *bench.Job, fail func(option, format string, args ...any) error) error {
	if j.ZoneSize > 0 && j.ZoneMode == "" {
		j.ZoneMode = "strided"
	}
	if j.ZoneMode == "none" {
		if j.ZoneSize > 0 {
			return fail("zonesize", "zonemode=none and zonesize do not go together (fio refuses them too)")
		}
		j.ZoneMode = ""
	}
	if j.ZoneMode == "strided" {
		if j.ZoneSize == 0 {
			return fail("zonesize", "zonemode=strided needs zonesize (e.g. zonesize=1m)")
		}
		if j.ZoneRange == 0 {
			j.ZoneRange = j.ZoneSize
		}
	}
	if j.RWSequencer == "sequential" {
		j.RWSequencer = ""
	}
	if j.FileService == "roundrobin" && j.FileServiceNr <= 1 {
		j.FileService = ""
	}
	if j.Fallocate == "native" {
		j.Fallocate = ""
	}
	for d := range 2 {
		if lo, hi := j.BlockSizes(d); hi > int64(^uint32(0)>>1) || lo <= 0 {
			return fail("bs", "block sizes run from 1 byte to 2 GiB (%d-%d)", lo, hi)
		}
	}
	if j.Size > 0 && j.Size < j.MinBS() {
		return fail("size", "size=%d is below the smallest block size (%d); fio refuses it too", j.Size, j.MinBS())
	}
	return nil
}
