package fio

import (
	"slices"
	"strings"
)

// KnownToFio reports whether name is one of fio's names — an option iolab
// takes, a job or engine option it does not, or a program option such as
// --minimal — so that a command line can tell what fio's parser will
// explain (ParseArgs) from a typo of the command's own flags.
func KnownToFio(name string) bool {
	if _, ok := LookupOption(name); ok {
		return true
	}
	return name == "output" || name == "output-format" ||
		slices.Contains(fioProgramOptions, name) || slices.Contains(strings.Fields(fioJobOptionNames), name)
}
