package bench

import (
	"time"

	"iolab/bench/joblog"
)

// The job loop's hooks into its logs (bench/joblog's Writer): each does
// nothing for a job without logs.

// logStart starts the logs' clock with the measured window. The Unix
// time of its start is now less the loop time since (fio's set_epoch_time
// reads both at once): the window may have begun a while ago (a ramp's
// end waits for the other jobs', a thread waits for a CPU).
func (l *loop) logStart() {
	if l.r.logs != nil {
		since := l.clk.since() - l.measureStart
		l.r.logs.Start(l.measureStart, time.Now().UnixMilli()-since/int64(time.Millisecond))
	}
}

// logSlat logs slot s's submission latency, issued at tp.
func (l *loop) logSlat(s int32, tp int64) {
	if l.r.logs != nil {
		l.r.logs.Slat(tp, int(l.dirOf[s]), uint64(tp-l.created[s]), l.lenOf[s], l.offOf[s], l.ioPrio(s))
	}
}

// logDone logs slot s's completion at tc, having moved n bytes. It tests
// for logs and is inlined, so that a job without them makes no call per
// I/O; logDoneTo does the work.
func (l *loop) logDone(s int32, n int32, clat uint64, tc int64) {
	if l.r.logs != nil {
		l.logDoneTo(l.r.logs, s, n, clat, tc)
	}
}

func (l *loop) logDoneTo(jl *joblog.Writer, s int32, n int32, clat uint64, tc int64) {
	d := int(l.dirOf[s])
	lat := int64(-1)
	if l.st.lat {
		lat = tc - l.created[s]
	}
	jl.Completed(tc, d, clat, lat, uint32(n), l.offOf[s], &l.cur[d].Clat.Hist, l.st.clat, l.ioPrio(s))
}

// logEnd closes the logs at the end of the window and keeps them with
// the result; an error writing them fails the job.
func (l *loop) logEnd(stopAt int64) {
	if l.r.logs == nil {
		return
	}
	logs, err := l.r.logs.Finish(stopAt)
	l.res.Logs = logs
	if err != nil && l.err == nil {
		l.err = err
	}
}
