package tsc

// Read reads the CPU's time-stamp counter (tsc_amd64.s).
//
//go:noescape
func Read() uint64

const haveTSC = true
