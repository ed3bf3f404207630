package db

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
)

// pageFixture stores n runs whose names, hosts, statuses and creation
// times repeat (ties on every sort key but the id), and returns them as
// stored.
func pageFixture(t *testing.T, s *Store, n int) []Run {
	t.Helper()
	ctx := context.Background()
	hosts := []string{"lab2", "lab1", "lab3"}
	statuses := []string{StatusDone, StatusFailed, StatusDone, StatusPartial}
	sources := []string{SourceLocal, SourceImport, SourceAgent, SourceFio, SourcePush}
	engines := [][]string{{"io_uring"}, {"libaio", "io_uring"}, {"psync"}}
	scheds := [][]string{{"none"}, {"mq-deadline", "kyber"}, nil}
	tags := [][]string{{"nightly"}, nil, {"nightly", "nvme"}, {"weekly"}}
	rws := []string{"randread", "randwrite"}
	var runs []Run
	for i := range n {
		r := &Run{Name: fmt.Sprintf("Sweep %d", i%4), Status: statuses[i%len(statuses)], Source: sources[i%len(sources)],
			Created: at(i / 3), Hostname: hosts[i%len(hosts)], Kernel: fmt.Sprintf("6.%d", i%2), Target: fmt.Sprintf("/dev/vd%c", 'a'+i%3),
			Engines: engines[i%len(engines)], Schedulers: scheds[i%len(scheds)], Tags: tags[i%len(tags)], Host: testHost(),
			Plan: sweep.Plan{Base: bench.Config{Jobs: []bench.Job{{Name: "j", RW: rws[i%2], BS: 4096}}}}}
		if i == 5 {
			r.Name = "100%_done"
		}
		if _, err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, *got)
	}
	return runs
}

// sortedRuns is runs in sort's order, as RunPage must give them.
func sortedRuns(runs []Run, sort RunSort) []int64 {
	srt, desc, err := sort.parse()
	if err != nil {
		panic(err)
	}
	l := slices.Clone(runs)
	slices.SortFunc(l, func(a, b Run) int {
		la, lb := listed(a), listed(b)
		ka, kb := srt.keyOf(&la), srt.keyOf(&lb)
		c := cmp.Or(strings.Compare(ka.key, kb.key), cmp.Compare(ka.created, kb.created), cmp.Compare(ka.id, kb.id))
		if desc {
			return -c
		}
		return c
	})
	return ids(l)
}

// listed is what the list reads of r.
func listed(r Run) ListedRun {
	return ListedRun{ID: r.ID, Name: r.Name, Status: r.Status, Hostname: r.Hostname, Created: r.Created}
}

func ids[R Run | ListedRun](runs []R) []int64 {
	l := []int64{}
	for _, r := range runs {
		switch r := any(r).(type) {
		case Run:
			l = append(l, r.ID)
		case ListedRun:
			l = append(l, r.ID)
		}
	}
	return l
}

// Walking Next from the first page, and Prev from the last, gives every
// run once in order, in each sort both ways, with the positions and
// total right on every page.
func TestRunPageKeyset(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	runs := pageFixture(t, s, 23)
	for _, name := range RunSorts() {
		for _, sort := range []RunSort{RunSort(name), RunSort("-" + name)} {
			for _, limit := range []int{1, 4, 23, 100} {
				t.Run(fmt.Sprintf("%s/%d", sort, limit), func(t *testing.T) {
					want := sortedRuns(runs, sort)
					var got []int64
					var last *RunPage
					q := RunQuery{RunFilter: RunFilter{Limit: limit}, Sort: sort}
					for pages := 0; ; pages++ {
						if pages > len(runs) {
							t.Fatal("Next never ends")
						}
						p, err := s.RunPage(ctx, q)
						if err != nil {
							t.Fatal(err)
						}
						if p.Total != len(runs) || p.First != len(got)+1 {
							t.Fatalf("page %d: total %d first %d, want %d and %d", pages, p.Total, p.First, len(runs), len(got)+1)
						}
						if (p.Prev != "") != (pages > 0) {
							t.Errorf("page %d: prev %q", pages, p.Prev)
						}
						got = append(got, ids(p.Runs)...)
						last = p
						if p.Next == "" {
							break
						}
						q.After = p.Next
					}
					if !slices.Equal(got, want) {
						t.Fatalf("forward:\n got %v\nwant %v", got, want)
					}
					// Back from the last page.
					got = ids(last.Runs)
					for p := last; p.Prev != ""; {
						var err error
						if p, err = s.RunPage(ctx, RunQuery{RunFilter: RunFilter{Limit: limit}, Sort: sort, Before: p.Prev}); err != nil {
							t.Fatal(err)
						}
						if p.First != len(runs)-len(got)-len(p.Runs)+1 || p.Next == "" {
							t.Fatalf("back: first %d next %q, with %d read", p.First, p.Next, len(got))
						}
						got = append(ids(p.Runs), got...)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("backward:\n got %v\nwant %v", got, want)
					}
				})
			}
		}
	}
}

