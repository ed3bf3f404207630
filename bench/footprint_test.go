package bench

import (
	"path/filepath"
	"testing"
)

// TestGrowsToBoundsLayout: the size GrowsTo says a job may make a file is
// at least what its layout lays the file out to, missing or short, and
// exactly that for fixed sizes; with the file long enough already, the
// file's own size.
func TestGrowsToBoundsLayout(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		job   func(j *Job)
		files int
		cur   int64
		exact bool
	}{
		{"size", func(j *Job) { j.Size = 8 << 20 }, 1, 0, true},
		{"size over three files", func(j *Job) { j.Size = 10 << 20 }, 3, 0, false},
		{"a short file", func(j *Job) { j.Size = 8 << 20 }, 1, 1 << 20, true},
		{"a long file", func(j *Job) { j.Size = 8 << 20 }, 1, 32 << 20, true},
		{"offset", func(j *Job) { j.Size, j.Offset = 8<<20, 4<<20 }, 1, 0, true},
		{"a clone's offset_increment", func(j *Job) { j.Size, j.OffsetIncrement, j.JobNum = 1<<20, 1<<20, 3 }, 1, 0, true},
		{"filesize", func(j *Job) { j.FileSize = [2]int64{2 << 20, 2 << 20} }, 2, 0, true},
		{"a filesize range", func(j *Job) { j.FileSize = [2]int64{1 << 20, 64 << 20} }, 4, 0, false},
		{"size=50%", func(j *Job) { j.Size, j.SizePercent = 8<<20, 50 }, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := NewJob()
			j.Name = "j"
			j.IOEngine, j.RW, j.BS = "psync", "randwrite", 4096
			tt.job(&j)
			var states []fileState
			for i := range tt.files {
				states = append(states, fileState{Path: filepath.Join(dir, "f"+string(rune('0'+i))), Size: tt.cur, Regular: true})
			}
			got := j.GrowsTo(tt.cur, tt.files)
			for seed := range uint64(20) {
				lay, err := j.layout(states, seed)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range lay.Files {
					laid := max(r.RealSize, r.Offset+r.IOSize, tt.cur)
					if laid > got || (tt.exact && laid != got) {
						t.Fatalf("GrowsTo = %d; the layout makes %s %d bytes (offset %d, region %d)", got, r.Path, laid, r.Offset, r.IOSize)
					}
				}
			}
		})
	}
	fill := NewJob()
	fill.IOEngine, fill.FillDevice = "psync", true
	if got := fill.GrowsTo(0, 1); got != -1 {
		t.Errorf("fill_device without a size: GrowsTo = %d, want -1 (the filesystem bounds it)", got)
	}
}
