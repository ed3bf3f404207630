// Package report writes the report of one stored run or a comparison of
// several, for iolab report and the dashboard's report download alike:
// Build reads the runs and draws their charts, WriteHTML writes one
// self-contained HTML file, WriteBundle a directory of it with a Markdown
// summary, each chart as SVG and PNG, and the CSVs.
//
// It also holds what the report shares with the dashboard's run and
// compare pages, so that package handlers imports it and never the
// reverse: the per-step table (StepRows, its CSV's rows), the statistical
// diffs (StatDiffs), the scheduler tables (SchedulerTables), the template
// functions of the parts both render, and what makes runs unfit to
// compare (CompareWarnings, GroupWarnings, EnvDiffs).
package report