// Each filter keeps exactly the runs that match it, on the first page and
// in the counts, alone and with another.
func TestRunPageFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	runs := pageFixture(t, s, 30)
	for _, tt := range []struct {
		name   string
		filter RunFilter
		keep   func(r Run) bool
	}{
		{"host", RunFilter{Hostname: "lab3"}, func(r Run) bool { return r.Hostname == "lab3" }},
		{"kernel", RunFilter{Kernel: "6.1"}, func(r Run) bool { return r.Kernel == "6.1" }},
		{"target", RunFilter{Target: "/dev/vdb"}, func(r Run) bool { return r.Target == "/dev/vdb" }},
		{"status", RunFilter{Status: StatusDone}, func(r Run) bool { return r.Status == StatusDone }},
		{"source agent", RunFilter{Source: SourceAgent}, func(r Run) bool { return r.Source == SourceAgent }},
		{"source fio", RunFilter{Source: SourceFio}, func(r Run) bool { return r.Source == SourceFio }},
		{"engine", RunFilter{Engine: "io_uring"}, func(r Run) bool { return slices.Contains(r.Engines, "io_uring") }},
		{"scheduler", RunFilter{Scheduler: "kyber"}, func(r Run) bool { return slices.Contains(r.Schedulers, "kyber") }},
		{"tag", RunFilter{Tag: "nightly"}, func(r Run) bool { return slices.Contains(r.Tags, "nightly") }},
		{"workload", RunFilter{Workload: "randwrite 4k"}, func(r Run) bool { return Workload(r) == "randwrite 4k" }},
		{"name any case", RunFilter{Name: "sweep 1"}, func(r Run) bool { return r.Name == "Sweep 1" }},
		{"name with LIKE's signs", RunFilter{Name: "0%_"}, func(r Run) bool { return r.Name == "100%_done" }},
		{"name % alone", RunFilter{Name: "%"}, func(r Run) bool { return strings.Contains(r.Name, "%") }},
		{"since", RunFilter{Since: at(4)}, func(r Run) bool { return !r.Created.Before(at(4)) }},
		{"until", RunFilter{Until: at(4)}, func(r Run) bool { return r.Created.Before(at(4)) }},
		{"since and until", RunFilter{Since: at(2), Until: at(5)}, func(r Run) bool { return !r.Created.Before(at(2)) && r.Created.Before(at(5)) }},
		{"host and tag", RunFilter{Hostname: "lab1", Tag: "nightly"}, func(r Run) bool { return r.Hostname == "lab1" && slices.Contains(r.Tags, "nightly") }},
		{"engine and scheduler", RunFilter{Engine: "io_uring", Scheduler: "none"}, func(r Run) bool {
			return slices.Contains(r.Engines, "io_uring") && slices.Contains(r.Schedulers, "none")
		}},
		{"none", RunFilter{Hostname: "nope"}, func(Run) bool { return false }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var keep []Run
			for _, r := range runs {
				if tt.keep(r) {
					keep = append(keep, r)
				}
			}
			if tt.name != "none" && len(keep) == 0 {
				t.Fatal("the fixture has no run for this filter")
			}
			want := sortedRuns(keep, "")
			f := tt.filter
			f.Limit = 100
			p, err := s.RunPage(ctx, RunQuery{RunFilter: f})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Runs); !slices.Equal(got, want) || p.Total != len(want) {
				t.Errorf("got %v (total %d), want %v", got, p.Total, want)
			}
			list, err := s.ListRuns(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(list); !slices.Equal(got, want) {
				t.Errorf("ListRuns: got %v, want %v", got, want)
			}
			// A page of 2 in the middle counts from the runs before it.
			f.Limit = 2
			if p, err = s.RunPage(ctx, RunQuery{RunFilter: f}); err != nil || (len(want) > 2) != (p.Next != "") {
				t.Fatalf("first page of 2: next %q, %v", p.Next, err)
			}
			if p.Next != "" {
				if p, err = s.RunPage(ctx, RunQuery{RunFilter: f, After: p.Next}); err != nil || p.First != 3 || p.Total != len(want) {
					t.Fatalf("second page of 2: first %d total %d, %v", p.First, p.Total, err)
				}
			}
		})
	}
}

