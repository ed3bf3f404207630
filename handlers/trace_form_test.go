package handlers

import (
	"html"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"iolab/db"
)

// TestTraceBlockFromTheForm: the form's "trace the block layer" box and
// the API's trace_block ask for the trace outright, so a file target on
// tmpfs (no block device to trace) is refused before anything runs,
// saying why, with the box still ticked on the form shown again.
func TestTraceBlockFromTheForm(t *testing.T) {
	// The data directory on a tmpfs of its own (let go lazily: the run
	// started last may still hold its file as the server shuts down).
	tmpfs := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", tmpfs).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", tmpfs).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", tmpfs, err, out)
		}
	})
	ts := newTestServer(t, Config{DataDir: tmpfs})
	form := url.Values{"target": {"tb.dat"}, "size": {"1m"}, "rw": {"randread"}, "bs": {"4k"}, "runtime": {"1"},
		"iodepth": {"1"}, "ioengine": {"psync"}, "repeat": {"1"}, "trace_block": {"on"}}
	rec := ts.do(t, http.MethodPost, "/runs", form.Encode())
	body := html.UnescapeString(rec.Body.String())
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, "trace-block") || !strings.Contains(body, "tb.dat") {
		t.Fatalf("form with trace_block on a file: %d, want 400 saying why\n%s", rec.Code, body)
	}
	if !strings.Contains(body, `name="trace_block" checked`) {
		t.Errorf("the form shown again lost the trace box")
	}

	rec = ts.do(t, http.MethodPost, "/api/runs", `{"options": {"filename": "tb.dat", "size": "1m", "rw": "randread", "runtime": "1"}, "trace_block": true}`)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "trace-block") {
		t.Fatalf("API with trace_block on a file: %d %s, want 400", rec.Code, rec.Body)
	}

	// Without the box, the same plan runs (waited for: its data
	// directory is unmounted when the test ends).
	form.Del("trace_block")
	if rec = ts.do(t, http.MethodPost, "/runs", form.Encode()); rec.Code != http.StatusSeeOther {
		t.Fatalf("form without trace_block: %d %.1000s", rec.Code, rec.Body)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/runs/"), 10, 64)
	waitStatus(t, ts.store, id, db.StatusDone)
}
