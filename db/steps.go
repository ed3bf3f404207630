package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/joblog"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// stepColumns are the steps columns SaveStep writes and Steps reads, in
// order.
var stepColumns = []string{"seq", "repeat", "axes", "scheduler", "config", "status", "error",
	"started_at", "finished_at", "schedulers", "cpu", "proc",
	"has_result", "result_start", "result_host", "result_groups", "prep"}

// resultColumns are the step_results columns after id and step_id, in the
// order resultRow fills them.
var resultColumns = func() []string {
	cols := []string{"group_index", "job_index", "group_id", "job_name", "reporting", "jobs_merged", "job",
		"error", "start_at", "runtime_ns", "interval_ns", "usr_cpu_ns", "sys_cpu_ns", "ctx", "min_flt", "maj_flt"}
	for _, d := range []string{"read", "write"} {
		cols = append(cols, d+"_ios", d+"_bytes", d+"_short", d+"_iops", d+"_bw_bytes")
		for _, l := range []string{"slat", "clat", "lat"} {
			for _, f := range []string{"n", "min", "max", "mean", "s", "bins"} {
				cols = append(cols, d+"_"+l+"_"+f)
			}
		}
	}
	return append(cols, "fio", "qos")
}()

// fioExtras is what step_results.fio keeps of a bench.JobResult.
type fioExtras struct {
	TID        int           `json:"tid,omitempty"`
	Errno      int           `json:"errno,omitempty"`
	RuntimeSum time.Duration `json:"runtime_sum_ns,omitempty"`
	Dist       bench.IODist  `json:"dist"`
	// Steady is the steady-state window (ss_dur), LatencyDepth the depth
	// a latency_target search ended at.
	Steady       *bench.SteadyResult `json:"steady,omitempty"`
	LatencyDepth int                 `json:"latency_depth,omitempty"`
	// EngineSetup is bench.JobResult.EngineSetup: io_uring's flags.
	EngineSetup string `json:"engine_setup,omitempty"`
	// Clock is bench.JobResult.Clock: the clock the job's loop read.
	Clock string `json:"clock,omitempty"`
	// Verify is the job's data verification (verify=), apart from its
	// measured I/O.
	Verify *bench.VerifyResult `json:"verify,omitempty"`
	// Prios are each direction's latencies per I/O priority
	// (bench.DirResult.Prios), where there are any.
	Prios *[2][]bench.PrioLat `json:"prios,omitempty"`
	// The I/O errors the job went on after (continue_on_error).
	TotalErr      uint64 `json:"total_err,omitempty"`
	FirstError    int    `json:"first_error,omitempty"`
	FirstErrorMsg string `json:"first_error_msg,omitempty"`
	// Trim is the trims' direction (bench.Trim), where the job trimmed:
	// the columns hold reads and writes.
	Trim *bench.DirResult `json:"trim,omitempty"`
	// Block is the reads' and writes' time in the block layer
	// (bench.DirResult.Block, --trace-block), where traced; the trims'
	// is in Trim.
	Block *[2]*bench.BlockTime `json:"block,omitempty"`
}

// groupMeta is what steps.result_groups keeps of a bench.GroupResult: all
// but its jobs, which are step_results rows.
type groupMeta struct {
	ID        int                      `json:"id"`
	Reporting bool                     `json:"reporting"`
	Disks     []system.DiskUtilization `json:"disks"`
	// Trace is what --trace-block's trace saw beside the jobs' I/Os.
	Trace *bench.BlockTrace `json:"block_trace,omitempty"`
}

// SaveStep stores one step's result in one transaction: the step, each job's
// (or merged group's) result per direction with its histograms, and its
// samples. A step already stored under the same Seq is replaced, so a runner
// can save a step as running when it starts and again when it ends. The
// step's engine variant and the schedulers active during it join the run's
// Engines and Schedulers.
func (s *Store) SaveStep(ctx context.Context, runID int64, res *sweep.StepResult) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("db: save run %d step %d: %w", runID, res.Step.Seq, err)
	}
	defer tx.Rollback()
	if err := s.addRunSummary(ctx, tx, runID, res); err != nil {
		return fmt.Errorf("db: save run %d step %d: %w", runID, res.Step.Seq, err)
	}
	if err := s.insertStep(ctx, tx, runID, res); err != nil {
		return fmt.Errorf("db: save run %d step %d: %w", runID, res.Step.Seq, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("db: save run %d step %d: %w", runID, res.Step.Seq, err)
	}
	return nil
}

