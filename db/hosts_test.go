package db

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench/system"
)

// TestAgentTokens: a token works until revoked, is stored hashed, a
// second issue replaces it, and a wrong or malformed one is unknown.
func TestAgentTokens(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	h, token, err := s.CreateAgent(ctx, "agent-a")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "iolab_") || len(token) < 70 {
		t.Fatalf("token %q", token)
	}
	var stored string
	if err := s.read.QueryRowContext(ctx, `SELECT token_hash FROM hosts WHERE id = ?`, h.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, token[len(token)-20:]) || stored != tokenHash(token) {
		t.Fatalf("stored %q: not the token's hash", stored)
	}
	got, err := s.AgentByToken(ctx, token)
	if err != nil || got.ID != h.ID || got.Name != "agent-a" || !got.HasToken {
		t.Fatalf("AgentByToken: %+v, %v", got, err)
	}
	last := "0" // the token with its last digit changed
	if strings.HasSuffix(token, "0") {
		last = "1"
	}
	for _, bad := range []string{"", "iolab_", "iolab_x_y", token[:len(token)-1] + last, "iolab_99_" + token[len(token)-64:], strings.Repeat("a", 200)} {
		if _, err := s.AgentByToken(ctx, bad); !errors.Is(err, ErrUnknownToken) {
			t.Errorf("%q: %v, want unknown", bad, err)
		}
	}
	if err := s.RevokeAgentToken(ctx, h.ID); err != nil {
		t.Fatal(err)
	}
	var re *RevokedError
	if _, err := s.AgentByToken(ctx, token); !errors.As(err, &re) || re.Host != "agent-a" {
		t.Fatalf("after revoke: %v", err)
	}
	again, err := s.IssueAgentToken(ctx, h.ID)
	if err != nil || again == token {
		t.Fatalf("reissue: %q %v", again, err)
	}
	if _, err := s.AgentByToken(ctx, again); err != nil {
		t.Fatalf("new token: %v", err)
	}
	if _, err := s.AgentByToken(ctx, token); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("old token after reissue: %v", err)
	}
	if _, _, err := s.CreateAgent(ctx, "agent-a"); !errors.As(err, new(*NameTakenError)) {
		t.Fatalf("same name twice: %v", err)
	}
	fio := &Host{Kind: HostFio, Name: "fio-a", Address: "10.213.1.2", Devices: []string{"/dev/nvme0n1"}}
	if _, err := s.AddHost(ctx, fio); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IssueAgentToken(ctx, fio.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a token for a fio server: %v", err)
	}
	for _, bad := range []*Host{{Kind: "x", Name: "a"}, {Kind: HostFio, Name: "a b"}, {Kind: HostFio, Name: strings.Repeat("a", 65)},
		{Kind: HostFio, Name: "p", Port: 70000}, {Kind: HostFio, Name: "c", Address: "a\x1b"}} {
		if _, err := s.AddHost(ctx, bad); err == nil {
			t.Errorf("%+v stored", bad)
		}
	}
}

