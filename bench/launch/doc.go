// Package launch turns a request for a run into a recorded run: it builds
// the plan from a Spec (NewPlan), works out the run's record (NewRecord)
// and target devices, holds the device locks, and runs the plan's steps
// while storing each as it ends (Execute) — for the CLI directly and for
// the dashboard through a Launcher, which queues runs in background
// goroutines and relays their progress as server-sent events. It holds
// the write policy too: the allow-list of targets, the data directory's
// refusals and its quota, and the restoring of I/O schedulers a run left
// switched.
package launch
