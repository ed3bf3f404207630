package cli

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startServeArgs starts `iolab serve --listen 127.0.0.1:0` with args over
// a new store and returns its base URL and the lines it printed up to the
// one that says what protects it.
func startServeArgs(t *testing.T, env []string, args ...string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "iolab.db")}, args...)...)
	cmd.Env = append(append(os.Environ(), "IOLAB_TEST_MAIN=1", "IOLAB_TOKEN="), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	type started struct {
		base  string
		lines []string
	}
	ready := make(chan started, 1)
	go func() {
		var s started
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines = append(s.lines, sc.Text())
			if m := regexp.MustCompile(`on (http://[^/ ]+)/`).FindStringSubmatch(sc.Text()); m != nil {
				s.base = m[1]
			} else if s.base != "" {
				ready <- s
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case s := <-ready:
		return s.base, s.lines
	case <-time.After(10 * time.Second):
		t.Fatal("iolab serve did not start listening")
	}
	return "", nil
}

// TestServeTokenOnLoopback: a token given, or generated, is enforced on a
// loopback address too (issue 23, item 6: --token and --read-token were
// dropped there, and a request without a token launched a run and minted
// an agent token); only --no-token opens it, and the start says so.
func TestServeTokenOnLoopback(t *testing.T) {
	const plan = `{"options":{"filename":"x.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"1s","time_based":1}}`
	const agentHost = `{"kind":"iolab-agent","name":"a1"}`
	type request struct {
		method, path, body, token string
		status                    int
	}
	generated := regexp.MustCompile(`need this token: ([0-9a-f]{32}) `)
	for _, tc := range []struct {
		name     string
		env      []string
		args     []string
		says     string // in the access line
		token    string // "" : the one printed
		requests []request
	}{
		{name: "token given", args: []string{"--token", "s3cret", "--read-token"}, says: "need the token given", token: "s3cret",
			requests: []request{
				{"GET", "/api/runs", "", "", 401},
				{"POST", "/api/runs", plan, "", 401},
				{"POST", "/api/hosts", agentHost, "", 401},
				{"POST", "/api/runs", plan, "wrong", 401},
				{"GET", "/api/runs", "", "s3cret", 200},
				{"POST", "/api/hosts", agentHost, "s3cret", 201},
			}},
		{name: "from $IOLAB_TOKEN", env: []string{"IOLAB_TOKEN=env-s3cret"}, says: "need the token given", token: "env-s3cret",
			requests: []request{
				{"POST", "/api/runs", plan, "", 401},
				{"POST", "/api/hosts", agentHost, "TOKEN", 201},
			}},
		{name: "generated", says: "need this token: ",
			requests: []request{
				{"GET", "/api/runs", "", "", 200},
				{"POST", "/api/runs", plan, "", 401},
				{"POST", "/api/hosts", agentHost, "", 401},
				{"DELETE", "/api/runs/1", "", "", 401},
				{"POST", "/api/hosts", agentHost, "TOKEN", 201},
			}},
		{name: "no token", env: []string{"IOLAB_TOKEN=ignored"}, args: []string{"--no-token"}, says: "anyone on this machine can launch",
			requests: []request{
				{"POST", "/api/hosts", agentHost, "", 201},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, lines := startServeArgs(t, tc.env, tc.args...)
			access := lines[len(lines)-1]
			if !strings.Contains(access, tc.says) {
				t.Fatalf("serve printed %q; want it to say %q", lines, tc.says)
			}
			token := tc.token
			if m := generated.FindStringSubmatch(access); m != nil {
				token = m[1]
			}
			for _, r := range tc.requests {
				req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
				req.Header.Set("Content-Type", "application/json")
				if r.token == "TOKEN" {
					r.token = token
				}
				if r.token != "" {
					req.Header.Set("Authorization", "Bearer "+r.token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != r.status {
					t.Errorf("%s %s (token %q): %d %s; want %d", r.method, r.path, r.token, resp.StatusCode, b, r.status)
				}
			}
		})
	}
}

// TestServeNoTokenRefused: --no-token only on loopback, and never with a
// token.
func TestServeNoTokenRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-token", "--listen", "0.0.0.0:0"}, "needs a token"},
		{[]string{"--no-token", "--token", "x"}, "give one of them"},
		{[]string{"--no-token", "--read-token"}, "--read-token"},
	} {
		cmd := exec.Command(os.Args[0], append([]string{"serve", "--db", filepath.Join(t.TempDir(), "iolab.db")}, tc.args...)...)
		cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("serve %q: %v, %s; want a refusal that says %q", tc.args, err, out, tc.want)
		}
	}
}
