package fio

import "iolab/bench"

// pacingOptions are fio's options for the when I/Os are issued and how jobs run together: rates, think time, start delays, CPU policy, statistics.
var pacingOptions = []bench.OptionSpec{}
