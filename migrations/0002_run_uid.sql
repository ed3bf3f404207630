-- 0002: a stable unique id for each run, carried by exports, so that
-- importing or pushing the same run twice keeps one copy. Existing runs get
-- a random 128-bit id (32 hex digits), as CreateRun gives new ones.

ALTER TABLE runs ADD COLUMN uid TEXT;

UPDATE runs SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;

CREATE UNIQUE INDEX runs_uid ON runs (uid);