// addRunSummary adds the step's engines and schedulers to its run's lists.
func (s *Store) addRunSummary(ctx context.Context, tx *sql.Tx, runID int64, res *sweep.StepResult) error {
	var engineText, schedText string
	err := tx.StmtContext(ctx, s.stmts.runSummary).QueryRowContext(ctx, runID).Scan(&engineText, &schedText)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %w", ErrNotFound)
	}
	if err != nil {
		return err
	}
	var engines, scheds []string
	if err := json.Unmarshal([]byte(engineText), &engines); err != nil {
		return fmt.Errorf("run engines: %w", err)
	}
	if err := json.Unmarshal([]byte(schedText), &scheds); err != nil {
		return fmt.Errorf("run schedulers: %w", err)
	}
	n, m := len(engines), len(scheds)
	if v := res.Step.Value(sweep.AxisEngine); v != "" {
		engines = union(engines, v)
	} else if res.Result != nil {
		for _, g := range res.Result.Groups {
			for _, j := range g.Jobs {
				engines = union(engines, bench.EngineVariant(&j.Job))
			}
		}
	}
	scheds = union(scheds, res.Step.Scheduler)
	for _, disk := range sortedKeys(res.Schedulers) {
		scheds = union(scheds, res.Schedulers[disk])
	}
	if len(engines) == n && len(scheds) == m {
		return nil
	}
	var j jsonWriter
	e, sc := j.list(engines), j.list(scheds)
	if j.err != nil {
		return j.err
	}
	_, err = tx.StmtContext(ctx, s.stmts.setRunSummary).ExecContext(ctx, e, sc, runID)
	return err
}

// insertStep writes res as run runID's step res.Step.Seq, replacing one
// stored before.
func (s *Store) insertStep(ctx context.Context, tx *sql.Tx, runID int64, res *sweep.StepResult) error {
	if _, err := tx.StmtContext(ctx, s.stmts.deleteStep).ExecContext(ctx, runID, res.Step.Seq); err != nil {
		return err
	}
	var j jsonWriter
	args := []any{runID, res.Step.Seq, res.Step.Repeat, j.text(res.Step.Axes), res.Step.Scheduler,
		j.text(res.Step.Config), res.Status, res.Error, nsTime(res.Start), nsTime(res.End),
		j.text(res.Schedulers), j.text(res.CPU), j.text(res.Proc)}
	if r := res.Result; r != nil {
		var groups []groupMeta
		if r.Groups != nil {
			groups = make([]groupMeta, len(r.Groups))
			for i, g := range r.Groups {
				groups[i] = groupMeta{ID: g.ID, Reporting: g.Reporting, Disks: g.Disks, Trace: g.Trace}
			}
		}
		args = append(args, true, nsTime(r.Start), j.text(r.Host), j.text(groups))
	} else {
		args = append(args, false, nil, nil, nil)
	}
	if res.Prep != nil {
		args = append(args, j.text(res.Prep))
	} else {
		args = append(args, nil)
	}
	if j.err != nil {
		return j.err
	}
	var stepID int64
	if err := tx.StmtContext(ctx, s.stmts.insertStep).QueryRowContext(ctx, args...).Scan(&stepID); err != nil {
		return err
	}
	if res.Result == nil {
		return nil
	}

	insResult := tx.StmtContext(ctx, s.stmts.insertResult)
	row := make([]any, 0, 1+len(resultColumns))
	var scratch []byte
	sampleArgs := make([]any, 0, sampleBatches[0]*sampleParams)
	logBudget := stepLogsMax
	for gi := range res.Result.Groups {
		g := &res.Result.Groups[gi]
		for ji := range g.Jobs {
			jr := &g.Jobs[ji]
			var err error
			row, err = resultRow(row[:0], &scratch, stepID, gi, ji, g.Reporting, jr)
			if err != nil {
				return fmt.Errorf("group %d job %d: %w", gi, ji, err)
			}
			var resultID int64
			if err := insResult.QueryRowContext(ctx, row...).Scan(&resultID); err != nil {
				return fmt.Errorf("group %d job %d: %w", gi, ji, err)
			}
			// Samples go in multi-row INSERTs of the largest batch that
			// fits: 60 samples are 32 + 16 + 8 + 4.
			for i, b := 0, 0; i < len(jr.Samples); {
				for sampleBatches[b] > len(jr.Samples)-i {
					b++
				}
				n := sampleBatches[b]
				sampleArgs = sampleArgs[:0]
				for k, sm := range jr.Samples[i : i+n] {
					sampleArgs = append(sampleArgs, resultID, i+k, int64(sm.At),
						int64(sm.IOs[bench.Read]), int64(sm.IOs[bench.Write]), int64(sm.IOs[bench.Trim]),
						int64(sm.Bytes[bench.Read]), int64(sm.Bytes[bench.Write]), int64(sm.Bytes[bench.Trim]))
					sampleArgs = appendIntervalLat(sampleArgs, sm.Lat)
				}
				if _, err := tx.StmtContext(ctx, s.stmts.insertSamples[b]).ExecContext(ctx, sampleArgs...); err != nil {
					return fmt.Errorf("group %d job %d samples: %w", gi, ji, err)
				}
				i += n
			}
			if err := insertLogs(ctx, tx, resultID, jr.Logs, &logBudget); err != nil {
				return fmt.Errorf("group %d job %d: %w", gi, ji, err)
			}
		}
	}
	return nil
}

