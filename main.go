// Command iolab is a Linux block-I/O lab: it runs fio-style benchmarks with
// its own in-process io_uring, libaio, psync and null engines, sweeps them
// over iodepth, engine, scheduler, numjobs, bs and rw with repeats, keeps
// every run in SQLite and serves a dashboard.
//
// Its commands are package handlers/cli's: `iolab help` lists them,
// `iolab help COMMAND` or `iolab COMMAND --help` tells one's flags, and
// `iolab` alone is `iolab serve`.
package main

import (
	"os"

	"iolab/handlers/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
