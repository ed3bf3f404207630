package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"iolab/bench/fioserver/fleettest"
)

// fiftyLog keeps the dashboard's whole log (its request log: every
// agent's request with its status and time).
var (
	fiftyLog   = flag.String("fifty.log", "", "BenchmarkFiftyAgents: write iolab serve's log to this file")
	fiftyPprof = flag.String("fifty.pprof", "", "BenchmarkFiftyAgents: serve iolab serve's profiler on this loopback address")
)

// fiftyFleet is the dashboard (a child `iolab serve`) and its agents.
type fiftyFleet struct {
	serve  *exec.Cmd
	base   string // the dashboard as this process reaches it
	token  string
	hc     *http.Client
	log    *requestLog
	names  []string
	agents []*nsAgent
}

// fiftyDir is where a benchmark process keeps its files, in /dev/shm
// (the hosts' data directories and the agents' stores) and in the
// temporary directory (the dashboard's store, on the disk, and every
// TempDir: TMPDIR points there while it runs). Its pid ends the name:
// what a process that is gone left (one killed runs no cleanup) is
// removed at the next start, as fleettest removes its namespaces.
const fiftyDir = "iolab-fifty-"

// newFiftyFleet makes n namespace hosts, starts the dashboard on the
// first one's gateway (every other host routed to it, fleettest.Reach),
// issues each host an agent token and starts its agent, and waits until
// all n have said hello from a hostname of their own.
func newFiftyFleet(b *testing.B, n int) *fiftyFleet {
	b.Helper()
	// Other work on the machine slows the dashboard as much as the agents.
	b.Logf("the machine's load average before the hosts: %s", loadAvg())
	var shm, tmp string
	for _, dir := range []*string{&shm, &tmp} {
		parent := "/dev/shm"
		if dir == &tmp {
			parent = os.TempDir()
		}
		reapFifty(parent)
		*dir = filepath.Join(parent, fiftyDir+strconv.Itoa(os.Getpid()))
		if err := os.Mkdir(*dir, 0o700); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(*dir) })
	}
	b.Setenv("TMPDIR", tmp)

	made := time.Now()
	hosts := make([]*fleettest.Host, n)
	names := make([]string, n)
	for i := range hosts {
		names[i] = fmt.Sprintf("fifty-%02d", i+1)
		h := fleettest.NewHost(b, names[i])
		// Each host's data directory in /dev/shm: fifty agents' I/O stays
		// off the disk the dashboard's store is on.
		h.Data = filepath.Join(shm, names[i])
		if err := os.Mkdir(h.Data, 0o700); err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			if err := h.Reach(hosts[0].Gateway); err != nil {
				b.Fatal(err)
			}
		}
		hosts[i] = h
	}
	b.Logf("%d namespace hosts made in %v", n, time.Since(made).Round(time.Millisecond))

	f := &fiftyFleet{names: names, hc: &http.Client{Timeout: 30 * time.Second}}
	f.startServe(b, hosts[0])
	for i, h := range hosts {
		// Device locks are per machine: each host its own, or the fifty
		// files on one tmpfs would take turns (TryLockDevice).
		a := &nsAgent{host: h, dashboard: f.base, db: filepath.Join(shm, names[i]+".db"),
			env: []string{"IOLAB_LOCK_DIR=" + filepath.Join(shm, names[i]+".locks")}}
		a.id, a.token = addAgentHost(b, f.caller(b), names[i])
		a.launch(b)
		f.agents = append(f.agents, a)
	}
	b.Cleanup(f.stopAgents) // all at once, before each waits for its own
	waitHellos(b, f.caller(b), made, 2*time.Minute, f.agents...)
	b.Logf("%d agents connected %v after the first host was made", n, time.Since(made).Round(time.Millisecond))
	return f
}

// reapFifty removes the directories in parent of benchmark processes
// that are gone.
func reapFifty(parent string) {
	prefix := filepath.Join(parent, fiftyDir)
	old, _ := filepath.Glob(prefix + "*")
	for _, dir := range old {
		pid, err := strconv.Atoi(strings.TrimPrefix(dir, prefix))
		if err != nil {
			continue
		}
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			os.RemoveAll(dir)
		}
	}
}

// startServe starts `iolab serve` (this test binary as iolab) with a token
// on a free port of first's gateway, its store on this machine's disk,
// and reads its request log.
func (f *fiftyFleet) startServe(b *testing.B, first *fleettest.Host) {
	b.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(first.Gateway.String(), "0"))
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tok := make([]byte, 16)
	rand.Read(tok)
	f.token = hex.EncodeToString(tok)
	dir := b.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		b.Fatal(err)
	}
	args := []string{"serve", "--listen", addr, "--token", f.token, "--db", filepath.Join(dir, "dash.db"), "--data-dir", data}
	if *fiftyPprof != "" {
		args = append(args, "--pprof", *fiftyPprof)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	f.serve, f.base = cmd, "http://"+addr
	var logTo io.Reader = stderr
	if *fiftyLog != "" {
		file, err := os.Create(*fiftyLog)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { file.Close() })
		logTo = io.TeeReader(stderr, file)
	}
	f.log = readRequestLog(logTo)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	b.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if b.Failed() {
			b.Logf("iolab serve's warnings and errors:\n%s", f.log.problems())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := f.hc.Get(f.base + "/api/hosts")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			b.Fatalf("iolab serve exited: %s\n%s", out.String(), f.log.problems())
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("iolab serve not answering on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call sends a request with the dashboard's token and decodes a JSON
// answer into out; it returns the status.
func (f *fiftyFleet) call(b *testing.B, method, path string, body, out any) int {
	b.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, f.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := f.hc.Do(req)
	if err != nil {
		b.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			b.Fatalf("%s %s: %v: %.200s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

func (f *fiftyFleet) get(b *testing.B, path string, out any) { f.call(b, "GET", path, nil, out) }

// caller is f.call as the fleet tests' helpers call a dashboard.
func (f *fiftyFleet) caller(b *testing.B) dashCall {
	return func(method, path string, body, out any) (int, string) { return f.call(b, method, path, body, out), "" }
}

// stopAgents stops every agent at once (each Stop waits for its own).
func (f *fiftyFleet) stopAgents() {
	var wg sync.WaitGroup
	for _, a := range f.agents {
		wg.Go(func() { a.proc.Stop() })
	}
	wg.Wait()
}
