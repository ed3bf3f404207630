package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"iolab/bench/stats"
)

// BenchmarkNullVsFio runs the same null-engine job — 4 KiB random reads
// over 1 GiB, iodepth 1 — in fio 3.33 (a child process) and in iolab's job
// loop, alternating, one pair per iteration (run it with -benchtime=5x),
// and reports the medians of iolab / fio: IOPS, as each tool measures its
// own window, and CPU time per I/O, each tool's job thread over its
// window. On a shared machine the IOPS ratio moves with the load; the CPU
// ratio much less.
func BenchmarkNullVsFio(b *testing.B) {
	fio, err := exec.LookPath("fio")
	if err != nil {
		b.Fatal("fio is not installed (apt-get install fio)")
	}
	const size = 1 << 30
	var iops, cpu []float64
	for b.Loop() {
		b.StopTimer()
		f, err := fioNull(fio, size)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		j := nullJob(size / 4096)
		res := runLoop(b, &j)
		ios := res.Dirs[Read].IOs
		if ios != size/4096 || f.ios != ios {
			b.Fatalf("iolab did %d I/Os, fio %d, want %d", ios, f.ios, size/4096)
		}
		iops = append(iops, res.IOPS(Read)/f.iops)
		cpu = append(cpu, float64(res.UsrCPU+res.SysCPU)/float64(ios)/f.cpuPerIO)
	}
	b.ReportMetric(stats.Median(iops), "x-fio-IOPS")
	b.ReportMetric(stats.Median(cpu), "x-fio-CPU/IO")
}

type fioNullRun struct {
	ios      uint64
	iops     float64
	cpuPerIO float64 // ns: its job's usr + sys over the job's runtime
}

// fioNull runs fio's null engine on the job BenchmarkNullVsFio runs.
func fioNull(fio string, size int64) (fioNullRun, error) {
	cmd := exec.Command(fio, "--name=null", "--ioengine=null", "--rw=randread", "--bs=4k", "--iodepth=1",
		"--size="+strconv.FormatInt(size, 10), "--output-format=json")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fioNullRun{}, fmt.Errorf("fio: %w: %s", err, stderr.Bytes())
	}
	var rep struct {
		Jobs []struct {
			JobRuntime int64   `json:"job_runtime"` // ms
			UsrCPU     float64 `json:"usr_cpu"`     // % of the runtime
			SysCPU     float64 `json:"sys_cpu"`
			Read       struct {
				TotalIOs uint64  `json:"total_ios"`
				IOPS     float64 `json:"iops"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Jobs) != 1 || rep.Jobs[0].Read.TotalIOs == 0 {
		return fioNullRun{}, fmt.Errorf("fio's JSON (%v): %s", err, out.Bytes())
	}
	jb := rep.Jobs[0]
	cpu := (jb.UsrCPU + jb.SysCPU) / 100 * float64(time.Duration(jb.JobRuntime)*time.Millisecond)
	return fioNullRun{ios: jb.Read.TotalIOs, iops: jb.Read.IOPS, cpuPerIO: cpu / float64(jb.Read.TotalIOs)}, nil
}
