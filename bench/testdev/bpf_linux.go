package testdev

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
)

// ProgramsEnding counts the loaded BPF programs named iolab_…suffix
// (bench/blocktrace names its programs by tracepoint and process), to
// check that a tracer's programs are gone after a close or a kill.
func ProgramsEnding(t testing.TB, suffix string) int {
	t.Helper()
	n := 0
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // gone meanwhile
		}
		info, err := p.Info()
		p.Close()
		if err == nil && strings.HasPrefix(info.Name, "iolab_") && strings.HasSuffix(info.Name, suffix) {
			n++
		}
	}
}
