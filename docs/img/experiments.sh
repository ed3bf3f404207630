#!/usr/bin/env bash
# experiments.sh draws the charts docs/sweeps.md shows of the three
# experiments iolab was built for (scheduler fairness, numjobs scaling,
# libaio vs io_uring over iodepth) from real runs on this machine: it
# builds iolab, makes its own targets, runs each experiment's preset with
# short runtimes (the presets' 5 repeats kept, so the charts have whiskers
# and the statistical diff a verdict), writes each run's bundle with
# `iolab report -o DIR` and copies the key PNGs into docs/img under stable
# names, with docs/img/experiments.txt saying how and where they were made.
#
#   sudo docs/img/experiments.sh     # about 5 minutes; again after a chart changes
#
# Targets, made here and removed on exit (also when a step fails or the
# script is interrupted):
#   - a 1 GiB file in /dev/shm behind a loop device with --direct-io=on, for
#     the scheduler and engine experiments: a blk-mq queue with none,
#     mq-deadline and kyber, whose I/O the loop driver hands to the file
#     asynchronously, so iodepth means something;
#   - a 512 MiB zram device for the scaling experiment: zram does each I/O
#     in the thread that submits it, so numjobs scales with the CPUs, where
#     a loop device funnels every job through its one worker and would
#     measure that worker.
# It never touches a disk, a mounted device or a loop or zram device it did
# not make. Run one at a time (a lock says so).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
prefix=iolab-experiments

say() { echo "experiments.sh: [$((SECONDS / 60))m$((SECONDS % 60))s] $*" >&2; }
die() {
	say "$*"
	exit 1
}

[[ $(id -u) -eq 0 ]] || die "run as root: it makes a loop and a zram device and switches the loop device's scheduler"
for c in go losetup dd chromium; do
	command -v "$c" >/dev/null || die "$c is not on PATH"
done
[[ -w /sys/class/zram-control/hot_add ]] || die "no zram (modprobe zram): the scaling experiment runs on a zram device"

exec 9>"/run/lock/$prefix.lock"
flock -n 9 || die "another experiments.sh is running"

work="" shm="" loop="" zram=""
cleanup() {
	local rc=$?
	set +e
	if [[ -n $loop ]]; then
		losetup -d "$loop" || say "could not detach $loop"
	fi
	if [[ -n $zram ]]; then
		echo 1 >"/sys/block/zram$zram/reset"
		echo "$zram" >/sys/class/zram-control/hot_remove || say "could not remove /dev/zram$zram"
	fi
	[[ -z $shm ]] || rm -f "$shm"
	[[ -z $work ]] || rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A run killed before its trap (SIGKILL, a power cut) leaves its loop
# device and file behind: they carry the prefix, so they are found here.
while read -r dev back; do
	if [[ $back == /dev/shm/$prefix.* ]]; then
		say "detaching $dev, left by an earlier run"
		losetup -d "$dev"
	fi
done < <(losetup --list --noheadings --output NAME,BACK-FILE)
rm -f /dev/shm/"$prefix".*

work=$(mktemp -d "/tmp/$prefix.XXXXXX")

say "building iolab"
cd "$repo"
[[ -f web/static/vendor/echarts.min.js ]] || (cd web && go generate)
# auto: the commit is recorded in a git clone whatever GOFLAGS say.
go build -buildvcs=auto -o "$work/iolab" .
iolab=$work/iolab

say "making the targets"
shm=$(mktemp "/dev/shm/$prefix.XXXXXX")
# Written, not sparse: the reader reads pages that exist.
dd if=/dev/urandom of="$shm" bs=1M count=1024 status=none
loop=$(losetup --find --show --direct-io=on "$shm")
zram=$(cat /sys/class/zram-control/hot_add)
echo 512M >"/sys/block/zram$zram/disksize"
# Written too: zram answers a page never written without reading anything.
dd if=/dev/urandom of="/dev/zram$zram" bs=1M count=512 oflag=direct status=none

# experiment NAME TARGET [iolab run arguments…] runs the preset NAME on
# TARGET into a store of its own, where it is run 1, and writes its report
# bundle to $work/NAME (with --axis and --base from $axis and $base).
experiment() {
	local name=$1 target=$2
	shift 2
	say "running $name on $target"
	local rc=0
	"$iolab" run --db "$work/$name.db" --preset "$name" --filename="$target" "$@" >"$work/$name.out" || rc=$?
	if ((rc != 0)); then
		# A step failed (a noisy neighbour can starve one): the run
		# keeps its other steps, and the charts draw them.
		local status
		status=$("$iolab" runs --db "$work/$name.db" | awk 'NR == 2 && $1 == 1 { print $3 }')
		[[ $status == partial ]] || die "$name: iolab run exited $rc (run status: ${status:-none})"
		say "$name: some steps failed; the charts draw the others"
	fi
	"$iolab" report --db "$work/$name.db" --axis "$axis" --base "$base" -o "$work/$name" 1 >/dev/null
}

# keep NAME KIND DEST copies the bundle's chart of KIND (its files are
# NN-iolab-KIND-run1.png, NN its place on the page) to docs/img/DEST.
keep() {
	local name=$1 kind=$2 dest=$3
	local found
	found=$(find "$work/$name" -maxdepth 1 -regextype posix-extended -regex ".*/[0-9]+-(iolab-)?$kind(-run[0-9]+)?\.png")
	[[ -n $found && $found != *$'\n'* ]] || die "$name: the report has no single $kind chart as PNG (found: ${found:-none})"
	cp "$found" "$here/$dest"
	say "wrote docs/img/$dest ($(($(stat -c %s "$found") / 1024)) KiB)"
}

# The write-up compares bfq too; kernels without it (this one may be one)
# would refuse the preset's sweep, so the three blk-mq schedulers every
# kernel has are named.
axis=scheduler base=none
experiment sched-fairness "$loop" --runtime=2 --sweep scheduler=none,mq-deadline,kyber
keep sched-fairness fairness sched-fairness.png

axis=numjobs base=1
experiment numjobs-scaling "/dev/zram$zram" --runtime=1
keep numjobs-scaling scaling numjobs-scaling.png

# libaio against plain io_uring: hipri needs poll queues a loop device has
# not, and sqpoll's thread takes a whole CPU of a small machine. No ramp:
# each step starts on a discarded device, which a loop device over tmpfs
# fills again as fast as it writes.
axis=ioengine base=libaio
experiment engines-randwrite "$loop" --ramp_time=0 --runtime=1 --sweep iodepth=1..64 --sweep ioengine=libaio,io_uring
keep engines-randwrite iops engines-randwrite-iops.png
keep engines-randwrite latency engines-randwrite-latency.png

{
	echo "Made by docs/img/experiments.sh on $(date -u +%Y-%m-%d)."
	echo "iolab $("$iolab" version | head -1), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)."
	echo "Machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) of memory, kernel $(uname -r)."
	echo "Targets: a loop device (--direct-io=on) over a 1 GiB file in /dev/shm; a 512 MiB zram device (lzo-rle) for numjobs-scaling."
	echo
	for name in sched-fairness numjobs-scaling engines-randwrite; do
		echo "$name:"
		cat "$work/$name.out"
		echo
	done
} >"$here/experiments.txt"
say "done: docs/img/{sched-fairness,numjobs-scaling,engines-randwrite-iops,engines-randwrite-latency}.png and experiments.txt"
