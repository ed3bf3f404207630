package fio

import "iolab/bench"

// bufferOptions are fio's options for the what the buffers hold and how writes are synced: buffer contents, fsync, O_SYNC, page cache.
var bufferOptions = []bench.OptionSpec{}
