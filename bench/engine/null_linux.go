package engine

// nullEngine does no I/O: fio's null engine, the harness's own ceiling.
var nullEngine = Engine{
	Name:  "null",
	Help:  "no I/O: every request completes at once (measures iolab itself)",
	Flags: SyncIO | Diskless,
	open: func(st *Setup) (IO, Info, error) {
		return newNull(st.Depth), Info{}, nil
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

func (e *null) Queue(slot int, op Op, _ int, _ int64, n uint32) {
	res := int32(n)
	if op == OpFsync || op == OpFdatasync {
		res = 0
	}
	e.done.push(Completion{Slot: int32(slot), Res: res})
	e.queued++
}

func (e *null) Commit() (int, error) {
	n := e.queued
	e.queued = 0
	return n, nil
}

func (e *null) GetEvents(min, max int, _ bool, c []Completion) (int, error) {
	return e.done.popWait(min, c[:max])
}

func (e *null) Close() error { return nil }
