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
	case bench.Trim:
		return "trim_", "Trim "
	}
	return "", ""
}

// missing is echarts' empty value: nothing is drawn there.
const missing = "-"

// globalOptions are the options every chart shares: title and subtitle,
// legend below the plot, no animation (what a screenshot shows is the
// final chart). The page adds the tooltips' formatters (Chart.Format) and
// the downloads (PNG at 2×, SVG) itself.
func globalOptions(title, subtitle, trigger string) []echarts.GlobalOpts {
	return []echarts.GlobalOpts{
		echarts.WithTitleOpts(opts.Title{Title: title, Subtitle: subtitle, Left: "10", Top: "6",
			TitleStyle: &opts.TextStyle{FontSize: 16}, SubtitleStyle: &opts.TextStyle{FontSize: 12, Color: "#555"}}),
		echarts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Bottom: "0"}),
		echarts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: trigger}),
		echarts.WithAnimation(false),
		echarts.WithColorsOpts(opts.Colors(palette)),
	}
}

// plotOptions are globalOptions for a chart of one plot, with its axes
// and a grid that leaves room for the title above and the x axis name and
// legend below.
func plotOptions(title, subtitle, trigger string, x opts.XAxis, y opts.YAxis) []echarts.GlobalOpts {
	return append(globalOptions(title, subtitle, trigger),
		echarts.WithGridOpts(opts.Grid{Top: "72", Bottom: "64", Left: "24", Right: "40", ContainLabel: opts.Bool(true)}),
		echarts.WithXAxisOpts(x),
		echarts.WithYAxisOpts(y),
	)
}

// splitLine is the value axes' grid: light, so the data stands out.
func splitLine() *opts.SplitLine {
	return &opts.SplitLine{Show: opts.Bool(true), LineStyle: &opts.LineStyle{Color: "#e6e9ee"}}
}

// subtitle says what the chart draws: the runs, what every series shares
// (so the legend need not), and how to read it.
func subtitle(runs []*runView, g *grid, how string) string {
	parts := []string{describeRuns(runs)}
	if g != nil {
		if sh := g.shared(runs); sh != "" {
			parts = append(parts, sh)
		}
	}
	if how != "" {
		parts = append(parts, how)
	}
	return strings.Join(parts, " · ")
}

func xAxisOpts(name, typ string) opts.XAxis {
	return opts.XAxis{Name: name, Type: typ, NameLocation: "middle", NameGap: 30}
}

// fileName names the files a chart downloads as: iolab-iops-run3-run5.
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
