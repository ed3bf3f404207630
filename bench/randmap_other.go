//go:build !linux

package bench

func mapWords(_ *blockMap, n int) []uint64 { return make([]uint64, n) }
