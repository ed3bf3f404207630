package bench

import (
	"reflect"
	"testing"

	"iolab/bench/hist"
	"iolab/bench/joblog"
)

// TestLogParamsRoundTrip: every field of joblog.Options is a field of Job
// (its LogOptions, or what it measures) that Job.LogParams copies, and
// every log option has one, so a log option added to LogOptions and not to
// Options or the copy fails here rather than being silently dropped.
func TestLogParamsRoundTrip(t *testing.T) {
	var want joblog.Options
	w := reflect.ValueOf(&want).Elem()
	j := NewJob()
	jv := reflect.ValueOf(&j).Elem()
	for i := range w.NumField() {
		name := w.Type().Field(i).Name
		f, jf := w.Field(i), jv.FieldByName(name)
		if !jf.IsValid() || jf.Type() != f.Type() {
			t.Fatalf("joblog.Options.%s is no field of Job of its type", name)
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(!jf.Bool()) // PerJobLogs is on by default
		case reflect.Int:
			f.SetInt(int64(i + 7))
		case reflect.String:
			f.SetString(name + "-prefix")
		default:
			t.Fatalf("joblog.Options.%s is a %s: teach this test to set it", name, f.Kind())
		}
		jf.Set(f)
	}
	if got := j.LogParams(); *got != want {
		t.Errorf("Job.LogParams = %+v, want %+v", *got, want)
	}
	lo := reflect.TypeOf(LogOptions{})
	for i := range lo.NumField() {
		if _, ok := reflect.TypeOf(want).FieldByName(lo.Field(i).Name); !ok {
			t.Errorf("LogOptions.%s has no field in joblog.Options", lo.Field(i).Name)
		}
	}
}

// joblog reads an I/O's priority class by itself (log_prio off: 1 for the
// real-time class, 0 for the others); it must agree with IOPrioValue.
func TestJobLogPrioClass(t *testing.T) {
	j := NewJob()
	j.Name, j.WriteLatLog = "p", true
	jl, err := joblog.Open(j.LogParams(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	var h hist.Histogram
	jl.Start(0, 0)
	for i, class := range []int{IOPrioClassRT, IOPrioClassBE, IOPrioClassIdle, IOPrioClassNone} {
		jl.Completed(int64(i), Read, 5, 9, 4096, 0, &h, true, IOPrioValue(class, 3))
	}
	logs, err := jl.Finish(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if l.Kind != joblog.Lat {
			continue
		}
		want := "0, 9, 0, 4096, 1\n0, 9, 0, 4096, 0\n0, 9, 0, 4096, 0\n0, 9, 0, 4096, 0\n"
		if string(l.Data) != want {
			t.Errorf("lat log:\n%s\nwant (only the real-time class is 1):\n%s", l.Data, want)
		}
		return
	}
	t.Errorf("no lat log among %d", len(logs))
}
