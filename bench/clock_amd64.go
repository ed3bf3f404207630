package bench

// rdtsc reads the CPU's time-stamp counter (clock_amd64.s).
//
//go:noescape
func rdtsc() uint64

const haveTSC = true
