package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadAvg is /proc/loadavg's 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func keys[K cmp.Ordered](m map[K]bool) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// procCPU is a process's user and system time, all its threads
// (proc(5): /proc/PID/stat fields 14 and 15, utime and stime, in clock
// ticks of sysconf(_SC_CLK_TCK), 100 on Linux); 0 when unreadable.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command's name (field 2) may hold spaces: count from its ')'.
	rest := data[bytes.LastIndexByte(data, ')')+1:]
	fields := strings.Fields(string(rest)) // fields 3 on
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100)
}

// requestLog reads `iolab serve`'s log (slog's text lines on stderr): it
// counts the agents' requests (/api/agent/…) by route and those that did
// not succeed, and keeps the warnings and errors.
type requestLog struct {
	mu     sync.Mutex
	agent  int64
	failed int64
	routes map[string]int64
	took   map[string][]time.Duration // the answered requests' times, by method and route
	warn   []string
}

var (
	logPath   = regexp.MustCompile(` path=(\S+)`)
	logStatus = regexp.MustCompile(` status=(\d+)`)
	logMethod = regexp.MustCompile(` method=(\S+)`)
	logDur    = regexp.MustCompile(` dur=(\S+)`)
	logRunID  = regexp.MustCompile(`/\d+(/|$)`)
)

func readRequestLog(r io.Reader) *requestLog {
	l := &requestLog{routes: map[string]int64{}, took: map[string][]time.Duration{}}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			l.mu.Lock()
			if strings.Contains(line, " level=WARN ") || strings.Contains(line, " level=ERROR ") {
				if len(l.warn) < 200 {
					l.warn = append(l.warn, line)
				}
			}
			if p := logPath.FindStringSubmatch(line); p != nil && strings.Contains(line, " msg=request ") && strings.HasPrefix(p[1], "/api/agent/") {
				l.agent++
				route := logRunID.ReplaceAllString(p[1], "/ID$1")
				l.routes[route]++
				s := logStatus.FindStringSubmatch(line)
				if m, d := logMethod.FindStringSubmatch(line), logDur.FindStringSubmatch(line); s != nil && s[1][0] == '2' && m != nil && d != nil {
					if took, err := time.ParseDuration(d[1]); err == nil {
						l.took[m[1]+" "+route] = append(l.took[m[1]+" "+route], took)
					}
				}
				if s == nil || s[1][0] != '2' {
					l.failed++
					if len(l.warn) < 200 {
						l.warn = append(l.warn, line)
					}
				}
			}
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *requestLog) agentRequests() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.agent
}

func (l *requestLog) agentFailures() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// quantile is the q quantile of the times of the answered requests to
// route ("PUT /api/agent/runs/ID/steps/ID") since the log's start.
func (l *requestLog) quantile(route string, q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := slices.Clone(l.took[route])
	if len(ts) == 0 {
		return 0
	}
	slices.Sort(ts)
	return ts[min(len(ts)-1, int(q*float64(len(ts))))]
}

func (l *requestLog) byRoute() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for r, n := range l.routes {
		parts = append(parts, fmt.Sprintf("%s %d", r, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func (l *requestLog) problems() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.warn, "\n")
}
