package agent

import (
	"fmt"
	"time"

	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/db"
)

// EventReach is the event a run's page gets when its agent becomes
// unreachable, when it is back, and when a cancel waits for it; its data
// is a Reach.
const EventReach = "agent"

// Reach is whether the dashboard hears from the agent that runs a run:
// what the run's page, the group's page and the API show while the agent
// is away ("agent unreachable", with when it was last heard from).
type Reach struct {
	Agent       string    `json:"agent"`
	Unreachable bool      `json:"unreachable"`
	LastHeard   time.Time `json:"last_heard,omitzero"`
	// LostAt is when the run is called lost (interrupted) unless the
	// agent is heard from before.
	LostAt time.Time `json:"lost_at,omitzero"`
	// CancelPending: its user cancelled the run while the agent was away;
	// the agent is told, and stops, when it is back.
	CancelPending bool `json:"cancel_pending,omitempty"`
	// Text says it in a sentence, for the pages.
	Text string `json:"text"`
}

// reachOf is l's Reach; h.mu held.
func (h *Hub) reachOf(l *lease) Reach {
	r := Reach{Agent: l.job.name, Unreachable: l.away, LastHeard: l.heard, CancelPending: l.cancel && l.away}
	if l.away {
		r.LostAt = l.until
	}
	r.Text = r.text()
	return r
}

func (r Reach) text() string {
	if !r.Unreachable {
		return fmt.Sprintf("agent %s is reachable", r.Agent)
	}
	heard := "has not been heard from since the dashboard started"
	if !r.LastHeard.IsZero() {
		heard = "was last heard from at " + r.LastHeard.Format("2006-01-02 15:04:05")
	}
	t := fmt.Sprintf("agent unreachable: %s %s; it goes on with the run and sends its results when it is back. "+
		"The run is called lost (interrupted) at %s unless the agent is heard from before.", r.Agent, heard, r.LostAt.Format("2006-01-02 15:04:05"))
	if r.CancelPending {
		t += " Cancelled: the agent stops the run when it is back."
	}
	return t
}

func reachEvent(r Reach) launch.Event { return launch.Event{Type: EventReach, Data: r} }

// Reach says whether run id's agent is heard from; false when no agent
// holds the run here (queued, ended, or not an agent's).
func (h *Hub) Reach(id int64) (Reach, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.leases[id]
	if !ok {
		return Reach{}, false
	}
	return h.reachOf(l), true
}

// renew renews run id's lease when agent host holds it, and returns it;
// nil when it does not. A run whose agent was unreachable is shown
// reachable again.
func (h *Hub) renew(host *db.Host, id int64) *lease {
	now := time.Now()
	h.mu.Lock()
	l, ok := h.leases[id]
	if !ok || l.job.agent != host.ID {
		h.mu.Unlock()
		return nil
	}
	back := l.away
	l.heard, l.until, l.away = now, now.Add(h.timing.Lost), false
	r := h.reachOf(l)
	h.mu.Unlock()
	if back {
		h.log.Info("agent reachable again", "run", id, "agent", l.job.name)
		l.job.remote.Publish(reachEvent(r))
	}
	return l
}

// expire shows unreachable the runs whose agent has been silent for a
// lease, and marks interrupted those whose agent is lost.
func (h *Hub) expire(now time.Time) {
	h.mu.Lock()
	var lost, away []*lease
	var reaches []Reach
	for id, l := range h.leases {
		switch {
		case now.After(l.until):
			lost = append(lost, l)
			delete(h.leases, id)
		case !l.away && now.Sub(l.heard) > h.timing.Lease:
			l.away = true
			away = append(away, l)
			reaches = append(reaches, h.reachOf(l))
		}
	}
	h.mu.Unlock()
	for i, l := range away {
		h.log.Warn("agent unreachable: its run goes on there", "run", l.job.runID, "agent", l.job.name, "last heard", l.heard)
		l.job.remote.Publish(reachEvent(reaches[i]))
	}
	for _, l := range lost {
		msg := fmt.Sprintf("agent %s lost: no word from it for %s (last heard from at %s; killed, its machine down, or cut off from the dashboard); the steps it sent are kept, and those it sends later are stored",
			l.job.name, h.timing.Lost, l.heard.Format("2006-01-02 15:04:05"))
		if l.cancel {
			h.finish(l.job, db.StatusCancelled, "cancelled by the user while the agent was unreachable; "+msg)
			continue
		}
		h.finish(l.job, db.StatusInterrupted, msg)
	}
}

// Resume holds again, for agent agentID (called name), run runID that it
// was running when this dashboard stopped: its lease is the agent's from
// now on, the run "agent unreachable" until the agent's next word (its
// heartbeat carries the run's progress), lost after Timing.Lost without
// one. lastSeen is the agent's last word before (its host's last seen).
func (h *Hub) Resume(agentID int64, name string, runID int64, uid string, plan *sweep.Plan, remote *launch.Remote, lastSeen time.Time) {
	j := &job{runID: runID, uid: uid, agent: agentID, name: name, plan: plan, remote: remote}
	h.mu.Lock()
	l := &lease{job: j, heard: lastSeen, until: time.Now().Add(h.timing.Lost), away: true}
	h.leases[runID] = l
	r := h.reachOf(l)
	h.mu.Unlock()
	remote.Publish(reachEvent(r))
	h.log.Info("agent run held again: waiting for its agent", "run", runID, "agent", name)
	go h.watch(j)
}

// Revoked ends what agent agentID had here when its token is revoked:
// the runs it holds are interrupted, those queued for it fail (it will
// not ask for them).
func (h *Hub) Revoked(agentID int64) {
	h.mu.Lock()
	var held []*lease
	for id, l := range h.leases {
		if l.job.agent == agentID {
			held = append(held, l)
			delete(h.leases, id)
		}
	}
	queued := h.queues[agentID]
	delete(h.queues, agentID)
	h.mu.Unlock()
	for _, l := range held {
		h.finish(l.job, db.StatusInterrupted, fmt.Sprintf("agent %s's token was revoked during the run; the steps it sent are kept", l.job.name))
	}
	for _, j := range queued {
		h.finish(j, db.StatusFailed, fmt.Sprintf("agent %s's token was revoked before it took the run", j.name))
	}
}
