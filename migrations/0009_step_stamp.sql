-- 0009: a stamp for each steps row, from one counter of the whole store
-- that never goes back, set when the row is inserted and again whenever
-- it is updated. A step's results, samples and logs are written only
-- with its row (SaveStep and imports replace the whole step), so a
-- (steps.id, stamp) names one content of a step for good: SQLite reuses
-- the id of a deleted row (the last step stored again, or a run deleted
-- and another one stored), never a stamp. The dashboard caches what it
-- reads of steps under it (db/stepcache.go).

CREATE TABLE step_stamp (n INTEGER NOT NULL);
INSERT INTO step_stamp (n) VALUES (0);

ALTER TABLE steps ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER steps_stamp_insert AFTER INSERT ON steps
BEGIN
    UPDATE step_stamp SET n = n + 1;
    UPDATE steps SET stamp = (SELECT n FROM step_stamp) WHERE id = NEW.id;
END;

CREATE TRIGGER steps_stamp_update AFTER UPDATE ON steps WHEN NEW.stamp = OLD.stamp
BEGIN
    UPDATE step_stamp SET n = n + 1;
    UPDATE steps SET stamp = (SELECT n FROM step_stamp) WHERE id = NEW.id;
END;
