package fio

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

// checkImport compares an import with the fio document it came from,
// number by number.
func checkImport(t *testing.T, rep *Report, imp *FioImport, plus bool) {
	t.Helper()
	var got []*bench.JobResult
	for gi := range imp.Result.Groups {
		for ji := range imp.Result.Groups[gi].Jobs {
			got = append(got, &imp.Result.Groups[gi].Jobs[ji])
		}
	}
	if len(got) != len(rep.Jobs) {
		t.Fatalf("%d job results, fio printed %d jobs", len(got), len(rep.Jobs))
	}
	if imp.Plus != plus {
		t.Errorf("Plus = %v, want %v", imp.Plus, plus)
	}
	for i, jr := range rep.Jobs {
		r := got[i]
		if r.Name != jr.JobName || r.GroupID != jr.GroupID {
			t.Errorf("job %d: %s/%d, want %s/%d", i, r.Name, r.GroupID, jr.JobName, jr.GroupID)
		}
		if r.Ctx != jr.Ctx {
			t.Errorf("job %d: ctx %d, want %d", i, r.Ctx, jr.Ctx)
		}
		if want := jr.UsrCPU / 100 * float64(jr.JobRuntime) / 1000; math.Abs(r.UsrCPU.Seconds()-want) > 1e-6 {
			t.Errorf("job %d: usr cpu %v, want %vs", i, r.UsrCPU, want)
		}
		for d, dr := range []DirReport{jr.Read, jr.Write} {
			out := r.Dirs[d]
			if out.IOs != dr.TotalIOs || out.Bytes != dr.IOBytes {
				t.Errorf("job %d dir %d: ios %d bytes %d, want %d %d", i, d, out.IOs, out.Bytes, dr.TotalIOs, dr.IOBytes)
			}
			if dr.TotalIOs > 0 && dr.Runtime == uint64(r.Runtime.Milliseconds()) && math.Abs(r.IOPS(d)-dr.IOPS) > 1e-6*dr.IOPS {
				t.Errorf("job %d dir %d: iops %f, want %f", i, d, r.IOPS(d), dr.IOPS)
			}
			if out.Clat.Stat.N != dr.Clat.N || out.Clat.Stat.Min != dr.Clat.Min || out.Clat.Stat.Max != dr.Clat.Max {
				t.Errorf("job %d dir %d: clat %+v, want %+v", i, d, out.Clat.Stat, dr.Clat)
			}
			if dr.Clat.N > 1 && math.Abs(out.Clat.Stat.Stddev()-dr.Clat.Stddev) > 1e-9*dr.Clat.Stddev+1e-9 {
				t.Errorf("job %d dir %d: clat stddev %f, want %f", i, d, out.Clat.Stat.Stddev(), dr.Clat.Stddev)
			}
			if !plus || dr.Clat.N == 0 {
				if out.Clat.Hist.N() != 0 {
					t.Errorf("job %d dir %d: a histogram without bins", i, d)
				}
				continue
			}
			if out.Clat.Hist.N() != dr.Clat.N {
				t.Errorf("job %d dir %d: histogram holds %d, want %d", i, d, out.Clat.Hist.N(), dr.Clat.N)
			}
			if len(dr.Clat.Percentile) == 0 {
				t.Fatalf("job %d dir %d: fio printed no percentiles", i, d)
			}
			list := make([]float64, len(dr.Clat.Percentile))
			for k, p := range dr.Clat.Percentile {
				list[k] = p.Percentile
			}
			vals := out.Clat.Hist.Percentiles(list)
			for k, p := range dr.Clat.Percentile {
				if vals[k] != p.Value {
					t.Errorf("job %d dir %d: p%g = %d, fio says %d", i, d, p.Percentile, vals[k], p.Value)
				}
			}
		}
	}
}

func TestImportFioTestdata(t *testing.T) {
	imp, rep := parseTestdata(t, fioTestdata)
	checkImport(t, rep, imp, true)
	r := imp.Result.Groups[0].Jobs[0]
	// Straight from the file.
	if r.Dirs[bench.Read].IOs != 114485 || r.Runtime != 2001*time.Millisecond || math.Abs(r.IOPS(bench.Read)-57213.893053) > 1e-5 {
		t.Errorf("read: %d ios in %v = %f iops", r.Dirs[bench.Read].IOs, r.Runtime, r.IOPS(bench.Read))
	}
	if v := r.Dirs[bench.Read].Clat.Hist.Percentiles([]float64{50, 99.99}); v[0] != 63744 || v[1] != 1204224 {
		t.Errorf("read clat p50, p99.99 = %v, want 63744 1204224", v)
	}
	if j := r.Job; j.IOEngine != "io_uring" || j.IODepth != 8 || j.BS != 4096 || j.RW != "randrw" || j.RWMixRead != 70 || !j.Direct || j.Filename != "/dev/loop0" {
		t.Errorf("job options: %+v", j)
	}
	if d := imp.Result.Groups[0].Disks; len(d) != 1 || d[0].Name != "loop0" || d[0].ReadIOs != 108110 || d[0].Util != 94.837093 {
		t.Errorf("disks: %+v", d)
	}
}

