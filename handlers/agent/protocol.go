package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/system"
)

// The protocol's paths, under the dashboard's URL.
const (
	PathHello = "/api/agent/hello"
	PathWork  = "/api/agent/work"
	PathRuns  = "/api/agent/runs/" // + ID, ID/start, ID/events, ID/steps/SEQ, ID/end
)

// Timing is the protocol's clock. The dashboard sets it and tells agents
// in its Welcome.
type Timing struct {
	// Lease is how long a run goes without a word from its agent before
	// the dashboard shows it "agent unreachable": every request about the
	// run renews it. The agent goes on with the run meanwhile (it keeps
	// its results and sends them when it reaches the dashboard again),
	// and so does a dashboard that starts again while its agents run:
	// their runs are unreachable until each agent's next word.
	Lease time.Duration
	// Lost is how long a run stays "agent unreachable" before the
	// dashboard calls it lost and marks it interrupted (the steps its
	// agent sends later are still stored): time for the dashboard to be
	// restarted or upgraded, or a network to come back, while its agents
	// run on.
	Lost time.Duration
	// Heartbeat is how often a running agent sends its events, even none.
	Heartbeat time.Duration
	// Poll is how long a request for work waits for one.
	Poll time.Duration
}

// DefaultTiming: a lease of 30 s renewed every 2 s rides out a network
// cut of 25 s before the run shows "agent unreachable"; an hour without
// a word and it is lost; a poll of 25 s answers within the dashboard's
// 30 s write timeout.
func DefaultTiming() Timing {
	return Timing{Lease: 30 * time.Second, Lost: time.Hour, Heartbeat: 2 * time.Second, Poll: 25 * time.Second}
}

func (t Timing) withDefaults() Timing {
	d := DefaultTiming()
	if t.Lease <= 0 {
		t.Lease = d.Lease
	}
	if t.Lost <= 0 {
		t.Lost = max(d.Lost, t.Lease)
	}
	if t.Heartbeat <= 0 {
		t.Heartbeat = d.Heartbeat
	}
	if t.Poll <= 0 {
		t.Poll = d.Poll
	}
	return t
}

// Bounds on what an agent may send.
const (
	MaxHelloBody  = 1 << 20   // a hello: the host and its targets
	MaxEventsBody = 256 << 10 // one batch of events
	MaxEvents     = 256       // events in one batch
	MaxEventData  = 4 << 10   // one event's data
	MaxStepBody   = 32 << 20  // one step's results, histograms and samples
	MaxErrorLen   = 64 << 10  // a step's or a run's error text
	MaxPollWait   = 30 * time.Second
	// RequestsPerSecond and Burst bound each agent's requests.
	RequestsPerSecond = 20
	Burst             = 60
)

// Hello is what an agent says of itself when it connects.
type Hello struct {
	// Name is what it asks to be called (--name, else its hostname); the
	// dashboard keeps the name its host has when another host has that
	// one.
	Name    string          `json:"name"`
	Version string          `json:"version"`
	Host    system.HostInfo `json:"host"`
	// AllowTargets and DataDir are its allow-list (--allow-target,
	// --data-dir); Targets those targets resolved there.
	AllowTargets []string        `json:"allow_targets"`
	DataDir      string          `json:"data_dir,omitempty"`
	Targets      []system.Target `json:"targets,omitempty"`
}

// Welcome is the dashboard's answer to a hello.
type Welcome struct {
	ID        int64   `json:"id"`   // the agent's host id
	Name      string  `json:"name"` // what the dashboard calls it
	Lease     float64 `json:"lease_s"`
	Heartbeat float64 `json:"heartbeat_s"`
	Poll      float64 `json:"poll_s"`
	// Lost is Timing.Lost: how long the dashboard holds a run for an
	// agent it does not hear from (older dashboards send none).
	Lost float64 `json:"lost_s,omitempty"`
	Note string  `json:"note,omitempty"` // e.g. why its name was not taken
}

// Timing is the welcome's clock.
func (w Welcome) Timing() Timing {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	return Timing{Lease: sec(w.Lease), Lost: sec(w.Lost), Heartbeat: sec(w.Heartbeat), Poll: sec(w.Poll)}.withDefaults()
}

// Work is a run leased to an agent: the plan as a front door takes it
// (fio's options, sweeps, repeats), which the agent parses and checks
// itself, against its own allow-list.
type Work struct {
	RunID int64  `json:"run_id"`
	UID   string `json:"uid"` // the run's uid: the agent's local copy has it too
	Name  string `json:"name"`
	// The plan: Args as `iolab run` takes them, and what is not in them.
	Preset             string            `json:"preset,omitempty"`
	Args               []string          `json:"args"`
	Sweeps             []sweep.Sweep     `json:"sweeps,omitempty"`
	Repeat             int               `json:"repeat"`
	AutoRepeat         *sweep.AutoRepeat `json:"auto_repeat,omitempty"`
	Discard            bool              `json:"discard,omitempty"`
	DropCaches         bool              `json:"drop_caches,omitempty"`
	AllowDiskScheduler bool              `json:"allow_disk_scheduler,omitempty"`
	SkipImpossible     bool              `json:"skip_impossible,omitempty"`
	Runtime            time.Duration     `json:"runtime,omitempty"`
	RampTime           time.Duration     `json:"ramp_time,omitempty"`
	Lease              float64           `json:"lease_s"`
}

// workOf is the Work of a stored run's plan.
func workOf(id int64, uid string, p *sweep.Plan, lease time.Duration) Work {
	return Work{RunID: id, UID: uid, Name: p.Name, Preset: p.Preset, Args: p.Args, Sweeps: p.Sweeps, Repeat: p.Repeat,
		AutoRepeat: p.AutoRepeat, Discard: p.Discard, DropCaches: p.DropCaches, AllowDiskScheduler: p.AllowDiskScheduler,
		SkipImpossible: p.SkipImpossible, Runtime: p.Runtime, RampTime: p.RampTime, Lease: lease.Seconds()}
}

// Start is what an agent says as it starts a run: where it runs, as the
// run's environment.
type Start struct {
	Host    system.HostInfo `json:"host"`
	Targets []system.Target `json:"targets"`
}

// Event is one of the run's progress events, as the dashboard's own
// event stream has them (launch.Event): step, progress, notice, queued.
type Event struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Events is a batch of events; an empty one is a heartbeat.
type Events struct {
	Events []Event `json:"events"`
}

// Ack is the dashboard's answer about a leased run.
type Ack struct {
	Status string `json:"status"`           // the run's status on the dashboard
	Cancel bool   `json:"cancel,omitempty"` // its user cancelled it: stop
}

// StepAck is the answer to a step's upload.
type StepAck struct {
	UID    string `json:"uid"`    // the step's: RUNUID/SEQ
	Stored bool   `json:"stored"` // false: the same step was already there
}

// StepUID is a step's uid, RUNUID/SEQ: what makes an upload idempotent.
func StepUID(runUID string, seq int) string { return fmt.Sprintf("%s/%d", runUID, seq) }

// End is the run's end as the agent saw it.
type End struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// RunState is what the dashboard has of a run: its status, the seqs of
// its stored steps with their statuses, and whether the asking agent
// holds its lease.
type RunState struct {
	Status string         `json:"status"`
	Steps  map[int]string `json:"steps"`
	Leased bool           `json:"leased"`
}

// Error is a refusal with its HTTP status, as the dashboard's handlers
// answer it ({"error": Msg}); Err, when set, is why (a
// *db.RevokedError).
type Error struct {
	Code int
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

func refuse(code int, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Error {
	return refuse(http.StatusBadRequest, format, args...)
}