// sampleBatches are the row counts of the sample INSERTs, largest first and
// ending with 1 (sampleParams parameters a row, far below SQLite's limit
// of 32766).
var sampleBatches = []int{64, 32, 16, 8, 4, 2, 1}

// writeStmts are SaveStep's statements, prepared once on the write
// connection; a transaction on that connection reuses them.
type writeStmts struct {
	deleteStep, insertStep, insertResult *sql.Stmt
	insertSamples                        []*sql.Stmt // one per sampleBatches entry
	runSummary, setRunSummary            *sql.Stmt
}

func (s *Store) prepare(ctx context.Context) error {
	queries := []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.stmts.deleteStep, `DELETE FROM steps WHERE run_id = ? AND seq = ?`},
		{&s.stmts.insertStep, `INSERT INTO steps (run_id, ` + strings.Join(stepColumns, ", ") + `)
			VALUES (?` + strings.Repeat(", ?", len(stepColumns)) + `) RETURNING id`},
		{&s.stmts.insertResult, `INSERT INTO step_results (step_id, ` + strings.Join(resultColumns, ", ") + `)
			VALUES (?` + strings.Repeat(", ?", len(resultColumns)) + `) RETURNING id`},
		{&s.stmts.runSummary, `SELECT engines, schedulers FROM runs WHERE id = ?`},
		{&s.stmts.setRunSummary, `UPDATE runs SET engines = ?, schedulers = ? WHERE id = ?`},
	}
	s.stmts.insertSamples = make([]*sql.Stmt, len(sampleBatches))
	for i, n := range sampleBatches {
		queries = append(queries, struct {
			dst **sql.Stmt
			q   string
		}{&s.stmts.insertSamples[i], insertSamplesSQL(n)})
	}
	for _, q := range queries {
		st, err := s.write.PrepareContext(ctx, q.q)
		if err != nil {
			return fmt.Errorf("prepare %.40q: %w", q.q, err)
		}
		*q.dst = st
	}
	return nil
}

func (ws *writeStmts) close() {
	for _, st := range append([]*sql.Stmt{ws.deleteStep, ws.insertStep, ws.insertResult, ws.runSummary, ws.setRunSummary},
		ws.insertSamples...) {
		if st != nil {
			st.Close()
		}
	}
}

func insertSamplesSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO samples (result_id, idx, at_ns, read_ios, write_ios, trim_ios, read_bytes, write_bytes, trim_bytes, ` + sampleLatColumns + `) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?" + strings.Repeat(", ?", sampleParams-1) + ")")
	}
	return b.String()
}

// resultRow appends the step_results values of one job result to row;
// scratch is reused for the histograms' text.
func resultRow(row []any, scratch *[]byte, stepID int64, gi, ji int, reporting bool, jr *bench.JobResult) ([]any, error) {
	job, err := json.Marshal(jr.Job)
	if err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	row = append(row, stepID, gi, ji, jr.GroupID, jr.Name, reporting, jr.Jobs, string(job),
		jr.Error, nsTime(jr.Start), int64(jr.Runtime), int64(jr.Interval),
		int64(jr.UsrCPU), int64(jr.SysCPU), int64(jr.Ctx), int64(jr.MinFlt), int64(jr.MajFlt))
	for d := range bench.Trim {
		dr := &jr.Dirs[d]
		row = append(row, int64(dr.IOs), int64(dr.Bytes), int64(dr.Short), jr.IOPS(d), jr.BW(d))
		for _, l := range []*hist.Lat{&dr.Slat, &dr.Clat, &dr.Lat} {
			row = append(row, int64(l.Stat.N), int64(l.Stat.Min), int64(l.Stat.Max), l.Stat.Mean, l.Stat.S,
				encodeBins(scratch, &l.Hist))
		}
	}
	x := fioExtras{TID: jr.TID, Errno: jr.Errno, RuntimeSum: jr.RuntimeSum, Dist: jr.Dist, EngineSetup: jr.EngineSetup, Clock: jr.Clock, Verify: jr.Verify,
		Steady: jr.Steady, LatencyDepth: jr.LatencyDepth, TotalErr: jr.TotalErr, FirstError: jr.FirstError, FirstErrorMsg: jr.FirstErrorMsg}
	if jr.Dirs[bench.Read].Prios != nil || jr.Dirs[bench.Write].Prios != nil {
		x.Prios = &[2][]bench.PrioLat{jr.Dirs[bench.Read].Prios, jr.Dirs[bench.Write].Prios}
	}
	if t := jr.Dirs[bench.Trim]; t.IOs > 0 || t.Short > 0 {
		x.Trim = &t
	}
	if jr.Dirs[bench.Read].Block != nil || jr.Dirs[bench.Write].Block != nil {
		x.Block = &[2]*bench.BlockTime{jr.Dirs[bench.Read].Block, jr.Dirs[bench.Write].Block}
	}
	extras, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("fio: %w", err)
	}
	qos, err := qosColumn(jr)
	if err != nil {
		return nil, fmt.Errorf("qos: %w", err)
	}
	return append(row, string(extras), qos), nil
}

