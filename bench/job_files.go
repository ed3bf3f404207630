package bench

// FileOptions are the job options for the files a job does I/O on beyond filename: directory, several files, their sizes, layout and clean-up (fio's file options).
type FileOptions struct{}
