package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"iolab/bench/fio"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/agent"
)

var agentCommand = command{
	name:    "agent",
	summary: "take runs from a dashboard and run them here (it connects out: no port opens)",
	usage:   "--dashboard URL --token TOKEN [flags]",
	about: `The agent connects to the dashboard (no port opens on this host), says what this host is (kernel,
CPU, IOMMU, the targets it allows), asks for work, and runs each run it is given with iolab's engines
under this host's allow-list and safety rules, putting back the schedulers it switched, as iolab run
does. Each finished step is stored here (--db) and on the dashboard as it ends; what the dashboard
missed while it was away is sent when it is back. Its token comes from the dashboard's Hosts page,
which can revoke it.

  iolab agent --dashboard http://lab:8080 --token iolab_3_… --allow-target /dev/nvme1n1
  iolab agent --dashboard http://lab:8080 --name rack2-a --data-dir /var/lib/iolab/data

A dashboard that goes away (restarted, or cut off) does not stop a run: the agent runs it to its end,
keeps its results and sends them when the dashboard is back, which shows the run "agent unreachable"
meanwhile (an hour of that and it calls the run lost); a cancel given meanwhile stops it when the agent
is back. An agent killed mid-run and started again marks that run interrupted and sends its finished
steps: it does not resume it.`,
	flags: func(fs *flag.FlagSet) runFunc {
		var o agentOptions
		fs.StringVar(&o.dashboard, "dashboard", "", "the dashboard's `URL`, e.g. http://lab:8080")
		fs.StringVar(&o.token, "token", "", "this agent's `TOKEN`, from the dashboard's Hosts page (default $IOLAB_AGENT_TOKEN)")
		fs.StringVar(&o.name, "name", "", "the `NAME` to appear under on the dashboard (default: the name its token was issued for on the Hosts page)")
		fs.Var(&o.allow, "allow-target", "a device or file the dashboard's runs may use here, by its `PATH` (repeatable)")
		fs.StringVar(&o.dataDir, "data-dir", "", "the `DIR` whose files the dashboard's runs may make and use here: a directory of yours alone (mode 0700), never a system one")
		fs.Var((*storePath)(&o.dbPath), "db", storePathUsage+"; the agent keeps its runs there")
		limitFlags(fs, &o.limits)
		quotaFlags(fs, &o.quota)
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return e.usage()
			}
			o.token = envDefault(o.token, "IOLAB_AGENT_TOKEN")
			return runAgent(ctx, e, &o)
		}
	},
}

// agentOptions are `iolab agent`'s flags.
type agentOptions struct {
	dashboard, token, name, dataDir, dbPath string
	allow                                   stringList
	limits                                  sweep.Limits
	quota                                   launch.Quota
}

func runAgent(ctx context.Context, e *env, o *agentOptions) error {
	if o.dashboard == "" {
		return usageError{"agent: --dashboard URL is required (see iolab help agent)"}
	}
	allow := launch.AllowList{}
	for _, t := range o.allow {
		abs, err := filepath.Abs(t)
		if err != nil {
			return usageError{fmt.Sprintf("--allow-target %q: %v", t, err)}
		}
		allow.Targets = append(allow.Targets, abs)
	}
	if o.dataDir != "" {
		dbPath := o.dbPath
		if dbPath == "" {
			dbPath, _ = db.DefaultPath()
		}
		dir, err := launch.CheckDataDir(o.dataDir, dbPath)
		if err != nil {
			return err
		}
		allow.DataDir = dir
		o.quota.Dir = dir
	}
	store, err := openStore(ctx, o.dbPath, e.logger)
	if err != nil {
		return err
	}
	defer store.Close()
	a, err := agent.New(agent.Config{Dashboard: o.dashboard, Token: o.token, Name: o.name, Allow: allow,
		Store: store, Sys: system.FS{}, Log: e.logger, Version: fio.Version, Limits: o.limits, Quota: o.quota, ProgressEvery: launch.LiveEvery})
	if err != nil {
		return usageError{err.Error()}
	}
	err = a.Run(ctx)
	if errors.Is(err, context.Canceled) {
		return nil // SIGINT or SIGTERM: a run in progress was stopped and kept
	}
	return err
}
