package bench

import (
	"fmt"
	"strconv"
	"strings"

	"iolab/bench/randgen"
	"iolab/bench/units"
)

// cmdprioOptions are the options fio's io_uring and libaio engines share
// for priorities per I/O (engines/cmdprio.h struct cmdprio_options, in
// both engines' option tables): fio knows them on those two engines only.
var cmdprioOptions = []OptionSpec{
	{Name: "cmdprio_percentage", Example: "20", Unit: "int,int", Default: "0",
		Help: "the % of I/Os (reads,writes) that carry the priority of cmdprio_class and cmdprio, drawn per I/O; the others keep the job's (prio, prioclass)",
		Set:  perDirInt(0, 100, func(j *Job) *[2]int { return &j.CmdprioPercentage }),
		Get:  getPerDirInt(func(j *Job) [2]int { return j.CmdprioPercentage })},
	{Name: "cmdprio_class", Example: "3", Unit: "int,int", Default: "1",
		Help: "the class of cmdprio's I/Os (reads,writes): 1 real-time, 2 best-effort, 3 idle",
		Set:  perDirInt(IOPrioClassRT, IOPrioClassIdle, func(j *Job) *[2]int { return &j.CmdprioClass }),
		Get: getPerDirInt(func(j *Job) [2]int {
			c := j.CmdprioClass
			for d := range c {
				if c[d] == IOPrioClassNone {
					c[d] = IOPrioClassRT // fio's fio_cmdprio_parse_and_gen
				}
			}
			return c
		})},
	{Name: "cmdprio", Example: "0", Unit: "int,int", Default: "0",
		Help: "the level of cmdprio's I/Os (reads,writes), 0 (highest) to 7",
		Set:  perDirInt(0, MaxIOPrioLevel, func(j *Job) *[2]int { return &j.CmdprioLevel }),
		Get:  getPerDirInt(func(j *Job) [2]int { return j.CmdprioLevel })},
	{Name: "cmdprio_bssplit", Example: "64k/100:1m/0", Unit: "list",
		Help: "per block size, the % of its I/Os that carry a priority: bs/percent (cmdprio_class and cmdprio's) or bs/percent/class/level, entries split by ':' (reads,writes: list,list); instead of cmdprio_percentage",
		Set: func(j *Job, v string) error {
			s, err := ParseCmdprioBSSplit(v)
			if err == nil {
				j.CmdprioBSSplit, j.CmdprioBSSplitText = s, v
			}
			return err
		},
		Get: func(j *Job) string { return j.CmdprioBSSplitText }},
}

// perDirInt sets a per-direction whole number the way fio's parser
// stores an FIO_OPT_INT with off1 and off2 (parse.c handle_option): the
// values are split at a ',', else a ':', else a '-' (a trailing comma
// dropped); the first is for reads and, when it is the only one, for
// writes too; the second for writes; an empty one keeps what the
// direction had; a third (trims) is checked and dropped.
func perDirInt(lo, hi int, field func(*Job) *[2]int) func(*Job, string) error {
	return func(j *Job, v string) error {
		parts := splitPerDir(v)
		vals := *field(j)
		for i, p := range parts {
			if p == "" {
				continue
			}
			n, err := units.ParseInt(p, lo, hi)
			if err != nil {
				return err
			}
			switch {
			case i >= 2:
			case len(parts) == 1:
				vals = [2]int{n, n}
			default:
				vals[i] = n
			}
		}
		*field(j) = vals
		return nil
	}
}

func splitPerDir(v string) []string {
	var parts []string
	for {
		i := strings.IndexByte(v, ',')
		if i >= 0 && i == len(v)-1 {
			v, i = v[:i], -1
		}
		if i < 0 {
			i = strings.IndexByte(v, ':')
		}
		if i < 0 {
			i = strings.IndexByte(v, '-')
		}
		if i < 0 {
			return append(parts, v)
		}
		parts = append(parts, v[:i])
		v = v[i+1:]
	}
}

func getPerDirInt(get func(*Job) [2]int) func(*Job) string {
	return func(j *Job) string {
		v := get(j)
		if v[Read] == v[Write] {
			return strconv.Itoa(v[Read])
		}
		return fmt.Sprintf("%d,%d", v[Read], v[Write])
	}
}

