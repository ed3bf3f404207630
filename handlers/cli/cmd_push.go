package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"iolab/db"
)

var pushCommand = command{
	name:    "push",
	summary: "send a stored run to the dashboard at URL (its /api/import)",
	usage:   "[--db FILE] [--token TOKEN] ID URL",
	flags: func(fs *flag.FlagSet) runFunc {
		dbPath := dbFlag(fs)
		token := fs.String("token", "", "the dashboard's `TOKEN` (default $IOLAB_TOKEN)")
		return func(ctx context.Context, e *env, args []string) error {
			return pushRunCmd(ctx, e, *dbPath, envDefault(*token, "IOLAB_TOKEN"), args)
		}
	},
}

func pushRunCmd(ctx context.Context, e *env, dbPath, token string, rest []string) error {
	if len(rest) != 2 {
		return e.usage()
	}
	id, err := runID(e, rest[:1])
	if err != nil {
		return err
	}
	store, err := openStoreFlag(ctx, e, dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	res, err := pushRun(ctx, store, id, rest[1], token)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, res.describe(rest[1]))
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
		msg := answerError(answer)
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