// TestHostState: offline until seen, idle when seen lately, running while
// a run of its group runs, offline again when not seen for a while.
func TestHostState(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	h, _, err := s.CreateAgent(ctx, "agent-b")
	if err != nil {
		t.Fatal(err)
	}
	state := func(now time.Time) string {
		t.Helper()
		hs, err := s.ListHosts(ctx)
		if err != nil || len(hs) != 1 {
			t.Fatalf("%d hosts, %v", len(hs), err)
		}
		hs[0].SetState(now, time.Minute)
		return hs[0].State
	}
	now := time.Now()
	if st := state(now); st != HostOffline {
		t.Fatalf("never seen: %s", st)
	}
	env := system.HostInfo{Hostname: "b", KernelRelease: "6.1.0", CPUModel: "cpu"}
	if err := s.HostSeen(ctx, h.ID, now, "10.213.3.2", &HostDetails{Env: &env, DataDir: "/data"}); err != nil {
		t.Fatal(err)
	}
	if st := state(now); st != HostIdle {
		t.Fatalf("just seen: %s", st)
	}
	got, err := s.GetHost(ctx, h.ID)
	if err != nil || got.Hostname != "b" || got.Kernel != "6.1.0" || got.Address != "10.213.3.2" || !got.Offers("/data/f") ||
		got.Offers("/data/../etc/passwd") || got.Offers("/other") {
		t.Fatalf("%+v %v", got, err)
	}
	if st := state(now.Add(2 * time.Minute)); st != HostOffline {
		t.Fatalf("not seen for 2 minutes: %s", st)
	}
	g := &FleetRun{Name: "g"}
	if err := s.CreateFleetRun(ctx, g); err != nil {
		t.Fatal(err)
	}
	r := testRun()
	r.Status = StatusRunning
	id, err := s.CreateRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddFleetRunMember(ctx, g.UID, FleetRunMember{RunID: id, HostID: h.ID, HostKind: HostAgent, HostName: "agent-b"}); err != nil {
		t.Fatal(err)
	}
	if st := state(now); st != HostRunning {
		t.Fatalf("with a running run: %s", st)
	}
	got2, err := s.GetFleetRun(ctx, g.UID)
	if err != nil || len(got2.Members) != 1 || got2.Members[0].RunID != id || got2.Members[0].HostName != "agent-b" {
		t.Fatalf("group %+v %v", got2, err)
	}
	if uid, m, err := s.FleetRunOf(ctx, id); err != nil || uid != g.UID || m.HostID != h.ID {
		t.Fatalf("group of run: %s %+v %v", uid, m, err)
	}
	if err := s.SetRunStatus(ctx, id, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if st := state(now); st != HostIdle {
		t.Fatalf("after the run: %s", st)
	}
	// Deleting the host keeps the run and its group, naming the host.
	if err := s.DeleteHost(ctx, h.ID); err != nil {
		t.Fatal(err)
	}
	if g3, err := s.GetFleetRun(ctx, g.UID); err != nil || g3.Members[0].HostID != 0 || g3.Members[0].HostName != "agent-b" {
		t.Fatalf("after delete: %+v %v", g3, err)
	}
}

// TestAgentRuns: the agent's record of what a dashboard still lacks.
func TestAgentRuns(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	var ids []int64
	for range 2 {
		id, err := s.CreateRun(ctx, testRun())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddAgentRun(ctx, AgentRun{RunID: id, Dashboard: "http://d", RemoteID: id + 100}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.SetAgentRunSynced(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	got, err := s.UnsyncedAgentRuns(ctx, "http://d")
	if err != nil || len(got) != 1 || got[0].RunID != ids[1] || got[0].RemoteID != ids[1]+100 {
		t.Fatalf("%+v %v", got, err)
	}
	if other, _ := s.UnsyncedAgentRuns(ctx, "http://other"); len(other) != 0 {
		t.Fatalf("another dashboard's: %+v", other)
	}
}

// TestOpenLeavesAgentRunsRunning: a dashboard that stops while agents run
// its group's runs (its process gone) leaves them running at the next
// Open — the agents go on, and the dashboard holds them for them again
// (RunningAgentRuns) — while its own runs and an agent's run still queued
// (never taken) are interrupted.
func TestOpenLeavesAgentRunsRunning(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	agent, _, err := s.CreateAgent(ctx, "agent-z")
	if err != nil {
		t.Fatal(err)
	}
	agentID := agent.ID
	g := &FleetRun{Name: "g"}
	if err := s.CreateFleetRun(ctx, g); err != nil {
		t.Fatal(err)
	}
	s.self = deadOwner
	ids := map[string]int64{}
	for i, kind := range []string{"agent running", "agent queued", "local running"} {
		r := testRun()
		r.Status, r.Source = StatusRunning, SourceAgent
		switch kind {
		case "agent queued":
			r.Status = StatusQueued
		case "local running":
			r.Source = SourceLocal
		}
		if ids[kind], err = s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		m := FleetRunMember{RunID: ids[kind], Position: i, HostID: agentID, HostKind: HostAgent, HostName: "agent-z"}
		if kind == "local running" {
			m = FleetRunMember{RunID: ids[kind], Position: i, HostKind: HostLocal, HostName: "dash"}
		}
		if err := s.AddFleetRunMember(ctx, g.UID, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, want := s2.Interrupted(), []int64{ids["agent queued"], ids["local running"]}; !slices.Equal(got, want) {
		t.Errorf("Interrupted() = %v, want %v", got, want)
	}
	held, err := s2.RunningAgentRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 || held[0].RunID != ids["agent running"] || held[0].HostID != agentID || held[0].HostKind != HostAgent {
		t.Fatalf("RunningAgentRuns = %+v, want run %d of agent %d", held, ids["agent running"], agentID)
	}
	if r, err := s2.GetRun(ctx, ids["agent running"]); err != nil || r.Status != StatusRunning {
		t.Fatalf("the agent's run: %+v %v", r, err)
	}
}
