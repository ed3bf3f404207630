//go:build !linux

package bench

// engineOpener is Linux's; elsewhere there are no engines to open.
type engineOpener func()

// engineTable is empty off Linux: every engine iolab has makes Linux
// system calls.
var engineTable []*Engine