// TestImportFioCutStream: a --status-interval stream whose last document
// was cut off imports the last complete one.
func TestImportFioCutStream(t *testing.T) {
	data, err := os.ReadFile(fioTestdata)
	if err != nil {
		t.Fatal(err)
	}
	stream := append(append(append([]byte(nil), data...), '\n'), data[:len(data)/2]...)
	imp, err := ParseFio(stream)
	if err != nil {
		t.Fatal(err)
	}
	if got := imp.Result.Groups[0].Jobs[0].Dirs[bench.Read].IOs; got != 114485 {
		t.Fatalf("%d reads, want the complete document's 114485", got)
	}
}

func TestImportFioBadInput(t *testing.T) {
	data, err := os.ReadFile(fioTestdata)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, in, want string
	}{
		{"empty", "", "empty"},
		{"not json", "hello world\n", "not JSON"},
		{"broken json", "{\"fio version\": nope}", "invalid character"},
		{"truncated", string(data[:len(data)/2]), "unexpected EOF"},
		{"not fio", `{"jobs": [{"jobname": "x"}]}`, "not fio's"},
		{"no jobs", `{"fio version": "fio-3.33", "jobs": []}`, "no jobs"},
		{"missing field", strings.Replace(string(data), `"total_ios"`, `"total_ios_v9"`, 1), `missing "total_ios"`},
		{"missing N", strings.Replace(string(data), `"N"`, `"count"`, 1), `missing "N"`},
		{"bad bin", strings.Replace(string(data), `"652" : 1`, `"653" : 1`, 1), "bucket midpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFio([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestImportFioUnknownOptions(t *testing.T) {
	j := fioJob("x", Options{{Name: "ioengine", Value: "libaio"}}, Options{{Name: "name", Value: "x"},
		{Name: "iodepth", Value: "16"}, {Name: "verify", Value: "md5"}, {Name: "zonemode", Value: "zbd"}})
	if j.IOEngine != "libaio" || j.IODepth != 16 {
		t.Errorf("job %+v", j)
	}
	want := []bench.Option{{Name: "iodepth", Value: "16"}, {Name: "verify", Value: "md5"}, {Name: "zonemode", Value: "zbd"}}
	if len(j.Options) != len(want) {
		t.Fatalf("options %v, want %v", j.Options, want)
	}
	for i := range want {
		if j.Options[i] != want[i] {
			t.Errorf("options %v, want %v", j.Options, want)
		}
	}
}

// TestImportFioLive runs fio itself: json and json+, two jobs, numjobs=2
// with group_reporting, and --status-interval's several documents.
func TestImportFioLive(t *testing.T) {
	fio, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed")
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name   string
		args   []string
		groups int
		jobs   int
		docs   int // at least
	}{
		{"json-two-jobs", []string{"--output-format=json", "--name=a", "--rw=randread", "--name=b", "--rw=write", "--bs=8k"}, 1, 2, 1},
		{"jsonplus-two-jobs", []string{"--output-format=json+", "--name=a", "--rw=randrw", "--name=b", "--rw=read", "--stonewall"}, 2, 2, 1},
		{"jsonplus-group-reporting", []string{"--output-format=json+", "--group_reporting", "--numjobs=2", "--name=g", "--rw=randwrite"}, 1, 1, 1},
		{"status-interval", []string{"--output-format=json+", "--status-interval=1", "--time_based", "--runtime=2500ms", "--name=s", "--rw=randread"}, 1, 1, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(dir, tt.name+".json")
			args := append([]string{"--ioengine=null", "--size=64m", "--output=" + out}, tt.args...)
			if cmd := exec.Command(fio, args...); true {
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("fio %v: %v\n%s", args, err, b)
				}
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			reps, err := ParseReports(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) < tt.docs {
				t.Fatalf("%d documents, want at least %d", len(reps), tt.docs)
			}
			imp, err := ParseFio(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(imp.Result.Groups) != tt.groups {
				t.Errorf("%d groups, want %d", len(imp.Result.Groups), tt.groups)
			}
			checkImport(t, &reps[len(reps)-1], imp, strings.Contains(tt.args[0], "json+"))
			n := 0
			for _, g := range imp.Result.Groups {
				n += len(g.Jobs)
				for _, j := range g.Jobs {
					if j.Job.IOEngine != "null" || j.Job.Size != 64<<20 {
						t.Errorf("job %s: engine %s size %d", j.Name, j.Job.IOEngine, j.Job.Size)
					}
				}
			}
			if n != tt.jobs {
				t.Errorf("%d job results, want %d", n, tt.jobs)
			}
			if tt.name == "jsonplus-group-reporting" {
				g := imp.Result.Groups[0]
				if !g.Reporting || g.Jobs[0].Jobs != 2 {
					t.Errorf("group reporting %v, jobs merged %d", g.Reporting, g.Jobs[0].Jobs)
				}
			}
		})
	}
}
