package fio

import (
	"fmt"
	"slices"
	"strings"

	"iolab/bench"
)

// outputFormatOrder is the order fio 3.33 prints its formats in when a run
// asks for several (stat.c keeps a buffer per format and flushes them
// terse, JSON, normal): "terse,json" or "normal,terse" print the terse
// lines first.
var outputFormatOrder = []string{"terse", "json", "json+", "normal"}

// parseOutputFormats reads --output-format's value as fio does: one or
// more of normal, json, json+ and terse (or its aliases minimal and csv),
// separated by commas, in any order and repeated at will. The result is
// the set in the order fio prints it, comma-separated; json+ stands for
// json as well, since fio's JSON+ is its JSON with the bins added.
func parseOutputFormats(v string) (string, error) {
	var set []string
	for f := range strings.SplitSeq(v, ",") {
		switch f {
		case "minimal", "csv":
			f = "terse"
		case "normal", "json", "json+", "terse":
		default:
			return "", fmt.Errorf("%q is not one of normal, json, json+, terse (several may be joined with commas, as in fio: normal,terse)", f)
		}
		set = append(set, f)
	}
	if slices.Contains(set, "json+") {
		set = slices.DeleteFunc(set, func(f string) bool { return f == "json" })
	}
	var out []string
	for _, f := range outputFormatOrder {
		if slices.Contains(set, f) {
			out = append(out, f)
		}
	}
	return strings.Join(out, ","), nil
}

// OutputFormats are the formats a run writes, in the order it writes them
// (fio's: terse, JSON, normal); normal when none was asked for.
func OutputFormats(cfg *bench.Config) []string {
	if cfg.OutputFormat == "" {
		return []string{"normal"}
	}
	return strings.Split(cfg.OutputFormat, ",")
}
