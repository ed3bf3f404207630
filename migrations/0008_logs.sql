-- 0006 in this branch, assigned 0011: rename it at merge (IF NOT EXISTS
-- keeps a store that applied it under another number safe).
-- fio's log files of a job result (write_bw_log, write_iops_log,
-- write_lat_log, write_hist_log), each as fio's text: its first
-- bench.StoredLogMax bytes in whole lines, truncated = 1 when the file
-- went on; lines counts the whole file's.
CREATE TABLE IF NOT EXISTS result_logs (
    result_id INTEGER NOT NULL REFERENCES step_results (id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL, -- order among the result's logs
    kind      TEXT    NOT NULL, -- bw, iops, slat, clat, lat, clat_hist
    file      TEXT    NOT NULL, -- the file's name as fio names it
    lines     INTEGER NOT NULL,
    truncated INTEGER NOT NULL,
    data      BLOB    NOT NULL,
    PRIMARY KEY (result_id, idx)
);
