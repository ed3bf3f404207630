-- 0003: run ids are never reused. INTEGER PRIMARY KEY hands out the
-- largest id + 1, so deleting the newest run gave its id to the next one
-- and an old link showed another run. run_ids keeps the largest id ever
-- given; new runs take the next, and a trigger keeps it current however a
-- run is inserted. (A table rebuild with AUTOINCREMENT would do the same,
-- but rebuilding runs under its foreign keys inside a migration's
-- transaction is not possible without dropping its steps.)

CREATE TABLE run_ids (last INTEGER NOT NULL);

INSERT INTO run_ids (last) SELECT coalesce(max(id), 0) FROM runs;

CREATE TRIGGER runs_id_last AFTER INSERT ON runs
BEGIN
    UPDATE run_ids SET last = max(last, NEW.id);
END;
