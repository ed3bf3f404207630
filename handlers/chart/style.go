package chart

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// palette is Okabe and Ito's colour-blind-safe set with a few of Tableau's
// after it: distinct in print and on screen.
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f7f7f", "#8c564b", "#9467bd", "#bcbd22"}

// pinned are the colours of the values the write-ups compare, so that
// they never share one: the engines and their variants, the schedulers.
// Any other value (a kernel, a host, a block size) takes the colour its
// hash picks, the same on every chart and page.
var pinned = map[string]int{
	"io_uring": 0, "libaio": 1, "psync": 2, "io_uring+hipri": 3, "io_uring+sqpoll": 4,
	"io_uring+sqpoll+hipri": 5, "sync": 6, "pvsync": 7, "pvsync2": 8, "null": 9,
	"none": 0, "mq-deadline": 1, "bfq": 2, "kyber": 3,
}

// colorOf is the colour of a series value: an engine, a scheduler, a
// kernel. The same value has the same colour on every chart of every
// page, so a reader learns it once.
func colorOf(value string) string {
	if i, ok := pinned[value]; ok {
		return palette[i]
	}
	if value == "" {
		return palette[0]
	}
	h := fnv.New32a()
	h.Write([]byte(value))
	return palette[h.Sum32()%uint32(len(palette))]
}

// colours are the colours of one view's series-defining values (its
// engines, its numjobs, its hosts): every chart of a run, compare or
// group page takes them from one colourSet of the same values, so a
// value has one colour on all of them.
type colours map[string]string

// colourSet gives each of values its colour: a pinned value (an engine,
// a scheduler) keeps its own; the others, in the order given (their
// place in the plan's sweep, hosts by name), take the palette's first
// colour no other value of the set has, so that no two share one while
// the palette lasts (ten values). Beyond, colours repeat in order.
func colourSet(values []string) colours {
	c := colours{}
	var used []string
	for _, v := range values {
		if i, ok := pinned[v]; ok && !slices.Contains(used, palette[i]) {
			c[v] = palette[i]
			used = append(used, palette[i])
		}
	}
	next := 0
	for _, v := range values {
		if _, ok := c[v]; ok {
			continue
		}
		for next < len(palette) && slices.Contains(used, palette[next]) {
			next++
		}
		if next < len(palette) {
			c[v] = palette[next]
			used = append(used, palette[next])
			continue
		}
		c[v] = palette[len(c)%len(palette)]
	}
	return c
}

// of is v's colour: its colour in the set, else its own (colorOf).
func (c colours) of(v string) string {
	if col, ok := c[v]; ok {
		return col
	}
	return colorOf(v)
}

// dashes tell apart the lines of one colour: percentiles, iodepths, and
// the compared runs after them. echarts names the first three; the page
// turns the others into dash arrays (app.js).
var dashes = []string{"solid", "dashed", "dotted", "dashDot", "longDash"}

// symbols are the point symbols of the lines of one colour; each has an
// "empty" (hollow) form, which marks a point not to be trusted.
var symbols = []string{"circle", "rect", "triangle", "diamond", "roundRect", "pin", "arrow"}

// pointSymbol is symbol k as echarts names its hollow form after "empty"
// ("Rect"): see lineStyle.
func pointSymbol(k int) string {
	s := symbols[k%len(symbols)]
	return strings.ToUpper(s[:1]) + s[1:]
}

// lineStyle draws a line in color, its k-th dash and its m-th symbol:
// within one colour, dashes tell one thing apart (percentiles) and
// symbols another (compared runs).
func lineStyle(color string, k, m int, showSymbol bool) []echarts.SeriesOpts {
	width := float32(2)
	if k > 0 {
		width = 1.6
	}
	return []echarts.SeriesOpts{
		echarts.WithLineChartOpts(opts.LineChart{Symbol: symbols[m%len(symbols)], SymbolSize: 6, ShowSymbol: opts.Bool(showSymbol)}),
		echarts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
		echarts.WithLineStyleOpts(opts.LineStyle{Color: color, Type: dashes[k%len(dashes)], Width: width}),
	}
}

// maxSeries is how many series a chart draws by default: beyond, a
// reader cannot tell the lines apart. The pickers reach the rest.
const maxSeries = 8

// Picker is one choice a page offers about what a chart draws: a query
// parameter and its values, each on or off. Pages draw it as a row of
// checkboxes that rewrite the URL, so every view stays a URL.
type Picker struct {
	Param   string         `json:"param"` // the query parameter the picker writes
	Label   string         `json:"label"` // "percentiles", "ioengine"
	Options []PickerOption `json:"options"`
	// Single pickers take one value (a select); the others a list.
	Single bool `json:"single,omitempty"`
}

