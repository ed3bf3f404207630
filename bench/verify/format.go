package verify

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"slices"
	"syscall"
)

// Data verification in fio 3.33's format (verify.c, verify.h), byte for
// byte, so that fio verifies what iolab wrote and iolab what fio wrote:
// every verify_interval bytes of a write start with fio's 40-byte
// verify_header (magic 0xacca, the kind, the length, the seed of the
// block's data, its offset, the time, the job, the write's number, a
// crc32c of the header) followed by the kind's checksum of the rest.

// Kind is one of fio's verify= methods: one row of kinds.
type Kind struct {
	Name string
	// ID is fio's VERIFY_* number, written in the header.
	ID uint16
	// SumSize is the size of fio's vhdr_* checksum struct after the
	// header; 0 for meta and pattern, which only have the header.
	SumSize int
	// sum writes the checksum of data into out (SumSize bytes), as fio
	// 3.33 computes it (see sums.go for its quirks).
	sum func(data, out []byte)
	// NoHeader: the blocks carry the pattern alone (fio's
	// VERIFY_PATTERN_NO_HDR, which is what verify=pattern means).
	NoHeader bool
	// internal kinds are not named by verify= (verify_pattern picks one).
	internal bool
	Help     string
}

// kinds are the verify= methods iolab takes. fio's crc64, crc32,
// crc16, crc7, sha3-* and null are not among them (Refused).
var kinds = []Kind{
	{Name: "md5", ID: 2, SumSize: 16, sum: func(d, out []byte) { s := md5.Sum(d); copy(out, s[:]) },
		Help: "MD5 of each block"},
	// fio 3.33 takes crc32c-intel as crc32c: the same number and sum.
	{Name: "crc32c", ID: 5, SumSize: 4, sum: func(d, out []byte) { binary.LittleEndian.PutUint32(out, CRC32C(d)) },
		Help: "CRC32C (Castagnoli) of each block"},
	{Name: "crc32c-intel", ID: 5, SumSize: 4, sum: func(d, out []byte) { binary.LittleEndian.PutUint32(out, CRC32C(d)) },
		Help: "the same sum as crc32c"},
	{Name: "sha256", ID: 9, SumSize: 64, sum: fioSHA256, Help: "fio's SHA-256 of each block"},
	{Name: "sha512", ID: 10, SumSize: 128, sum: fioSHA512,
		Help: "fio 3.33's sha512, which never finishes its hash: it compares 128 bytes of each block's data"},
	{Name: "xxhash", ID: 15, SumSize: 4, sum: func(d, out []byte) { binary.LittleEndian.PutUint32(out, xxh32(d, 1)) },
		Help: "xxHash32 of each block"},
	{Name: "sha1", ID: 16, SumSize: 20, sum: fioSHA1, Help: "SHA-1 of each block"},
	{Name: "meta", ID: 1, Help: "the header only: offset, length, job, write number (and verify_pattern if given)"},
	{Name: "pattern", ID: 18, NoHeader: true, Help: "verify_pattern repeated over every block, no header"},
	// verify_pattern without verify= is fio's VERIFY_PATTERN: the header,
	// then the pattern.
	{Name: "pattern_hdr", ID: 17, internal: true, Help: "the header, then verify_pattern over the rest"},
}

// Refused are fio's other verify= methods, refused by name.
var Refused = []string{"crc64", "crc32", "crc16", "crc7", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "null"}

// Lookup finds a verify= method by fio's name.
func Lookup(name string) (*Kind, bool) {
	for i := range kinds {
		if kinds[i].Name == name && !kinds[i].internal {
			return &kinds[i], true
		}
	}
	return nil, false
}

// Names lists the verify= methods iolab takes.
func Names() []string {
	var out []string
	for _, k := range kinds {
		if !k.internal {
			out = append(out, k.Name)
		}
	}
	return out
}

// verifyHeaderSize is sizeof(struct verify_header) in fio 3.33.
const verifyHeaderSize = 40

// fioHdrMagic is fio's FIO_HDR_MAGIC.
const fioHdrMagic = 0xacca

