// Package render draws the dashboard's charts without a browser: the same
// echarts option a page hands to echarts is rendered to an SVG document by
// echarts itself — the copy embedded in the binary, run by goja (a
// JavaScript interpreter in Go) through echarts' server-side SVG renderer.
// Reports and exports use it, so a chart in a write-up is the chart on the
// page, and nothing is fetched from anywhere.
//
// The first call loads echarts (about three seconds on this class of
// machine); later calls reuse it, one chart at a time.
package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/dop251/goja"

	"iolab/web"
)

// Timeout bounds one chart's rendering: an option that would keep echarts
// busy longer (millions of points) fails instead of holding the renderer.
var Timeout = 30 * time.Second

// Limits on what is drawn.
const (
	MaxWidth, MaxHeight = 4000, 4000
	MaxOption           = 32 << 20 // bytes of option JSON
)

var (
	mu      sync.Mutex
	vm      *goja.Runtime
	draw    goja.Callable
	loadErr error
	once    sync.Once
)

// prelude gives echarts what it looks for in a browser and does not need
// for server-side rendering: no timers run (animation is off), no window.
const prelude = `var window = undefined; var self = this;
function setTimeout(f) { return 0 } function clearTimeout() {}
function setInterval(f) { return 0 } function clearInterval() {}
`

// drawFn renders one option, prepared as the dashboard prepares it
// (static/chartprep.js: the legend's rows, whiskers, dashes, axis
// labels); echarts' own defaults apply except those that make no sense
// in a file: animation off.
const drawFn = `(function (optionJSON, width, height) {
	var option = iolabPrep.prepare(JSON.parse(optionJSON), width);
	option.animation = false;
	var chart = echarts.init(null, null, {renderer: 'svg', ssr: true, width: width, height: height});
	try {
		chart.setOption(option);
		return chart.renderToSVGString();
	} finally {
		chart.dispose();
	}
})`

func load() {
	static, err := web.Static()
	if err != nil {
		loadErr = err
		return
	}
	src, err := fs.ReadFile(static, "vendor/echarts.min.js")
	if err != nil {
		loadErr = fmt.Errorf("render: reading the embedded echarts: %w", err)
		return
	}
	r := goja.New()
	if _, err := r.RunScript("prelude.js", prelude); err != nil {
		loadErr = fmt.Errorf("render: %w", err)
		return
	}
	if _, err := r.RunScript("echarts.min.js", string(src)); err != nil {
		loadErr = fmt.Errorf("render: loading echarts: %w", err)
		return
	}
	prep, err := fs.ReadFile(static, "chartprep.js")
	if err != nil {
		loadErr = fmt.Errorf("render: reading chartprep.js: %w", err)
		return
	}
	if _, err := r.RunScript("chartprep.js", string(prep)); err != nil {
		loadErr = fmt.Errorf("render: loading chartprep.js: %w", err)
		return
	}
	fn, err := r.RunScript("draw.js", drawFn)
	if err != nil {
		loadErr = fmt.Errorf("render: %w", err)
		return
	}
	call, ok := goja.AssertFunction(fn)
	if !ok {
		loadErr = errors.New("render: draw is not a function")
		return
	}
	vm, draw = r, call
}

// SVG renders option, an echarts option as JSON, to an SVG document of
// width × height pixels.
func SVG(option []byte, width, height int) ([]byte, error) {
	if width < 1 || height < 1 || width > MaxWidth || height > MaxHeight {
		return nil, fmt.Errorf("render: size %d×%d: width and height must be 1..%d and 1..%d", width, height, MaxWidth, MaxHeight)
	}
	if len(option) > MaxOption {
		return nil, fmt.Errorf("render: option of %d bytes is over the %d-byte limit", len(option), MaxOption)
	}
	if !json.Valid(option) {
		return nil, errors.New("render: the option is not valid JSON")
	}
	once.Do(load)
	if loadErr != nil {
		return nil, loadErr
	}
	mu.Lock()
	defer mu.Unlock()
	timer := time.AfterFunc(Timeout, func() { vm.Interrupt(fmt.Sprintf("rendering took over %s", Timeout)) })
	v, err := draw(goja.Undefined(), vm.ToValue(string(option)), vm.ToValue(width), vm.ToValue(height))
	timer.Stop()
	vm.ClearInterrupt()
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	s, ok := v.Export().(string)
	if !ok {
		return nil, errors.New("render: echarts returned no SVG")
	}
	return []byte(s), nil
}
