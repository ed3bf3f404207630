package handlers

import "strings"

// The labels of the form's checkboxes that are flags on the command
// line: --skip-impossible and --discard.
const (
	skipImpossibleLabel = "leave out steps the target cannot run"
	discardLabel        = "blkdiscard before each step"
)

// cliWords are what the messages of the packages under the two front
// doors say in the command line's words, and what the form says instead:
// its own controls' labels, or nothing where it has no such control. The
// CLI keeps its messages; the form's edge (formWords) translates them.
var cliWords = []struct{ cli, form string }{
	{"add --skip-impossible to", `tick "` + skipImpossibleLabel + `" to`},
	{"--discard: ", `"` + discardLabel + `": `},
	{"drop --discard", `untick "` + discardLabel + `"`},
	// The dashboard never switches the scheduler of a disk under a file
	// target: only a block device of its own is left.
	{"pass --allow-disk-scheduler to do it anyway, or use", "use"},
	{"--sweep: ", ""},
	{"--sweep ", ""},
	{"--repeat", "repeats"},
	{"--slo ", "latency objective "},
}

// formWords says msg in the form's words (cliWords).
func formWords(msg string) string {
	for _, w := range cliWords {
		msg = strings.ReplaceAll(msg, w.cli, w.form)
	}
	return msg
}
