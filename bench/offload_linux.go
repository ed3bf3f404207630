package bench

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
)

// offload is fio 3.33's io_submit_mode=offload (rate-submit.c,
// workqueue.c, backend.c do_io): the job's thread picks, paces and times
// its I/Os as always and hands each one to a pool of submit workers, which
// submit it and wait for it, so the job's submissions keep their schedule
// whatever the device does — up to iodepth I/Os in flight, the job's slots
// (fio's io_us), after which the job waits for one to come back.
//
// As in fio:
//   - there are iodepth workers (workqueue_init's max_workers), each on its
//     own locked OS thread with its own engine context set up at depth 1
//     (io_workqueue_init_worker_fn sets the worker's iodepth to 1), which
//     it alone uses: a libaio context per worker, a psync worker doing one
//     pread at a time — so a sync engine runs iodepth I/Os at once;
//   - an I/O goes to the first idle worker from the one after the last
//     picked, or else to the one given work longest ago (get_submit_worker);
//   - a worker submits the I/O and waits for it (min_evts 1 at depth 1),
//     and stamps its issue (after the submit call returns; a sync engine's
//     before the call) and its completion; the job accounts both against
//     the I/O's creation on the job's thread: slat is issue − creation
//     (which counts the hand-over), clat completion − issue, lat
//     completion − creation, as account_io_completion does with the
//     worker's stamps into the parent's stats;
//   - each worker's I/O depth is 1, and it submits and reaps one I/O per
//     call, as fio's summed worker stats show (IO depths 1=100%, submit and
//     complete 4=100%).
//
// The job's thread takes back what the workers finished without waiting
// after each I/O it hands over, and waits only when every slot is out.
// A rate wait does not drain what is in flight first (fio's rate_ddir
// quiesces only inline), nor does think time (fio's parent has nothing in
// flight of its own to quiesce).
type offload struct {
	workers []*submitWorker
	next    int    // fio's next_free_worker
	seq     uint64 // fio's work_seq
	sync    bool   // the workers' engine does its I/O in the submit call
	bufs    engine.Buffers
	// clk is the job loop's clock, which the workers stamp with; the loop
	// sets it before it hands any I/O over.
	clk *jobClock

	queued []offloadIO           // queued since the last Commit
	done   chan int32            // slots the workers finished, in the order they did
	issued []int64               // per slot, the worker's stamps on the job clock
	ended  []int64               // per slot
	res    []int32               // per slot, the engine's result
	prio   []int32               // per slot, a priority of its own; -1: none
	failed atomic.Pointer[error] // the first engine error a worker met
	wg     sync.WaitGroup
}

type offloadIO struct {
	slot int32
	op   engine.Op
	file int
	off  int64
	n    uint32
}

// submitWorker is one of fio's submit_workers: a goroutine locked to its
// OS thread with its own engine context.
type submitWorker struct {
	work chan offloadIO
	busy atomic.Int32 // I/Os given and not yet done; 0: idle (SW_F_IDLE)
	seq  uint64       // when it was last given work
	eng  engine.IO
	// bufs is the worker engine's one buffer: a window onto the job's
	// buffer of the slot it does an I/O on, moved before each one. The
	// worker does one I/O at a time, so the window never moves under an
	// I/O in flight.
	bufs engine.Buffers
	comp [1]engine.Completion
}

// newOffload starts iodepth submit workers for j, each with its own
// engine e at depth 1 on fds, doing I/O on the slots of bufs. It runs on
// the job's thread, whose CPU affinity the workers take (fio's workers are
// threads the job's thread creates, which inherit it).
func newOffload(j *Job, e *Engine, fds []int, bufs *engine.Buffers, depth int) (*offload, engine.Info, error) {
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		return nil, engine.Info{}, fmt.Errorf("job %s: io_submit_mode=offload: %w", j.Name, err)
	}
	o := &offload{sync: e.Has(engine.SyncIO), bufs: *bufs, queued: make([]offloadIO, 0, depth),
		done: make(chan int32, depth), issued: make([]int64, depth), ended: make([]int64, depth),
		res: make([]int32, depth), prio: make([]int32, depth)}
	for i := range o.prio {
		o.prio[i] = -1
	}
	ready := make(chan error)
	var info engine.Info
	for range depth {
		w := &submitWorker{work: make(chan offloadIO, depth), bufs: *bufs}
		o.wg.Add(1)
		go o.serve(w, j, e, fds, &cpus, ready, &info)
		if err := <-ready; err != nil {
			o.Close()
			return nil, engine.Info{}, err
		}
		o.workers = append(o.workers, w)
	}
	info.Setup = fmt.Sprintf("io_submit_mode=offload: %d submit workers, each %s at depth 1", depth, e.Name)
	return o, info, nil
}