// HdrSize is fio's __hdr_size: the header and the kind's checksum.
func (k *Kind) HdrSize() int {
	if k.NoHeader {
		return 0
	}
	return verifyHeaderSize + k.SumSize
}

// PatternHeader is the kind verify_pattern alone picks.
var PatternHeader = &kinds[len(kinds)-1]

// Header is fio 3.33's struct verify_header, decoded.
type Header struct {
	Magic, Kind uint16
	Len         uint32
	Seed        uint64
	Offset      uint64
	Sec, Nsec   uint32
	Thread      uint16
	NumberIO    uint16
	CRC         uint32
}

func (h *Header) put(p []byte) {
	le := binary.LittleEndian
	le.PutUint16(p[0:], h.Magic)
	le.PutUint16(p[2:], h.Kind)
	le.PutUint32(p[4:], h.Len)
	le.PutUint64(p[8:], h.Seed)
	le.PutUint64(p[16:], h.Offset)
	le.PutUint32(p[24:], h.Sec)
	le.PutUint32(p[28:], h.Nsec)
	le.PutUint16(p[32:], h.Thread)
	le.PutUint16(p[34:], h.NumberIO)
	h.CRC = CRC32C(p[:36])
	le.PutUint32(p[36:], h.CRC)
}

// ReadHeader decodes the header at the start of p.
func ReadHeader(p []byte) Header {
	le := binary.LittleEndian
	return Header{Magic: le.Uint16(p[0:]), Kind: le.Uint16(p[2:]), Len: le.Uint32(p[4:]), Seed: le.Uint64(p[8:]),
		Offset: le.Uint64(p[16:]), Sec: le.Uint32(p[24:]), Nsec: le.Uint32(p[28:]), Thread: le.Uint16(p[32:]),
		NumberIO: le.Uint16(p[34:]), CRC: le.Uint32(p[36:])}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is fio's crc32c: it starts from ~0 like everyone, but returns
// the register without the final inversion.
func CRC32C(p []byte) uint32 { return ^crc32.Checksum(p, castagnoli) }

// Meta is what a block's header says beyond its data: where it is,
// which write put it there and the seed of its data.
type Meta struct {
	Offset   int64
	Seed     uint64
	NumberIO uint16
	Thread   uint16
	Sec      uint32
	Nsec     uint32
}

// Spec is a job's verify options, resolved (fio's fixup_options).
type Spec struct {
	Kind     *Kind
	Interval int    // bytes between headers
	Offset   int    // verify_offset: where the header is swapped to
	Pattern  []byte // verify_pattern, or nil
	Fatal    bool
	Dump     bool
	scratch  []byte // the pattern laid out, for checkPattern
}

// Clone is a copy of v for another thread to check with: Check keeps a
// scratch buffer of its own in the Spec.
func (v *Spec) Clone() *Spec {
	c := *v
	c.scratch = nil
	return &c
}

// hdrInc is fio's get_hdr_inc: headers every interval bytes of an I/O of
// n bytes, or one when the I/O is shorter.
func (v *Spec) hdrInc(n int) int {
	if v.Interval > 0 && v.Interval <= n {
		return v.Interval
	}
	return n
}

// Fill writes an I/O's worth of verifiable data into p, as fio's
// populate_verify_io_u: data from the seed (or verify_pattern), then a
// header with its checksum at the start of every interval.
func (v *Spec) Fill(p []byte, m Meta) {
	if v.Pattern != nil {
		CopyPattern(p, v.Pattern)
	} else {
		FillRandom(p, m.Seed)
	}
	if v.Kind.NoHeader {
		return
	}
	inc := v.hdrInc(len(p))
	hs := v.Kind.HdrSize()
	for n := 0; n*inc < len(p); n++ {
		b := p[n*inc : min((n+1)*inc, len(p))]
		h := Header{Magic: fioHdrMagic, Kind: v.Kind.ID, Len: uint32(inc), Seed: m.Seed,
			Offset: uint64(m.Offset) + uint64(n*v.Interval), Sec: m.Sec, Nsec: m.Nsec, Thread: m.Thread, NumberIO: m.NumberIO}
		h.put(b)
		if v.Kind.sum != nil {
			v.Kind.sum(b[hs:], b[verifyHeaderSize:hs])
		}
		if v.Offset > 0 {
			SwapBytes(b[:hs], b[v.Offset:v.Offset+hs])
		}
	}
}

// SwapBytes swaps a with b, byte for byte: verify_offset moves the header
// that way before a write and back after a read.
func SwapBytes(a, b []byte) {
	for i := range a {
		a[i], b[i] = b[i], a[i]
	}
}

// Error is a block that did not verify: where it is, what its
// header or checksum should have been and what was read. It fails the job.
type Error struct {
	Job      string   `json:"job"`
	File     string   `json:"file"`
	Method   string   `json:"method"` // the verify= method, "header" for a bad header, "trim" for a trimmed block not zero
	Offset   int64    `json:"offset"` // the bad interval's offset in the file
	Length   int      `json:"length"`
	IOOffset int64    `json:"io_offset"` // the I/O it was read by
	IOLength int      `json:"io_length"`
	What     string   `json:"what,omitempty"` // for a bad header: which field
	Expected string   `json:"expected"`       // hex (checksums) or a value
	Received string   `json:"received"`
	Dumped   []string `json:"dumped,omitempty"` // verify_dump's files
	// BadIntervals is how many of the block's intervals failed: all of
	// them are checked, unless verify_fatal stops at the first.
	BadIntervals int `json:"bad_intervals"`
}

// Unwrap is EILSEQ, the errno fio fails a job with when a block does not
// verify (io_u->error in verify.c): its JSON says "error" : 84.
func (e *Error) Unwrap() error { return syscall.EILSEQ }

func (e *Error) Error() string {
	var s string
	switch e.Method {
	case "trim":
		s = fmt.Sprintf("job %s: trim: verify failed at file %s offset %d, length %d, block offset %d: expected zeros, received %s",
			e.Job, e.File, e.IOOffset, e.IOLength, e.Offset-e.IOOffset, e.Received)
	case "header":
		s = fmt.Sprintf("job %s: verify: bad header %s %s, wanted %s at file %s offset %d, length %d (requested block: offset=%d, length=%d)",
			e.Job, e.What, e.Received, e.Expected, e.File, e.Offset, e.Length, e.IOOffset, e.IOLength)
	default:
		s = fmt.Sprintf("job %s: %s: verify failed at file %s offset %d, length %d (requested block: offset=%d, length=%d): expected %s %s, received %s",
			e.Job, e.Method, e.File, e.Offset, e.Length, e.IOOffset, e.IOLength, e.What, e.Expected, e.Received)
	}
	if e.BadIntervals > 1 {
		s += fmt.Sprintf("; %d intervals of the block are bad", e.BadIntervals)
	}
	for _, d := range e.Dumped {
		s += "; dumped " + d
	}
	return s
}

// ReadBack is one block read back: the file, the I/O's offset and the
// header values it must carry (want; seedKnown when its seed is known).
type ReadBack struct {
	File      string
	Off       int64
	NumberIO  uint16
	CheckNum  bool // the job wrote with fixed block sizes: numberio must match (fio)
	Seed      uint64
	SeedKnown bool
	// Trimmed: the block was trimmed after it was written, and must read
	// back as zeros (fio's IO_U_F_TRIMMED, trim_verify_zero).
	Trimmed bool
}

// Check verifies an I/O's buffer p as fio's verify_io_u does, interval by
// interval; it returns the first failure (all of them are looked at unless
// verify_fatal, as fio logs each; the first fails the job).
func (v *Spec) Check(job string, p []byte, r ReadBack) *Error {
	if r.Trimmed {
		return checkZeros(job, p, r)
	}
	inc := v.hdrInc(len(p))
	hs := v.Kind.HdrSize()
	var first *Error
	for n := 0; n*inc < len(p); n++ {
		b := p[n*inc : min((n+1)*inc, len(p))]
		if v.Offset > 0 && hs > 0 {
			SwapBytes(b[:hs], b[v.Offset:v.Offset+hs])
		}
		e := v.checkInterval(b, n, inc, r)
		if e != nil {
			e.Job, e.File, e.IOOffset, e.IOLength = job, r.File, r.Off, len(p)
			if e.Offset == 0 && e.Length == 0 {
				e.Offset, e.Length = r.Off+int64(n*inc), inc
			}
			if first == nil {
				first = e
			}
			first.BadIntervals++
			if v.Fatal {
				break
			}
		}
	}
	return first
}

func (v *Spec) checkInterval(b []byte, n, inc int, r ReadBack) *Error {
	hs := v.Kind.HdrSize()
	if v.Kind.NoHeader {
		return v.checkPattern(b, n, inc, hs)
	}
	h := ReadHeader(b)
	bad := func(what string, got, want any) *Error {
		return &Error{Method: "header", What: what, Received: fmt.Sprint(got), Expected: fmt.Sprint(want)}
	}
	switch {
	case h.Magic != fioHdrMagic:
		return bad("magic", fmt.Sprintf("%x", h.Magic), fmt.Sprintf("%x", fioHdrMagic))
	case int(h.Len) != inc:
		return bad("length", h.Len, inc)
	case r.SeedKnown && h.Seed != r.Seed:
		return bad("rand_seed", h.Seed, r.Seed)
	case h.Offset != uint64(r.Off)+uint64(n*v.Interval):
		return bad("offset", h.Offset, uint64(r.Off)+uint64(n*v.Interval))
	case r.CheckNum && h.NumberIO != r.NumberIO:
		return bad("numberio", h.NumberIO, r.NumberIO)
	}
	if crc := CRC32C(b[:36]); crc != h.CRC {
		return bad("crc", fmt.Sprintf("%x", h.CRC), fmt.Sprintf("%x", crc))
	}
	if v.Kind.sum != nil {
		var got [128]byte
		sum := got[:v.Kind.SumSize]
		v.Kind.sum(b[hs:], sum)
		if want := b[verifyHeaderSize:hs]; !slices.Equal(want, sum) {
			return &Error{Method: v.Kind.Name, What: "checksum", Expected: hex.EncodeToString(want), Received: hex.EncodeToString(sum)}
		}
	}
	if v.Pattern != nil && v.Kind.sum == nil {
		return v.checkPattern(b, n, inc, hs)
	}
	return nil
}

// checkPattern is fio's verify_io_u_pattern: the pattern runs on from the
// start of the I/O, under the header.
func (v *Spec) checkPattern(b []byte, n, inc, hs int) *Error {
	mod := (inc*n + hs) % len(v.Pattern)
	data := b[hs:]
	// Fast path, as fio's cmp_pattern: the pattern laid out once in a
	// scratch buffer the job keeps, compared in one go.
	if len(v.scratch) < len(data)+len(v.Pattern) {
		v.scratch = make([]byte, len(data)+len(v.Pattern))
		CopyPattern(v.scratch, v.Pattern)
	}
	if bytes.Equal(data, v.scratch[mod:mod+len(data)]) {
		return nil
	}
	for i, c := range data {
		if want := v.Pattern[mod]; c != want {
			return &Error{Method: "pattern", What: fmt.Sprintf("byte at block offset %d", hs+i),
				Expected: fmt.Sprintf("%02x", want), Received: fmt.Sprintf("%02x", c)}
		}
		if mod++; mod == len(v.Pattern) {
			mod = 0
		}
	}
	return nil
}

// checkZeros is fio's verify_trimmed_io_u: a block trimmed after it was
// written passes when every byte reads back as zero, whatever the
// verify method (a device whose discard does not zero fails it); the
// error names the first byte that is not.
func checkZeros(job string, p []byte, r ReadBack) *Error {
	at := slices.IndexFunc(p, func(b byte) bool { return b != 0 })
	if at < 0 {
		return nil
	}
	return &Error{Job: job, File: r.File, Method: "trim", Offset: r.Off + int64(at), Length: len(p) - at, IOOffset: r.Off, IOLength: len(p),
		Expected: "0x00", Received: fmt.Sprintf("%#02x", p[at]), BadIntervals: 1}
}
