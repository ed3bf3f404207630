package handlers

import "iolab/handlers/chart"

// chartViewOf draws the chart q asks for of runs as a page embeds it,
// with links to its own page and its CSV; a chart that cannot be drawn
// shows why, under its kind's name.
func chartViewOf(q chart.Query, runs []chart.Run) chartView {
	enc := q.Values().Encode()
	v := chartView{Kind: string(q.Kind), Title: string(q.Kind), URL: "/charts?" + enc, CSV: "/charts/export.csv?" + enc}
	ch, err := chart.Build(q, runs)
	if err != nil {
		v.Error = err.Error()
		return v
	}
	v.Title, v.Option = ch.Title, string(ch.Option)
	return v
}
