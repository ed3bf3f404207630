-- 0005: fleets. The hosts a dashboard knows (fio servers it drives with
-- fio's client, iolab agents that connect to it), groups of runs (one plan
-- run on several hosts, one run per host), and on an agent the runs it ran
-- for a dashboard with whether the dashboard has all of them yet.

CREATE TABLE hosts (
    id          INTEGER PRIMARY KEY,
    kind        TEXT    NOT NULL, -- fio-server, iolab-agent
    name        TEXT    NOT NULL UNIQUE, -- what the dashboard calls it
    address     TEXT    NOT NULL DEFAULT '', -- fio: its server's IP or name; agent: where it last connected from
    port        INTEGER NOT NULL DEFAULT 0, -- fio: its server's port
    hostname    TEXT    NOT NULL DEFAULT '', -- what the host says it is called
    kernel      TEXT    NOT NULL DEFAULT '',
    cpu         TEXT    NOT NULL DEFAULT '',
    devices     TEXT    NOT NULL DEFAULT '[]', -- JSON: what jobs may use there
    info        TEXT    NOT NULL DEFAULT '{}', -- JSON db.HostDetails
    created_at  INTEGER NOT NULL,
    last_seen   INTEGER, -- an agent's last request, a fio server's last answer
    token_hash  TEXT, -- an agent's token, SHA-256, hex; NULL until one is issued
    revoked_at  INTEGER -- when its token was revoked
);

CREATE TABLE run_groups (
    uid        TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL DEFAULT '',
    serial     INTEGER NOT NULL DEFAULT 0, -- hosts one after another
    created_at INTEGER NOT NULL
);

-- One run per host of a group. host_id is NULL for the dashboard's own
-- machine, and when the host was deleted since (host_name still says it).
CREATE TABLE group_runs (
    run_id    INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    group_uid TEXT    NOT NULL REFERENCES run_groups (uid) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    host_id   INTEGER REFERENCES hosts (id) ON DELETE SET NULL,
    host_kind TEXT    NOT NULL, -- local, fio-server, iolab-agent
    host_name TEXT    NOT NULL
);

CREATE INDEX group_runs_group ON group_runs (group_uid, position);
CREATE INDEX group_runs_host  ON group_runs (host_id);

-- On an agent: a run it ran for a dashboard (the local copy), the run's id
-- there, and when the dashboard acknowledged every step and the end.
CREATE TABLE agent_runs (
    run_id    INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    dashboard TEXT    NOT NULL,
    remote_id INTEGER NOT NULL,
    synced_at INTEGER
);
