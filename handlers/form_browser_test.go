package handlers

import (
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"iolab/bench/sweep"
	"iolab/db"
)

// TestBrowserFormRange types a range the CLI takes (iodepth 1..128) into
// the new-run form in headless chromium and submits: the run starts,
// with no error shown, and its plan sweeps the powers of two. Then a plan
// with a step the target cannot run: the error shows under the checkbox
// that leaves such steps out, naming it as the page labels it.
func TestBrowserFormRange(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path)
	defer cancel()

	fill := func(fields map[string]string) {
		t.Helper()
		acts := []chromedp.Action[chromedp.Void]{chromedp.Navigate(hs.URL + "/runs/new"), chromedp.WaitVisible(`form#new-run`)}
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			acts = append(acts, chromedp.SetValue(`[name=`+k+`]`, fields[k]))
		}
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatal(err)
		}
	}
	fill(map[string]string{"target": "range.dat", "size": "1m", "runtime": "100ms", "iodepth": "1..128", "ioengine": "null"})
	if err := chromedp.Do(ctx, chromedp.Click(`form#new-run button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	if err := waitVisibleAcrossReloads(ctx, `#run-status`); err != nil {
		t.Fatal(err)
	}
	runURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseInt(runURL[strings.LastIndex(runURL, "/")+1:], 10, 64)
	if err != nil {
		t.Fatalf("landed on %s, not a run page", runURL)
	}
	run := waitStatus(t, ts.store, id, db.StatusDone)
	want := sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32", "64", "128"}}
	if len(run.Plan.Sweeps) != 1 || run.Plan.Sweeps[0].Axis != want.Axis || !slices.Equal(run.Plan.Sweeps[0].Values, want.Values) {
		t.Errorf("the plan sweeps %+v, want %+v", run.Plan.Sweeps, want)
	}

	// psync at iodepth 4 measures iodepth 1: the check refuses the step.
	if err := os.WriteFile(filepath.Join(ts.dataDir, "there.dat"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	fill(map[string]string{"target": "there.dat", "runtime": "1", "iodepth": "1,4", "ioengine": "psync"})
	if err := chromedp.Do(ctx, chromedp.Click(`form#new-run button[type=submit]`), chromedp.WaitVisible(`p.field-error`)); err != nil {
		t.Fatal(err)
	}
	type errorShown struct {
		Field, Text, Label string
		Top, Beside        bool
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[errorShown](`(() => {
  const e = document.querySelector("p.field-error");
  const box = document.querySelector('input[name="skip_impossible"]').closest("label");
  return {field: e.dataset.field, text: e.textContent, label: box.textContent.trim(),
    top: !!document.getElementById("form-error"), beside: e.previousElementSibling === box};
})()`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, art, "new-run-refused.png", 100)
	if shown.Field != "plan" || shown.Top || !shown.Beside {
		t.Errorf("the error is at %q (above the form: %v), want beside the checkbox", shown.Field, shown.Top)
	}
	if name, _, _ := strings.Cut(shown.Label, " ("); !strings.Contains(shown.Text, `"`+name+`"`) || strings.Contains(shown.Text, "--") {
		t.Errorf("%q does not name the checkbox %q in the form's words", shown.Text, name)
	}
}
