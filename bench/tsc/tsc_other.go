//go:build !amd64

package tsc

// Read is 0 where there is no TSC to read.
func Read() uint64 { return 0 }

func readFenced() uint64 { return 0 }

const haveTSC = false
