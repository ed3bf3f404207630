package blocktrace

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// field is where a tracepoint's record keeps one field.
type field struct{ off, size int }

// layout is where the fields the programs read lie in one tracepoint's
// record, from its format file: the kernel's own, so that another
// kernel's layout is read, never assumed.
type layout struct {
	dev, sector, sectors, rwbs field
	// newSector, for block_split: the sector the split bio goes on at.
	newSector field
}

// readLayout reads the tracepoint's format file under the tracefs mount
// dir: events/block/NAME/format.
func readLayout(dir string, k Kind) (layout, error) {
	name := tracepoints[k]
	path := filepath.Join(dir, "events", "block", name, "format")
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return layout{}, fmt.Errorf("this kernel has no tracepoint block:%s (%s): it cannot trace the block layer", name, path)
		}
		return layout{}, err
	}
	fields := parseFormat(b)
	var l layout
	want := []struct {
		names []string
		to    *field
		size  []int
	}{
		{[]string{"dev"}, &l.dev, []int{4}},
		{[]string{"sector"}, &l.sector, []int{8}},
		{[]string{"rwbs"}, &l.rwbs, []int{8, 9, 10}},
	}
	if k == Split {
		want = append(want, struct {
			names []string
			to    *field
			size  []int
		}{[]string{"new_sector"}, &l.newSector, []int{8}})
	} else {
		want = append(want, struct {
			names []string
			to    *field
			size  []int
		}{[]string{"nr_sector"}, &l.sectors, []int{4}})
	}
	for _, w := range want {
		f, ok := fields[w.names[0]]
		if !ok || !sizeIn(f.size, w.size) {
			return layout{}, fmt.Errorf("tracepoint block:%s has no field %s of %v bytes in %s: this kernel's block tracepoints differ from those iolab reads", name, w.names[0], w.size, path)
		}
		*w.to = f
	}
	return l, nil
}

func sizeIn(n int, sizes []int) bool {
	for _, s := range sizes {
		if n == s {
			return true
		}
	}
	return false
}

// parseFormat reads the "field:TYPE NAME;	offset:N;	size:N;" lines
// of a tracepoint's format file.
func parseFormat(b []byte) map[string]field {
	out := map[string]field{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		var decl string
		f := field{off: -1, size: -1}
		for part := range strings.SplitSeq(line, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(part), ":")
			if !ok {
				continue
			}
			switch k {
			case "field":
				decl = v
			case "offset":
				f.off, _ = strconv.Atoi(v)
			case "size":
				f.size, _ = strconv.Atoi(v)
			}
		}
		// "char rwbs[10]", "sector_t sector", "__data_loc char[] cmd"
		words := strings.Fields(decl)
		if len(words) == 0 || f.off < 0 || f.size < 0 {
			continue
		}
		name, _, _ := strings.Cut(words[len(words)-1], "[")
		out[name] = f
	}
	return out
}
