package render

import (
	"html"
	"regexp"
	"strconv"
	"testing"
)

// textY is where the SVG draws each text: its middle, from its y and
// its translation.
func textY(t *testing.T, doc []byte) map[string]float64 {
	t.Helper()
	tag := regexp.MustCompile(`<text([^>]*)>([^<]*)</text>`)
	attrY := regexp.MustCompile(` y="([-0-9.]+)"`)
	translate := regexp.MustCompile(`translate\([-0-9.]+ ([-0-9.]+)\)`)
	out := map[string]float64{}
	for _, m := range tag.FindAllSubmatch(doc, -1) {
		var y, ty float64
		if a := attrY.FindSubmatch(m[1]); a != nil {
			y, _ = strconv.ParseFloat(string(a[1]), 64)
		}
		if a := translate.FindSubmatch(m[1]); a != nil {
			ty, _ = strconv.ParseFloat(string(a[1]), 64)
		}
		out[html.UnescapeString(string(m[2]))] = y + ty
	}
	return out
}

// A subtitle of lines the server broke moves the plot down by each of
// them: the y axis's name stays below the subtitle's last line.
func TestSVGSubtitleLines(t *testing.T) {
	opt := `{"title":{"text":"Latency vs achieved IOPS","subtext":"run 5 · no knee at p99<1ms\ny: latency from each I/O's intended start"},
"grid":[{"top":"60","bottom":"40"}],"xAxis":{"type":"category","data":["a"]},"yAxis":{"type":"value","name":"latency (µs)"},
"series":[{"name":"r","type":"bar","data":[1]}]}`
	doc, err := SVG([]byte(opt), 600, 300)
	if err != nil {
		t.Fatal(err)
	}
	y := textY(t, doc)
	last, ok := y["y: latency from each I/O's intended start"]
	name, ok2 := y["latency (µs)"]
	if !ok || !ok2 {
		t.Fatalf("texts drawn: %v", y)
	}
	if name < last+12 {
		t.Errorf("the y axis's name at y=%v, the subtitle's last line at %v: over each other", name, last)
	}
}
