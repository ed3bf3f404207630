package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
)

// points is a timeline series' data, written as the []item of {Name:
// "step N", Value: [x, y]} for each point, with {Value: "-"} where a step
// ends, would be by encoding/json, but without reflection: a whole run's
// timeline is tens of thousands of points, and encoding them as items
// took most of its build.
type points struct {
	step []int // each point's step (1-based); 0 for the end of a step
	x, y []float64
}

func (p *points) grow(n int) {
	p.step, p.x, p.y = make([]int, 0, n), make([]float64, 0, n), make([]float64, 0, n)
}

func (p *points) add(step int, x, y float64) {
	p.step, p.x, p.y = append(p.step, step), append(p.x, x), append(p.y, y)
}

// gap ends a step: the line breaks there. There is none before the
// first point or after another.
func (p *points) gap() {
	if n := len(p.step); n > 0 && p.step[n-1] != 0 {
		p.add(0, 0, 0)
	}
}

func (p *points) len() int { return len(p.step) }

// MarshalJSON writes the points as encoding/json writes []item, null
// when there are none (a nil slice).
func (p *points) MarshalJSON() ([]byte, error) { return p.appendJSON(nil) }

// placeholder stands for series k's points in the option until
// splicePoints puts them in: encoding/json checks and copies what a
// Marshaler writes, which for a whole run took twice the writing.
func (p *points) placeholder(k int) string { return "\x00iolab points " + strconv.Itoa(k) + "\x00" }

// splicePoints puts each series' points where its placeholder is in
// raw, what line encodes to. When a placeholder is there other than once
// (a run or job named like one), the option is encoded again with the
// points in it.
func splicePoints(raw json.RawMessage, line *echarts.Line, drawn []*points) (json.RawMessage, error) {
	if len(drawn) == 0 {
		return raw, nil
	}
	at := make([]int, len(drawn))
	marks := make([][]byte, len(drawn))
	n := len(raw)
	for k, p := range drawn {
		var err error
		if marks[k], err = json.Marshal(p.placeholder(k)); err != nil {
			return nil, err
		}
		at[k] = bytes.Index(raw, marks[k])
		if bytes.Count(raw, marks[k]) != 1 || k > 0 && at[k] < at[k-1] {
			for k, p := range drawn {
				line.MultiSeries[k].Data = p
			}
			return optionJSON(line)
		}
		n += 40 * p.len()
	}
	out := make([]byte, 0, n)
	last := 0
	for k, p := range drawn {
		out = append(out, raw[last:at[k]]...)
		var err error
		if out, err = p.appendJSON(out); err != nil {
			return nil, err
		}
		last = at[k] + len(marks[k])
	}
	return append(out, raw[last:]...), nil
}

// appendJSON appends the points as MarshalJSON writes them.
func (p *points) appendJSON(b []byte) ([]byte, error) {
	if len(p.step) == 0 {
		return append(b, "null"...), nil
	}
	b = slices.Grow(b, 40*len(p.step))
	b = append(b, '[')
	for i, st := range p.step {
		if i > 0 {
			b = append(b, ',')
		}
		if st == 0 {
			b = append(b, `{"value":"-"}`...)
			continue
		}
		b = append(b, `{"name":"step `...)
		b = strconv.AppendInt(b, int64(st), 10)
		b = append(b, `","value":[`...)
		var err error
		if b, err = appendJSONFloat(b, p.x[i]); err != nil {
			return nil, err
		}
		b = append(b, ',')
		if b, err = appendJSONFloat(b, p.y[i]); err != nil {
			return nil, err
		}
		b = append(b, "]}"...)
	}
	return append(b, ']'), nil
}

// appendJSONFloat writes f as encoding/json writes a float64
// (encoding/json's floatEncoder): the shortest decimal that reads back
// as f, in exponent form below 1e-6 and from 1e21 on; NaN and the
// infinities are an error there and here.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("chart: timeline: unsupported value %v", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-7, not e-07.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
