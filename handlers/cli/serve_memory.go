package cli

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"iolab/bench/units"
	"iolab/handlers"
)

// serveMemory is what the dashboard may hold: a soft limit on the Go
// heap and the size of its cache of answers.
type serveMemory struct {
	limit int64 // 0: GOMEMLIMIT's, or none
	cache int64
}

// defaultMemoryLimit keeps the dashboard well within a small machine: a
// page of a 500-step run is built from ~150 MB of job results (each holds
// six fixed-size histograms), and without a limit the collector lets the
// heap grow to twice what is live before it runs.
const defaultMemoryLimit = 200 << 20

func memoryFlags(fs *flag.FlagSet, m *serveMemory) {
	if os.Getenv("GOMEMLIMIT") == "" {
		m.limit = defaultMemoryLimit
	}
	m.cache = handlers.DefaultHTTPLimits().CacheBytes
	fs.Func("memory-limit", fmt.Sprintf("a soft limit of `SIZE` on the server's Go memory: the collector works harder near it, e.g. 512m; 0 for none (default %s, or $GOMEMLIMIT)", units.FormatSize(defaultMemoryLimit)), func(v string) error {
		n, err := units.ParseSize(v)
		if err != nil || n < 0 {
			return fmt.Errorf("--memory-limit %q: a size such as 512m, or 0", v)
		}
		m.limit = n
		return nil
	})
	fs.Func("cache-size", fmt.Sprintf("keep at most `SIZE` of gzipped run pages, charts, CSVs and documents, e.g. 128m (default %s)", units.FormatSize(m.cache)), func(v string) error {
		n, err := units.ParseSize(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("--cache-size %q: a size such as 128m", v)
		}
		m.cache = n
		return nil
	})
}

// apply sets the limit (0 leaves the runtime's own).
func (m serveMemory) apply() {
	if m.limit > 0 {
		debug.SetMemoryLimit(m.limit)
	}
}
