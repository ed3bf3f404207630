package fio

import "iolab/bench"

// fileOptions are fio's options for the files a job does I/O on: names, directory, counts, sizes, how they are laid out and cleaned up.
var fileOptions = []bench.OptionSpec{}
