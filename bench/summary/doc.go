// Package summary turns a run's step results into the figures and tables
// people read: each job's repeats summarised per combination of axis
// values (Summarize, WriteSummary), the statistical differences between
// two runs (Diff, WriteDiff, DiffCSV), QoS curves and their knee
// (QoSCurve), and the per-step figures, notes and outcomes that the
// CLI's tables and the dashboard's pages share, so both say the same.
// It reads steps whole (sweep.StepResult) or as the store keeps them for
// pages: StepView and the views of its result, groups and jobs
// (step.go), which keep of the jobs' latencies what the figures read.
//
// It reads results; it runs and stores nothing.
package summary
