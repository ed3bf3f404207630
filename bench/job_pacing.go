package bench

// PacingOptions are the job options for when I/Os are issued and how jobs run together: rates, think time, start delays, CPU policy, which latencies are measured and reported.
type PacingOptions struct{}
