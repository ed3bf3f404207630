package bench

import (
	"iolab/bench/engine"
	"iolab/bench/hist"
	"iolab/bench/randgen"
)

// The job loop's I/O priorities (cmdprio.go): which priority each I/O
// carries, handed to the engine as it is queued, and each priority's
// latency, kept as fio's add_clat_sample and add_lat_sample keep theirs
// (stat.c). Everything is sized when the job starts: nothing is
// allocated per I/O.

// prioLoop is a job loop's priority state; the zero value is a job
// whose I/Os all carry its own priority.
type prioLoop struct {
	cp  *cmdPrio           // nil without cmdprio
	eng engine.Prioritized // the engine, where it carries priorities
	def uint16             // the job's priority (prio, prioclass)

	// Per slot, with cmdprio: the I/O's priority and its index into its
	// direction's lats.
	of  []uint16
	idx []uint8

	lats [2][]hist.Lat // per direction and priority; nil where cmdprio does not apply
	// lat: the latency kept per priority is lat (lat_percentiles), else
	// clat; hist: with its histogram (clat_percentiles, or lat's).
	lat, on, hist bool
}

// initPrio sets up the job's priorities for a loop of depth slots, the
// draws seeded from the job's FIO_RAND_PRIO_CMDS seed.
func (l *loop) initPrio(depth int, seed uint64) {
	j := l.j
	p := &l.prio
	p.def = j.JobIOPrio()
	p.cp = newCmdPrio(j, seed)
	if p.cp == nil {
		return
	}
	p.eng, _ = l.eng.(engine.Prioritized)
	p.of, p.idx = make([]uint16, depth), make([]uint8, depth)
	for d := range p.lats {
		if n := len(p.cp.prios[d]); n > 0 {
			p.lats[d] = make([]hist.Lat, n)
		}
	}
	if j.LatPercentiles {
		p.lat, p.on, p.hist = true, l.st.lat, true
	} else {
		p.on, p.hist = l.st.clat, j.ClatPercentiles
	}
}

// queuedPrio draws the priority of the read or write just queued on
// slot, of n bytes, and gives it to the engine when it is not the job's
// own (fio's ->queue calling fio_cmdprio_set_ioprio).
func (l *loop) queuedPrio(slot int32, op ioOp, n uint32) {
	p := &l.prio
	if r := l.gen.reseeds; r != p.cp.reseeds {
		p.cp.rnd, p.cp.reseeds = randgen.NewTaus88(p.cp.seed), r
	}
	ch, ok := p.cp.pick(int(op), n)
	if !ok {
		p.of[slot], p.idx[slot] = p.def, 0
		return
	}
	p.of[slot], p.idx[slot] = ch.prio, ch.idx
	if p.eng != nil {
		p.eng.Prioritize(int(slot), ch.prio)
	}
}

// ioPrio is the priority slot s's I/O carries, for the logs.
func (l *loop) ioPrio(s int32) uint16 {
	if l.prio.cp != nil {
		return l.prio.of[s]
	}
	return l.prio.def
}

// prioDone records slot s's latency under its priority: clat, or lat
// (completed at tc) with lat_percentiles.
func (l *loop) prioDone(s int32, d uint8, clat uint64, tc int64) {
	p := &l.prio
	lats := p.lats[d]
	if lats == nil || !p.on {
		return
	}
	v := clat
	if p.lat {
		v = uint64(tc - l.created[s])
	}
	pl := &lats[p.idx[s]]
	pl.Stat.Add(v)
	if p.hist {
		pl.Hist.Add(v)
	}
}

// prioRestart forgets what the priorities measured, at a new window.
func (l *loop) prioRestart() {
	for d := range l.prio.lats {
		clear(l.prio.lats[d])
	}
}

// prioResult keeps each direction's latencies per priority with the
// result, in the order of cmdprio's priorities.
func (l *loop) prioResult() { l.prioInto(&l.res.Dirs) }

// prioInto writes the latency per priority so far into dirs: the
// result's, or a snapshot's (loop_status_linux.go).
func (l *loop) prioInto(dirs *DirResults) {
	for d, lats := range l.prio.lats {
		if lats == nil {
			continue
		}
		out := make([]PrioLat, len(lats))
		for i := range lats {
			out[i] = PrioLat{Prio: l.prio.cp.prios[d][i], Lat: lats[i]}
		}
		dirs[d].Prios = out
	}
}