// encodeBins writes the histogram's non-empty buckets as fio's json+ "bins"
// object, {"midpoint_ns": count, …} in bucket order; NULL when empty. The
// text is built in *scratch, which it grows as needed.
func encodeBins(scratch *[]byte, h *hist.Histogram) sql.NullString {
	b := append((*scratch)[:0], '{')
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendUint(b, hist.BucketValue(i), 10)
		b = append(b, '"', ':')
		b = strconv.AppendUint(b, c, 10)
	}
	*scratch = b
	if len(b) == 1 {
		return sql.NullString{}
	}
	b = append(b, '}')
	return sql.NullString{String: string(b), Valid: true}
}

// decodeBins fills h from encodeBins's text. Keys must be bucket midpoints,
// as hist.HistogramFromBins requires. Text that is not in encodeBins's
// compact form goes through encoding/json.
func decodeBins(text string, h *hist.Histogram) error {
	if ok := decodeCompactBins(text, h); ok {
		return nil
	}
	*h = hist.Histogram{}
	var bins map[uint64]uint64
	if err := json.Unmarshal([]byte(text), &bins); err != nil {
		return err
	}
	hist, err := hist.HistogramFromBins(bins)
	if err != nil {
		return err
	}
	*h = hist
	return nil
}

// decodeCompactBins parses {"v":c,"v":c} without spaces, the form
// encodeBins writes. It reports false, leaving h partly filled, on anything
// else, including a key that is not a bucket midpoint.
func decodeCompactBins(text string, h *hist.Histogram) bool {
	if len(text) < 2 || text[0] != '{' || text[len(text)-1] != '}' {
		return false
	}
	p := text[1 : len(text)-1]
	for len(p) > 0 {
		if p[0] != '"' {
			return false
		}
		v, rest, ok := parseUint(p[1:])
		if !ok || len(rest) < 2 || rest[0] != '"' || rest[1] != ':' {
			return false
		}
		c, rest, ok := parseUint(rest[2:])
		if !ok {
			return false
		}
		idx := hist.BucketIndex(v)
		if hist.BucketValue(idx) != v {
			return false
		}
		h.Counts[idx] += c
		if len(rest) > 0 {
			if rest[0] != ',' || len(rest) == 1 {
				return false
			}
			rest = rest[1:]
		}
		p = rest
	}
	return true
}

// parseUint reads a decimal number from the start of s.
func parseUint(s string) (uint64, string, bool) {
	var v uint64
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, s, false
		}
		v = v*10 + d
	}
	return v, s[i:], i > 0
}

// Steps reads a run's steps in order, rebuilt as the runner produced them:
// axes, status, schedulers, CPU, and each group's jobs with their
// directions, latency summaries, histograms and samples. A job result
// without samples reads back with nil Samples.
func (s *Store) Steps(ctx context.Context, runID int64) ([]sweep.StepResult, error) {
	return s.StepsFor(ctx, runID, LoadAll())
}

// StepLoad says what StepsFor reads of a run's steps beyond what it always
// reads: each step with its axes, config, status, schedulers and CPU, and
// each job result with its counts, times, errors, latency summaries
// (LatStat) and disks. What it leaves out reads back empty.
type StepLoad struct {
	// Hists are the latency histograms to read, any of SlatHist, ClatHist
	// and LatHist.
	Hists Hists
	// Samples reports whether to read the samples of a step's job
	// results; nil reads none. It is called once for each step, in Seq
	// order, when everything else of the steps is read, so it may pick
	// (say) the first step that is done.
	Samples func(*sweep.StepResult) bool
	// Jobs reads each job result's Job, the options the job ran with.
	Jobs bool
	// Logs are the kinds of fio log files to read of the results whose
	// samples are read (logs.go); nil reads none.
	Logs []joblog.Kind
}

// Hists is a set of the latency histograms of a job result's directions.
type Hists uint8

// The histograms of bench.DirResult's Slat, Clat and Lat.
const (
	SlatHist Hists = 1 << iota
	ClatHist
	LatHist
	AllHists = SlatHist | ClatHist | LatHist
)

// LoadAll reads everything, as Steps and Export do.
func LoadAll() StepLoad {
	return StepLoad{Hists: AllHists, Samples: EverySample, Jobs: true, Logs: AllLogKinds}
}

// EverySample is a StepLoad.Samples that reads the samples of every step.
func EverySample(*sweep.StepResult) bool { return true }

// StepsFor reads a run's steps in order as Steps does, but only what load
// asks for: a page that shows some of a large run reads much less.
func (s *Store) StepsFor(ctx context.Context, runID int64, load StepLoad) ([]sweep.StepResult, error) {
	// One read transaction, so that the queries see the same steps while
	// the runner adds more.
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("db: run %d steps: %w", runID, err)
	}
	defer tx.Rollback()
	steps, err := readSteps(ctx, tx, runID, load, s.stepCache)
	if err != nil {
		return nil, fmt.Errorf("db: run %d steps: %w", runID, err)
	}
	return steps, nil
}

