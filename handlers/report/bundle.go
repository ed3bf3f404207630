package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
// run-ID-steps.csv and the statistical diff as stat-diff.csv.
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
		if b.NoPNG != "" {
			continue
		}
		if err := screenshot(ctx, browser, svg, filepath.Join(dir, names[i]+".png")); err != nil {
			b.NoPNG = err.Error()
			continue
		}
		b.Files = append(b.Files, names[i]+".png")
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

// screenshotTimeout bounds one chart's PNG.
const screenshotTimeout = 60 * time.Second

// screenshot draws an SVG file to a PNG at twice its size in headless
// chromium, with a profile of its own, offline (a proxy nobody listens
// on: nothing is fetched).
func screenshot(ctx context.Context, browser, svg, png string) error {
	ctx, cancel := context.WithTimeout(ctx, screenshotTimeout)
	defer cancel()
	profile, err := os.MkdirTemp("", "iolab-report-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	abs, err := filepath.Abs(svg)
	if err != nil {
		return err
	}
	out, err := filepath.Abs(png)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir="+profile, "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		fmt.Sprintf("--window-size=%d,%d", ChartWidth, ChartHeight), "--force-device-scale-factor=2",
		"--default-background-color=ffffffff", "--screenshot="+out, "file://"+abs)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium screenshot of %s: %v: %s", filepath.Base(svg), err, lastLine(msg))
	}
	if _, err := os.Stat(out); err != nil {
		return fmt.Errorf("chromium wrote no %s", filepath.Base(png))
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
