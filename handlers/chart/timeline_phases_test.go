package chart

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// withPhases passes the option through and adds the phases to the first
// series alone: the result is what decoding the whole option, adding
// markArea to its first series and encoding it again gives.
func TestWithPhasesTouchesTheFirstSeriesOnly(t *testing.T) {
	// The second has a markArea already: it takes the slow way.
	for _, raw := range []json.RawMessage{
		json.RawMessage(`{"title":{"text":"a \"series\":[{ \u003cb\u003e \u0026 c"},"xAxis":[{"type":"value","min":-1.5}],` +
			`"series":[{"name":"j1","type":"line","data":[[0,1.25],[0.5,1e-7],[1,123456789]]},{"name":"j2","data":[[0,2]]}]}`),
		json.RawMessage(`{"title":{"text":"a \u003cb\u003e"},"series":[{"name":"j1","data":[[0,1]]},{"name":"j2","markArea":{"data":[]}}]}`),
	} {
		checkWithPhases(t, raw)
	}
}

func checkWithPhases(t *testing.T, raw json.RawMessage) {
	t.Helper()
	phases := []phase{{"discard", -1.5, 0}, {"measure", 0, 1}, {"ramp", 1, 2}}
	got, err := withPhases(raw, phases, true)
	if err != nil {
		t.Fatal(err)
	}
	var want, have map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	want["series"].([]any)[0].(map[string]any)["markArea"] = map[string]any{"silent": true,
		"label": map[string]any{"position": "insideTop", "color": "#666", "fontSize": 11.0},
		"data": []any{
			[]any{map[string]any{"xAxis": -1.5, "name": "discard", "itemStyle": map[string]any{"color": phaseColors["discard"]}}, map[string]any{"xAxis": 0.0}},
			[]any{map[string]any{"xAxis": 1.0, "name": "ramp", "itemStyle": map[string]any{"color": phaseColors["ramp"]}}, map[string]any{"xAxis": 2.0}},
		}}
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("got %s", got)
	}
	if strings.Contains(string(got), "<b>") {
		t.Errorf("markup left unescaped in %s", got)
	}
	// No phases to shade: the option as it was.
	if got, err := withPhases(raw, nil, true); err != nil || string(got) != string(raw) {
		t.Errorf("without phases: %s, %v", got, err)
	}
}