// eachStepBatch is how many steps EachStep reads at a time: a few MB of
// job results at most, however long the run.
const eachStepBatch = 8

// EachStep calls fn with each of a run's steps in order, read as StepsFor
// reads them but a few at a time, so that a run of any length costs a few
// steps' memory: the export document and the CSVs of a long run are
// written as they are read. The steps are read in one read transaction
// (the ones a runner adds meanwhile are not seen); an error from fn stops
// the walk and is returned as it is.
func (s *Store) EachStep(ctx context.Context, runID int64, load StepLoad, fn func(*sweep.StepResult) error) error {
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("db: run %d steps: %w", runID, err)
	}
	defer tx.Rollback()
	if err := runExists(ctx, tx, runID); err != nil {
		return fmt.Errorf("db: run %d steps: %w", runID, err)
	}
	w := stepWindow{after: math.MinInt64, limit: eachStepBatch}
	for {
		steps, err := readStepWindow(ctx, tx, runID, load, w, s.stepCache)
		if err != nil {
			return fmt.Errorf("db: run %d steps: %w", runID, err)
		}
		for i := range steps {
			if err := fn(&steps[i]); err != nil {
				return err
			}
		}
		if len(steps) < eachStepBatch {
			return nil
		}
		w.after = int64(steps[len(steps)-1].Step.Seq)
	}
}

// stepWindow selects the steps readStepWindow reads: the first limit
// (-1: all) whose seq is above after.
type stepWindow struct {
	after int64
	limit int
}

// allSteps is the window of every step.
var allSteps = stepWindow{after: math.MinInt64, limit: -1}

func runExists(ctx context.Context, tx *sql.Tx, runID int64) error {
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, runID).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("run %w", ErrNotFound)
	}
	return nil
}

// readSteps reads run runID's steps in tx, and what load asks for of them.
func readSteps(ctx context.Context, tx *sql.Tx, runID int64, load StepLoad, cache *stepCache) ([]sweep.StepResult, error) {
	if err := runExists(ctx, tx, runID); err != nil {
		return nil, err
	}
	return readStepWindow(ctx, tx, runID, load, allSteps, cache)
}

// readStepWindow reads the steps of run runID in window w, and what load
// asks for of them; the job results and samples from cache (stepcache.go)
// when it is not nil and serves load.
func readStepWindow(ctx context.Context, tx *sql.Tx, runID int64, load StepLoad, w stepWindow, cache *stepCache) ([]sweep.StepResult, error) {
	dec := repeatDecoder{}
	win, err := readWindowSteps(ctx, tx, runID, w, dec)
	if err != nil {
		return nil, err
	}
	if len(win.steps) == 0 {
		return win.steps, nil
	}
	if cache.serves(load) {
		if err := cache.fill(ctx, tx, load, win.steps, win.ids, win.stamps, dec); err != nil {
			return nil, err
		}
		return win.steps, nil
	}
	// The job results and samples of the steps read: seq in (after, last].
	last := int64(win.steps[len(win.steps)-1].Step.Seq)
	jobs, byID, err := readWindowResults(ctx, tx, runID, load, w.after, last, win, dec)
	if err != nil {
		return nil, err
	}
	if err := readWindowSamples(ctx, tx, runID, load, w.after, last, win, jobs, byID); err != nil {
		return nil, err
	}
	return win.steps, nil
}

// windowSteps are the steps of a window as table steps holds them, their
// results without their jobs, with each one's steps.id and stamp.
type windowSteps struct {
	steps       []sweep.StepResult
	ids, stamps []int64       // steps.id and stamp of each of steps
	index       map[int64]int // steps.id → index in steps
}

