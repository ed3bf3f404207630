package bench

// BufferOptions are the job options for what write buffers hold and how writes are synced: buffer contents, fsync, O_SYNC, the page cache.
type BufferOptions struct{}
