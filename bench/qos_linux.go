package bench

import "iolab/bench/hist"

// qosLoop is the job loop's part of latency under load (qos.go): the
// interval histogram. It allocates once, when the loop starts.
type qosLoop struct {
	ivl    *hist.Histogram // this interval's headline latency; nil when latencies are off
	ivlMax uint64
}

func newQoSLoop(st stamps) qosLoop {
	if !st.complete {
		return qosLoop{}
	}
	return qosLoop{ivl: new(hist.Histogram)}
}

// completed records one measured I/O of direction d on slot s, completed
// at tc after its issue at issued: the latency from its intended start
// when the direction is paced, and the interval's headline latency.
func (l *loop) qosCompleted(dr *DirResult, s int32, d uint8, tc, clat int64) {
	v := clat
	if p := l.pace; p != nil && d <= Write && p.bps[d] > 0 && l.st.complete {
		v = tc - p.intended[s]
		dr.Intended.Add(uint64(v))
	}
	if q := &l.qos; q.ivl != nil {
		q.ivl.Add(uint64(v))
		q.ivlMax = max(q.ivlMax, uint64(v))
	}
}

// qosInterval ends an interval: its latency, and a fresh histogram.
func (l *loop) qosInterval() *IntervalLat {
	q := &l.qos
	if q.ivl == nil {
		return nil
	}
	il := newIntervalLat(q.ivl, q.ivlMax)
	if il != nil {
		*q.ivl = hist.Histogram{}
		q.ivlMax = 0
	}
	return il
}