// readWindowSteps reads the rows of table steps in window w of run runID.
func readWindowSteps(ctx context.Context, tx *sql.Tx, runID int64, w stepWindow, dec repeatDecoder) (*windowSteps, error) {
	win := &windowSteps{steps: []sweep.StepResult{}, index: make(map[int64]int)}
	rows, err := tx.QueryContext(ctx, `SELECT id, stamp, `+strings.Join(stepColumns, ", ")+`
		FROM steps WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, runID, w.after, w.limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		id, stamp, sr, err := scanStep(rows, dec)
		if err != nil {
			return nil, err
		}
		win.index[id] = len(win.steps)
		win.ids = append(win.ids, id)
		win.stamps = append(win.stamps, stamp)
		win.steps = append(win.steps, sr)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return win, nil
}

// scanStep reads a row of table steps (its id, stamp and stepColumns):
// the step, its result's groups without their jobs.
func scanStep(rows *sql.Rows, dec repeatDecoder) (id, stamp int64, sr sweep.StepResult, err error) {
	var (
		axes, config, schedulers, cpu, proc string
		start, end, resultStart             sql.NullInt64
		hasResult                           bool
		resultHost, resultGroups, prep      sql.NullString
	)
	err = rows.Scan(&id, &stamp, &sr.Step.Seq, &sr.Step.Repeat, &axes, &sr.Step.Scheduler, &config,
		&sr.Status, &sr.Error, &start, &end, &schedulers, &cpu, &proc,
		&hasResult, &resultStart, &resultHost, &resultGroups, &prep)
	if err != nil {
		return 0, 0, sr, err
	}
	sr.Start, sr.End = timeNS(start), timeNS(end)
	fields := []jsonField{
		{"axes", axes, &sr.Step.Axes},
		{"config", config, &sr.Step.Config},
		{"schedulers", schedulers, &sr.Schedulers},
		{"cpu", cpu, &sr.CPU},
		{"proc", proc, &sr.Proc},
	}
	if prep.Valid {
		sr.Prep = &sweep.Prep{}
		fields = append(fields, jsonField{"prep", prep.String, sr.Prep})
	}
	var groups []groupMeta
	if hasResult {
		sr.Result = &bench.Result{Start: timeNS(resultStart)}
		fields = append(fields, jsonField{"result_host", resultHost.String, &sr.Result.Host},
			jsonField{"result_groups", resultGroups.String, &groups})
	}
	if err := dec.unmarshal(fields...); err != nil {
		return 0, 0, sr, fmt.Errorf("step %d: %w", sr.Step.Seq, err)
	}
	if hasResult && groups != nil {
		sr.Result.Groups = make([]bench.GroupResult, len(groups))
		for i, g := range groups {
			sr.Result.Groups[i] = bench.GroupResult{ID: g.ID, Reporting: g.Reporting, Disks: g.Disks, Trace: g.Trace}
		}
	}
	return id, stamp, sr, nil
}

// readWindowResults reads the job results of win's steps (seq in (after,
// last]) into their groups, and returns them, each step_results.id's
// index in jobs in byID. Every job result of the window is in one
// allocation: each holds six fixed-size histograms (~90 KB), and one
// large allocation is much cheaper than hundreds.
func readWindowResults(ctx context.Context, tx *sql.Tx, runID int64, load StepLoad, after, last int64, win *windowSteps, dec repeatDecoder) (jobs []bench.JobResult, byID map[int64]int, err error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM step_results r JOIN steps st ON st.id = r.step_id
		WHERE st.run_id = ? AND st.seq > ? AND st.seq <= ?`, runID, after, last).Scan(&n); err != nil {
		return nil, nil, err
	}
	jobs = make([]bench.JobResult, 0, n)
	byID = make(map[int64]int, n) // step_results.id → index in jobs

	// Ordered as the (step_id, group_index, job_index) index is, so SQLite
	// does not sort: each group's jobs come together, in order.
	rows, err := tx.QueryContext(ctx, `SELECT r.id, r.step_id, `+load.resultSelect()+`
		FROM steps st JOIN step_results r ON r.step_id = st.id
		WHERE st.run_id = ? AND st.seq > ? AND st.seq <= ? ORDER BY st.seq, r.group_index, r.job_index`, runID, after, last)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var (
		resultID, stepID int64
		rr               resultRowScan
		group            *bench.GroupResult
		groupStart       int
	)
	flush := func() { // hands the group its jobs, once they are all read
		if group != nil {
			group.Jobs = jobs[groupStart:len(jobs):len(jobs)]
		}
	}
	rr.trimHists = load.Hists
	dest := append([]any{&resultID, &stepID}, rr.dest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		si, ok := win.index[stepID]
		if !ok || win.steps[si].Result == nil {
			return nil, nil, fmt.Errorf("result %d: step %d has no result", resultID, stepID)
		}
		seq, res := win.steps[si].Step.Seq, win.steps[si].Result
		if rr.groupIndex < 0 || rr.groupIndex >= len(res.Groups) {
			return nil, nil, fmt.Errorf("step %d: result %d: group %d of %d", seq, resultID, rr.groupIndex, len(res.Groups))
		}
		if g := &res.Groups[rr.groupIndex]; g != group {
			flush()
			group, groupStart = g, len(jobs)
		}
		if want := len(jobs) - groupStart; rr.jobIndex != want {
			return nil, nil, fmt.Errorf("step %d: result %d: job %d, want %d", seq, resultID, rr.jobIndex, want)
		}
		if len(jobs) == cap(jobs) {
			return nil, nil, fmt.Errorf("more job results than the %d counted", n)
		}
		jobs = jobs[:len(jobs)+1]
		if err := rr.fill(&jobs[len(jobs)-1], dec); err != nil {
			return nil, nil, fmt.Errorf("step %d: result %d: %w", seq, resultID, err)
		}
		byID[resultID] = len(jobs) - 1
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	flush()
	return jobs, byID, nil
}

// readWindowSamples reads the samples, and the logs load asks for, of
// the steps of win load.Samples picks into their jobs (byID:
// step_results.id → index in jobs).
func readWindowSamples(ctx context.Context, tx *sql.Tx, runID int64, load StepLoad, after, last int64, win *windowSteps, jobs []bench.JobResult, byID map[int64]int) error {
	var picked []int64 // the steps whose samples to read
	if load.Samples != nil {
		for i := range win.steps {
			if load.Samples(&win.steps[i]) {
				picked = append(picked, win.ids[i])
			}
		}
	}
	if len(picked) == 0 {
		return nil
	}
	if len(picked) == len(win.steps) {
		picked = nil // all of the window's: no list to check
	}
	into := func(id int64) (*[]bench.Sample, error) {
		i, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("samples of unknown result %d", id)
		}
		return &jobs[i].Samples, nil
	}
	if err := readSamples(ctx, tx, runID, after, last, picked, into); err != nil {
		return err
	}
	if load.Logs != nil {
		return readLogs(ctx, tx, load.Logs, runID, after, last, picked, jobs, byID)
	}
	return nil
}

