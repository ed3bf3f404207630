package fio

import "iolab/bench"

// patternOptions are fio's options for the where the I/Os go: random distributions, generators, the share of random I/O.
var patternOptions = []bench.OptionSpec{}
