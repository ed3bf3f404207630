package bench

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// flowHeld is fio 3.33's flow_threshold_exceeded as do_io calls it before
// each I/O: a job over its share of its flow's I/Os issues nothing this
// time round the loop. With flow_sleep it first submits what is queued and
// reaps what is in flight (io_u_quiesce), then sleeps flow_sleep (fio's
// usleep); without, it comes round again at once, spinning, its I/Os left
// in flight.
func (l *loop) flowHeld(stop *atomic.Bool) bool {
	s := l.flow
	if !s.over() {
		return false
	}
	if s.sleep > 0 {
		l.drain()
		s.doze(stop.Load)
	}
	return true
}

// doze sleeps flow_sleep, in pieces of at most a second so that a stop is
// seen.
func (s *flowShare) doze(stopped func() bool) {
	for left := s.sleep; left > 0 && (stopped == nil || !stopped()); left -= int64(time.Second) {
		d := min(left, int64(time.Second))
		nanosleep(&unix.Timespec{Sec: d / int64(time.Second), Nsec: d % int64(time.Second)})
	}
}
