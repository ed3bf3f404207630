package sweep

import (
	"fmt"
	"slices"
	"strings"

	"iolab/bench"
)

// Rebuild is the plan behind steps that ran elsewhere (fio's output,
// imported), given one config per step in the order they ran. Every axis
// whose value differs between the steps is swept, its values in the order
// they first appear. A step's value on an axis is the one its jobs share:
// an axis its jobs differ on (a fairness pair's bs) describes the step, not
// a sweep. Steps with the same axis values are repeats, numbered in order.
// The plan's base is the first step's jobs; its Notes say where another
// step differs from it in more than its axis values, which the plan
// cannot reproduce. The steps' configs are used as they are.
func Rebuild(name string, configs []bench.Config) (Plan, []Step) {
	p := Plan{Name: name, Repeat: 1}
	if len(configs) == 0 {
		return p, nil
	}
	p.Base = configs[0]
	p.Args = configs[0].Args()
	// values[s][a] is step s's value on axis a (axisTable's index).
	values := make([][]string, len(configs))
	for s := range configs {
		values[s] = make([]string, len(axisTable))
	}
	var swept []int
	for a := range axisTable {
		spec := &axisTable[a]
		if spec.Step {
			continue // nothing in a job says it
		}
		var seen []string
		shared := true
		for s := range configs {
			v, ok := sharedValue(spec, &configs[s])
			if !ok {
				shared = false
				v = strings.Join(jobValues(spec, &configs[s]), ", ")
			}
			values[s][a] = v
			if !slices.Contains(seen, v) {
				seen = append(seen, v)
			}
		}
		switch {
		case len(seen) < 2:
		case shared:
			swept = append(swept, a)
			p.Sweeps = append(p.Sweeps, Sweep{Axis: spec.Name, Values: seen})
		default:
			for s := range configs {
				if _, ok := sharedValue(spec, &configs[s]); !ok {
					p.Notes = append(p.Notes, fmt.Sprintf("the jobs of step %d differ in %s (%s), so %s is not swept", s+1, spec.Name, values[s][a], spec.Name))
					break
				}
			}
		}
	}
	steps := make([]Step, len(configs))
	for s := range configs {
		st := &steps[s]
		st.Seq = s
		for _, a := range swept {
			st.Axes = append(st.Axes, AxisValue{Axis: axisTable[a].Name, Value: values[s][a]})
		}
		for _, prev := range steps[:s] {
			if slices.Equal(prev.Axes, st.Axes) {
				st.Repeat++
			}
		}
		p.Repeat = max(p.Repeat, st.Repeat+1)
		st.Config = configs[s]
	}
	// What the plan cannot say: steps that differ from the base in more
	// than the swept axes.
	skip := []string{"name", "stonewall", "wait_for_previous", "new_group"}
	for _, a := range swept {
		skip = append(skip, axisTable[a].options...)
	}
	base := jobShapes(&configs[0], skip)
	for s := 1; s < len(configs); s++ {
		if d := shapeDiff(base, jobShapes(&configs[s], skip)); d != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("step %d (%s) differs from the plan's base (step 1) in %s, which no sweep axis covers: the plan does not reproduce it",
				s+1, steps[s].String(), d))
		}
	}
	return p, steps
}

// sharedValue is the jobs' value on axis spec when they all have the same.
func sharedValue(spec *AxisSpec, c *bench.Config) (string, bool) {
	vals := jobValues(spec, c)
	for _, v := range vals[1:] {
		if v != vals[0] {
			return "", false
		}
	}
	return vals[0], true
}

// jobValues are the config's jobs' values on axis spec, one per job ("" for
// a config without jobs).
func jobValues(spec *AxisSpec, c *bench.Config) []string {
	if len(c.Jobs) == 0 {
		return []string{""}
	}
	vals := make([]string, len(c.Jobs))
	for i := range c.Jobs {
		vals[i] = spec.Value(&c.Jobs[i])
	}
	return vals
}

// jobShapes are the options each of the config's jobs ran with, the global
// ones first and the job's own over them, without the options in skip.
func jobShapes(c *bench.Config, skip []string) []map[string]string {
	shapes := make([]map[string]string, len(c.Jobs))
	for i, j := range c.Jobs {
		m := map[string]string{}
		for _, o := range slices.Concat(c.GlobalOptions, j.Options) {
			if !slices.Contains(skip, o.Name) {
				m[o.Name] = o.Value
			}
		}
		shapes[i] = m
	}
	return shapes
}

// shapeDiff says how the jobs' options in b differ from base's: "" when
// they do not.
func shapeDiff(base, b []map[string]string) string {
	if len(b) != len(base) {
		return fmt.Sprintf("its number of jobs (%d, the base %d)", len(b), len(base))
	}
	var diffs []string
	for i := range b {
		for _, k := range mapKeys(base[i], b[i]) {
			v, ok := b[i][k]
			bv, bok := base[i][k]
			if ok == bok && v == bv {
				continue
			}
			d := k + " unset"
			if ok {
				d = (bench.Option{Name: k, Value: v}).Line()
			}
			if bok {
				d += " (base " + (bench.Option{Name: k, Value: bv}).Line() + ")"
			} else {
				d += " (base unset)"
			}
			if !slices.Contains(diffs, d) {
				diffs = append(diffs, d)
			}
		}
	}
	return strings.Join(diffs, ", ")
}

// mapKeys are the keys of a and b, sorted.
func mapKeys(a, b map[string]string) []string {
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}