// Tags edited after the run was stored are what the tag filter sees, and
// a deleted run leaves no facet behind.
func TestRunFacetsFollowChanges(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	runs := pageFixture(t, s, 3)
	id := runs[1].ID
	// The choices and counts, read (and kept) before the change.
	if ch, err := s.RunChoices(ctx); err != nil || slices.Contains(ch.Tags, "fresh") {
		t.Fatalf("choices before: %v %v", ch, err)
	}
	if p, err := s.RunPage(ctx, RunQuery{RunFilter: RunFilter{Tag: "fresh"}}); err != nil || p.Total != 0 {
		t.Fatalf("tag fresh before: %v %v", p, err)
	}
	if _, err := s.SetTags(ctx, id, []string{"fresh"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.RunPage(ctx, RunQuery{RunFilter: RunFilter{Tag: "fresh"}})
	if err != nil || !slices.Equal(ids(p.Runs), []int64{id}) || p.Total != 1 {
		t.Fatalf("tag fresh: %v (total %d) %v", ids(p.Runs), p.Total, err)
	}
	if ch, err := s.RunChoices(ctx); err != nil || !slices.Contains(ch.Tags, "fresh") {
		t.Fatalf("choices after: %v %v", ch, err)
	}
	if err := s.DeleteRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM run_facets WHERE run_id = ?`, id).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d facets of the deleted run left (%v)", n, err)
	}
	ch, err := s.RunChoices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Hosts, []string{"lab2", "lab3"}) || !slices.Equal(ch.Tags, []string{"nightly", "nvme"}) ||
		!slices.Equal(ch.Workloads, []string{"randread 4k"}) {
		t.Errorf("choices: hosts %v tags %v workloads %v", ch.Hosts, ch.Tags, ch.Workloads)
	}
}

// Runs stored before migration 0011 have their facets and workload
// filled in when the store is opened.
func TestRunListMigrationFills(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	runs := pageFixture(t, s, 4)
	// Undo what 0011 (and 0012) and CreateRun did, as a store of 0010 has it.
	for _, q := range []string{`DELETE FROM run_facets`, `UPDATE runs SET workload = NULL`, `PRAGMA user_version = 10`,
		`DROP TRIGGER run_facets_insert`, `DROP TRIGGER run_facets_update`, `DROP TABLE run_facets`,
		`DROP INDEX runs_name`, `DROP INDEX runs_source`, `DROP INDEX runs_workload`, `ALTER TABLE runs DROP COLUMN workload`,
		`ALTER TABLE runs DROP COLUMN planned_lo`, `ALTER TABLE runs DROP COLUMN planned_hi`,
		`ALTER TABLE steps DROP COLUMN prep`} { // 0012's
		if _, err := s.write.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, f := range []RunFilter{{Engine: "libaio"}, {Tag: "nvme"}, {Scheduler: "none"}, {Workload: "randwrite 4k"}} {
		p, err := s.RunPage(ctx, RunQuery{RunFilter: f})
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, r := range runs {
			if slices.Contains(r.Engines, f.Engine) || slices.Contains(r.Tags, f.Tag) || slices.Contains(r.Schedulers, f.Scheduler) ||
				(f.Workload != "" && Workload(r) == f.Workload) {
				want = append(want, r.ID)
			}
		}
		slices.Reverse(want)
		if got := ids(p.Runs); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%+v: got %v, want %v", f, got, want)
		}
		for _, r := range p.Runs {
			if r.PlannedMax != 1 || r.Workload == "" {
				t.Errorf("run %d: planned %d, workload %q: not filled in", r.ID, r.PlannedMax, r.Workload)
			}
		}
	}
}

// A listed run is the stored run's row and what the list shows of its
// plan, read without it.
func TestListedRun(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	r := testRun()
	r.Status = StatusDone
	if _, err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.RunPage(ctx, RunQuery{})
	if err != nil || len(p.Runs) != 1 {
		t.Fatalf("%v %v", p, err)
	}
	l := p.Runs[0]
	lo, hi := got.Plan.Planned()
	if l.ID != got.ID || l.UID != got.UID || l.Name != got.Name || l.Source != got.Source || !l.Created.Equal(got.Created) ||
		l.Hostname != "lab1" || l.Kernel != got.Kernel || l.Target != got.Target || !slices.Equal(l.Engines, got.Engines) ||
		!slices.Equal(l.Tags, got.Tags) || l.Workload != Workload(*got) || l.Workload == "" || l.PlannedMin != lo || l.PlannedMax != hi || hi != 18 {
		t.Errorf("listed %+v\nstored %+v (planned %d…%d)", l, got, lo, hi)
	}
	for _, c := range RunColumns() {
		if c.Name == "steps" && c.Value(l) != StepsText(*got) {
			t.Errorf("steps %q, want %q", c.Value(l), StepsText(*got))
		}
	}
}

// Bad sorts, cursors and limits are refused with what to do.
func TestRunPageRefuses(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	pageFixture(t, s, 2)
	for _, tt := range []struct {
		name string
		q    RunQuery
		want string
	}{
		{"sort", RunQuery{Sort: "size"}, "sort \"size\": use one of date, name, host, status"},
		{"limit", RunQuery{RunFilter: RunFilter{Limit: 101}}, "limit 101: at most 100"},
		{"cursor", RunQuery{After: "abc"}, "use a link's after= or before="},
		{"cursor of another sort", RunQuery{Sort: "name", After: "1.2"}, "is not one of the name order's"},
		{"cursor too long", RunQuery{Before: strings.Repeat("1", MaxCursorLen+1)}, "at most 1024"},
		{"both", RunQuery{After: "1.2", Before: "1.2"}, "after and before both given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.RunPage(ctx, tt.q)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// Every sort's first page and every filter's reads runs along an index:
// no step of the plan scans the runs table (or run_facets) whole, and a
// filter on facets alone counts along run_facets' key without reading
// runs.
func TestRunPageUsesIndexes(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	pageFixture(t, s, 30)
	// The planner's choices with the statistics of a store in use.
	if _, err := s.write.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	filters := map[string]RunFilter{
		"none": {}, "host": {Hostname: "lab1"}, "kernel": {Kernel: "6.1"}, "target": {Target: "/dev/vda"},
		"status": {Status: StatusDone}, "source": {Source: SourceAgent}, "workload": {Workload: "randread 4k"},
		"engine": {Engine: "psync"}, "scheduler": {Scheduler: "kyber"}, "tag": {Tag: "weekly"},
		"since": {Since: at(3)}, "until": {Until: at(3)}, "name": {Name: "sweep"},
		"host and tag": {Hostname: "lab2", Tag: "nightly"},
	}
	c := cursor{key: "lab1", created: at(2).UnixNano(), id: 5}
	for fname, f := range filters {
		for _, srt := range runSorts {
			queries := map[string]func() (string, []any){
				"first page": func() (string, []any) { return pageSQL(f, srt, srt.Desc, nil, 51) },
				"next page":  func() (string, []any) { return pageSQL(f, srt, srt.Desc, &c, 51) },
				"count":      func() (string, []any) { return countSQL(f, srt, srt.Desc, nil) },
				"position":   func() (string, []any) { return countSQL(f, srt, srt.Desc, &c) },
			}
			for qname, build := range queries {
				q, args := build()
				rows, err := s.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				var plan []string
				for rows.Next() {
					var id, parent, unused int
					var detail string
					if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
						t.Fatal(err)
					}
					plan = append(plan, detail)
				}
				rows.Close()
				t.Logf("%s, %s, %s: %s", fname, srt.Name, qname, strings.Join(plan, "; "))
				for _, d := range plan {
					if strings.HasPrefix(d, "SCAN ") && !strings.Contains(d, "USING") {
						t.Errorf("%s, sorted by %s, %s: %q scans the table\n%s\n%s", fname, srt.Name, qname, d, q, strings.Join(plan, "\n"))
					}
				}
			}
		}
	}
}

// A page is as fresh as the store: a run stored between two pages shows
// in the counts.
func TestRunPageCountsNewRuns(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	pageFixture(t, s, 5)
	p, err := s.RunPage(ctx, RunQuery{RunFilter: RunFilter{Limit: 2}})
	if err != nil || p.Total != 5 {
		t.Fatalf("total %d, %v", p.Total, err)
	}
	r := testRun()
	r.Created = time.Now()
	if _, err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	next, err := s.RunPage(ctx, RunQuery{RunFilter: RunFilter{Limit: 2}, After: p.Next})
	if err != nil || next.Total != 6 || next.First != 4 {
		t.Fatalf("after a new run: total %d first %d, %v", next.Total, next.First, err)
	}
}
