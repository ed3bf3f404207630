//go:build !linux

package engine

// opener is Linux's; elsewhere there are no engines to open.
type opener func()

// engineTable is empty off Linux: every engine iolab has makes Linux
// system calls.
var engineTable []*Engine