// serve is one worker's thread: it sets up its engine there, says so on
// ready, then does the I/Os it is given until its channel closes.
func (o *offload) serve(w *submitWorker, j *Job, e *Engine, fds []int, cpus *unix.CPUSet, ready chan<- error, info *engine.Info) {
	defer o.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err := unix.SchedSetaffinity(0, cpus)
	if err == nil {
		err = setThreadIOPrio(j)
	}
	if err == nil {
		w.eng, *info, err = e.Open(&engine.Setup{Params: j.EngineParams(), Files: fds, Bufs: &w.bufs, Depth: e.Depth(1),
			IODepth: 1, BS: j.BS, IOPrio: j.JobIOPrio(), RandSeed: j.RandSeed})
	}
	if err != nil {
		ready <- fmt.Errorf("job %s: io_submit_mode=offload: submit worker: %w", j.Name, err)
		return
	}
	ready <- nil
	defer w.eng.Close()
	for io := range w.work {
		o.submit(w, io)
	}
}

// submit is fio's io_workqueue_fn for one I/O: queue it, submit it, wait
// for it, stamp both ends, and hand the slot back.
func (o *offload) submit(w *submitWorker, io offloadIO) {
	s := io.slot
	w.bufs.Base = unsafe.Add(o.bufs.Base, int(s)*o.bufs.Stride)
	w.eng.Queue(0, io.op, io.file, io.off, io.n)
	if p := o.prio[s]; p >= 0 {
		w.eng.(engine.Prioritized).Prioritize(0, uint16(p))
	}
	var issued int64
	if o.sync {
		issued = o.clk.since()
	}
	_, err := w.eng.Commit()
	if !o.sync {
		issued = o.clk.since()
	}
	res := -int32(unix.EIO)
	if err == nil {
		var n int
		n, err = w.eng.GetEvents(1, 1, true, w.comp[:])
		if err == nil && n == 1 {
			res = w.comp[0].Res
		}
	}
	if err != nil {
		o.failed.CompareAndSwap(nil, &err)
	}
	o.issued[s], o.ended[s], o.res[s] = issued, o.clk.since(), res
	w.busy.Add(-1)
	o.done <- s
}

func (o *offload) Queue(slot int, op engine.Op, file int, off int64, n uint32) {
	o.prio[slot] = -1
	o.queued = append(o.queued, offloadIO{int32(slot), op, file, off, n})
}

// Prioritize keeps slot's own priority for its worker's engine (which has
// CmdPrio, or the job would not give one).
func (o *offload) Prioritize(slot int, p uint16) { o.prio[slot] = int32(p) }

// Commit hands each queued I/O to a worker (fio's workqueue_enqueue): it
// never waits, since a worker's channel holds as many I/Os as there are
// slots.
func (o *offload) Commit() (int, error) {
	n := len(o.queued)
	for _, io := range o.queued {
		w := o.pick()
		o.seq++
		w.seq = o.seq
		w.busy.Add(1)
		w.work <- io
	}
	o.queued = o.queued[:0]
	return n, o.err()
}

// pick is fio's get_submit_worker: the first idle worker from next, round
// the pool, or else the one given work longest ago.
func (o *offload) pick() *submitWorker {
	var best *submitWorker
	n := len(o.workers)
	for k := range n {
		w := o.workers[(o.next+k)%n]
		if w.busy.Load() == 0 {
			best = w
			break
		}
		if best == nil || w.seq < best.seq {
			best = w
		}
	}
	for i, w := range o.workers {
		if w == best && i == o.next {
			o.next = (i + 1) % n
		}
	}
	return best
}

// GetEvents takes back at least min and at most max finished I/Os,
// waiting for min of them with block, else asking over and over.
func (o *offload) GetEvents(min, max int, block bool, c []engine.Completion) (int, error) {
	n := 0
	for n < max {
		var s int32
		if n < min && block {
			s = <-o.done
		} else {
			select {
			case s = <-o.done:
			default:
				if n < min {
					runtime.Gosched()
					continue
				}
				return n, o.err()
			}
		}
		c[n] = engine.Completion{Slot: s, Res: o.res[s]}
		n++
	}
	return n, o.err()
}

func (o *offload) err() error {
	if err := o.failed.Load(); err != nil {
		return *err
	}
	return nil
}

// Close stops the workers once they are done, each closing its engine on
// its own thread.
func (o *offload) Close() error {
	for _, w := range o.workers {
		close(w.work)
	}
	o.workers = nil
	o.wg.Wait()
	return nil
}

// stamps are the worker's issue and completion times of the I/O on slot.
func (o *offload) stamps(slot int32) (issued, ended int64) { return o.issued[slot], o.ended[slot] }

// offloaded accounts what the loop's reap takes from the worker of the
// I/O on slot, of direction d: its issue time, its slat, and fio's depth,
// submit and complete counts of a worker at depth 1. It returns when the
// I/O completed, for its clat and lat.
func (l *loop) offloaded(s int32, d uint8) int64 {
	issued, ended := l.off.stamps(s)
	l.issued[s] = issued
	if !l.measuring || l.created[s] < l.measureStart {
		return ended
	}
	l.dist.MarkDepth(1, 1)
	l.dist.MarkSubmit(1)
	l.dist.MarkComplete(1)
	// A sync engine's worker has no slat, as fio's (io_u_queued is for
	// I/Os an engine queues); its lat still counts the hand-over.
	if l.st.slat && d <= Write && !l.off.sync {
		l.cur[d].Slat.Add(uint64(issued - l.created[s]))
		l.logSlat(s, issued)
	}
	return ended
}
