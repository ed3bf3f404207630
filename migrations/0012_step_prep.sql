-- 0012: what was done to a run's targets before a step, JSON
-- sweep.Prep (a SNIA PTS test's purge and workload-independent
-- preconditioning, with its first round's first step); NULL for none.
ALTER TABLE steps ADD COLUMN prep TEXT;
