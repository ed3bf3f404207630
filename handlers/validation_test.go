package handlers

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestValidationAnswers: a table of bad plans, each answered 400 with
// exactly its real errors — field and message — and none made up by
// checking an option alone (time_based without the plan's runtime,
// verify on an engine the plan does not use), nor naming an internal job.
func TestValidationAnswers(t *testing.T) {
	ts := newTestServer(t, Config{})
	type fieldErr struct{ Field, Error string }
	tests := []struct {
		name string
		body string
		want []fieldErr // the "errors" list; one error alone is "error" and "field"
	}{
		{"bad block size and runtime beside time_based and verify",
			`{"options":{"filename":"x.dat","size":"1m","rw":"randwrite","bs":"4q","runtime":"ten","time_based":1,"ioengine":"psync","verify":"crc32c"}}`,
			[]fieldErr{
				{"options.bs", `option bs: "4q"`},
				{"options.runtime", `option runtime: "ten"`},
			}},
		{"bad iodepth and rw with time_based, runtime and verify",
			`{"options":{"filename":"x.dat","size":"1m","rw":"sideways","iodepth":"-1","runtime":"1","time_based":1,"ioengine":"psync","verify":"md5"}}`,
			[]fieldErr{
				{"options.iodepth", "option iodepth"},
				{"options.rw", `option rw: "sideways"`},
			}},
		{"time_based without a runtime: the real error alone",
			`{"options":{"filename":"x.dat","size":"1m","rw":"randread","time_based":1,"ioengine":"psync"}}`,
			[]fieldErr{{"options.time_based", "time_based needs a runtime"}}},
		{"verify on the null engine: the real error alone",
			`{"options":{"size":"1m","rw":"write","ioengine":"null","verify":"crc32c"}}`,
			[]fieldErr{{"options.verify", "ioengine=null moves no data"}}},
		{"a job's bad option and a bad sweep",
			`{"options":{"filename":"x.dat","size":"1m","runtime":"1","time_based":1},"jobs":[{"name":"a","options":{"rw":"randread","bs":"0x"}}],"sweep":{"iodepth":[1,"x"]}}`,
			[]fieldErr{{"jobs[0].options.bs", "option bs"}, {"sweep.iodepth", "iodepth"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, http.MethodPost, "/api/runs", tt.body)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("%d %s, want 400", rec.Code, rec.Body)
			}
			var got struct {
				Error, Field string
				Errors       []fieldErr
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Errors) == 0 {
				got.Errors = []fieldErr{{got.Field, got.Error}}
			}
			if b := rec.Body.String(); strings.Contains(b, `\"check\"`) || strings.Contains(b, "/check") || strings.Contains(b, `job \"job\"`) {
				t.Errorf("the answer names a job the request did not: %s", rec.Body)
			}
			if len(got.Errors) != len(tt.want) {
				t.Fatalf("errors %+v, want %d: %+v", got.Errors, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				g := got.Errors[i]
				if g.Field != w.Field || !strings.Contains(g.Error, w.Error) {
					t.Errorf("error %d: %s %q, want %s with %q", i, g.Field, g.Error, w.Field, w.Error)
				}
			}
			if got.Error != got.Errors[0].Error || !slices.ContainsFunc(got.Errors, func(e fieldErr) bool { return e.Field == got.Field }) {
				t.Errorf("error/field %q %q do not lead the list %+v", got.Error, got.Field, got.Errors)
			}
		})
	}
}
