// Package launch runs plans on this machine: plan → prepare → queue and
// device lock → execute → record. It builds the plan from a Spec
// (NewPlan) and prepares it once (Prepare: the front door's allow-list,
// the steps, the check against the targets, the run's record and the
// keys of its devices), then runs it — for the CLI and an agent directly
// (Execute), for the dashboard through a Launcher, which queues runs in
// background goroutines, one run per device, and relays their progress as
// events. Runs are recorded through a Recorder this package declares
// (db.Store is one): it sits below the store and never imports it, and
// answers no request. It holds the write policy of plans others send too:
// the allow-list of targets, the data directory's refusals and its
// quota, and the restoring of I/O schedulers a run left switched.
package launch
