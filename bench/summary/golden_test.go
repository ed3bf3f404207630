package summary

import (
	"flag"
	"path/filepath"
	"testing"

	"iolab/bench/golden"
	"iolab/bench/sweep"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden with the output the tests produce")

// checkGolden compares the summary of a plan's results with
// testdata/golden/name.txt: the tables end `iolab run` and scripts read
// them, so their layout is pinned. go test -update rewrites the file.
func checkGolden(t *testing.T, name string, plan *sweep.Plan, results []sweep.StepResult) {
	t.Helper()
	golden.Check(t, *update, filepath.Join("testdata", "golden", name+".txt"), []byte(summaryText(t, plan, results)))
}
