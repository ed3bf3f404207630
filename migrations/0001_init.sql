-- 0001: runs, their steps, per-job results with histograms, per-interval
-- samples, and scheduler switches to undo after a crash.
--
-- Times are INTEGER nanoseconds since the Unix epoch, NULL when unknown.
-- JSON columns hold the bench package's own types, marshalled with
-- encoding/json, so the store can keep fields the columns do not name.

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL, -- queued, running, done, failed, cancelled, interrupted
    source      TEXT    NOT NULL DEFAULT 'local', -- local, push, import
    created_at  INTEGER NOT NULL,
    started_at  INTEGER,
    finished_at INTEGER,
    -- Copies of what the run list filters on.
    hostname    TEXT    NOT NULL DEFAULT '',
    kernel      TEXT    NOT NULL DEFAULT '', -- uname -r
    target      TEXT    NOT NULL DEFAULT '', -- the first job's filename
    engines     TEXT    NOT NULL DEFAULT '[]', -- JSON array of engine variants
    schedulers  TEXT    NOT NULL DEFAULT '[]', -- JSON array of I/O schedulers
    tags        TEXT    NOT NULL DEFAULT '[]', -- JSON array
    plan        TEXT    NOT NULL, -- JSON bench.Plan
    host        TEXT    NOT NULL, -- JSON bench.HostInfo
    targets     TEXT    NOT NULL, -- JSON []bench.Target
    error       TEXT    NOT NULL DEFAULT '',
    -- The process running (or queueing) the run, so that opening the store
    -- marks interrupted only the runs whose process is gone, not those of a
    -- dashboard or CLI that shares the database: boot_id, pid and the pid's
    -- start time (field 22 of /proc/PID/stat).
    owner_boot  TEXT,
    owner_pid   INTEGER,
    owner_start INTEGER
);

CREATE INDEX runs_created_at ON runs (created_at, id);
CREATE INDEX runs_hostname   ON runs (hostname, created_at);
CREATE INDEX runs_kernel     ON runs (kernel, created_at);
CREATE INDEX runs_target     ON runs (target, created_at);
CREATE INDEX runs_status     ON runs (status, created_at);

CREATE TABLE steps (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL, -- bench.Step.Seq: the order steps run in
    repeat        INTEGER NOT NULL, -- 0-based repeat index
    axes          TEXT    NOT NULL, -- JSON []bench.AxisValue
    scheduler     TEXT    NOT NULL DEFAULT '', -- bench.Step.Scheduler: the one asked for
    config        TEXT    NOT NULL, -- JSON bench.Config
    status        TEXT    NOT NULL, -- running, done, failed, cancelled, interrupted
    error         TEXT    NOT NULL DEFAULT '',
    started_at    INTEGER,
    finished_at   INTEGER,
    schedulers    TEXT    NOT NULL, -- JSON map disk → scheduler active during the step
    cpu           TEXT    NOT NULL, -- JSON bench.CPUBreakdown
    proc          TEXT    NOT NULL, -- JSON bench.ProcCPU
    -- bench.Result; has_result = 0 when the step failed before any I/O.
    has_result    INTEGER NOT NULL,
    result_start  INTEGER,
    result_host   TEXT, -- JSON bench.HostInfo
    result_groups TEXT, -- JSON [{"id", "reporting", "disks": []bench.DiskUtilization}], in order
    UNIQUE (run_id, seq)
);

