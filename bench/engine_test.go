package bench

import (
	"reflect"
	"testing"

	"iolab/bench/engine"
)

// TestEngineParamsRoundTrip: every field of engine.Params is copied out of
// a Job and back (Job.EngineParams, setEngineParams), so an engine option
// whose field is added to Params and Job but not to the copies fails here
// rather than being silently dropped.
func TestEngineParamsRoundTrip(t *testing.T) {
	var want engine.Params
	v := reflect.ValueOf(&want).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(int64(i + 7))
		default:
			t.Fatalf("engine.Params.%s is a %s: teach this test to set it", v.Type().Field(i).Name, f.Kind())
		}
	}
	var j Job
	j.setEngineParams(want)
	if got := j.EngineParams(); got != want {
		t.Errorf("Job.EngineParams after setEngineParams = %+v, want %+v", got, want)
	}
	nj := NewJob()
	if got := nj.EngineParams(); got.SQThreadPollCPU != -1 || got.HipriPercentage != 100 {
		t.Errorf("a new job's engine params = %+v: want fio's defaults (sqthread_poll_cpu unset, hipri_percentage 100)", got)
	}
}

// TestEngineOptionsSetTheJob: each engine's own options, adapted to
// OptionSpec, set the job's field and read it back as fio writes it.
func TestEngineOptionsSetTheJob(t *testing.T) {
	for _, tc := range []struct {
		engine, option, value string
		field                 func(*Job) any
		want                  any
	}{
		{"io_uring", "sqthread_poll", "1", func(j *Job) any { return j.SQThreadPoll }, true},
		{"io_uring", "sqthread_poll_cpu", "3", func(j *Job) any { return j.SQThreadPollCPU }, 3},
		{"io_uring", "fixedbufs", "1", func(j *Job) any { return j.FixedBufs }, true},
		{"libaio", "userspace_reap", "1", func(j *Job) any { return j.UserspaceReap }, true},
		{"pvsync2", "hipri_percentage", "40", func(j *Job) any { return j.HipriPercentage }, 40},
		{"pvsync2", "nowait", "1", func(j *Job) any { return j.NoWait }, true},
		{"io_uring", "cmdprio_percentage", "20", func(j *Job) any { return j.CmdprioPercentage }, [2]int{20, 20}},
	} {
		e, ok := LookupEngine(tc.engine)
		if !ok {
			t.Skipf("no %s engine on this platform", tc.engine)
		}
		o, ok := e.Option(tc.option)
		if !ok {
			t.Fatalf("%s has no option %s", tc.engine, tc.option)
		}
		j := NewJob()
		if err := o.Set(&j, tc.value); err != nil {
			t.Fatalf("%s=%s: %v", tc.option, tc.value, err)
		}
		if got := tc.field(&j); got != tc.want {
			t.Errorf("%s=%s: field %v, want %v", tc.option, tc.value, got, tc.want)
		}
		if got := o.Get(&j); got != tc.value {
			t.Errorf("%s=%s: reads back %q", tc.option, tc.value, got)
		}
	}
	if e, ok := LookupEngine("psync"); ok {
		if _, ok := e.Option("cmdprio_percentage"); ok {
			t.Error("psync takes cmdprio_percentage: only engine.CmdPrio engines should")
		}
	}
}
