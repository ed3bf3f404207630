package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/units"
)

// Calibration compares iolab's engine with fio on the same job: both run
// the same options, alternating, and per direction the medians over the
// rounds are set side by side as a ratio.
type Calibration struct {
	Args       []string         `json:"args"`
	Rounds     int              `json:"rounds"`
	FioVersion string           `json:"fio_version"`
	Directions []CalibrationDir `json:"directions"`
}

// CalibrationDir is one direction's comparison.
type CalibrationDir struct {
	Direction string `json:"direction"`
	Fio       Side   `json:"fio"`
	Iolab     Side   `json:"iolab"`
	// Ratios are iolab / fio.
	IOPSRatio    float64 `json:"iops_ratio"`
	ClatP50Ratio float64 `json:"clat_p50_ratio"`
	ClatP99Ratio float64 `json:"clat_p99_ratio"`
	LatMeanRatio float64 `json:"lat_mean_ratio"`
}

// Side is one tool's medians over the rounds, and each round's figures.
type Side struct {
	IOPS      float64 `json:"iops"`
	ClatP50NS uint64  `json:"clat_p50_ns"`
	ClatP99NS uint64  `json:"clat_p99_ns"`
	// LatMeanNS is slat+clat: where a tool splits submission from
	// completion differs (fio's libaio reaps with io_getevents, iolab from
	// the user-space ring), the total does not.
	LatMeanNS  float64   `json:"lat_mean_ns"`
	RoundsIOPS []float64 `json:"rounds_iops"`
	RoundsP50  []uint64  `json:"rounds_clat_p50_ns"`
	RoundsP99  []uint64  `json:"rounds_clat_p99_ns"`
	RoundsLat  []float64 `json:"rounds_lat_mean_ns"`
}

// ErrNoFio is returned by Calibrate when fio is not installed.
var ErrNoFio = errors.New("fio is not installed: calibrate runs fio beside iolab; install it (Debian/Ubuntu: apt-get install -y fio; Fedora: dnf install fio) and run again")

