package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/stats"
)

// AutoRepeat repeats each combination of a plan's axis values until the
// 95 % confidence interval of the median IOPS of each of its jobs is within
// Within (0.05: ±5 %) of the median, or Max repeats ran.
type AutoRepeat struct {
	Within float64 `json:"within"`
	Max    int     `json:"max"`
}

// MinAutoRepeat is how many repeats every combination runs before
// AutoRepeat judges it: fewer values give no distribution-free 95 %
// interval for a median (stats.MedianCI).
const MinAutoRepeat = 6

// DefaultAutoRepeat is `--repeat auto`: ±5 %, at most 10 repeats.
var defaultAutoRepeat = AutoRepeat{Within: 0.05, Max: 10}

// ParseRepeat reads --repeat's value: a count, or auto with an optional
// precision and cap (auto, auto:3%, auto:3%:20). It returns the fixed
// count, or the AutoRepeat to use.
func ParseRepeat(v string) (int, *AutoRepeat, error) {
	if rest, ok := strings.CutPrefix(v, "auto"); ok {
		a := defaultAutoRepeat
		parts := strings.Split(strings.TrimPrefix(rest, ":"), ":")
		if rest == "" {
			parts = nil
		} else if !strings.HasPrefix(rest, ":") || len(parts) > 2 {
			return 0, nil, fmt.Errorf("--repeat %q: write auto, auto:5%% or auto:5%%:20 (precision, at most how many repeats)", v)
		}
		if len(parts) > 0 {
			pct, err := strconv.ParseFloat(strings.TrimSuffix(parts[0], "%"), 64)
			if err != nil || !strings.HasSuffix(parts[0], "%") || pct <= 0 || pct >= 100 {
				return 0, nil, fmt.Errorf("--repeat %q: %q is not a precision (e.g. 5%%)", v, parts[0])
			}
			a.Within = pct / 100
		}
		if len(parts) > 1 {
			n, err := strconv.Atoi(parts[1])
			if err != nil || n < MinAutoRepeat || n > maxRepeat {
				return 0, nil, fmt.Errorf("--repeat %q: the cap must be %d to %d repeats", v, MinAutoRepeat, maxRepeat)
			}
			a.Max = n
		}
		return 0, &a, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxRepeat {
		return 0, nil, fmt.Errorf("--repeat %q: a number of repeats from 1 to %d, or auto", v, maxRepeat)
	}
	return n, nil, nil
}

// maxRepeat bounds --repeat.
const maxRepeat = 1000

// nextRound builds round r (0-based) of the combinations whose median IOPS
// is not yet within AutoRepeat.Within in results, numbered from seq on.
func (p *Plan) nextRound(results []StepResult, r, seq int) ([]Step, error) {
	var steps []Step
	for _, c := range p.combos() {
		if p.skipped(c) || p.settled(c, results) {
			continue
		}
		st, err := p.step(seq+len(steps), r, c)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// settled reports whether every job of combination c has a median IOPS
// known within AutoRepeat.Within over its done repeats.
func (p *Plan) settled(c []AxisValue, results []StepResult) bool {
	perJob := map[string][]float64{}
	var names []string
	for i := range results {
		r := &results[i]
		if r.Status != StepDone || r.Result == nil || !slices.Equal(r.Step.Axes, c) {
			continue
		}
		iops := map[string]float64{}
		for _, g := range r.Result.Groups {
			for k := range g.Jobs {
				j := &g.Jobs[k]
				iops[j.Name] += j.IOPS(0) + j.IOPS(1)
			}
		}
		for name, v := range iops {
			if _, ok := perJob[name]; !ok {
				names = append(names, name)
			}
			perJob[name] = append(perJob[name], v)
		}
	}
	if len(names) == 0 {
		return false
	}
	for _, name := range names {
		prec, ok := stats.MedianPrecision(perJob[name])
		if !ok || prec > p.AutoRepeat.Within {
			return false
		}
	}
	return true
}
