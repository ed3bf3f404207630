// Package sweep owns a plan: the sweep axes (one table, AxisSpec, with any
// fio option as an axis besides), the presets, the expansion of a plan
// into its steps with repeats (Plan.Steps), the checks before anything
// runs (Check, CheckOffline, preflight), and the running of a plan's steps
// on this machine — scheduler switches, automatic repeats, stalled and
// disturbed steps, rates relative to a probe step for QoS curves —
// through the hooks its caller gives (PlanHooks). Step results
// (StepResult) are what the store, the summary and the dashboard read.
package sweep