// resultSelect is the step_results columns (resultColumns) as readSteps
// selects them: NULL in place of those load leaves out.
func (load StepLoad) resultSelect() string {
	cols := make([]string, len(resultColumns))
	for i, c := range resultColumns {
		cols[i] = "r." + c
		if !load.reads(c) {
			cols[i] = "NULL"
		}
	}
	return strings.Join(cols, ", ")
}

// reads reports whether load reads column c of step_results: all but the
// job's options and the histograms it may leave out.
func (load StepLoad) reads(c string) bool {
	if c == "job" {
		return load.Jobs
	}
	for k, lat := range latNames {
		if strings.HasSuffix(c, "_"+lat+"_bins") {
			return load.Hists&(1<<k) != 0
		}
	}
	return true
}

// latNames are the names of a direction's latencies in column names, in
// the order of Hists' bits.
var latNames = [...]string{"slat", "clat", "lat"}

// stepsWhere picks a run's steps (st) with seq in (after, last], and of
// those only the ids in only unless it is nil.
func stepsWhere(runID, after, last int64, only []int64) (string, []any, error) {
	where, args := "st.run_id = ? AND st.seq > ? AND st.seq <= ?", []any{runID, after, last}
	if only != nil {
		ids, err := json.Marshal(only)
		if err != nil {
			return "", nil, err
		}
		where += " AND st.id IN (SELECT value FROM json_each(?))"
		args = append(args, string(ids))
	}
	return where, args, nil
}

// readSamples reads the samples of a run's job results, each into the
// slice into gives for its step_results id: of the steps whose seq is in
// (after, last] and whose ids only lists, or all of those when only is
// nil.
func readSamples(ctx context.Context, tx *sql.Tx, runID, after, last int64, only []int64, into func(resultID int64) (*[]bench.Sample, error)) error {
	where, args, err := stepsWhere(runID, after, last, only)
	if err != nil {
		return err
	}
	// r.id in the ORDER BY lets SQLite walk the indexes without sorting.
	rows, err := tx.QueryContext(ctx, `SELECT s.result_id, s.at_ns, s.read_ios, s.write_ios, s.trim_ios, s.read_bytes, s.write_bytes, s.trim_bytes, `+sampleLatSelect+`
		FROM steps st JOIN step_results r ON r.step_id = st.id JOIN samples s ON s.result_id = r.id
		WHERE `+where+` ORDER BY st.seq, r.group_index, r.job_index, r.id, s.idx`, args...)
	if err != nil {
		return err
	}
	return scanSamples(rows, into)
}

// scanSamples reads rows of samples (result_id, at_ns, the counts and
// sampleLatSelect), those of each result together in order, each into
// the slice into gives for its result.
func scanSamples(rows *sql.Rows, into func(resultID int64) (*[]bench.Sample, error)) error {
	defer rows.Close()
	var (
		id, at  int64
		ios, by [3]int64
		dst     *[]bench.Sample
		cur     int64 = -1
		lat     intervalLatScan
	)
	for rows.Next() {
		if err := rows.Scan(append([]any{&id, &at, &ios[0], &ios[1], &ios[2], &by[0], &by[1], &by[2]}, lat.dest()...)...); err != nil {
			return err
		}
		if id != cur {
			var err error
			if dst, err = into(id); err != nil {
				return err
			}
			cur = id
		}
		*dst = append(*dst, bench.Sample{At: time.Duration(at),
			IOs:   bench.DirCounts{uint64(ios[0]), uint64(ios[1]), uint64(ios[2])},
			Bytes: bench.DirCounts{uint64(by[0]), uint64(by[1]), uint64(by[2])}, Lat: lat.value()})
	}
	return rows.Err()
}

