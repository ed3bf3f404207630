// Package fioserver runs one step's jobs on several hosts with fio's own
// client/server mode: each host runs `fio --server`, and this machine (the
// dashboard's) runs fio's client against them, streams progress, and
// returns each host's results through iolab's fio import — per host and
// per job, never added up. fio's network protocol is not re-implemented:
// iolab only starts fio and reads what it prints.
//
// # The API
//
// A Runner holds the fio binary, the AllowList of addresses fio servers may
// have, and timeouts. Runner.Check refuses a run before anything starts
// (an address off the allow-list, a target the host does not allow or an
// option that reaches beyond its targets, jobs a job file cannot say); Runner.Probe asks one server who it is;
// Runner.Run runs a config on every host and returns a HostResult per
// host, in the order given, with its fio.FioImport (one step's Config and
// Result, Result.Host.Hostname the server's own hostname) or its
// *HostError. The error Run returns joins the hosts' errors, each naming
// its host and its kind (ErrNotAllowed, ErrTarget, ErrUnreachable,
// ErrVersion, ErrRefused, ErrFailed, or the context's error when
// cancelled); the other hosts' results are kept.
//
// # How fio runs
//
// The config becomes a job file (fio.FormatJobFile): fio's client takes
// jobs only from files, and sends the file's text to its servers. For each
// host, in parallel:
//
//  1. `fio --client=ip:ADDR,PORT --parse-only JOBFILE`: the server parses
//     the jobs without running them and the client prints the server's
//     probe reply, "hostname=fleet-a, be=0, 64-bit, os=Linux, arch=x86-64,
//     fio=fio-3.33, flags=1" (client.c: handle_probe). So before any host
//     starts, each one has said who it is, a host that does not answer
//     (within Runner.ProbeTimeout) or speaks another protocol version ("fio:
//     client/server version mismatch (98 != 97)", server.c:
//     verify_convert_cmd) is known, and so is a job its fio refuses
//     ("<fleet-a> Bad option <x=1>", "<fleet-a> fio: job r dropped": fio
//     prints them and exits 0). fio checks only the protocol version; a
//     different fio release is noted, not refused.
//  2. When every probe has ended, the hosts that passed start together:
//     `fio --client=ip:ADDR,PORT --output-format=json+ JOBFILE`, one fio
//     process per host. Its stdout is fio's client output ("client_stats",
//     fio.ParseFioHosts); the lines before it are what the server said;
//     "client <ADDR>: exited with error N" marks the host failed (its
//     results, if fio printed any, are kept with the error).
//
// One process per host rather than one with several --client: fio's exit
// status is 0 when only some servers failed, and its stderr does not
// always name the server, so only a process of its own ties an error to a
// host; each host's results and end are known as soon as it is done; a
// host can be cancelled alone; and fio 3.33 would otherwise mix every
// server's global options into one object and add an "All clients" sum.
// The price is one client process per host, and starts that are apart by
// the time it takes to start a process (fio's own client, too, starts its
// servers one after the other).
//
// Cancelling the context sends fio's client SIGINT, on which it tells its
// server to stop the jobs (FIO_NET_CMD_QUIT) and exits; after
// Runner.KillGrace it is killed. A cancelled host's results are dropped,
// like a cancelled local step's.
//
// # Progress
//
// fio's client prints its status line ("Jobs: 2 (f=2): [r(1),W(1)][60.0%]
// [r=851MiB/s][r=213k IOPS][eta 00m:02s]") only when no JSON output is
// asked for (client.c: client_display_thread_status), and prints JSON
// (with --status-interval, every interval's block too) only when the
// servers are done. Results with json+ histograms are what the import
// needs; the status line's figures come from the server, which sends
// its jobs' status (FIO_NET_CMD_ETA, struct jobs_eta) whenever the
// client asks, about once a second, and with --eta=always the client
// asks even when it prints JSON. So each host's client talks to its
// server through a relay on this machine's loopback (status.go) that
// passes every byte through and reads those answers on the way: the
// host's IOPS of the last second, every direction, and its share done
// as fio computes it (elapsed / (elapsed + eta)). What Run reports per
// host, at each status and at each change of phase (probing, running,
// done, failed, cancelled): the time since the host started, fio's IOPS
// and share done (Progress.FromFio; before the first status, and where
// the relay cannot listen, the share estimated from the jobs' ramp_time
// and runtime when every job is time_based, else -1), and, once done,
// the host's IOPS from its results. The results name the server, not
// the relay.
//
// # What iolab can and cannot guarantee for a fio server host
//
// fio's server has no authentication and no encryption. Anyone who can
// reach its port can run any job as the server's user (usually root):
// write any file or device, run shell commands (exec_prerun). The
// allow-list decides where iolab sends jobs, not who else can reach the
// server: run `fio --server=ip:ADDR` on a private address, reachable from
// the dashboard host alone.
//
// What iolab enforces, before anything is sent (Runner.Check, which the
// dashboard runs on every step at launch, and Run again at each step,
// with the host's entries as stored then): the job file
// it writes (fio.FormatJobFile) is read back as fio reads it
// (fio.ReadJobFileSections), and every option line of every section,
// [global] included, is checked (checkJobFile). The refusal names the
// job (a [global] option, the jobs it applies to), the option, its value
// and the host's allowed targets.
//
//   - A filename must be, byte for byte, one of Host.AllowTargets (the
//     devices and files listed on the Hosts page; CheckAllowedTarget
//     takes only absolute paths written plainly, outside /proc, /sys and
//     /dev/fd, without ':', '\' or '$'). Nothing is normalised, so
//     /proc/self/root/dev/X, /dev//X, /dev/Y/../X and relative paths are
//     refused, and so is a ':' list, even of allowed entries: one file per
//     job. A host with no entries runs only jobs of a diskless engine
//     (ioengine=null), which open no file. A job on a device under /dev
//     is sent with allow_file_create=0 (and refused without it), so that
//     an allowed device the host does not have fails the run instead of
//     becoming a file in the host's /dev.
//   - Every job names its file: a job without filename (fio would make
//     up jobname.N.M in the server's directory) is refused, and so are
//     the options from which fio makes up names (directory,
//     filename_format, nrfiles other than 1, opendir, unique_filename).
//   - No option that fio.OptionReach says opens another file (the
//     write_*_log options, with or without a path, per_job_logs,
//     verify_dump, verify_state_save, which fio turns on for a verifying
//     job unless it is 0, verify_state_load, a pattern read from a
//     'file', iolog replay), runs a program (exec_prerun, exec_postrun,
//     triggers, an engine that is not iolab's: exec, external:PATH) or
//     writes kernel settings (ioscheduler, cgroups) or turns off fio's
//     own refusal to write a mounted device (allow_mounted_write, the one
//     check that runs on the host); nor an option that
//     neither iolab nor that table knows. Such jobs run with iolab agent
//     on the host, whose write guard opens their targets itself.
//
// What iolab cannot do: look at the host. The entries are names on a
// machine iolab cannot see, compared as names; none of the local checks
// (mounted, holders, swap, filesystem signatures, symlinks resolved, the
// identity of what is opened) can run there. An allowed entry that is,
// or becomes, a symlink to another device on the host, or is replaced
// while a run waits (testdev.HostileTargets' swaps), is the host's to
// prevent: list only paths that nobody else can change, such as
// /dev/disk/by-id names of disks meant for testing. fio creates an
// allowed file that is missing, and its directories. A fio host gets none
// of an iolab host's per-step care either: no scheduler switch, discard
// or dropped caches, and of its environment only what the probe says
// (hostname, OS, architecture, fio version).
package fioserver