// cmdPrio is a job's priorities per I/O (fio's struct cmdprio,
// engines/cmdprio.c): which I/Os carry a priority other than the job's,
// drawn for each I/O of a direction cmdprio covers from the job's own
// random source (fio's td->prio_state, seeded from FIO_RAND_PRIO_CMDS).
// Each priority has an index into its direction's Prios, where the job's
// own is index 0: fio's clat_prio_index.
type cmdPrio struct {
	bssplit bool
	// perc is cmdprio_percentage's share per direction, 0 where it does
	// not apply; prio its priority, at index idx.
	perc [2]int
	prio [2]prioChoice
	// bs is cmdprio_bssplit's, per direction.
	bs  [2][]bsPrio
	rnd randgen.Taus88
	// seed restarts rnd where a pass re-seeds the job (fio's
	// clear_io_state calls td_fill_rand_seeds, prio_state's included);
	// reseeds is the generator's count of them rnd has seen.
	seed    uint64
	reseeds int
	// prios are each direction's distinct priorities in fio's order of
	// their clat_prio_index: the job's own first, then each as cmdprio
	// first names it; nil for a direction cmdprio leaves alone.
	prios [2][]uint16
}

type prioChoice struct {
	perc int
	prio uint16
	idx  uint8
}

// bsPrio is the entries of one block size (fio's struct cmdprio_bsprio).
type bsPrio struct {
	bs      int64
	total   int
	choices []prioChoice
}

// newCmdPrio sets up job j's cmdprio as fio_cmdprio_init does, seeded
// with seed; nil when the job gives no I/O a priority of its own.
func newCmdPrio(j *Job, seed uint64) *cmdPrio {
	if !j.UsesCmdprio() {
		return nil
	}
	c := &cmdPrio{bssplit: j.CmdprioBSSplitText != "", rnd: randgen.NewTaus88(seed), seed: seed}
	def := j.JobIOPrio()
	index := func(d int, p uint16) uint8 {
		for i, q := range c.prios[d] {
			if q == p {
				return uint8(i)
			}
		}
		c.prios[d] = append(c.prios[d], p)
		return uint8(len(c.prios[d]) - 1)
	}
	for d := range 2 {
		if !j.rwHas(d) {
			continue // fio sets up no direction the job does not do
		}
		if !c.bssplit {
			if p := j.CmdprioPercentage[d]; p > 0 {
				c.prios[d] = []uint16{def}
				pr := j.cmdprioDefault(d)
				c.perc[d] = p
				c.prio[d] = prioChoice{perc: p, prio: pr, idx: index(d, pr)}
			}
			continue
		}
		splits := j.CmdprioBSSplit[d]
		if len(splits) == 0 {
			continue
		}
		c.prios[d] = []uint16{def}
		for _, e := range splits {
			pr := j.cmdprioDefault(d)
			if e.Prio >= 0 {
				pr = uint16(e.Prio)
			}
			ch := prioChoice{perc: e.Percent, prio: pr, idx: index(d, pr)}
			if n := len(c.bs[d]); n > 0 && c.bs[d][n-1].bs == e.BS {
				b := &c.bs[d][n-1]
				b.total += e.Percent
				b.choices = append(b.choices, ch)
				continue
			}
			c.bs[d] = append(c.bs[d], bsPrio{bs: e.BS, total: e.Percent, choices: []prioChoice{ch}})
		}
	}
	return c
}

// pick is fio_cmdprio_set_ioprio for an I/O of direction d and n bytes:
// when the direction (or the I/O's block size) has a share, a draw in
// [0, 100) below it gives the I/O a priority — which one, for a block
// size of several entries, the entry the draw falls in. ok is false when
// the I/O keeps the job's priority.
func (c *cmdPrio) pick(d int, n uint32) (p prioChoice, ok bool) {
	var b *bsPrio
	share := c.perc[d]
	if c.bssplit {
		for i := range c.bs[d] {
			if c.bs[d][i].bs == int64(n) {
				b = &c.bs[d][i]
				share = b.total
				break
			}
		}
	}
	if share == 0 {
		return prioChoice{}, false
	}
	r := int(c.rnd.Between(0, 99))
	if r >= share {
		return prioChoice{}, false
	}
	if b == nil {
		return c.prio[d], true
	}
	sum := 0
	for _, ch := range b.choices {
		if sum += ch.perc; r < sum {
			return ch, true
		}
	}
	return prioChoice{}, false // unreachable: r < total
}
