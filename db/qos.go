package db

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"iolab/bench"
	"iolab/bench/hist"
)

// qosExtras is what step_results.qos keeps of a bench.JobResult: the
// latency from each paced I/O's intended start, per direction.
type qosExtras struct {
	Intended [2]hist.Lat `json:"intended"`
}

// qosColumn is step_results.qos for jr: NULL when no direction was paced.
func qosColumn(jr *bench.JobResult) (sql.NullString, error) {
	if !jr.Paced(bench.Read) && !jr.Paced(bench.Write) {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(qosExtras{Intended: [2]hist.Lat{jr.Dirs[bench.Read].Intended, jr.Dirs[bench.Write].Intended}})
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// decodeQoS sets jr's intended-start latencies from step_results.qos.
func decodeQoS(col sql.NullString, jr *bench.JobResult) error {
	if !col.Valid {
		return nil
	}
	var x qosExtras
	if err := json.Unmarshal([]byte(col.String), &x); err != nil {
		return fmt.Errorf("qos: %w", err)
	}
	for d := range x.Intended {
		jr.Dirs[d].Intended = x.Intended[d]
	}
	return nil
}

// The samples' interval latency columns (bench.IntervalLat), NULL when a
// sample has none.
const (
	sampleLatColumns = "lat_n, lat_p50, lat_p99, lat_max"
	sampleLatSelect  = "s.lat_n, s.lat_p50, s.lat_p99, s.lat_max"
	// sampleParams is the parameters of one sample row.
	sampleParams = 13
)

// appendIntervalLat appends a sample's interval latency columns.
func appendIntervalLat(args []any, il *bench.IntervalLat) []any {
	if il == nil {
		return append(args, nil, nil, nil, nil)
	}
	return append(args, int64(il.N), int64(il.P50), int64(il.P99), int64(il.Max))
}

// intervalLatScan receives a sample's interval latency columns.
type intervalLatScan struct{ n, p50, p99, max sql.NullInt64 }

func (s *intervalLatScan) dest() []any { return []any{&s.n, &s.p50, &s.p99, &s.max} }

func (s *intervalLatScan) value() *bench.IntervalLat {
	if !s.n.Valid {
		return nil
	}
	return &bench.IntervalLat{N: uint64(s.n.Int64), P50: uint64(s.p50.Int64), P99: uint64(s.p99.Int64), Max: uint64(s.max.Int64)}
}
