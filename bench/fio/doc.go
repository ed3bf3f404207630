// Package fio is iolab's fio compatibility: the table of fio options iolab
// takes (options_*.go, one family a file, with the options it accepts and
// ignores as fio does), the command line and job files fio reads
// (ParseArgs, ParseJobFile) and the job files fio servers are sent
// (FormatJobFile), fio's normal and JSON outputs written from iolab's
// results (WriteNormal, WriteJSON), fio's JSON and client outputs read
// back as imported steps (FioImport), what an option makes fio do on a
// host beyond its files (Reach), and the calibration of iolab's engines
// against fio itself (Calibration, MatrixSpec).
//
// It knows fio's formats and names; it runs nothing but fio as a child
// process, and the jobs it builds are bench's.
package fio