// PickerOption is one value of a Picker.
type PickerOption struct {
	Value string `json:"value"`
	Label string `json:"label"`
	On    bool   `json:"on"`
	Color string `json:"color,omitempty"` // the series' colour, when the value has one
	// Disabled options are offered to say they exist but cannot be
	// drawn (a latency kind the intervals do not keep).
	Disabled bool `json:"disabled,omitempty"`
}

// Format tells the page how to write a chart's numbers: what its
// tooltips show and in which units (see app.js). Units: "iops", "us",
// "mibs", "kibs", "pct", "s", "" for plain numbers.
type Format struct {
	Tooltip string `json:"tooltip"` // "box", "lines", "dist", "bars", "time"
	X       string `json:"x,omitempty"`
	Y       string `json:"y,omitempty"`
	// XName names the x values in tooltips: "iodepth".
	XName string `json:"x_name,omitempty"`
	// Groups are each series' colour group: a line tooltip lists the
	// hovered series and those of its group at the same x (an engine's
	// other percentiles), not every line of the chart.
	Groups []int `json:"groups,omitempty"`
}

// item is an echarts data item with what tooltips add: repeats behind
// the point and a note on how to read it.
type item struct {
	Name      string      `json:"name,omitempty"`
	Value     any         `json:"value"`
	Symbol    string      `json:"symbol,omitempty"`
	ItemStyle *itemStyle  `json:"itemStyle,omitempty"`
	Label     *opts.Label `json:"label,omitempty"`
	N         int         `json:"n,omitempty"`    // repeats behind the point
	Unit      string      `json:"unit,omitempty"` // the point's unit, where not the chart's (Format.Y)
	Note      string      `json:"note,omitempty"` // "noisy: CV 14%", "unreliable: …"
	// Extra are numbers the tooltip lists under the value: [label, value, unit].
	Extra [][3]any `json:"extra,omitempty"`
}

// itemStyle is echarts' itemStyle with what go-echarts' lacks.
type itemStyle struct {
	Color       string  `json:"color,omitempty"`
	BorderColor string  `json:"borderColor,omitempty"`
	BorderWidth float32 `json:"borderWidth,omitempty"`
	BorderType  string  `json:"borderType,omitempty"`
	Opacity     float32 `json:"opacity,omitempty"`
	// Decal is a pattern over the fill: hatching, which keeps the
	// colour (a value one colour on the page) and marks the bar.
	Decal *decal `json:"decal,omitempty"`
}

// decal is echarts' itemStyle.decal.
type decal struct {
	Symbol     string  `json:"symbol"`
	Color      string  `json:"color"`
	DashArrayX []int   `json:"dashArrayX"`
	DashArrayY []int   `json:"dashArrayY"`
	Rotation   float64 `json:"rotation"`
}

// hatched is the decal of a bar to read with care: light diagonal lines.
func hatched() *decal {
	return &decal{Symbol: "rect", Color: "rgba(255,255,255,0.55)", DashArrayX: []int{1, 0}, DashArrayY: []int{3, 5}, Rotation: -0.785}
}

// setData replaces the data of the last series added (go-echarts' own
// data types cannot carry what the tooltips add).
func setData(ms echarts.MultiSeries, data []item) {
	ms[len(ms)-1].Data = data
}

// The bars' gaps, which the page's error bars (app.js errorBar) assume.
const (
	barGap         = "20%"
	barCategoryGap = "30%"
)

// errorBars is a series the page draws as whiskers over the bars of the
// series called name: each datum is [category, low, high, the bar's
// place among the category's bars, how many bars]. Sharing the bars'
// name, the legend toggles both.
func errorBars(name string, data [][]any) map[string]any {
	return map[string]any{"type": "custom", "name": name, "renderItem": "errorbar", "data": data, "z": 5, "encode": map[string]any{"x": 0, "y": []int{1, 2}},
		"itemStyle": map[string]any{"color": "#333"}, "tooltip": map[string]any{"show": false}}
}

// addSeries appends series go-echarts cannot describe (error bars, lines
// over bars) to an option.
func addSeries(raw json.RawMessage, series []map[string]any) (json.RawMessage, error) {
	if len(series) == 0 {
		return raw, nil
	}
	var opt map[string]any
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: option: %w", err)
	}
	all, _ := opt["series"].([]any)
	for _, s := range series {
		all = append(all, s)
	}
	opt["series"] = all
	return json.Marshal(opt)
}
