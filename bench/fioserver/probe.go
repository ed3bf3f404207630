package fioserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"iolab/bench/fio"
)

// HostInfo is what a fio server says of itself when a client connects
// (fio's probe reply, client.c: handle_probe).
type HostInfo struct {
	Hostname   string `json:"hostname"`    // its own hostname
	FioVersion string `json:"fio_version"` // fio-3.33
	OS         string `json:"os"`          // Linux
	Arch       string `json:"arch"`        // as uname -m says it: fio's x86-64 is x86_64
	Bits       int    `json:"bits"`        // 64
	BigEndian  bool   `json:"big_endian"`
}

// probeJob is what Probe asks a server to parse: a job that needs no file.
const probeJob = "[probe]\nioengine=null\nsize=4k\n"

// Probe asks host's fio server who it is, without running anything: the
// server parses a job of fio's null engine and answers with its hostname,
// fio version, OS and architecture. Its errors are *HostError
// (ErrNotAllowed, ErrUnreachable, ErrVersion, …).
func (r *Runner) Probe(ctx context.Context, host Host) (HostInfo, error) {
	addr, err := host.resolve(ctx, r.Allow)
	if err != nil {
		return HostInfo{}, err
	}
	dir, err := os.MkdirTemp("", "iolab-fleet-")
	if err != nil {
		return HostInfo{}, fmt.Errorf("fleet: %w", err)
	}
	defer os.RemoveAll(dir)
	jobFile := filepath.Join(dir, "probe.fio")
	if err := os.WriteFile(jobFile, []byte(probeJob), 0o600); err != nil {
		return HostInfo{}, fmt.Errorf("fleet: %w", err)
	}
	p := r.probe(ctx, host, addr, jobFile)
	return p.info, p.err
}

// probed is what a probe learnt.
type probed struct {
	info     HostInfo
	messages []string // what the server said
	err      error    // *HostError
}

// probe runs `fio --client=… --parse-only jobFile`.
func (r *Runner) probe(ctx context.Context, host Host, addr netip.AddrPort, jobFile string) probed {
	pctx, cancel := context.WithTimeout(ctx, r.probeTimeout())
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := r.fio(pctx, &stdout, &stderr, clientArg(addr), "--parse-only", jobFile)
	switch {
	case errors.Is(err, errNoFio):
		return probed{err: hostError(host, addr.String(), ErrFailed, "", err)}
	case ctx.Err() != nil:
		return probed{err: hostError(host, addr.String(), ctx.Err(), "cancelled while asking who it is", nil)}
	case pctx.Err() != nil:
		return probed{err: hostError(host, addr.String(), ErrUnreachable, fmt.Sprintf("no answer within %v", r.probeTimeout()), nil)}
	}
	return classifyProbe(host, addr, stdout.Bytes(), stderr.String(), err)
}

// classifyProbe reads what `fio --client --parse-only` printed and how it
// exited.
func classifyProbe(host Host, addr netip.AddrPort, stdout []byte, stderr string, runErr error) probed {
	fail := func(kind error, msg string, err error) probed {
		return probed{err: hostError(host, addr.String(), kind, msg, err)}
	}
	if msg := versionMismatch(stderr); msg != "" {
		return fail(ErrVersion, msg+" (fio's client and server must speak one protocol version: install one fio release on both)", nil)
	}
	info, ok := parseProbe(string(stdout))
	if !ok {
		msg := oneLine(stderr + "\n" + string(stdout))
		if msg == "" {
			msg = "fio's client printed nothing"
		}
		return fail(ErrUnreachable, msg, runErr)
	}
	p := probed{info: info, messages: fio.ClientMessages(stdout)}
	if refusal := refusals(p.messages); len(refusal) > 0 {
		p.err = hostError(host, addr.String(), ErrRefused, strings.Join(refusal, "; "), nil)
		return p
	}
	if runErr != nil {
		p.err = hostError(host, addr.String(), ErrFailed, oneLine(stderr+"\n"+strings.Join(p.messages, "\n")), runErr)
	}
	return p
}

// parseProbe reads fio's probe line: "hostname=fleet-a, be=0, 64-bit,
// os=Linux, arch=x86-64, fio=fio-3.33, flags=1" (client.c: handle_probe).
func parseProbe(out string) (HostInfo, bool) {
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "hostname=") {
			continue
		}
		var info HostInfo
		for f := range strings.SplitSeq(line, ", ") {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				if bits, found := strings.CutSuffix(f, "-bit"); found {
					info.Bits, _ = strconv.Atoi(bits)
				}
				continue
			}
			switch k {
			case "hostname":
				info.Hostname = v
			case "be":
				info.BigEndian = v == "1"
			case "os":
				info.OS = v
			case "arch":
				info.Arch = unameArch(v)
			case "fio":
				info.FioVersion = v
			}
		}
		return info, true
	}
	return HostInfo{}, false
}

// versionMismatch is fio's own message when the server speaks another
// protocol version (server.c: verify_convert_cmd), or "".
func versionMismatch(stderr string) string {
	for line := range strings.Lines(stderr) {
		if strings.Contains(line, "version mismatch") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// refusals are the server's messages that say a job was refused: an
// option its fio does not know, a job it dropped, or any "fio: " error.
func refusals(messages []string) []string {
	var out []string
	for _, m := range messages {
		_, text, _ := strings.Cut(m, "> ")
		if strings.Contains(text, "Bad option") || strings.Contains(text, "dropped") || strings.HasPrefix(text, "fio: ") {
			out = append(out, m)
		}
	}
	return out
}

// oneLine joins an output's non-blank lines with "; ".
func oneLine(s string) string {
	var parts []string
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

func (r *Runner) probeTimeout() time.Duration {
	if r.ProbeTimeout > 0 {
		return r.ProbeTimeout
	}
	return 10 * time.Second
}

// errNoFio is fio missing on this machine.
var errNoFio = errors.New("fleet: fio is not installed on this machine (its client runs the fio servers' jobs)")

// unameArch is fio's name for an architecture (fio's arch.h) as uname -m
// and iolab's own runs say it, so that a fio server and an agent on the
// same architecture do not differ on the compare page.
func unameArch(fio string) string {
	switch fio {
	case "x86-64":
		return "x86_64"
	case "x86":
		return "i686"
	}
	return fio
}
