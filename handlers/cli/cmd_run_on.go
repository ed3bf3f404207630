package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"iolab/bench/sweep"
)

// onOptions start `iolab run`'s plan on a dashboard's hosts (--on) as a
// group, instead of here.
type onOptions struct {
	hosts     stringList // --on: the Hosts page's names, "local" for the dashboard's machine
	serial    bool
	dashboard string
}

// groupRequest is the plan as POST /api/runs takes it: the job file the
// command line makes, its sweeps (in order), repeats and steps' chores.
type groupRequest struct {
	Name           string          `json:"name"`
	JobFile        string          `json:"jobfile"`
	Sweep          json.RawMessage `json:"sweep,omitempty"`
	Repeat         string          `json:"repeat,omitempty"`
	Discard        bool            `json:"discard,omitempty"`
	DropCaches     bool            `json:"drop_caches,omitempty"`
	SkipImpossible bool            `json:"skip_impossible,omitempty"`
	Hosts          []string        `json:"hosts"`
	Serial         bool            `json:"serial,omitempty"`
}

// startOnHosts sends plan to the dashboard as a group on o's hosts and
// prints the group's page and each host's run. The dashboard checks the
// plan against every host before any of them starts.
func startOnHosts(ctx context.Context, plan *sweep.Plan, o *onOptions, token string, stdout io.Writer) error {
	u, err := url.Parse(strings.TrimRight(o.dashboard, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Sprintf("--dashboard %q is not a dashboard URL (e.g. http://lab:8080)", o.dashboard)}
	}
	req := groupRequest{Name: plan.Name, JobFile: plan.JobFile(), Repeat: plan.RepeatArg(),
		Discard: plan.Discard, DropCaches: plan.DropCaches, SkipImpossible: plan.SkipImpossible, Serial: o.serial}
	for _, h := range o.hosts {
		for _, n := range strings.Split(h, ",") {
			if n = strings.TrimSpace(n); n != "" {
				req.Hosts = append(req.Hosts, n)
			}
		}
	}
	if len(plan.Sweeps) > 0 {
		// An object whose keys keep the sweeps' order.
		var b bytes.Buffer
		b.WriteByte('{')
		for i, sw := range plan.Sweeps {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(string(sw.Axis))
			v, _ := json.Marshal(sw.Values)
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
		req.Sweep = b.Bytes()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String()+"/api/runs", bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	if token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return fmt.Errorf("start on %s: %w", o.dashboard, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		msg := answerError(answer)
		if resp.StatusCode == http.StatusUnauthorized {
			msg += " (give the dashboard's token with --push-token or $IOLAB_TOKEN)"
		}
		err := fmt.Errorf("start on %s: %s:\n%s", o.dashboard, resp.Status, msg)
		if resp.StatusCode == http.StatusBadRequest {
			return usageError{err.Error()}
		}
		return err
	}
	var g struct {
		URL  string `json:"url"`
		Runs []struct {
			ID   int64  `json:"id"`
			Host string `json:"host"`
			URL  string `json:"url"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(answer, &g); err != nil || g.URL == "" {
		return errors.Join(fmt.Errorf("start on %s: unexpected answer %q", o.dashboard, answer), err)
	}
	fmt.Fprintf(stdout, "group %s%s\n", u, g.URL)
	for _, r := range g.Runs {
		fmt.Fprintf(stdout, "  %-20s run %d  %s%s\n", r.Host, r.ID, u, r.URL)
	}
	return nil
}

// answerError is what a dashboard's error answer says: its "error", else
// the answer itself.
func answerError(answer []byte) string {
	var eb struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(answer, &eb) == nil && eb.Error != "" {
		return eb.Error
	}
	return strings.TrimSpace(string(answer))
}
