package handlers

import (
	"encoding/json"

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
