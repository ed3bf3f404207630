-- 0004: what fio's output needs of a job result beyond the columns of
-- 0001, as JSON {"tid", "errno", "runtime_sum_ns", "dist"}: the job
-- thread's id (fio's pid=), the error's errno (fio's err=), the runtimes
-- summed over a group_reporting group (fio's total_run_time) and
-- bench.IODist, fio's I/O depth and latency distributions. NULL for the
-- results stored before it.
ALTER TABLE step_results ADD COLUMN fio TEXT;
