//go:build !linux

package cli

import "os"

// defaultLoopDir is the temporary directory: the loop target is Linux's.
func defaultLoopDir() string { return os.TempDir() }

func onTmpfs(string) bool { return false }
