package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"iolab/handlers/chart"
)

// BundleOptions say how WriteBundle draws the PNGs.
type BundleOptions struct {
	// Chromium is the headless browser that turns each SVG into a PNG at
	// twice its size; "" looks for chromium, chromium-browser and
	// google-chrome on PATH. Without one the bundle has SVGs only and its
	// README says so.
	Chromium string
}

// Bundle is what WriteBundle wrote, for the command to tell.
type Bundle struct {
	Files []string // relative to the directory
	// NoPNG says why the charts are SVG only; "" when every PNG was drawn.
	NoPNG string
}

// WriteBundle writes the report into dir (created if need be) for wikis
// and tickets: report.html (WriteHTML), README.md (the summary tables in
// Markdown, each chart as an image), each chart as NN-kind.svg,
// NN-kind.png (2×) and NN-kind.csv (what it plots), each run's steps as
// run-ID-steps.csv, a PTS run's tables as run-ID-pts-TABLE.csv, the
// statistical diff as stat-diff.csv and a group's fleet as fleet.csv.
func (r *Report) WriteBundle(ctx context.Context, dir string, opt BundleOptions) (*Bundle, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b := &Bundle{}
	write := func(name string, data []byte) error {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
		b.Files = append(b.Files, name)
		return nil
	}
	var html bytes.Buffer
	if err := r.WriteHTML(&html); err != nil {
		return nil, err
	}
	if err := write("report.html", html.Bytes()); err != nil {
		return nil, err
	}
	browser, err := findChromium(opt.Chromium)
	if err != nil {
		b.NoPNG = err.Error()
	}
	names := make([]string, len(r.Charts))
	var svgs, pngs []string // the charts to draw as PNGs
	for i := range r.Charts {
		c := &r.Charts[i]
		names[i] = fmt.Sprintf("%02d-%s", i+1, fileSafe(c.file))
		if c.chart != nil {
			var csv bytes.Buffer
			if err := chart.WriteCSV(&csv, c.chart); err != nil {
				return nil, err
			}
			if err := write(names[i]+".csv", csv.Bytes()); err != nil {
				return nil, err
			}
		}
		if c.Error != "" {
			continue
		}
		svg := filepath.Join(dir, names[i]+".svg")
		doc := append([]byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"), c.SVG...)
		if err := write(names[i]+".svg", doc); err != nil {
			return nil, err
		}
		if b.NoPNG == "" {
			svgs = append(svgs, svg)
			pngs = append(pngs, names[i]+".png")
		}
	}
	if b.NoPNG == "" && len(svgs) > 0 {
		if err := drawPNGs(ctx, browser, svgs, dir, pngs); err != nil {
			b.NoPNG = err.Error()
		} else {
			b.Files = append(b.Files, pngs...)
		}
	}
	if r.fleet != nil {
		csv, err := r.fleetCSV()
		if err != nil {
			return nil, err
		}
		if err := write("fleet.csv", csv); err != nil {
			return nil, err
		}
	}
	for _, run := range r.Runs {
		var csv bytes.Buffer
		traced := Traced(run.steps)
		w := chart.NewCSVWriter(&csv, StepsColumns(run.Lat, traced))
		if err := w.Header(); err != nil {
			return nil, err
		}
		for k := range run.steps {
			for _, row := range SummaryTableRows(&run.steps[k], run.Lat, traced) {
				if err := w.Row(row); err != nil {
					return nil, err
				}
			}
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
		if err := write(fmt.Sprintf("run-%d-steps.csv", run.Run.ID), csv.Bytes()); err != nil {
			return nil, err
		}
		if run.PTS == nil {
			continue
		}
		for _, t := range run.PTS.Tables {
			var csv bytes.Buffer
			if err := chart.WriteCSV(&csv, &chart.Chart{Columns: t.Head, Rows: t.Rows}); err != nil {
				return nil, err
			}
			if err := write(ptsTableFile(run.Run.ID, t.ID), csv.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	if len(r.diffs) > 0 {
		var csv bytes.Buffer
		if err := chart.WriteCSV(&csv, StatDiffCSV(r.diffs)); err != nil {
			return nil, err
		}
		if err := write("stat-diff.csv", csv.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := write("README.md", []byte(r.Markdown(names, b.NoPNG == ""))); err != nil {
		return nil, err
	}
	return b, nil
}

// fileSafe keeps letters, digits, '-', '_' and '.' of a name.
func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, s)
	if len(s) > 80 {
		s = s[:80]
	}
	return strings.Trim(s, ".-")
}

// findChromium finds the browser that draws the PNGs.
func findChromium(name string) (string, error) {
	if name != "" {
		return exec.LookPath(name)
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH to draw the PNGs: the charts are in the SVG files")
}

// screenshotTimeout bounds one chromium's drawing of a batch of charts.
const screenshotTimeout = 90 * time.Second

// pngBatch is how many charts one chromium draws: stacked on one page at
// twice their size, 8 make a screenshot 7,680 pixels tall.
const pngBatch = 8

// drawPNGs draws each SVG file to the PNG of the same index (names in
// dir) at twice its size in headless chromium: a browser for each batch
// of charts, whose screenshot is cut into the charts' images. A browser
// a chart took a second or two of start-up each.
func drawPNGs(ctx context.Context, browser string, svgs []string, dir string, pngs []string) error {
	for start := 0; start < len(svgs); start += pngBatch {
		end := min(start+pngBatch, len(svgs))
		if err := drawBatch(ctx, browser, svgs[start:end], dir, pngs[start:end]); err != nil {
			return err
		}
	}
	return nil
}

// drawBatch draws the charts of one page: each SVG as an image of
// ChartWidth × ChartHeight, one under the other, with a profile of its
// own, offline (a proxy nobody listens on: nothing is fetched).
func drawBatch(ctx context.Context, browser string, svgs []string, dir string, pngs []string) error {
	ctx, cancel := context.WithTimeout(ctx, screenshotTimeout)
	defer cancel()
	profile, err := os.MkdirTemp("", "iolab-report-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	var page strings.Builder
	page.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0;background:#fff}img{display:block;border:0}</style></head><body>`)
	for _, svg := range svgs {
		abs, err := filepath.Abs(svg)
		if err != nil {
			return err
		}
		u := url.URL{Scheme: "file", Path: abs}
		fmt.Fprintf(&page, `<img src="%s" width="%d" height="%d" alt="">`, html.EscapeString(u.String()), ChartWidth, ChartHeight)
	}
	page.WriteString(`</body></html>`)
	pagePath := filepath.Join(profile, "charts.html")
	if err := os.WriteFile(pagePath, []byte(page.String()), 0o600); err != nil {
		return err
	}
	shot := filepath.Join(profile, "charts.png")
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir="+profile, "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		fmt.Sprintf("--window-size=%d,%d", ChartWidth, ChartHeight*len(svgs)), "--force-device-scale-factor=2",
		"--default-background-color=ffffffff", "--screenshot="+shot, "file://"+pagePath)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium screenshot of %s: %v: %s", filepath.Base(svgs[0]), err, lastLine(msg))
	}
	f, err := os.Open(shot)
	if err != nil {
		return fmt.Errorf("chromium wrote no screenshot of %s", filepath.Base(svgs[0]))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("chromium's screenshot of %s: %w", filepath.Base(svgs[0]), err)
	}
	w, h := 2*ChartWidth, 2*ChartHeight
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h*len(svgs) {
		return fmt.Errorf("chromium's screenshot of %d charts is %d×%d pixels, want %d×%d", len(svgs), b.Dx(), b.Dy(), w, h*len(svgs))
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return fmt.Errorf("chromium's screenshot is a %T, which cannot be cut", img)
	}
	for i := range svgs {
		y := img.Bounds().Min.Y + i*h
		var out bytes.Buffer
		if err := png.Encode(&out, sub.SubImage(image.Rect(img.Bounds().Min.X, y, img.Bounds().Min.X+w, y+h))); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, pngs[i]), out.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
