package handlers

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"iolab/db"
)

// TestBrowserPrune: the admin logs in, asks for a dry run on the prune
// page, sees the runs that would go and the running one kept with why,
// confirms in the dialog, and the page shows what was deleted and the
// file's size before and after; no script breaks the page's policy.
func TestBrowserPrune(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	const token = "browser-prune-token"
	ts := newTestServer(t, Config{Token: token})
	var seeded []int64
	for _, name := range []string{"nightly-1", "nightly-2", "nightly-3", "nightly-4"} {
		r, _ := seedRun(t, ts.store, name, []string{"1", "4", "16"}, 2)
		seeded = append(seeded, r.ID)
	}
	running := &db.Run{Name: "still going", Status: db.StatusRunning}
	first := mustGetRun(t, ts.store, seeded[0])
	running.Plan, running.Host = first.Plan, first.Host
	if _, err := ts.store.CreateRun(context.Background(), running); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)

	ctx, cancel := browser(t, path)
	defer cancel()
	// The confirm's dialog: say what it asks, and accept it.
	asked := make(chan string, 1)
	go func() {
		for e, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			asked <- e.Message
			go chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
				return err
			}))
		}
	}()
	err = chromedp.Do(ctx,
		chromedp.Navigate(hs.URL+"/prune?keep=1"),
		chromedp.WaitVisible(`input[name=token]`),
		chromedp.SetValue(`input[name=token]`, token),
		chromedp.Submit(`input[name=token]`),
		chromedp.WaitVisible(`#dry-run`),
	)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if u, _ := url.Parse(loc); u == nil || u.Path != "/prune" || u.Query().Get("keep") != "1" {
		t.Errorf("the login went to %s, not back to the dry run", loc)
	}
	dry, err := chromedp.Run(ctx, chromedp.Text(`#dry-run`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Dry run: 3 runs would go", "nightly-1", "nightly-3", "still going", "it is running", "kept by keep 1"} {
		if !strings.Contains(dry, want) {
			t.Errorf("the dry run says no %q:\n%s", want, dry)
		}
	}
	screenshot(t, ctx, art, "prune-dry-run.png", 100)

	err = chromedp.Do(ctx, chromedp.Click(`#prune-confirm button[type=submit]`), chromedp.WaitVisible(`#last-prune`))
	if err != nil {
		t.Fatal(err)
	}
	if q := <-asked; !strings.Contains(q, "Delete these 3 runs") {
		t.Errorf("the confirm asked %q", q)
	}
	j := waitPrune(t, ts)
	if j.Result == nil || len(j.Result.Deleted) != 3 {
		t.Fatalf("the prune: %+v", j)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(`#last-prune`)); err != nil {
		t.Fatal(err)
	}
	last, err := chromedp.Run(ctx, chromedp.Text(`#last-prune`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Last prune", "Deleted 3 runs", "Store on disk (file and write-ahead log): "} {
		if !strings.Contains(last, want) {
			t.Errorf("after the prune the page says no %q:\n%s", want, last)
		}
	}
	screenshot(t, ctx, art, "prune-done.png", 100)
	if got := runIDs(t, ts.store); len(got) != 2 {
		t.Errorf("%d runs left, want the newest done and the running one", len(got))
	}
}
