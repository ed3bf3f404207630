package handlers

import (
	"encoding/json"
	"net/url"
	"slices"
	"sort"

	"iolab/handlers/chart"
)

// chartViewOf draws the chart q asks for of runs as a page embeds it,
// with links to its own page and its CSV, its pickers and how its
// numbers are written; a chart that cannot be drawn shows why, under its
// kind's name.
func chartViewOf(q chart.Query, runs []chart.LoadedRun) chartView {
	enc := q.Values().Encode()
	v := chartView{Kind: string(q.Kind), Title: string(q.Kind), URL: "/charts?" + enc, CSV: "/charts/export.csv?" + enc}
	ch, err := chart.Draw(q, runs) // the page links to the table's CSV
	if err != nil {
		v.Error = err.Error()
		return v
	}
	return withChart(v, ch)
}

// withChart fills a view with what a built chart shows.
func withChart(v chartView, ch *chart.Chart) chartView {
	v.Title, v.Option, v.Pickers, v.Hidden, v.File = ch.Title, string(ch.Option), ch.Pickers, ch.Hidden, ch.File
	if b, err := json.Marshal(ch.Format); err == nil {
		v.Format = string(b)
	}
	return v
}

// urlParam is one name=value of a URL's query.
type urlParam struct{ Name, Value string }

// keepState sets what of the page's view state (page, its query) the
// chart's pickers' form carries along as hidden inputs: every parameter
// but those its pickers write. Without a script, ticking a box and
// submitting keeps the rest of the view; with one, app.js rewrites the
// page's own URL instead.
func keepState(v chartView, page url.Values) chartView {
	if len(v.Pickers) == 0 {
		return v
	}
	var own []string
	for _, p := range v.Pickers {
		own = append(own, p.Param)
	}
	names := make([]string, 0, len(page))
	for k := range page {
		if !slices.Contains(own, k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		for _, val := range page[k] {
			v.Keep = append(v.Keep, urlParam{k, val})
		}
	}
	return v
}