// resultRowScan receives one step_results row (resultColumns) for Scan.
type resultRowScan struct {
	groupIndex, jobIndex, groupID, jobsMerged int
	name, errMsg                              string
	job                                       sql.NullString // NULL when not read
	reporting                                 bool
	start                                     sql.NullInt64
	runtime, interval, usr, sys               int64
	ctx, minFlt, majFlt                       int64
	iops, bw                                  [2]float64 // derived; read to skip
	fio, qos                                  sql.NullString
	// trimHists are the trims' histograms fill keeps: the fio column
	// holds them whole (fioExtras.Trim), the columns' load leaves out.
	trimHists Hists
	dirs      [2]struct {
		ios, bytes, short int64
		lats              [3]struct {
			n, min, max int64
			mean, s     float64
			bins        sql.NullString
		}
	}
}

func (rr *resultRowScan) dest() []any {
	d := []any{&rr.groupIndex, &rr.jobIndex, &rr.groupID, &rr.name, &rr.reporting, &rr.jobsMerged, &rr.job,
		&rr.errMsg, &rr.start, &rr.runtime, &rr.interval, &rr.usr, &rr.sys, &rr.ctx, &rr.minFlt, &rr.majFlt}
	for i := range rr.dirs {
		dr := &rr.dirs[i]
		d = append(d, &dr.ios, &dr.bytes, &dr.short, &rr.iops[i], &rr.bw[i])
		for k := range dr.lats {
			l := &dr.lats[k]
			d = append(d, &l.n, &l.min, &l.max, &l.mean, &l.s, &l.bins)
		}
	}
	return append(d, &rr.fio, &rr.qos)
}

// fill sets jr from the scanned row, decoding its JSON with dec.
func (rr *resultRowScan) fill(jr *bench.JobResult, dec repeatDecoder) error {
	jr.Name, jr.GroupID, jr.Error, jr.Jobs = rr.name, rr.groupID, rr.errMsg, rr.jobsMerged
	if rr.job.Valid {
		if err := dec.unmarshal(jsonField{"job", rr.job.String, &jr.Job}); err != nil {
			return err
		}
	}
	jr.Start = timeNS(rr.start)
	jr.Runtime, jr.Interval = time.Duration(rr.runtime), time.Duration(rr.interval)
	jr.UsrCPU, jr.SysCPU = time.Duration(rr.usr), time.Duration(rr.sys)
	jr.Ctx, jr.MinFlt, jr.MajFlt = uint64(rr.ctx), uint64(rr.minFlt), uint64(rr.majFlt)
	if rr.fio.Valid {
		var x fioExtras
		if err := json.Unmarshal([]byte(rr.fio.String), &x); err != nil {
			return fmt.Errorf("fio: %w", err)
		}
		jr.TID, jr.Errno, jr.RuntimeSum, jr.Dist, jr.EngineSetup, jr.Verify = x.TID, x.Errno, x.RuntimeSum, x.Dist, x.EngineSetup, x.Verify
		jr.Clock = x.Clock
		jr.Steady, jr.LatencyDepth = x.Steady, x.LatencyDepth
		if x.Prios != nil {
			jr.Dirs[bench.Read].Prios, jr.Dirs[bench.Write].Prios = x.Prios[bench.Read], x.Prios[bench.Write]
		}
		jr.TotalErr, jr.FirstError, jr.FirstErrorMsg = x.TotalErr, x.FirstError, x.FirstErrorMsg
		if x.Block != nil {
			jr.Dirs[bench.Read].Block, jr.Dirs[bench.Write].Block = x.Block[bench.Read], x.Block[bench.Write]
		}
		if x.Trim != nil {
			jr.Dirs[bench.Trim] = *x.Trim
			for k, l := range []*hist.Lat{&jr.Dirs[bench.Trim].Slat, &jr.Dirs[bench.Trim].Clat, &jr.Dirs[bench.Trim].Lat} {
				if rr.trimHists&(1<<k) == 0 {
					l.Hist = hist.Histogram{}
				}
			}
		}
	}
	if err := decodeQoS(rr.qos, jr); err != nil {
		return err
	}
	for d := range rr.dirs {
		src, dst := &rr.dirs[d], &jr.Dirs[d]
		dst.IOs, dst.Bytes, dst.Short = uint64(src.ios), uint64(src.bytes), uint64(src.short)
		for k, l := range []*hist.Lat{&dst.Slat, &dst.Clat, &dst.Lat} {
			sl := &src.lats[k]
			l.Stat = hist.LatStat{N: uint64(sl.n), Min: uint64(sl.min), Max: uint64(sl.max), Mean: sl.mean, S: sl.s}
			if sl.bins.Valid {
				if err := decodeBins(sl.bins.String, &l.Hist); err != nil {
					return fmt.Errorf("%s histogram: %w", latNames[k], err)
				}
			}
		}
	}
	return nil
}

// jsonField is a JSON column and where to decode it.
type jsonField struct {
	name, text string
	v          any
}

func unmarshalFields(fields []jsonField) error {
	for _, f := range fields {
		if err := json.Unmarshal([]byte(f.text), f.v); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
