package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"iolab/db"
)

// importRuns is `iolab import [--db PATH] [--host H] [--kernel K]
// [--label L]… [--name N | --as-run NAME] FILE|DIR…`: each file is an iolab
// export or fio's JSON output, stored in one transaction each; a directory
// stands for its *.json files, sorted. With --as-run the files (fio's
// outputs) are one run, each file's steps after the one before. It prints
// each run's id.
func importRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbPath := dbFlag(fs)
	var o db.ImportOptions
	var labels stringList
	fs.StringVar(&o.Hostname, "host", "", "the host fio ran on (fio's output does not say)")
	fs.StringVar(&o.Kernel, "kernel", "", "the kernel release fio ran on (uname -r)")
	fs.StringVar(&o.Name, "name", "", "the run's name (default: the first job's)")
	asRun := fs.String("as-run", "", "import fio's outputs as one run of this name: each file's steps in turn, the same axis values again as repeats")
	fs.Var(&labels, "label", "a label for the run (repeatable)")
	// Flags may come after the files, as with iolab run.
	own, args := splitOwn(args, map[string]bool{"db": true, "host": true, "kernel": true, "name": true, "label": true, "as-run": true})
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if len(args) == 0 {
		return usageError{"usage: iolab import [--db PATH] [--host H] [--kernel K] [--label L]… [--name N | --as-run NAME] FILE|DIR…"}
	}
	if *asRun != "" && o.Name != "" {
		return usageError{"import: --as-run names the run; give it or --name, not both"}
	}
	o.Labels = labels
	files, err := importFiles(args)
	if err != nil {
		return err
	}
	// Read and check every file before opening the store.
	var docs []*db.Export
	var sources []string
	if *asRun != "" {
		o.Name = *asRun
		datas := make([][]byte, len(files))
		for i, f := range files {
			if datas[i], err = os.ReadFile(f); err != nil {
				return fmt.Errorf("import %s: %w", f, err)
			}
		}
		e, err := db.ParseFioRun(files, datas, o)
		if err != nil {
			return err
		}
		docs, sources = []*db.Export{e}, []string{db.SourceFio}
	} else {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("import %s: %w", f, err)
			}
			e, source, err := db.ParseImport(data, o)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			docs, sources = append(docs, e), append(sources, source)
		}
	}
	store, err := openStore(ctx, *dbPath, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return err
	}
	defer store.Close()
	for i, e := range docs {
		what := filepath.Base(files[i])
		if *asRun != "" {
			what = fmt.Sprintf("%d files as %q", len(files), *asRun)
		}
		id, existed, err := store.ImportRun(ctx, e, sources[i])
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if existed {
			fmt.Fprintf(stderr, "iolab: %s: already imported as run %d\n", what, id)
		} else {
			fmt.Fprintf(stderr, "iolab: %s: imported as run %d (%s, %d steps)\n", what, id, sources[i], len(e.Steps))
		}
		fmt.Fprintln(stdout, id)
	}
	return nil
}

// importFiles expands the import's arguments: a directory stands for its
// *.json files, sorted; a file stands for itself.
func importFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
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

// pushRunCmd is `iolab push [--db PATH] [--token T] ID URL`.
func pushRunCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbPath := dbFlag(fs)
	token := fs.String("token", os.Getenv("IOLAB_TOKEN"), "the dashboard's token (default $IOLAB_TOKEN)")
	own, rest := splitOwn(args, map[string]bool{"db": true, "token": true})
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if len(rest) != 2 {
		return usageError{"usage: iolab push [--db PATH] [--token T] ID URL"}
	}
	id, err := runID(rest[:1], "push")
	if err != nil {
		return err
	}
	store, err := openStore(ctx, *dbPath, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return err
	}
	defer store.Close()
	res, err := pushRun(ctx, store, id, rest[1], *token)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, res.describe(rest[1]))
	return nil
}

// pushResult is the dashboard's answer to a push.
type pushResult struct {
	ID       int64  `json:"id"`
	URL      string `json:"url"`
	Existing bool   `json:"existing"`
}

func (p *pushResult) describe(base string) string {
	u := strings.TrimRight(base, "/") + p.URL
	if p.Existing {
		return fmt.Sprintf("already there as run %d: %s", p.ID, u)
	}
	return fmt.Sprintf("pushed as run %d: %s", p.ID, u)
}

// pushRun sends run id's export to the dashboard at base (its
// /api/import).
func pushRun(ctx context.Context, store *db.Store, id int64, base, token string) (*pushResult, error) {
	doc, err := store.Export(ctx, id)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + "/api/import")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Sprintf("push: %q is not a dashboard URL (e.g. http://lab:8080)", base)}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Iolab-Push", "1")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("push run %d to %s: %w", id, base, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var eb struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(answer))
		if json.Unmarshal(answer, &eb) == nil && eb.Error != "" {
			msg = eb.Error
		}
		if resp.StatusCode == http.StatusUnauthorized {
			msg += " (give the dashboard's token with --push-token or --token)"
		}
		return nil, fmt.Errorf("push run %d to %s: %s: %s", id, base, resp.Status, msg)
	}
	var res pushResult
	if err := json.Unmarshal(answer, &res); err != nil || res.ID == 0 {
		return nil, errors.Join(fmt.Errorf("push run %d to %s: unexpected answer %q", id, base, answer), err)
	}
	return &res, nil
}

// pushHint is the command that pushes run id to base later.
func pushHint(dbPath string, id int64, base string) string {
	cmd := "iolab push"
	if dbPath != "" {
		cmd += " --db " + dbPath
	}
	return fmt.Sprintf("%s [--token T] %d %s", cmd, id, base)
}
