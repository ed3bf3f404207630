package bench

// nullEngine does no I/O: fio's null engine, the harness's own ceiling.
var nullEngine = Engine{
	Name:  "null",
	Help:  "no I/O: every request completes at once (measures iolab itself)",
	Flags: SyncIO | Diskless,
	open: func(j *Job, _ []int, _ *buffers, depth int) (engine, engineInfo, error) {
		return newNull(depth), engineInfo{}, nil
	},
}

// null does no I/O: every request completes at once with its full size. It
// measures the harness's own ceiling, like fio's null engine.
type null struct {
	queued int
	done   completions
}

func newNull(depth int) *null {
	return &null{done: newCompletions(depth)}
}

func (e *null) queue(slot int, op ioOp, _ int, _ int64, n uint32) {
	res := int32(n)
	if op == opFsync || op == opFdatasync {
		res = 0
	}
	e.done.push(completion{slot: int32(slot), res: res})
	e.queued++
}

func (e *null) commit() (int, error) {
	n := e.queued
	e.queued = 0
	return n, nil
}

func (e *null) getevents(min, max int, _ bool, c []completion) (int, error) {
	return e.done.popWait(min, c[:max])
}

func (e *null) close() error { return nil }
