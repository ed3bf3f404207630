package fioserver

import (
	"encoding/binary"
	"testing"
	"time"
)

// netCmd is a command as a fio server sends it (struct fio_net_cmd).
func netCmd(op uint16, flags uint32, payload []byte) []byte {
	b := make([]byte, netCmdLen, netCmdLen+len(payload))
	le := binary.LittleEndian
	le.PutUint16(b[0:], 121)
	le.PutUint16(b[2:], op)
	le.PutUint32(b[4:], flags)
	le.PutUint32(b[16:], uint32(len(payload)))
	return append(b, payload...)
}

// jobsEta is a struct jobs_eta payload with run_str's room.
func jobsEta(running uint32, readIOPS, writeIOPS uint32, elapsed, eta uint64) []byte {
	b := make([]byte, etaMinLen+40)
	le := binary.LittleEndian
	le.PutUint32(b[etaNrRunning:], running)
	le.PutUint64(b[etaRate:], uint64(readIOPS)*4)
	le.PutUint64(b[etaRate+8:], uint64(writeIOPS)*4)
	le.PutUint32(b[etaIOPS:], readIOPS)
	le.PutUint32(b[etaIOPS+4:], writeIOPS)
	le.PutUint64(b[etaElapsed:], elapsed)
	le.PutUint64(b[etaETA:], eta)
	return b
}

// TestStatusReader: the statuses among a server's commands, however the
// stream is cut: a text and a fragmented thread status pass by, an ETA
// sent in two fragments counts once, an ETA fio cannot tell the end of
// has no share done.
func TestStatusReader(t *testing.T) {
	var stream []byte
	stream = append(stream, netCmd(2, 0, []byte("<fleet-a> some text\n"))...) // FIO_NET_CMD_TEXT
	stream = append(stream, netCmd(6, flagMore, make([]byte, 1024))...)       // a thread status, fragmented
	stream = append(stream, netCmd(6, 0, make([]byte, 300))...)
	stream = append(stream, netCmd(opETA, 0, jobsEta(1, 0, 0, 0, etaUnknown))...)
	two := jobsEta(2, 1500, 500, 3, 1)
	stream = append(stream, netCmd(opETA, flagMore, two[:etaMinLen+8])...)
	stream = append(stream, netCmd(opETA, 0, two[etaMinLen+8:])...) // its rest: not a status of its own
	stream = append(stream, netCmd(opETA, 0, jobsEta(2, 2000, 0, 4, 0))...)
	stream = append(stream, netCmd(opETA, 0, []byte{1, 2, 3})...) // too short to be one
	for _, cut := range []int{1, 7, 24, 25, 1000, len(stream)} {
		var got []Status
		r := &statusReader{on: func(s Status) { got = append(got, s) }}
		for rest := stream; len(rest) > 0; {
			k := min(cut, len(rest))
			if n, err := r.Write(rest[:k]); n != k || err != nil {
				t.Fatalf("cut %d: Write = %d, %v", cut, n, err)
			}
			rest = rest[k:]
		}
		if len(got) != 3 {
			t.Fatalf("cut %d: %d statuses, want 3: %+v", cut, len(got), got)
		}
		if got[0].Running != 1 || got[0].ETA != -1 || got[0].Percent() != 0 || got[0].TotalIOPS() != 0 {
			t.Errorf("cut %d: the first %+v", cut, got[0])
		}
		if s := got[1]; s.Running != 2 || s.IOPS != [3]uint32{1500, 500, 0} || s.Rate[0] != 6000 || s.TotalIOPS() != 2000 ||
			s.Elapsed != 3*time.Second || s.ETA != time.Second || s.Percent() != 75 {
			t.Errorf("cut %d: the fragmented one %+v (%v %%)", cut, s, s.Percent())
		}
		if s := got[2]; s.TotalIOPS() != 2000 || s.Percent() != 100 {
			t.Errorf("cut %d: the last %+v (%v %%)", cut, s, s.Percent())
		}
	}
}
