package fio

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

const clientTestdata = "testdata/client/"

func readClientTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(clientTestdata + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// clientReport is the document of a client output, as read.
func clientReport(t *testing.T, data []byte) *Report {
	t.Helper()
	reps, err := ParseReports(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || !reps[0].IsClient() {
		t.Fatalf("%d documents, client output %v", len(reps), len(reps) == 1 && reps[0].IsClient())
	}
	return &reps[0]
}

func TestImportClientOneServer(t *testing.T) {
	data := readClientTestdata(t, "client-one.jsonplus.json")
	imp, err := ParseFio(data)
	if err != nil {
		t.Fatal(err)
	}
	want := Server{"10.213.201.2", 8765}
	if imp.Server == nil || *imp.Server != want || imp.Result.Host.Hostname != want.Hostname {
		t.Fatalf("server %v, host %q: want %v", imp.Server, imp.Result.Host.Hostname, want)
	}
	hosts, _ := clientReport(t, data).Hosts()
	checkImport(t, &hosts[0], imp, true)
	r := imp.Result.Groups[0].Jobs[0]
	if r.Name != "reader" || r.Job.RW != "randread" || r.Job.IOEngine != "psync" || r.Job.Filename != "/tmp/fleetcap/a.img" || r.Job.Runtime != 500*time.Millisecond {
		t.Errorf("job %s: %+v", r.Name, r.Job)
	}
	// The client's timestamp is when it started: the job starts then.
	if got, want := r.Start, time.Unix(clientReport(t, data).Timestamp, 0); !got.Equal(want) {
		t.Errorf("job start %v, want the client's timestamp %v", got, want)
	}
	if !slices.ContainsFunc(imp.Notes, func(n string) bool { return strings.Contains(n, "when the run started") }) {
		t.Errorf("notes %q: want one on the client's timestamp", imp.Notes)
	}
	imps, err := ParseFioHosts(data)
	if err != nil || len(imps) != 1 || imps[0].Digest != imp.Digest {
		t.Errorf("ParseFioHosts: %d imports, %v; want the one ParseFio makes", len(imps), err)
	}
}

// TestImportClientServers: each server's jobs are its own — the same
// numbers as its own entries, never added to the other's, and fio's "All
// clients" sum is no job.
func TestImportClientServers(t *testing.T) {
	for _, name := range []string{"client-two.json", "client-two-fio3.39.json"} {
		t.Run(name, func(t *testing.T) {
			data := readClientTestdata(t, name)
			_, err := ParseFio(data)
			if err == nil || !strings.Contains(err.Error(), "2 servers (10.213.202.2,8765, 10.213.201.2,8765)") {
				t.Errorf("ParseFio: %v; want an error naming both servers", err)
			}
			imps, err := ParseFioHosts(data)
			if err != nil {
				t.Fatal(err)
			}
			hosts, notes := clientReport(t, data).Hosts()
			if len(imps) != 2 || len(hosts) != 2 || len(notes) != 0 {
				t.Fatalf("%d imports, %d hosts, notes %q: want 2, 2, none", len(imps), len(hosts), notes)
			}
			for i, imp := range imps {
				host := []string{"10.213.202.2", "10.213.201.2"}[i]
				if imp.Server.Hostname != host || imp.Result.Host.Hostname != host {
					t.Errorf("import %d: server %v host %q, want %s", i, imp.Server, imp.Result.Host.Hostname, host)
				}
				checkImport(t, &hosts[i], imp, false)
				g := imp.Result.Groups[0]
				if len(g.Jobs) != 2 || g.Jobs[0].Name != "reader" || g.Jobs[1].Name != "writer" {
					t.Fatalf("import %d: jobs %+v", i, g.Jobs)
				}
				if g.Jobs[0].Job.Filename != "/tmp/fleetcap/a.img" || g.Jobs[1].Job.Filename != "/tmp/fleetcap/b.img" || g.Jobs[1].Job.RW != "write" {
					t.Errorf("import %d: jobs %+v, %+v", i, g.Jobs[0].Job, g.Jobs[1].Job)
				}
				if len(imp.Config.GlobalOptions) != 5 {
					t.Errorf("import %d: global options %v, want the job file's 5 once (fio 3.33 leaves time_based out)", i, imp.Config.GlobalOptions)
				}
				if len(g.Disks) != 1 || g.Disks[0].Name != "vda" || g.Disks[0].Util != []float64{34.166667, 32.454361}[i] {
					t.Errorf("import %d: disks %+v, want its own vda", i, g.Disks)
				}
			}
			if imps[0].Digest == imps[1].Digest {
				t.Error("both servers' imports have one digest")
			}
			// The numbers straight from the file: 202's reader did 9331
			// reads, 201's 9202; "All clients" said 18533.
			if a, b := imps[0].Result.Groups[0].Jobs[0].Dirs[bench.Read].IOs, imps[1].Result.Groups[0].Jobs[0].Dirs[bench.Read].IOs; a != 9331 || b != 9202 {
				t.Errorf("readers' reads %d and %d, want 9331 and 9202", a, b)
			}
		})
	}
}

// TestImportClientSameAcrossVersions: fio 3.39's per-server global
// options import as fio 3.33's shared object does.
func TestImportClientSameAcrossVersions(t *testing.T) {
	old, err := ParseFioHosts(readClientTestdata(t, "client-two.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep := clientReport(t, readClientTestdata(t, "client-two-fio3.39.json"))
	if len(rep.HostGlobalOptions) != 2 || rep.HostGlobalOptions[1].Server != (Server{"10.213.201.2", 8765}) || len(rep.HostGlobalOptions[1].Options) != 5 {
		t.Fatalf("per-server global options %+v", rep.HostGlobalOptions)
	}
	imps, err := ImportFioHosts([]Report{*rep})
	if err != nil {
		t.Fatal(err)
	}
	for i := range imps {
		if !slices.Equal(imps[i].Config.GlobalOptions, old[i].Config.GlobalOptions) || imps[i].Config.Jobs[1].Filename != old[i].Config.Jobs[1].Filename {
			t.Errorf("server %d: %v, want %v", i, imps[i].Config.GlobalOptions, old[i].Config.GlobalOptions)
		}
	}
}

func TestImportClientEdges(t *testing.T) {
	two := string(readClientTestdata(t, "client-two.json"))
	t.Run("a job named All clients", func(t *testing.T) {
		// A job of that name has job options: it is a job.
		data := strings.Replace(two, `"jobname" : "reader"`, `"jobname" : "All clients"`, 1)
		imps, err := ParseFioHosts([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if jobs := imps[0].Result.Groups[0].Jobs; len(jobs) != 2 || jobs[0].Name != "All clients" {
			t.Errorf("jobs %v", jobs)
		}
	})
	t.Run("servers' global options differ", func(t *testing.T) {
		i := strings.LastIndex(two, `"runtime" : "500ms"`)
		data := two[:i] + `"runtime" : "1s"` + two[i+len(`"runtime" : "500ms"`):]
		imps, err := ParseFioHosts([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(imps[0].Notes, func(n string) bool { return strings.Contains(n, "differ (runtime)") }) {
			t.Errorf("notes %q: want one saying the servers' runtime differs", imps[0].Notes)
		}
	})
	t.Run("refused", func(t *testing.T) {
		data := readClientTestdata(t, "client-refused.json")
		if rep := clientReport(t, data); len(rep.ClientStats) != 0 {
			t.Fatalf("%d entries", len(rep.ClientStats))
		}
		for _, parse := range []func([]byte) error{
			func(b []byte) error { _, err := ParseFio(b); return err },
			func(b []byte) error { _, err := ParseFioHosts(b); return err },
		} {
			err := parse(data)
			if err == nil || !strings.Contains(err.Error(), "no results") || !strings.Contains(err.Error(), "<fleet-a> Bad option <not_an_option=1>; <fleet-a> fio: job reader dropped") {
				t.Errorf("err = %v; want no results, and what the server said", err)
			}
		}
	})
	t.Run("failed", func(t *testing.T) {
		data := readClientTestdata(t, "client-failed.json")
		msgs := ClientMessages(data)
		want := []string{"<fleet-a> fio: failed to create dir (/proc/iolab-none): No such file or directory", "client <10.213.201.2>: exited with error 1"}
		if !slices.Equal(msgs, want) {
			t.Errorf("messages %q, want %q", msgs, want)
		}
		imp, err := ParseFio(data)
		if err != nil {
			t.Fatal(err)
		}
		if r := imp.Result.Groups[0].Jobs[0]; r.Dirs[bench.Read].IOs != 0 {
			t.Errorf("%d reads, want none", r.Dirs[bench.Read].IOs)
		}
	})
}
