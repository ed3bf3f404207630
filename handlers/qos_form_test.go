package handlers

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
)

// The form's QoS fields: a rate_iops field in percentages becomes a sweep
// with its probe first, the objective is stored with the plan, and a bad
// objective is refused on its own field.
func TestFormQoS(t *testing.T) {
	ts := newTestServer(t, Config{})
	form := func(rate, slo string) runForm {
		f := defaultForm()
		f.Target, f.Size = "x.dat", "1m"
		f.Sweeps["iodepth"], f.Sweeps["ioengine"] = "", "libaio"
		f.Sweeps["rate_iops"], f.SLO = rate, slo
		return f
	}
	f := form("10%..50%", "p99.9<2ms")
	req, err := f.request()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ts.srv.BuildPlan(req)
	if err != nil {
		t.Fatal(err)
	}
	if plan.SLO == nil || *plan.SLO != (sweep.SLO{Percentile: 99.9, Max: 2 * time.Millisecond}) {
		t.Errorf("slo %+v", plan.SLO)
	}
	var rates []string
	for _, sw := range plan.Sweeps {
		if sw.Axis == sweep.AxisRateIOPS {
			rates = sw.Values
		}
	}
	if strings.Join(rates, ",") != "max,10%,20%,30%,40%,50%" {
		t.Errorf("rate_iops sweep %v", rates)
	}
	for _, bad := range []string{"p99>1ms", "p100<1ms", "p99<0s", strings.Repeat("p", 100)} {
		f := form("10%,20%", bad)
		req, err := f.request()
		if err != nil {
			t.Fatal(err)
		}
		_, err = ts.srv.BuildPlan(req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "slo" {
			t.Errorf("slo %q: %v, want an error on the slo field", bad, err)
		}
	}
}

// /runs/new?preset=qos-curve fills the form with the preset, so that what
// it submits is the preset's plan: its rate sweep, engine, iodepth and
// objective, not the form's default iodepth and engine sweeps over them.
func TestFormPresetLink(t *testing.T) {
	ts := newTestServer(t, Config{})
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/runs/new?preset=qos-curve", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{`name="rate_iops" value="max,10%,20%,30%,40%,50%,60%,70%,80%,90%,100%"`, `name="iodepth" value="32"`, `name="ioengine" value="libaio"`, `name="slo" value="p99&lt;1ms"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	f := defaultForm().withPreset("qos-curve")
	f.Target, f.Size = "x.dat", "1m"
	req, err := f.request()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ts.srv.BuildPlan(req)
	if err != nil {
		t.Fatal(err)
	}
	var axes []string
	for _, sw := range plan.Sweeps {
		axes = append(axes, string(sw.Axis))
	}
	if strings.Join(axes, ",") != "rate_iops" || plan.Base.Jobs[0].IOEngine != "libaio" || plan.Base.Jobs[0].IODepth != 32 || plan.SLO == nil {
		t.Errorf("plan sweeps %v, engine %s, iodepth %d, slo %v", axes, plan.Base.Jobs[0].IOEngine, plan.Base.Jobs[0].IODepth, plan.SLO)
	}
	if g := defaultForm().withPreset("no-such"); g.Preset != "no-such" || g.Sweeps["iodepth"] != "1,4,16" {
		t.Errorf("unknown preset: %+v", g)
	}
}
