//go:build !linux

package tsc

import "errors"

func allowedCPUs(int) []int { return nil }

func pinCPU(int) (func(), error) { return nil, errors.New("cannot pin a thread here") }
