package fleettest

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
)

// FioServerVersion is FIO_SERVER_VER of fio 3.33 (server.h), the protocol
// version a fio client and server must share.
const FioServerVersion = 97

// FakeFioServer listens on addr (in this machine's namespace; port 0
// picks one) and answers every connection with one command header of
// protocol version: what a fio server of another release sends first.
// It speaks no more of fio's protocol than that header (server.h: struct
// fio_net_cmd, little endian, crc16 over its first 20 bytes), which is
// all a client reads before it gives up with "client/server version
// mismatch". It returns the port; it stops when the test ends.
func FakeFioServer(t testing.TB, addr netip.Addr, version uint16) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
	if err != nil {
		t.Fatalf("fleettest: fake fio server: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint16(hdr[0:], version)
	binary.LittleEndian.PutUint16(hdr[2:], 10) // FIO_NET_CMD_PROBE, the reply a client waits for first
	// flags, tag and pdu_len stay 0.
	binary.LittleEndian.PutUint16(hdr[20:], crc16(hdr[:20]))
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write(hdr)
			// Closed by the client once it has read the header.
			go func() {
				var b [512]byte
				for {
					if _, err := c.Read(b[:]); err != nil {
						c.Close()
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// crc16 is fio's crc16 (crc/crc16.c: polynomial 0x8005, reflected, from 0).
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}
