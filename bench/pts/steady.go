package pts

import "math"

// Window is the steady-state rule applied to WindowRounds consecutive
// rounds of a tracking variable.
type Window struct {
	// First is the window's first round, 0-based; the window is rounds
	// First … First+len(Values)-1.
	First  int       `json:"first"`
	Values []float64 `json:"values"`
	// Average is the values' mean; Min and Max their extremes.
	Average  float64 `json:"average"`
	Min, Max float64 `json:"-"`
	// Slope and Intercept are the least-squares line through (round,
	// value), round counted from 0 at the window's first: the fit at
	// round x is Intercept + Slope·x.
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	// Range is max − min; Excursion the fit's change over the window,
	// |Slope| × (rounds − 1). RangeOK and SlopeOK say whether each is
	// within its limit of the average (20 %, 10 %).
	Range     float64 `json:"range"`
	Excursion float64 `json:"excursion"`
	RangeOK   bool    `json:"range_ok"`
	SlopeOK   bool    `json:"slope_ok"`
}

// Steady reports whether the window meets the rule.
func (w *Window) Steady() bool { return w.RangeOK && w.SlopeOK }

// RangePct and ExcursionPct are Range and Excursion as shares of the
// average (0.2: 20 %).
func (w *Window) RangePct() float64     { return ratio(w.Range, w.Average) }
func (w *Window) ExcursionPct() float64 { return ratio(w.Excursion, w.Average) }

func ratio(x, avg float64) float64 {
	if avg == 0 {
		return math.Inf(1)
	}
	return x / math.Abs(avg)
}

// Fit is the fit line's value at round r of the run (0-based).
func (w *Window) Fit(r int) float64 { return w.Intercept + w.Slope*float64(r-w.First) }

// Judge applies the rule to values, the rounds from first on: the data
// excursion (max − min) within RangeLimit of the average, and the
// least-squares line's excursion over the window within SlopeLimit of it.
// An average of zero (a device that did nothing) is never steady.
func Judge(first int, values []float64) Window {
	w := Window{First: first, Values: append([]float64(nil), values...)}
	n := float64(len(values))
	if len(values) == 0 {
		return w
	}
	w.Min, w.Max = values[0], values[0]
	var sx, sy, sxx, sxy float64
	for i, y := range values {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		w.Min, w.Max = min(w.Min, y), max(w.Max, y)
	}
	w.Average = sy / n
	if d := n*sxx - sx*sx; d != 0 {
		w.Slope = (n*sxy - sx*sy) / d
	}
	w.Intercept = (sy - w.Slope*sx) / n
	w.Range = w.Max - w.Min
	w.Excursion = math.Abs(w.Slope) * (n - 1)
	ok := w.Average != 0 && len(values) == WindowRounds && !math.IsNaN(w.Average) && !math.IsInf(w.Average, 0)
	w.RangeOK = ok && w.Range <= RangeLimit*math.Abs(w.Average)
	w.SlopeOK = ok && w.Excursion <= SlopeLimit*math.Abs(w.Average)
	return w
}

// Outcome is the steady-state rule over a test's rounds so far.
type Outcome struct {
	// Reached says a window met the rule; Round is then its last round
	// (0-based), the round the test stopped after.
	Reached bool `json:"reached"`
	Round   int  `json:"round"`
	// Windows are the measurement window of each tracking variable: the
	// one that met the rule, or the last five rounds when none did.
	Windows []Window `json:"windows"`
	// Rounds is how many rounds the series hold.
	Rounds int `json:"rounds"`
}

// Assess applies the rule, as the rounds come, to the series of each
// tracking variable (series[k][r]: variable k at round r, every series
// as long): steady state is the first window of WindowRounds rounds in
// which every variable meets the rule. Without one, the windows are the
// last WindowRounds rounds (fewer when fewer ran) and Reached is false:
// a run that stopped at MaxRounds reports steady state not reached.
func Assess(series [][]float64) Outcome {
	n := 0
	if len(series) > 0 {
		n = len(series[0])
		for _, s := range series {
			n = min(n, len(s))
		}
	}
	o := Outcome{Rounds: n}
	for last := WindowRounds - 1; last < n; last++ {
		first := last - WindowRounds + 1
		ws := make([]Window, len(series))
		all := true
		for k, s := range series {
			ws[k] = Judge(first, s[first:last+1])
			all = all && ws[k].Steady()
		}
		if all {
			o.Reached, o.Round, o.Windows = true, last, ws
			return o
		}
	}
	first := max(n-WindowRounds, 0)
	o.Round = n - 1
	o.Windows = make([]Window, len(series))
	for k, s := range series {
		o.Windows[k] = Judge(first, s[first:n])
	}
	return o
}
