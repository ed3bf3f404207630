package tsc

// Read reads the CPU's time-stamp counter (tsc_amd64.s).
//
//go:noescape
func Read() uint64

// readFenced reads it after what comes before it and before what comes
// after it.
//
//go:noescape
func readFenced() uint64

const haveTSC = true
