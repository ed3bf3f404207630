-- 0006 (0007 once merged): latency under load. step_results.qos is JSON
-- {"intended": [read, write]} of bench.DirResult.Intended (the latency from each paced I/O's
-- intended start: {"stat": bench.LatStat, "hist": bins}), NULL when no
-- direction was paced. samples gain each interval's own latency
-- (bench.IntervalLat: I/Os, p50, p99 and max in ns), NULL when not
-- recorded (latencies off, nothing completed, or stored before it).
ALTER TABLE step_results ADD COLUMN qos TEXT;
ALTER TABLE samples ADD COLUMN lat_n   INTEGER;
ALTER TABLE samples ADD COLUMN lat_p50 INTEGER;
ALTER TABLE samples ADD COLUMN lat_p99 INTEGER;
ALTER TABLE samples ADD COLUMN lat_max INTEGER;
