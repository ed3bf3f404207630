package chart

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
)

// num formats a number for CSV and tables: the shortest decimal that
// reads back as the same float64, never an exponent.
func num(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// dirPrefix prefixes column names and titles with the direction a query
// selects.
func dirPrefix(q Query) (column, title string) {
	switch q.dirIndex() {
	case bench.Read:
		return "read_", "Read "
	case bench.Write:
		return "write_", "Write "
	}
	return "", ""
}

// missing is echarts' empty value: nothing is drawn there.
const missing = "-"

// globalOptions are the options every chart shares: title, legend below
// the plot, the save-as-PNG control, no animation (what a screenshot
// shows is the final chart).
func globalOptions(title, subtitle, file, trigger string) []echarts.GlobalOpts {
	return []echarts.GlobalOpts{
		echarts.WithTitleOpts(opts.Title{Title: title, Subtitle: subtitle, Left: "10", Top: "6"}),
		echarts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Bottom: "0"}),
		echarts.WithToolboxOpts(opts.Toolbox{Show: opts.Bool(true), Right: "20", Feature: &opts.ToolBoxFeature{
			SaveAsImage: &opts.ToolBoxFeatureSaveAsImage{Show: opts.Bool(true), Type: "png", Name: file, Title: "save as PNG"},
		}}),
		echarts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: trigger}),
		echarts.WithAnimation(false),
	}
}

// palette is echarts' default palette, for charts that give the lines of
// one group one colour.
var palette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// symbols are the point symbols of the lines within a group; each has an
// "empty" (hollow) form, which marks a point not to be trusted.
var symbols = []string{"circle", "rect", "triangle", "diamond", "roundRect", "pin", "arrow"}

// pointSymbol is the symbol of line k of a group, as echarts names it
// ("Rect" after "empty"): see lineStyle.
func pointSymbol(k int) string {
	s := symbols[k%len(symbols)]
	return strings.ToUpper(s[:1]) + s[1:]
}

// lineStyle draws line k of group g: the group's colour, and a symbol and
// dash of its own for each line within the group.
func lineStyle(g, k int, showSymbol bool) []echarts.SeriesOpts {
	color := palette[g%len(palette)]
	dashes := []string{"solid", "dashed", "dotted"}
	return []echarts.SeriesOpts{
		echarts.WithLineChartOpts(opts.LineChart{Symbol: symbols[k%len(symbols)], SymbolSize: 7, ShowSymbol: opts.Bool(showSymbol)}),
		echarts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
		echarts.WithLineStyleOpts(opts.LineStyle{Color: color, Type: dashes[k%len(dashes)]}),
	}
}

// plotOptions are globalOptions for a chart of one plot, with its axes
// and a grid that leaves room for the title above and the x axis name and
// legend below.
func plotOptions(title, subtitle, file, trigger string, x opts.XAxis, y opts.YAxis) []echarts.GlobalOpts {
	return append(globalOptions(title, subtitle, file, trigger),
		echarts.WithGridOpts(opts.Grid{Top: "80", Bottom: "70", Left: "30", Right: "50", ContainLabel: opts.Bool(true)}),
		echarts.WithXAxisOpts(x),
		echarts.WithYAxisOpts(y),
	)
}

func xAxisOpts(name, typ string) opts.XAxis {
	return opts.XAxis{Name: name, Type: typ, NameLocation: "middle", NameGap: 30}
}

// fileName names the PNG a chart saves as: iolab-iops-run3-run5.
func fileName(kind Kind, runs []*runView) string {
	name := "iolab-" + string(kind)
	for _, r := range runs {
		name += "-run" + strconv.FormatInt(r.id, 10)
	}
	return name
}

// optionJSON is a go-echarts chart's option object, validated (which
// places the x axis data) and marshalled.
func optionJSON(c interface {
	Validate()
	JSON() map[string]any
}) (json.RawMessage, error) {
	c.Validate()
	b, err := json.Marshal(c.JSON())
	if err != nil {
		return nil, fmt.Errorf("chart: option: %w", err)
	}
	return b, nil
}