-- One row per bench.JobResult: a job, or a reporting group merged into one.
CREATE TABLE step_results (
    id          INTEGER PRIMARY KEY,
    step_id     INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    group_index INTEGER NOT NULL, -- position in Result.Groups
    job_index   INTEGER NOT NULL, -- position in GroupResult.Jobs
    group_id    INTEGER NOT NULL, -- JobResult.GroupID
    job_name    TEXT    NOT NULL,
    reporting   INTEGER NOT NULL, -- the group's group_reporting
    jobs_merged INTEGER NOT NULL, -- JobResult.Jobs
    job         TEXT    NOT NULL, -- JSON bench.Job
    error       TEXT    NOT NULL DEFAULT '',
    start_at    INTEGER,
    runtime_ns  INTEGER NOT NULL,
    interval_ns INTEGER NOT NULL,
    usr_cpu_ns  INTEGER NOT NULL,
    sys_cpu_ns  INTEGER NOT NULL,
    ctx         INTEGER NOT NULL,
    min_flt     INTEGER NOT NULL,
    maj_flt     INTEGER NOT NULL,
    -- Per direction (read, then write), bench.DirResult: ios, bytes, short
    -- I/Os; iops and bw_bytes (ios and bytes per second of runtime, for SQL
    -- queries); then for slat, clat and lat the bench.LatStat (n, min, max,
    -- mean and Welford's s, in ns) and the histogram's non-empty buckets as
    -- JSON {"midpoint_ns": count}, NULL when empty.
    read_ios         INTEGER NOT NULL,
    read_bytes       INTEGER NOT NULL,
    read_short       INTEGER NOT NULL,
    read_iops        REAL NOT NULL,
    read_bw_bytes    REAL NOT NULL,
    read_slat_n      INTEGER NOT NULL,
    read_slat_min    INTEGER NOT NULL,
    read_slat_max    INTEGER NOT NULL,
    read_slat_mean   REAL NOT NULL,
    read_slat_s      REAL NOT NULL,
    read_slat_bins   TEXT,
    read_clat_n      INTEGER NOT NULL,
    read_clat_min    INTEGER NOT NULL,
    read_clat_max    INTEGER NOT NULL,
    read_clat_mean   REAL NOT NULL,
    read_clat_s      REAL NOT NULL,
    read_clat_bins   TEXT,
    read_lat_n       INTEGER NOT NULL,
    read_lat_min     INTEGER NOT NULL,
    read_lat_max     INTEGER NOT NULL,
    read_lat_mean    REAL NOT NULL,
    read_lat_s       REAL NOT NULL,
    read_lat_bins    TEXT,
    write_ios        INTEGER NOT NULL,
    write_bytes      INTEGER NOT NULL,
    write_short      INTEGER NOT NULL,
    write_iops       REAL NOT NULL,
    write_bw_bytes   REAL NOT NULL,
    write_slat_n     INTEGER NOT NULL,
    write_slat_min   INTEGER NOT NULL,
    write_slat_max   INTEGER NOT NULL,
    write_slat_mean  REAL NOT NULL,
    write_slat_s     REAL NOT NULL,
    write_slat_bins  TEXT,
    write_clat_n     INTEGER NOT NULL,
    write_clat_min   INTEGER NOT NULL,
    write_clat_max   INTEGER NOT NULL,
    write_clat_mean  REAL NOT NULL,
    write_clat_s     REAL NOT NULL,
    write_clat_bins  TEXT,
    write_lat_n      INTEGER NOT NULL,
    write_lat_min    INTEGER NOT NULL,
    write_lat_max    INTEGER NOT NULL,
    write_lat_mean   REAL NOT NULL,
    write_lat_s      REAL NOT NULL,
    write_lat_bins   TEXT
);

CREATE UNIQUE INDEX step_results_step ON step_results (step_id, group_index, job_index);

-- Cumulative counts of a job at the end of each interval (bench.Sample).
CREATE TABLE samples (
    result_id   INTEGER NOT NULL REFERENCES step_results (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    at_ns       INTEGER NOT NULL, -- since the measured window began
    read_ios    INTEGER NOT NULL,
    write_ios   INTEGER NOT NULL,
    read_bytes  INTEGER NOT NULL,
    write_bytes INTEGER NOT NULL,
    PRIMARY KEY (result_id, idx)
) WITHOUT ROWID;

-- A disk whose scheduler a run switched, with the one it had before. The
-- row lives while the switch does; rows left behind by a process that died
-- are restored at the next start. No foreign key: deleting the run must not
-- forget a disk still to restore.
CREATE TABLE scheduler_restores (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL,
    disk       TEXT    NOT NULL,
    original   TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
