-- 0006: a version for each run, bumped whenever the run or any of its
-- steps changes, so that the dashboard can cache what it draws of a run
-- and tell clients (ETag) whether what they hold is still current.
-- Triggers keep it, however a process writes: the dashboard, a CLI run
-- or an import sharing the store. A step's results and samples change
-- only with its steps row (SaveStep replaces the whole step), so the
-- steps triggers cover them.

ALTER TABLE runs ADD COLUMN version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER runs_version_step_insert AFTER INSERT ON steps
BEGIN
    UPDATE runs SET version = version + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER runs_version_step_update AFTER UPDATE ON steps
BEGIN
    UPDATE runs SET version = version + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER runs_version_step_delete AFTER DELETE ON steps
BEGIN
    UPDATE runs SET version = version + 1 WHERE id = OLD.run_id;
END;

-- Any other change of the run's row (status, name, labels, …); the
-- triggers' own bumps change version, and so do not fire it again.
CREATE TRIGGER runs_version_self AFTER UPDATE ON runs WHEN NEW.version = OLD.version
BEGIN
    UPDATE runs SET version = version + 1 WHERE id = NEW.id;
END;

-- A run's page names its group and host (group_runs, 0005): joining,
-- leaving or changing them is a change of the run.
CREATE TRIGGER runs_version_group_insert AFTER INSERT ON group_runs
BEGIN
    UPDATE runs SET version = version + 1 WHERE id = NEW.run_id;
END;

CREATE TRIGGER runs_version_group_update AFTER UPDATE ON group_runs
BEGIN
    UPDATE runs SET version = version + 1 WHERE id IN (OLD.run_id, NEW.run_id);
END;

CREATE TRIGGER runs_version_group_delete AFTER DELETE ON group_runs
BEGIN
    UPDATE runs SET version = version + 1 WHERE id = OLD.run_id;
END;
