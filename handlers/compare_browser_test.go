package handlers

import (
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserCompare: two runs on different kernels and IOMMU modes;
// tick both on the runs list, compare, see both runs' series in the
// whisker chart and the IOMMU warning, then open the page's URL in a
// fresh browser and see the same series.
func TestBrowserCompare(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	ha, hb := compareHosts()
	r1 := seedHostRun(t, ts.store, "kernel-a", ha, 1)
	r2 := seedHostRun(t, ts.store, "kernel-b", hb, 0.7)
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)

	ctx, cancel := browser(t, path)
	defer cancel()
	box := func(id int64) string { return `input[name=run][value="` + strconv.FormatInt(id, 10) + `"]` }
	err = chromedp.Do(ctx,
		chromedp.Navigate(hs.URL+"/runs"),
		chromedp.WaitVisible(`form#compare`),
		chromedp.Click(box(r1.ID)),
		chromedp.Click(box(r2.ID)),
		chromedp.Click(`form#compare button[type=submit]`),
		chromedp.WaitVisible(`#warnings`),
	)
	if err != nil {
		t.Fatal(err)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Poll[drawnChart](readIOPSChart, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	// Runs on different hosts and kernels are named by them, not by "run N".
	for _, want := range []string{"lab-a 6.12.0-a", "lab-b 6.1.0-b"} {
		if !slices.ContainsFunc(drawn.Names, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("whisker series %q lack one starting %q", drawn.Names, want)
		}
	}
	warnings, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("warnings").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warnings, "IOMMU mode") || !strings.Contains(warnings, "passthrough") || !strings.Contains(warnings, "translated") {
		t.Errorf("warnings lack the IOMMU one:\n%s", warnings)
	}
	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(url, "/compare?") {
		t.Fatalf("landed on %s, not the compare page", url)
	}
	screenshot(t, ctx, art, "compare.png", 100)

	// The URL is the view: a fresh browser shows the same series.
	ctx2, cancel2 := browser(t, path)
	defer cancel2()
	if err := chromedp.Do(ctx2, chromedp.Navigate(url), chromedp.WaitVisible(`#warnings`)); err != nil {
		t.Fatal(err)
	}
	again, err := chromedp.Run(ctx2, chromedp.Poll[drawnChart](readIOPSChart, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Names, drawn.Names) || !slices.Equal(again.Categories, drawn.Categories) {
		t.Errorf("fresh browser shows %q %q, the compare page %q %q", again.Names, again.Categories, drawn.Names, drawn.Categories)
	}
}
