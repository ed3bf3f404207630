//go:build !linux

package randgen

func mapWords(_ *BlockMap, n int) []uint64 { return make([]uint64, n) }
