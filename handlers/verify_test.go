package handlers

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"iolab/db"
)

// TestVerifyFailureOnRunPage: a web run writes a file with verify=crc32c
// and reads it back, its run page saying so with what the check cost
// (apart from the measured writes, and in the steps CSV too); the file is
// changed, and a verify_only run fails; its run page says which step
// failed and why: the block's offset and the expected and received
// checksums.
func TestVerifyFailureOnRunPage(t *testing.T) {
	ts := newTestServer(t, Config{})
	opts := `"filename":"v.dat","size":"1m","rw":"randwrite","bs":"4k","ioengine":"io_uring","iodepth":"4","verify":"crc32c","verify_state_save":"0"`
	w := launchRun(t, ts, `{"name":"write","options":{`+opts+`}}`)
	waitStatus(t, ts.store, w, db.StatusDone)
	path := filepath.Join(ts.dataDir, "v.dat")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xde, 0xad}, 5*4096+700); err != nil {
		t.Fatal(err)
	}
	f.Close()
	v := launchRun(t, ts, `{"name":"check","options":{`+opts+`,"verify_only":"1"}}`)
	run := waitStatus(t, ts.store, v, db.StatusFailed)
	if !strings.Contains(run.Error, "crc32c: verify failed") {
		t.Fatalf("the run failed with %q", run.Error)
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/runs/%d", v), "")
	body := rec.Body.String()
	re := regexp.MustCompile(`step 1 failed: job check: crc32c: verify failed at file \S*v\.dat offset 20480, length 4096 .*expected checksum [0-9a-f]{8}, received [0-9a-f]{8}`)
	if rec.Code != 200 || !re.MatchString(body) {
		t.Errorf("the run page (%d) does not show the failed step with its block:\n%s", rec.Code, body)
	}
	// The passing write run shows no error, and what its verify read.
	body = ts.do(t, "GET", fmt.Sprintf("/runs/%d", w), "").Body.String()
	if strings.Contains(body, "verify failed") {
		t.Error("the clean run's page shows a verify failure")
	}
	checked := regexp.MustCompile(`verify crc32c: 256 blocks \(1\.00MiB\) read back intact in [0-9.]+[µm]?s \([0-9.]+[KMG]iB/s\)`)
	if !checked.MatchString(body) {
		t.Errorf("the clean run's page does not say what its verify read:\n%s", body)
	}
	csv := ts.do(t, "GET", fmt.Sprintf("/runs/%d/steps.csv", w), "").Body.String()
	if !checked.MatchString(csv) {
		t.Errorf("steps.csv does not say what the verify read:\n%s", csv)
	}
}

// TestVerifyStateInDataDir: a web run's verify state goes to the data
// directory, not wherever the server was started, and a later web run's
// verify_state_load reads it there.
func TestVerifyStateInDataDir(t *testing.T) {
	ts := newTestServer(t, Config{})
	wd, _ := os.Getwd()
	opts := `"filename":"s.dat","size":"256k","rw":"write","bs":"4k","ioengine":"psync","verify":"crc32c"`
	w := launchRun(t, ts, `{"name":"stated","options":{`+opts+`}}`)
	waitStatus(t, ts.store, w, db.StatusDone)
	if _, err := os.Stat(filepath.Join(ts.dataDir, "local-stated-0-verify.state")); err != nil {
		t.Errorf("no verify state in the data directory: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(wd, "local-*-verify.state")); len(m) > 0 {
		t.Errorf("a web run wrote %v in the server's working directory", m)
	}
	v := launchRun(t, ts, `{"name":"stated","options":{`+opts+`,"verify_only":"1","verify_state_load":"1"}}`)
	if run := waitStatus(t, ts.store, v, db.StatusDone); run.Error != "" {
		t.Errorf("verify_only with the state: %s", run.Error)
	}
}
