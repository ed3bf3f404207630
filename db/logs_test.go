package db

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"iolab/bench/joblog"
	"iolab/bench/sweep"
)

// A job result's logs are stored with its step and read back as they
// were, for the kinds asked for and the steps whose samples are read; a
// step's logs beyond stepLogsMax are counted, not kept.
func TestResultLogs(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	rng := rand.New(rand.NewPCG(7, 8))
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	iops := joblog.Log{Kind: joblog.IOPS, File: "j_iops.1.log", Data: []byte("1, 1, 0, 4096, 0\n2, 1, 1, 4096, 0\n"), Lines: 2}
	clat := joblog.Log{Kind: joblog.Clat, File: "j_clat.1.log", Data: []byte("1, 5000, 0, 4096, 0\n"), Lines: 9, Truncated: true}
	st := testStep(rng, 0, 50, 3, true)
	st.Result.Groups[0].Jobs[0].Logs = []joblog.Log{iops, clat}
	// The step's budget: a second job's log that does not fit is kept
	// without its text.
	big := joblog.Log{Kind: joblog.BW, File: "j_bw.2.log", Data: bytes.Repeat([]byte("1, 2, 0, 4096, 0\n"), stepLogsMax/2/17+1), Lines: stepLogsMax/2/17 + 1}
	big2 := big
	big2.File = "j_bw.3.log"
	st.Result.Groups[1].Jobs[0].Logs = []joblog.Log{big, big2}
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	st2 := testStep(rng, 1, 50, 3, false) // no logs
	if err := s.SaveStep(ctx, id, &st2); err != nil {
		t.Fatal(err)
	}

	steps, err := s.Steps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := steps[0].Result.Groups[0].Jobs[0].Logs; !reflect.DeepEqual(got, []joblog.Log{iops, clat}) {
		t.Errorf("read back %+v", got)
	}
	got := steps[0].Result.Groups[1].Jobs[0].Logs
	if len(got) != 2 || !bytes.Equal(got[0].Data, big.Data) || got[0].Truncated ||
		len(got[1].Data) != 0 || !got[1].Truncated || got[1].Lines != big.Lines {
		t.Errorf("beyond the step's %d bytes: %d and %d bytes kept (truncated %v, %v)", stepLogsMax, len(got[0].Data), len(got[1].Data), got[0].Truncated, got[1].Truncated)
	}
	if l := steps[1].Result.Groups[0].Jobs[0].Logs; l != nil {
		t.Errorf("a step without logs read back %d", len(l))
	}

	// The timeline's load: IOPS logs of the step whose samples it reads.
	steps, err = s.StepsFor(ctx, id, StepLoad{Samples: func(st *sweep.StepResult) bool { return st.Step.Seq == 0 }, Logs: []joblog.Kind{joblog.IOPS}})
	if err != nil {
		t.Fatal(err)
	}
	if got := steps[0].Result.Groups[0].Jobs[0].Logs; !reflect.DeepEqual(got, []joblog.Log{iops}) {
		t.Errorf("IOPS logs only: read %+v", got)
	}
	if steps, err = s.StepsFor(ctx, id, StepLoad{}); err != nil || steps[0].Result.Groups[0].Jobs[0].Logs != nil {
		t.Errorf("a load without logs read some (%v)", err)
	}
}

// The log files a run kept are listed step by step, a name its jobs
// shared (per_job_logs=0) once with their lines added up, and read back
// as one file: every job's lines in job order.
func TestRunLogFiles(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	rng := rand.New(rand.NewPCG(9, 10))
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	a := joblog.Log{Kind: joblog.BW, File: "p_bw.log", Data: []byte("1, 10, 0, 4096, 0\n"), Lines: 1}
	b := joblog.Log{Kind: joblog.BW, File: "p_bw.log", Data: []byte("2, 20, 0, 4096, 0\n3, 30, 0, 4096, 0\n"), Lines: 5, Truncated: true}
	lat := joblog.Log{Kind: joblog.Lat, File: "p_lat.1.log", Data: []byte("1, 900, 0, 4096, 0\n"), Lines: 1}
	for seq := range 2 {
		st := testStep(rng, seq, 50, 3, true)
		st.Result.Groups[0].Jobs[0].Logs = []joblog.Log{a, lat}
		st.Result.Groups[1].Jobs[0].Logs = []joblog.Log{b}
		if err := s.SaveStep(ctx, id, &st); err != nil {
			t.Fatal(err)
		}
	}
	files, err := s.RunLogFiles(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var want []LogFile
	for seq := range 2 {
		want = append(want, LogFile{Step: seq, File: "p_bw.log", Kind: joblog.BW, Lines: 6, Truncated: true},
			LogFile{Step: seq, File: "p_lat.1.log", Kind: joblog.Lat, Lines: 1})
	}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("files:\n got %+v\nwant %+v", files, want)
	}
	lf, data, err := s.RunLogFile(ctx, id, 1, "p_bw.log")
	if err != nil || lf != want[2] || string(data) != string(a.Data)+string(b.Data) {
		t.Errorf("step 1's p_bw.log: %+v %q %v", lf, data, err)
	}
	if _, _, err := s.RunLogFile(ctx, id, 1, "p_iops.log"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a file the step did not keep: %v, want ErrNotFound", err)
	}
	if files, err := s.RunLogFiles(ctx, id+1); err != nil || len(files) != 0 {
		t.Errorf("a run without logs: %v %v", files, err)
	}
}
