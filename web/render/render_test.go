package render

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

const lineOption = `{"title":{"text":"IOPS vs iodepth"},"legend":{},
"xAxis":{"type":"category","data":["1","2","4","8"]},"yAxis":{"type":"value"},
"series":[{"name":"io_uring","type":"line","data":[10,20,40,70],"color":"#1f77b4"},
          {"name":"libaio","type":"line","data":[9,18,35,60],"color":"#ff7f0e"}]}`

// svgSummary parses doc as XML and counts its elements and collects its text.
func svgSummary(t *testing.T, doc []byte) (elems map[string]int, text string) {
	t.Helper()
	elems = map[string]int{}
	var sb strings.Builder
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elems[tok.Name.Local]++
			for _, a := range tok.Attr {
				if a.Name.Local == "href" && !strings.HasPrefix(a.Value, "#") {
					t.Errorf("the SVG refers outside itself: %s=%q", a.Name.Local, a.Value)
				}
			}
		case xml.CharData:
			sb.Write(tok)
			sb.WriteByte(' ')
		}
	}
	return elems, sb.String()
}

func TestSVGDrawsTheChart(t *testing.T) {
	doc, err := SVG([]byte(lineOption), 800, 400)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(doc, []byte("<svg")) || !bytes.Contains(doc, []byte(`viewBox="0 0 800 400"`)) {
		t.Fatalf("not an 800×400 SVG: %.200s", doc)
	}
	elems, text := svgSummary(t, doc)
	if elems["path"] < 4 || elems["text"] < 6 {
		t.Fatalf("too little drawn: %v", elems)
	}
	for _, want := range []string{"IOPS vs iodepth", "io_uring", "libaio", "70"} {
		if !strings.Contains(text, want) {
			t.Errorf("the SVG has no text %q: %s", want, text)
		}
	}
	// Each series' line is drawn in its colour.
	for _, c := range []string{"#1f77b4", "#ff7f0e"} {
		if !bytes.Contains(doc, []byte(`stroke="`+c+`"`)) {
			t.Errorf("no line stroked %s", c)
		}
	}
	// Two charts inline in one page must not share element ids: a second
	// rendering's clip paths have ids of their own.
	again, err := SVG([]byte(lineOption), 800, 400)
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`id="(zr[^"]*)"`)
	first := map[string]bool{}
	for _, m := range ids.FindAllSubmatch(doc, -1) {
		first[string(m[1])] = true
	}
	for _, m := range ids.FindAllSubmatch(again, -1) {
		if first[string(m[1])] {
			t.Fatalf("id %s is in both renderings", m[1])
		}
	}
	if len(first) == 0 {
		t.Fatal("no clip-path ids to compare")
	}
}

func TestSVGRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		opt  string
		w, h int
		want string
	}{
		{`{"series":[`, 800, 400, "not valid JSON"},
		{lineOption, 0, 400, "size"},
		{lineOption, 800, MaxHeight + 1, "size"},
	} {
		_, err := SVG([]byte(c.opt), c.w, c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.30s %dx%d: err %v, want %q", c.opt, c.w, c.h, err, c.want)
		}
	}
	if _, err := SVG([]byte(lineOption), 800, 400); err != nil {
		t.Fatalf("a good option after bad ones: %v", err)
	}
}

func TestSVGTimeout(t *testing.T) {
	if _, err := SVG([]byte(lineOption), 400, 300); err != nil { // load first
		t.Fatal(err)
	}
	defer func(d time.Duration) { Timeout = d }(Timeout)
	Timeout = time.Nanosecond
	big := `{"xAxis":{"type":"value"},"yAxis":{"type":"value"},"series":[{"type":"line","data":[` +
		strings.Repeat("[1,2],", 200000) + `[3,4]]}]}`
	if _, err := SVG([]byte(big), 800, 400); err == nil || !strings.Contains(err.Error(), "took over") {
		t.Fatalf("err %v, want a timeout", err)
	}
	Timeout = time.Minute
	if _, err := SVG([]byte(lineOption), 800, 400); err != nil {
		t.Fatalf("after a timeout: %v", err)
	}
}

// The fairness and scaling charts' whiskers are a custom series whose
// renderer the option names ("errorbar"): drawn as the page draws them,
// three lines a bar; value axes get the page's tick labels (1k, not
// 1000).
func TestSVGPreparedAsThePage(t *testing.T) {
	opt := `{"legend":{},"grid":[{"bottom":"64"}],"xAxis":{"type":"category","data":["none","bfq"]},"yAxis":{"type":"value","name":"IOPS"},
"series":[{"name":"reader","type":"bar","data":[1000,3000]},
{"type":"custom","renderItem":"errorbar","data":[[0,900,1100,0,1],[1,2800,3200,0,1]]}]}`
	doc, err := SVG([]byte(opt), 600, 300)
	if err != nil {
		t.Fatal(err)
	}
	elems, text := svgSummary(t, doc)
	if !strings.Contains(text, "3k") || strings.Contains(text, "3000") {
		t.Errorf("tick labels not as the page writes them: %s", text)
	}
	if n := bytes.Count(doc, []byte(`stroke="#222"`)); n != 6 {
		t.Errorf("%d whisker lines stroked #222, want 6 (3 per bar): %v", n, elems)
	}
}
