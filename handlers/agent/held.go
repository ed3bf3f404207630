package agent

import "fmt"

// Holds says why run id must stay in the store while the hub has it: an
// agent holds its lease, or it waits in an agent's queue; "" when
// neither. A prune asks it (the lease lives here, not in the store).
func (h *Hub) Holds(id int64) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l, ok := h.leases[id]; ok {
		return fmt.Sprintf("leased by agent #%d", l.job.agent)
	}
	for agent, q := range h.queues {
		for _, j := range q {
			if j.runID == id {
				return fmt.Sprintf("queued for agent #%d", agent)
			}
		}
	}
	return ""
}
