-- 0011: the runs list at scale (issue 28): a page of runs filtered and
-- sorted by what the list shows, each query on an index.
--
-- run_facets holds each value of a run's engines, schedulers and tags
-- (JSON arrays in runs, which no index reaches) as a row of its own,
-- with the run's created_at (which never changes) so that the runs of
-- one value, newest first, and their count are a walk along its key;
-- triggers keep it as runs are inserted and their lists change, however
-- a process writes them, and the foreign key deletes a run's with it.
CREATE TABLE run_facets (
    kind       TEXT    NOT NULL, -- engine, scheduler, tag
    value      TEXT    NOT NULL,
    created_at INTEGER NOT NULL, -- the run's
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    PRIMARY KEY (kind, value, created_at, run_id)
) WITHOUT ROWID;

CREATE INDEX run_facets_run ON run_facets (run_id);

INSERT OR IGNORE INTO run_facets (kind, value, created_at, run_id)
    SELECT 'engine', j.value, r.created_at, r.id FROM runs r, json_each(r.engines) j WHERE j.type = 'text' AND j.value <> ''
    UNION ALL SELECT 'scheduler', j.value, r.created_at, r.id FROM runs r, json_each(r.schedulers) j WHERE j.type = 'text' AND j.value <> ''
    UNION ALL SELECT 'tag', j.value, r.created_at, r.id FROM runs r, json_each(r.tags) j WHERE j.type = 'text' AND j.value <> '';

CREATE TRIGGER run_facets_insert AFTER INSERT ON runs
BEGIN
    INSERT OR IGNORE INTO run_facets (kind, value, created_at, run_id)
        SELECT 'engine', value, NEW.created_at, NEW.id FROM json_each(NEW.engines) WHERE type = 'text' AND value <> ''
        UNION ALL SELECT 'scheduler', value, NEW.created_at, NEW.id FROM json_each(NEW.schedulers) WHERE type = 'text' AND value <> ''
        UNION ALL SELECT 'tag', value, NEW.created_at, NEW.id FROM json_each(NEW.tags) WHERE type = 'text' AND value <> '';
END;

CREATE TRIGGER run_facets_update AFTER UPDATE OF engines, schedulers, tags ON runs
BEGIN
    DELETE FROM run_facets WHERE run_id = NEW.id;
    INSERT OR IGNORE INTO run_facets (kind, value, created_at, run_id)
        SELECT 'engine', value, NEW.created_at, NEW.id FROM json_each(NEW.engines) WHERE type = 'text' AND value <> ''
        UNION ALL SELECT 'scheduler', value, NEW.created_at, NEW.id FROM json_each(NEW.schedulers) WHERE type = 'text' AND value <> ''
        UNION ALL SELECT 'tag', value, NEW.created_at, NEW.id FROM json_each(NEW.tags) WHERE type = 'text' AND value <> '';
END;

-- What the list shows of a run's plan, so that a page reads no plan:
-- its workload (db.Workload: each job's rw and bs), which the list also
-- filters on, and the steps it plans (sweep.Plan.Planned: the fewest and
-- the most, "20 of 24…60"). SQL cannot derive them from the plan's JSON:
-- CreateRun sets them (a run's plan never changes), and opening the
-- store fills them in for the runs stored before (NULL until then).
ALTER TABLE runs ADD COLUMN workload TEXT;
ALTER TABLE runs ADD COLUMN planned_lo INTEGER;
ALTER TABLE runs ADD COLUMN planned_hi INTEGER;

-- The sorts' and filters' indexes beside 0001's (created_at, id),
-- (hostname, created_at), (kernel, created_at), (target, created_at) and
-- (status, created_at): every one ends in created_at and, as all of a
-- rowid table's indexes, the id, so that a page sorted by a column, or by
-- date and filtered on a column, is a walk along one index.
CREATE INDEX runs_name     ON runs (name, created_at);
CREATE INDEX runs_source   ON runs (source, created_at);
CREATE INDEX runs_workload ON runs (workload, created_at);
