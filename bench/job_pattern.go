package bench

// PatternOptions are the job options for where the I/Os go beyond rw and norandommap: random distributions and generators (fio's access-pattern options).
type PatternOptions struct{}
