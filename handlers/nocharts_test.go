package handlers

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/db"
)

// A run cancelled before any step finished has no chart frame, a line
// saying so, and in the runs list its stored steps against the plan's.
func TestRunPageNoStepFinished(t *testing.T) {
	ts := newTestServer(t, Config{})
	ctx := context.Background()
	args := []string{"--name=c", "--ioengine=null", "--size=1m", "--rw=randread", "--bs=4k"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	plan := &sweep.Plan{Name: "cancelled-early", Args: args, Base: *cfg, Repeat: 3,
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32"}}}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	run := &db.Run{Name: plan.Name, Status: db.StatusRunning, Plan: *plan}
	if _, err := ts.store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	res := sweep.StepResult{Step: steps[0], Status: sweep.StepCancelled, Error: "cancelled"}
	if err := ts.store.SaveStep(ctx, run.ID, &res); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.SetRunStatus(ctx, run.ID, db.StatusCancelled, "cancelled"); err != nil {
		t.Fatal(err)
	}
	rec := ts.do(t, "GET", "/runs/"+strconv.FormatInt(run.ID, 10), "")
	body := rec.Body.String()
	if rec.Code != 200 || strings.Contains(body, `class="chart"`) || strings.Contains(body, "<h2>Charts</h2>") ||
		!strings.Contains(body, "No step finished: there is nothing to chart.") {
		t.Errorf("run page (%d): chart frames, or no line saying no step finished:\n%s", rec.Code, body)
	}
	rec = ts.do(t, "GET", "/runs", "")
	if !strings.Contains(rec.Body.String(), ">1 of 18<") {
		t.Errorf("runs list: no \"1 of 18\" steps:\n%s", rec.Body.String())
	}
}
