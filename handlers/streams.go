package handlers

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// streams are the event streams open (GET /api/runs/ID/events), capped
// per client address and in total, so that streams, which hold their
// connection as long as a run goes, never fill the connections: a
// client's new stream over its cap closes its own oldest one (a browser
// tab left open on a run page is the one it no longer looks at), and a
// new stream over the total cap is refused with 429 and Retry-After.
type streams struct {
	max, perClient int
	mu             sync.Mutex
	n              int
	byClient       map[string][]*openStream // oldest first
}

type openStream struct{ cancel context.CancelFunc }

func newStreams(max, perClient int) *streams {
	return &streams{max: max, perClient: perClient, byClient: map[string][]*openStream{}}
}

// streamRetry is the Retry-After of a stream refused for the total cap.
const streamRetry = 10 * time.Second

// open starts a stream of client addr: its context ends when the stream
// is closed to make room for a newer one of the same client; release
// counts it out.
func (ss *streams) open(ctx context.Context, addr string) (context.Context, func(), error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	mine := ss.byClient[addr]
	if len(mine) >= ss.perClient {
		mine[0].cancel()
		mine = mine[1:]
		ss.n--
	} else if ss.n >= ss.max {
		return nil, nil, &busyError{retry: streamRetry, msg: fmt.Sprintf(
			"%d event streams are open, the most this server keeps: try again in %s, or reload the run page later", ss.max, streamRetry)}
	}
	ctx, cancel := context.WithCancel(ctx)
	st := &openStream{cancel: cancel}
	ss.byClient[addr] = append(mine, st)
	ss.n++
	return ctx, func() { ss.close(addr, st) }, nil
}

// close counts st out, unless it was closed to make room already.
func (ss *streams) close(addr string, st *openStream) {
	st.cancel()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	mine := ss.byClient[addr]
	for i, o := range mine {
		if o == st {
			mine = append(mine[:i:i], mine[i+1:]...)
			ss.n--
			break
		}
	}
	if len(mine) == 0 {
		delete(ss.byClient, addr)
	} else {
		ss.byClient[addr] = mine
	}
}
