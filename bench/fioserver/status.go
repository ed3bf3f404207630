package fioserver

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Status is what a fio server says of its running jobs when its client
// asks, about once a second (FIO_NET_CMD_ETA): fio's own figures, the
// ones its client prints in its "Jobs: …" line. fio's client prints no
// such line when it prints JSON (client.c: client_display_thread_status),
// but it still asks for them when told --eta=always; the runner reads
// the answers on their way from the server to the client (statusRelay).
type Status struct {
	Running int       // jobs running
	IOPS    [3]uint32 // read, write, trim: the last second's
	Rate    [3]uint64 // the same in KiB/s
	Elapsed time.Duration
	ETA     time.Duration // -1: fio cannot tell (jobs not time based)
}

// TotalIOPS is the jobs' IOPS, every direction.
func (s Status) TotalIOPS() float64 {
	return float64(s.IOPS[0]) + float64(s.IOPS[1]) + float64(s.IOPS[2])
}

// Percent is the share done as fio's "Jobs:" line shows it
// (display_thread_status, eta.c: elapsed / (elapsed + eta)), 0 as there
// while fio cannot tell (no time elapsed, or no end in sight).
func (s Status) Percent() float64 {
	if s.ETA < 0 || s.Elapsed <= 0 {
		return 0
	}
	return 100 * s.Elapsed.Seconds() / (s.Elapsed + s.ETA).Seconds()
}

// struct fio_net_cmd (server.h): version, opcode, flags, tag, pdu_len,
// cmd_crc16, pdu_crc16, then the payload; little-endian on the wire.
const (
	netCmdLen  = 24
	opETA      = 9      // FIO_NET_CMD_ETA
	flagMore   = 1 << 0 // FIO_NET_CMD_F_MORE: the payload goes on in the next command
	maxPDU     = 2048 << 20
	etaUnknown = 0x7fffffff // INT_MAX: eta.c's "cannot tell"
)

// Offsets in struct jobs_eta (stat.h, JOBS_ETA; DDIR_RWDIR_CNT = 3), as
// server.c's handle_send_eta_cmd sends it.
const (
	etaNrRunning = 0
	etaRate      = 64  // uint64 rate[3], KiB/s
	etaIOPS      = 112 // uint32 iops[3]
	etaElapsed   = 128 // uint64 elapsed_sec
	etaETA       = 136 // uint64 eta_sec
	etaMinLen    = 144
)

// parseETA reads a jobs_eta payload (its first fragment is enough).
func parseETA(b []byte) (Status, bool) {
	if len(b) < etaMinLen {
		return Status{}, false
	}
	le := binary.LittleEndian
	s := Status{Running: int(le.Uint32(b[etaNrRunning:])), Elapsed: time.Duration(le.Uint64(b[etaElapsed:])) * time.Second}
	for i := range 3 {
		s.Rate[i] = le.Uint64(b[etaRate+8*i:])
		s.IOPS[i] = le.Uint32(b[etaIOPS+4*i:])
	}
	switch eta := le.Uint64(b[etaETA:]); {
	case eta >= etaUnknown:
		s.ETA = -1
	default:
		s.ETA = time.Duration(eta) * time.Second
	}
	return s, true
}

// statusReader reads the commands a server sends its client, as they
// pass, and calls on with each status. It never fails the stream: what
// it cannot read it stops reading.
type statusReader struct {
	on   func(Status)
	head []byte // the command's header as it comes
	body []byte // the payload kept (an ETA's first fragment)
	left int    // payload bytes still to come
	keep bool   // the payload is a status's
	more bool   // the last command's payload goes on in this one
	off  bool   // lost track: read no more
}

func (r *statusReader) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !r.off {
		if r.left == 0 {
			k := min(netCmdLen-len(r.head), len(p))
			r.head, p = append(r.head, p[:k]...), p[k:]
			if len(r.head) < netCmdLen {
				break
			}
			le := binary.LittleEndian
			op, flags, pdu := le.Uint16(r.head[2:]), le.Uint32(r.head[4:]), le.Uint32(r.head[16:])
			if pdu > maxPDU {
				r.off = true
				break
			}
			r.keep = op == opETA && !r.more
			r.more = flags&flagMore != 0
			r.head, r.body, r.left = r.head[:0], r.body[:0], int(pdu)
			if r.left == 0 {
				continue
			}
		}
		k := min(r.left, len(p))
		if r.keep {
			r.body = append(r.body, p[:k]...)
		}
		r.left -= k
		p = p[k:]
		if r.left == 0 && r.keep {
			if s, ok := parseETA(r.body); ok {
				r.on(s)
			}
		}
	}
	return n, nil
}

// statusRelay stands between fio's client and its server on this
// machine's loopback: the client connects to it, it connects to the
// server and passes everything through both ways, reading the server's
// status answers on the way. It takes one connection, the client's.
type statusRelay struct {
	ln     net.Listener
	server netip.AddrPort
	on     func(Status)
	done   chan struct{}

	mu     sync.Mutex
	conns  []net.Conn // the client's and the server's, for Close
	closed bool
}

// newStatusRelay listens on a loopback port for fio's client of server.
func newStatusRelay(server netip.AddrPort, on func(Status)) (*statusRelay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &statusRelay{ln: ln, server: server, on: on, done: make(chan struct{})}
	go r.serve()
	return r, nil
}

// Addr is where fio's client connects.
func (r *statusRelay) Addr() netip.AddrPort {
	return r.ln.Addr().(*net.TCPAddr).AddrPort()
}

func (r *statusRelay) serve() {
	defer close(r.done)
	client, err := r.ln.Accept()
	r.ln.Close()
	if err != nil {
		return
	}
	r.hold(client)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	server, err := (&net.Dialer{}).DialContext(ctx, "tcp", r.server.String())
	cancel()
	if err != nil {
		return // the client sees its connection closed: the server is unreachable
	}
	r.hold(server)
	defer server.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		io.Copy(server, client)
		if tc, ok := server.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	})
	_, err = io.Copy(io.MultiWriter(client, &statusReader{on: r.on}), server)
	if tc, ok := client.(*net.TCPConn); ok && !errors.Is(err, net.ErrClosed) {
		tc.CloseWrite()
	}
	wg.Wait()
}

func (r *statusRelay) hold(c net.Conn) {
	r.mu.Lock()
	r.conns = append(r.conns, c)
	if r.closed {
		c.Close()
	}
	r.mu.Unlock()
}

// Close stops the relay, once fio's client has exited: what the server
// still sends has no one to read it.
func (r *statusRelay) Close() {
	r.ln.Close()
	r.mu.Lock()
	r.closed = true
	for _, c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	<-r.done
}
