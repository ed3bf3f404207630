package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"iolab/bench"
	"iolab/bench/joblog"
)

// fio's log files kept with a job result (joblog.Log): the first
// joblog.StoredMax bytes of each, a job's up to joblog.StoredJobMax, a
// step's up to stepLogsMax; what does not fit is counted but not kept.

// stepLogsMax bounds the log text one step stores, over all its jobs.
const stepLogsMax = 32 << 20

// insertLogs stores a result's logs, drawing on the step's budget.
func insertLogs(ctx context.Context, tx *sql.Tx, resultID int64, logs []joblog.Log, budget *int) error {
	for i, l := range logs {
		data, truncated := l.Data, l.Truncated
		if len(data) > *budget {
			data, truncated = nil, true
		}
		*budget -= len(data)
		if data == nil {
			data = []byte{}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO result_logs (result_id, idx, kind, file, lines, truncated, data)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, resultID, i, l.Kind.String(), l.File, l.Lines, truncated, data); err != nil {
			return fmt.Errorf("log %s: %w", l.File, err)
		}
	}
	return nil
}

// readLogs reads the logs of the kinds asked for of a run's job results
// into jobs, as readSamples reads their samples.
func readLogs(ctx context.Context, tx *sql.Tx, kinds []joblog.Kind, runID, after, last int64, only []int64, jobs []bench.JobResult, byID map[int64]int) error {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.String()
	}
	kb, err := json.Marshal(names)
	if err != nil {
		return err
	}
	where, args, err := stepsWhere(runID, after, last, only)
	if err != nil {
		return err
	}
	where += " AND l.kind IN (SELECT value FROM json_each(?))"
	args = append(args, string(kb))
	rows, err := tx.QueryContext(ctx, `SELECT l.result_id, l.kind, l.file, l.lines, l.truncated, l.data
		FROM steps st JOIN step_results r ON r.step_id = st.id JOIN result_logs l ON l.result_id = r.id
		WHERE `+where+` ORDER BY st.seq, r.group_index, r.job_index, l.result_id, l.idx`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var kind string
		var l joblog.Log
		if err := rows.Scan(&id, &kind, &l.File, &l.Lines, &l.Truncated, &l.Data); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("logs of unknown result %d", id)
		}
		if l.Kind, ok = joblog.ParseKind(kind); !ok {
			return fmt.Errorf("result %d: log %s of unknown kind %q", id, l.File, kind)
		}
		jobs[i].Logs = append(jobs[i].Logs, l)
	}
	return rows.Err()
}

// AllLogKinds reads every log kept, as Steps does.
var AllLogKinds = []joblog.Kind{joblog.BW, joblog.IOPS, joblog.Slat, joblog.Clat, joblog.Lat, joblog.ClatHist}

// LogFile is one of fio's log files a step's jobs kept: the lines of
// every job that wrote under its name (per_job_logs=0 shares one file),
// how many there were and whether the store holds them all.
type LogFile struct {
	Step      int         `json:"step"` // the step's Seq
	File      string      `json:"file"`
	Kind      joblog.Kind `json:"kind"`
	Lines     int64       `json:"lines"`
	Truncated bool        `json:"truncated,omitempty"`
}

// RunLogFiles lists the log files a run's steps kept, step by step, each
// name once, in the order the jobs wrote them.
func (s *Store) RunLogFiles(ctx context.Context, runID int64) ([]LogFile, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT st.seq, l.file, l.kind, l.lines, l.truncated
		FROM steps st JOIN step_results r ON r.step_id = st.id JOIN result_logs l ON l.result_id = r.id
		WHERE st.run_id = ? ORDER BY st.seq, r.group_index, r.job_index, l.idx`, runID)
	if err != nil {
		return nil, fmt.Errorf("db: run %d log files: %w", runID, err)
	}
	defer rows.Close()
	var out []LogFile
	index := map[LogFile]int{} // Step and File set: where the file is in out
	for rows.Next() {
		var l LogFile
		var kind string
		if err := rows.Scan(&l.Step, &l.File, &kind, &l.Lines, &l.Truncated); err != nil {
			return nil, fmt.Errorf("db: run %d log files: %w", runID, err)
		}
		var ok bool
		if l.Kind, ok = joblog.ParseKind(kind); !ok {
			return nil, fmt.Errorf("db: run %d: log %s of unknown kind %q", runID, l.File, kind)
		}
		key := LogFile{Step: l.Step, File: l.File}
		if i, seen := index[key]; seen {
			out[i].Lines += l.Lines
			out[i].Truncated = out[i].Truncated || l.Truncated
			continue
		}
		index[key] = len(out)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: run %d log files: %w", runID, err)
	}
	return out, nil
}

// RunLogFile is the text of the log file named file of step seq of a run:
// the kept lines of every job that wrote it, in job order, as fio appends
// each job's log to a shared file. ErrNotFound when the step kept no such
// file.
func (s *Store) RunLogFile(ctx context.Context, runID int64, seq int, file string) (LogFile, []byte, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT l.kind, l.lines, l.truncated, l.data
		FROM steps st JOIN step_results r ON r.step_id = st.id JOIN result_logs l ON l.result_id = r.id
		WHERE st.run_id = ? AND st.seq = ? AND l.file = ? ORDER BY r.group_index, r.job_index, l.idx`, runID, seq, file)
	if err != nil {
		return LogFile{}, nil, fmt.Errorf("db: run %d step %d log %s: %w", runID, seq, file, err)
	}
	defer rows.Close()
	lf := LogFile{Step: seq, File: file}
	var data []byte
	found := false
	for rows.Next() {
		var kind string
		var lines int64
		var truncated bool
		var d []byte
		if err := rows.Scan(&kind, &lines, &truncated, &d); err != nil {
			return LogFile{}, nil, fmt.Errorf("db: run %d step %d log %s: %w", runID, seq, file, err)
		}
		lf.Kind, _ = joblog.ParseKind(kind)
		lf.Lines += lines
		lf.Truncated = lf.Truncated || truncated
		data = append(data, d...)
		found = true
	}
	if err := rows.Err(); err != nil {
		return LogFile{}, nil, fmt.Errorf("db: run %d step %d log %s: %w", runID, seq, file, err)
	}
	if !found {
		return LogFile{}, nil, fmt.Errorf("db: run %d step %d log %s: %w", runID, seq, file, ErrNotFound)
	}
	return lf, data, nil
}