// Calibrate runs fio (found on PATH as fioPath) and iolab with the fio
// options in args, alternately, rounds times each.
func Calibrate(ctx context.Context, rn *bench.Runner, fioPath string, args []string, rounds int, progress io.Writer) (*Calibration, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("calibrate: --rounds must be at least 1")
	}
	cfg, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	if cfg.StatusInterval > 0 {
		return nil, fmt.Errorf("calibrate: the job options ask for --status-interval, but calibrate writes its own comparison once the rounds end: drop it")
	}
	if cfg.Output != "" || cfg.OutputFormat != "" && cfg.OutputFormat != "normal" {
		asked := "--output=" + cfg.Output
		if cfg.Output == "" {
			asked = "--output-format=" + cfg.OutputFormat + " (or fio's --minimal)"
		}
		return nil, fmt.Errorf("calibrate: the job options ask for %s, but calibrate writes its own comparison: drop it, and use calibrate's own --output-format=json for JSON", asked)
	}
	path, err := exec.LookPath(fioPath)
	if err != nil {
		return nil, ErrNoFio
	}
	version, _ := exec.CommandContext(ctx, path, "--version").Output()
	cal := &Calibration{Args: args, Rounds: rounds, FioVersion: strings.TrimSpace(string(version))}

	var fioReps, iolabReps []Report
	runFio := func(round int) error {
		fmt.Fprintf(progress, "round %d/%d: fio\n", round, rounds)
		fioArgs := append(append([]string(nil), args...), "--output-format=json+")
		cmd := exec.CommandContext(ctx, path, fioArgs...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("calibrate: fio %s: %w: %s", strings.Join(fioArgs, " "), err, strings.TrimSpace(stderr.String()))
		}
		reps, err := ParseReports(&stdout)
		if err != nil {
			return fmt.Errorf("calibrate: reading fio's output: %w", err)
		}
		fioReps = append(fioReps, reps[len(reps)-1])
		return nil
	}
	runIolab := func(round int) error {
		fmt.Fprintf(progress, "round %d/%d: iolab\n", round, rounds)
		cfg, err := ParseArgs(args)
		if err != nil {
			return err
		}
		res, err := rn.Run(ctx, cfg)
		if err != nil {
			return fmt.Errorf("calibrate: iolab: %w", err)
		}
		iolabReps = append(iolabReps, NewReport(res, cfg, true))
		return nil
	}
	for round := 1; round <= rounds; round++ {
		for _, runTool := range inTurn(round, runFio, runIolab) {
			if err := runTool(round); err != nil {
				return nil, err
			}
		}
	}
	for d, name := range []string{"read", "write"} {
		f, okF, err := side(fioReps, d)
		if err != nil {
			return nil, fmt.Errorf("calibrate: fio: %w", err)
		}
		i, okI, err := side(iolabReps, d)
		if err != nil {
			return nil, fmt.Errorf("calibrate: iolab: %w", err)
		}
		if !okF && !okI {
			continue
		}
		cal.Directions = append(cal.Directions, CalibrationDir{
			Direction: name, Fio: f, Iolab: i,
			IOPSRatio:    ratio(i.IOPS, f.IOPS),
			ClatP50Ratio: ratio(float64(i.ClatP50NS), float64(f.ClatP50NS)),
			ClatP99Ratio: ratio(float64(i.ClatP99NS), float64(f.ClatP99NS)),
			LatMeanRatio: ratio(i.LatMeanNS, f.LatMeanNS),
		})
	}
	return cal, nil
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// side sums IOPS over the jobs of each report and merges their clat
// histograms (json+ bins), so p50/p99 follow fio's rule over all jobs.
func side(reps []Report, d int) (Side, bool, error) {
	var s Side
	any := false
	for _, rep := range reps {
		var iops, latSum float64
		var latN uint64
		var h hist.Histogram
		for _, j := range rep.Jobs {
			dr := j.Read
			if d == bench.Write {
				dr = j.Write
			}
			if dr.TotalIOs == 0 {
				continue
			}
			any = true
			iops += dr.IOPS
			latSum += dr.Lat.Mean * float64(dr.Lat.N)
			latN += dr.Lat.N
			jh, err := dr.Clat.Histogram()
			if err != nil {
				return s, false, err
			}
			h.Merge(&jh)
		}
		p := h.Percentiles([]float64{50, 99})
		s.RoundsIOPS = append(s.RoundsIOPS, iops)
		s.RoundsP50 = append(s.RoundsP50, p[0])
		s.RoundsP99 = append(s.RoundsP99, p[1])
		s.RoundsLat = append(s.RoundsLat, latSum/float64(max(latN, 1)))
	}
	s.LatMeanNS = stats.Median(s.RoundsLat)
	s.IOPS = stats.Median(s.RoundsIOPS)
	s.ClatP50NS = stats.Median(s.RoundsP50)
	s.ClatP99NS = stats.Median(s.RoundsP99)
	return s, any, nil
}

// WriteText prints the comparison as a table.
func (c *Calibration) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "calibrate: %s vs %s, %d rounds, medians\n", c.FioVersion, Version, c.Rounds)
	fmt.Fprintf(&b, "  %s\n", strings.Join(c.Args, " "))
	fmt.Fprintf(&b, "%-6s %-9s %12s %12s %9s\n", "dir", "metric", "fio", "iolab", "iolab/fio")
	for _, d := range c.Directions {
		fmt.Fprintf(&b, "%-6s %-9s %12s %12s %9.3f\n", d.Direction, "IOPS", units.Count(d.Fio.IOPS), units.Count(d.Iolab.IOPS), d.IOPSRatio)
		fmt.Fprintf(&b, "%-6s %-9s %12s %12s %9.3f\n", d.Direction, "clat p50", fmtNS(d.Fio.ClatP50NS), fmtNS(d.Iolab.ClatP50NS), d.ClatP50Ratio)
		fmt.Fprintf(&b, "%-6s %-9s %12s %12s %9.3f\n", d.Direction, "clat p99", fmtNS(d.Fio.ClatP99NS), fmtNS(d.Iolab.ClatP99NS), d.ClatP99Ratio)
		fmt.Fprintf(&b, "%-6s %-9s %12s %12s %9.3f\n", d.Direction, "lat mean", fmtNS(uint64(d.Fio.LatMeanNS)), fmtNS(uint64(d.Iolab.LatMeanNS)), d.LatMeanRatio)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the comparison for scripts.
func (c *Calibration) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

func fmtNS(ns uint64) string {
	return time.Duration(ns).String()
}
