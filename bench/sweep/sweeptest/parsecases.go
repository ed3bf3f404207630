package sweeptest

import "iolab/bench/sweep"

// ParseCase is one way of writing a sweep as --sweep takes it
// (AXIS=v1,v2,…) and what it means: the axis and its values, or a part of
// the error that refuses it.
type ParseCase struct {
	In     string
	Axis   sweep.Axis
	Values []string
	Err    string
}

// ParseCases are the value syntaxes of the sweeps: lists, ranges, engine
// variants, values that hold commas, aliases, and what is refused.
// TestParseSweep (bench/sweep) runs them through the CLI's parser and
// TestFormTakesTheCLIsSweeps (handlers) through the new-run form, so the
// form takes what the command line takes, in the same words.
func ParseCases() []ParseCase {
	return []ParseCase{
		{In: "iodepth=1,8,32", Axis: sweep.AxisIODepth, Values: []string{"1", "8", "32"}},
		{In: "iodepth=1..256", Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32", "64", "128", "256"}},
		{In: "iodepth=1..128", Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32", "64", "128"}},
		{In: "iodepth=1, 4 ,16", Axis: sweep.AxisIODepth, Values: []string{"1", "4", "16"}},
		{In: "iodepth=1,64..256", Axis: sweep.AxisIODepth, Values: []string{"1", "64", "128", "256"}},
		{In: "numjobs=1..32", Axis: sweep.AxisNumJobs, Values: []string{"1", "2", "4", "8", "16", "32"}},
		{In: "iodepth=3..10", Axis: sweep.AxisIODepth, Values: []string{"3", "6"}},
		{In: "ioengine=io_uring,io_uring+hipri,io_uring+sqpoll+hipri,libaio,psync", Axis: sweep.AxisEngine,
			Values: []string{"io_uring", "io_uring+hipri", "io_uring+sqpoll+hipri", "libaio", "psync"}},
		{In: "ioengine=io_uring+sqpoll", Axis: sweep.AxisEngine, Values: []string{"io_uring+sqpoll"}},
		{In: "scheduler=none,mq-deadline,bfq,kyber", Axis: sweep.AxisScheduler, Values: []string{"none", "mq-deadline", "bfq", "kyber"}},
		{In: "bs=4k,1m", Axis: sweep.AxisBS, Values: []string{"4k", "1m"}},
		{In: "rw=randread,randwrite", Axis: sweep.AxisRW, Values: []string{"randread", "randwrite"}},
		{In: "rate_iops=1000,2000", Axis: sweep.AxisRateIOPS, Values: []string{"1000", "2000"}},
		{In: "rate_iops=25%..100%", Axis: sweep.AxisRateIOPS, Values: []string{"max", "25%", "50%", "75%", "100%"}},
		{In: "depth=1,2", Err: `"depth" is not an axis`},
		{In: "iodeph=1,2", Err: `did you mean "iodepth"?`},
		{In: "schedular=none,bfq", Err: `did you mean "scheduler"?`},
		{In: "iodepth", Err: "want AXIS=v1,v2"},
		{In: "iodepth=1,,2", Err: "empty value"},
		{In: "iodepth=8..1", Err: "1 ≤ first ≤ last"},
		{In: "iodepth=0", Err: "iodepth"},
		{In: "ioengine=libaio+hipri", Err: "io_uring mode"},
		{In: "ioengine=io_uring+turbo", Err: `unknown mode "turbo"`},
		{In: "ioengine=spdk", Err: "not an engine"},
		{In: "rw=randomread", Err: "randomread"},
		{In: "rate_iops=50%..10%", Err: "want A%..B%"},
		// Any other option iolab takes is an axis, under fio's name.
		{In: "iodepth_batch_submit=1,8", Axis: "iodepth_batch", Values: []string{"1", "8"}},
		{In: "direct=0,1", Axis: "direct", Values: []string{"0", "1"}},
		{In: "hipri=0,1", Axis: "hipri", Values: []string{"0", "1"}},
		{In: "blocksize=4k,8k", Axis: sweep.AxisBS, Values: []string{"4k", "8k"}},
		{In: "readwrite=read,write", Axis: sweep.AxisRW, Values: []string{"read", "write"}},
		// Values that hold commas are separated by semicolons.
		{In: "cpus_allowed=0,1;1", Axis: "cpus_allowed", Values: []string{"0,1", "1"}},
		{In: "cpus_allowed=0-1,3;", Axis: "cpus_allowed", Values: []string{"0-1,3"}},
		{In: "percentile_list=50:99;99.9", Axis: "percentile_list", Values: []string{"50:99", "99.9"}},
		{In: "cpus_allowed=0,1;;2", Err: "empty value"},
		{In: "iodepth_batch_submit=1,x", Err: `iodepth_batch: "x" is not a whole number`},
		{In: "direct=0..1", Err: "direct"}, // ranges are for Numeric axes
		{In: "filename=/dev/a,/dev/b", Err: "filename cannot be swept"},
		{In: "allow_mounted_write=0,1", Err: "cannot be swept"},
		{In: "name=a,b", Err: "cannot be swept"},
	}
}
