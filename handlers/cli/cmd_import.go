package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"iolab/db"
)

var importCommand = command{
	name:    "import",
	summary: "store iolab exports or fio's JSON output (json, json+) as runs",
	usage:   "[--db FILE] [--host HOST] [--kernel RELEASE] [--label LABEL]… [--name NAME | --as-run NAME] FILE|DIR|-…",
	about: `Each file is an iolab export (iolab export) or fio's JSON output; a directory stands for its *.json
files, sorted; - is the standard input (once). A --status-interval stream of JSON documents imports its
last, the final report. With --as-run fio's outputs are one run, each file's steps after the one before, the same
axis values again counting as repeats. fio's client output of several servers (fio --client=A --client=B)
imports as a group, one run per server named by its address, which the dashboard's group page shows as one
system (docs/fleets.md). It prints each run's id; a run imported before keeps its id.

  iolab import run7.json
  fio … --output-format=json+ > out.json
  iolab import --host lab-a --kernel 6.12.0 --label iommu=off out.json
  iolab import --as-run "qd sweep" --host lab-a results/
  iolab run --status-interval=1 --output-format=json … | iolab import -`,
	flags: func(fs *flag.FlagSet) runFunc {
		var o importOptions
		fs.Var((*storePath)(&o.dbPath), "db", storePathUsage)
		fs.StringVar(&o.Hostname, "host", "", "the `HOST` fio ran on (fio's output does not say)")
		fs.StringVar(&o.Kernel, "kernel", "", "the kernel `RELEASE` fio ran on (as uname -r says it)")
		fs.StringVar(&o.Name, "name", "", "the run's `NAME` (default: the first job's)")
		fs.StringVar(&o.asRun, "as-run", "", "import fio's outputs as one run called `NAME`: each file's steps in turn, the same axis values again as repeats")
		fs.Var(&o.labels, "label", "a `LABEL` for the run (repeatable)")
		return func(ctx context.Context, e *env, args []string) error { return importRuns(ctx, e, &o, args) }
	},
}

// importOptions are `iolab import`'s flags.
type importOptions struct {
	db.ImportOptions
	dbPath, asRun string
	labels        stringList
}

// importRuns stores each file, an iolab export or fio's JSON output, in
// one transaction each; a directory stands for its *.json files, sorted.
// With --as-run the files (fio's outputs) are one run, each file's steps
// after the one before. It prints each run's id.
func importRuns(ctx context.Context, e *env, opts *importOptions, args []string) error {
	if len(args) == 0 {
		return e.usage()
	}
	o := opts.ImportOptions
	if opts.asRun != "" && o.Name != "" {
		return usageError{"import: --as-run names the run; give it or --name, not both"}
	}
	o.Labels = opts.labels
	files, err := importFiles(args)
	if err != nil {
		return err
	}
	// Read and check every file before opening the store.
	var (
		docs    []*db.Export
		sources []string
		groups  []clientGroup // fio's client output of several servers
	)
	if opts.asRun != "" {
		o.Name = opts.asRun
		datas := make([][]byte, len(files))
		for i, f := range files {
			if datas[i], err = readImport(e, f); err != nil {
				return fmt.Errorf("import %s: %w", f, err)
			}
		}
		doc, err := db.ParseFioRun(files, datas, o)
		if err != nil {
			return err
		}
		docs, sources = []*db.Export{doc}, []string{db.SourceFio}
	} else {
		for _, f := range files {
			data, err := readImport(e, f)
			if err != nil {
				return fmt.Errorf("import %s: %w", f, err)
			}
			if exps, hosts := db.ClientExports(data, o); exps != nil {
				groups = append(groups, clientGroup{file: f, exps: exps, hosts: hosts})
				continue
			}
			doc, source, err := db.ParseImport(data, o)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			docs, sources = append(docs, doc), append(sources, source)
		}
	}
	store, err := openStoreFlag(ctx, e, opts.dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	for i, doc := range docs {
		what := filepath.Base(files[i])
		if files[i] == "-" {
			what = "standard input"
		}
		if opts.asRun != "" {
			what = fmt.Sprintf("%d files as %q", len(files), opts.asRun)
		}
		id, existed, err := store.ImportRun(ctx, doc, sources[i])
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if existed {
			fmt.Fprintf(e.stderr, "iolab: %s: already imported as run %d\n", what, id)
		} else {
			fmt.Fprintf(e.stderr, "iolab: %s: imported as run %d (%s, %d steps)\n", what, id, sources[i], len(doc.Steps))
		}
		fmt.Fprintln(e.stdout, id)
	}
	for _, g := range groups {
		if err := g.store(ctx, e, store, o.Name); err != nil {
			return err
		}
	}
	return nil
}

// clientGroup is fio's client output of several servers: it imports as a
// group, one run per server (db.ClientExports).
type clientGroup struct {
	file  string
	exps  []*db.Export
	hosts []string
}

// store imports the group and prints each run's id, as a run's.
func (g *clientGroup) store(ctx context.Context, e *env, store *db.Store, name string) error {
	what := filepath.Base(g.file)
	if g.file == "-" {
		what = "standard input"
	}
	if name == "" {
		name = "fio clients"
	}
	uid, ids, existed, err := store.ImportGroup(ctx, g.exps, g.hosts, name, db.SourceFio)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var runs []string
	for i, id := range ids {
		runs = append(runs, fmt.Sprintf("%s run %d", g.hosts[i], id))
	}
	if existed {
		fmt.Fprintf(e.stderr, "iolab: %s: already imported as group %s (%s)\n", what, uid, strings.Join(runs, ", "))
	} else {
		fmt.Fprintf(e.stderr, "iolab: %s: fio's client output of %d servers, imported as group %s (%s): its page shows them as one system\n", what, len(ids), uid, strings.Join(runs, ", "))
	}
	for _, id := range ids {
		fmt.Fprintln(e.stdout, id)
	}
	return nil
}

// readImport reads the file to import, or the standard input for -.
func readImport(e *env, f string) ([]byte, error) {
	if f == "-" {
		return io.ReadAll(e.stdin)
	}
	return os.ReadFile(f)
}

// importFiles expands the import's arguments: a directory stands for its
// *.json files, sorted; a file stands for itself.
func importFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		if a == "-" {
			if slices.Contains(files, a) {
				return nil, usageError{"import: - (the standard input) can be given once"}
			}
			files = append(files, a)
			continue
		}
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, a)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(a, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", a, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("import %s: no *.json files in the directory", a)
		}
		files = append(files, matches...) // Glob sorts them
	}
	return files, nil
}
