package chart

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"iolab/bench/sweep"
)

func TestChartQueryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		q    Query
		want string // the encoded query string
	}{
		{Query{Kind: IOPS, Runs: []int64{3}}, "run=3"},
		{Query{Kind: IOPS, Runs: []int64{5, 3}, Series: sweep.AxisScheduler, Dir: "write"}, "dir=write&run=5&run=3&series=scheduler"},
		{Query{Kind: Latency, Runs: []int64{3}, Percentiles: []float64{99.99, 50, 99.9}}, "kind=latency&p=99.99&p=50&p=99.9&run=3"},
		{Query{Kind: Latency, Runs: []int64{3}, X: sweep.AxisNumJobs}, "kind=latency&run=3&x=numjobs"},
		{Query{Kind: Distribution, Runs: []int64{3}, IODepths: []int{32, 1}, Dir: "read"}, "dir=read&kind=distribution&qd=32&qd=1&run=3"},
		{Query{Kind: Timeline, Runs: []int64{7}, Step: 12}, "kind=timeline&run=7&step=12"},
		{Query{Kind: CPU, Runs: []int64{1}}, "kind=cpu&run=1"},
		{Query{Kind: Scaling, Runs: []int64{1}, Series: sweep.AxisEngine}, "kind=scaling&run=1&series=ioengine"},
		{Query{Kind: Fairness, Runs: []int64{1, 2}}, "kind=fairness&run=1&run=2"},
		{Query{Kind: MaxIOPS, Runs: []int64{1, 2}}, "kind=maxiops&run=1&run=2"},
		{Query{Kind: IOPS}, ""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			v := tc.q.Values()
			if got := v.Encode(); got != tc.want {
				t.Errorf("Values().Encode() = %q, want %q", got, tc.want)
			}
			got, err := ParseQuery(v)
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", v.Encode(), err)
			}
			if !reflect.DeepEqual(got, tc.q) {
				t.Errorf("ParseQuery(Values()) = %+v, want %+v", got, tc.q)
			}
		})
	}
}

func TestChartQueryCanonical(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Query
		enc  string
	}{
		// Explicit defaults come back as zero fields and leave the URL;
		// percentiles and iodepths stay, since their defaults depend on
		// how many series a chart has.
		{"kind=iops&run=3&dir=all&x=iodepth",
			Query{Kind: IOPS, Runs: []int64{3}}, "run=3"},
		{"kind=latency&run=3&p=50&p=90&p=99&p=99.9&p=99.99&qd=1&qd=4&qd=16",
			Query{Kind: Latency, Runs: []int64{3}, Percentiles: []float64{50, 90, 99, 99.9, 99.99}, IODepths: []int{1, 4, 16}},
			"kind=latency&p=50&p=90&p=99&p=99.9&p=99.99&qd=1&qd=4&qd=16&run=3"},
		// Series shown: values and runs.
		{"run=3&run=4&show=io_uring&show=bfq&showrun=4", Query{Kind: IOPS, Runs: []int64{3, 4}, Show: []string{"io_uring", "bfq"}, ShowRuns: []int64{4}},
			"run=3&run=4&show=io_uring&show=bfq&showrun=4"},
		{"kind=scaling&run=3&x=numjobs", Query{Kind: Scaling, Runs: []int64{3}}, "kind=scaling&run=3"},
		// Repeated runs and list values count once; empty values are absent.
		{"run=3&run=3&run=4&p=99&p=99&step=&series=", Query{Kind: IOPS, Runs: []int64{3, 4}, Percentiles: []float64{99}}, "p=99&run=3&run=4"},
		{"p=+99.90&qd=%2004", Query{Kind: IOPS, Percentiles: []float64{99.9}, IODepths: []int{4}}, "p=99.9&qd=4"},
		// x= of a kind whose x axis the query does not pick leaves the URL.
		{"kind=distribution&run=1&x=numjobs", Query{Kind: Distribution, Runs: []int64{1}}, "kind=distribution&run=1"},
		{"kind=cpu&run=1&x=bs", Query{Kind: CPU, Runs: []int64{1}}, "kind=cpu&run=1"},
		{"kind=latency&run=1&x=bs", Query{Kind: Latency, Runs: []int64{1}, X: sweep.AxisBS}, "kind=latency&run=1&x=bs"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, err := url.ParseQuery(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseQuery(v)
			if err != nil {
				t.Fatalf("ParseQuery: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseQuery = %+v, want %+v", got, tc.want)
			}
			if enc := got.Values().Encode(); enc != tc.enc {
				t.Errorf("Values().Encode() = %q, want %q", enc, tc.enc)
			}
		})
	}
	// Values omits defaults set by hand, too.
	q := Query{Kind: Latency, Runs: []int64{2}, Dir: "all", X: sweep.AxisIODepth}
	if enc := q.Values().Encode(); enc != "kind=latency&run=2" {
		t.Errorf("Values of explicit defaults = %q", enc)
	}
}

func TestChartQueryErrors(t *testing.T) {
	for _, tc := range []struct {
		in, field, says string
	}{
		{"kind=pie", "kind", "iops, latency, distribution, timeline, lattime, cpu, scaling, fairness, timesplit, maxiops, qos"},
		{"kind=iops&kind=cpu", "kind", "give it once"},
		{"run=abc", "run", "whole number"},
		{"run=0", "run", "1 or more"},
		{"run=-2", "run", "1 or more"},
		{"kind=timeline&step=0", "step", "1 or more"},
		{"kind=timeline&step=two", "step", "whole number"},
		{"step=1&step=2", "step", "give it once"},
		{"x=queue", "x", "iodepth, ioengine, scheduler"},
		{"kind=scaling&x=iodepth", "x", "numjobs"},
		{"series=color", "series", "iodepth, ioengine"},
		{"series=iodepth", "series", "x axis"},
		{"kind=latency&x=bs&series=bs", "series", "x axis"},
		{"kind=distribution&series=iodepth", "series", "x axis"},
		{"kind=scaling&series=numjobs", "series", "x axis"},
		{"dir=up", "dir", "read, write, trim or all"},
		{"p=0", "p", "above 0 and at most 100"},
		{"p=100.5", "p", "above 0 and at most 100"},
		{"p=NaN", "p", "above 0 and at most 100"},
		{"p=high", "p", "not a percentile"},
		{"qd=0", "qd", "1 or more"},
		{"qd=1.5", "qd", "whole number"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, err := url.ParseQuery(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseQuery(v)
			var ve *QueryError
			if !errors.As(err, &ve) {
				t.Fatalf("ParseQuery(%q) = %v, want a *QueryError", tc.in, err)
			}
			if ve.Field != tc.field || !strings.Contains(ve.Msg, tc.says) || !strings.HasPrefix(ve.Msg, tc.field+":") {
				t.Errorf("error = {%q, %q}, want field %q and a message saying %q", ve.Field, ve.Msg, tc.field, tc.says)
			}
		})
	}
	// Parameters the charts do not use are not errors.
	if _, err := ParseQuery(url.Values{"sort": {"name"}, "run": {"1"}}); err != nil {
		t.Errorf("an unknown parameter: %v", err)
	}
}
