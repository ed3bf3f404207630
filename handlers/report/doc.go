// Package report holds what a report of several stored runs says about
// whether they can be compared: the differences of setup and environment
// that can move their results (CompareWarnings, GroupWarnings) and the
// list of every environment and plan field that differs (EnvDiffs). The
// dashboard's comparison and report pages and iolab report show them.
package report
