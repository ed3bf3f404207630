package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSplitFileList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"/dev/sda", []string{"/dev/sda"}},
		{"a:b", []string{"a", "b"}},
		{`a\:b:c`, []string{"a:b", "c"}},
		{":a::b:", []string{"a", "b"}}, // fio skips empty names
		{"", nil},
	} {
		if got := SplitFileList(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("SplitFileList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatFilename(t *testing.T) {
	for _, tc := range []struct {
		format, want string
	}{
		{"", "job.2.3"},
		{"$jobname.$jobnum.$filenum", "job.2.3"},
		{"$JOBNAME-$FileNum", "job-3"},       // fio matches keywords without regard to case
		{"f.$filenum.$filenum", "f.3.3"},     // every occurrence
		{"$clientuid.$jobnum", ".2"},         // not fio's server: empty
		{"plain", "plain"},                   // no keyword: every file is the same one
		{"$jobname/$jobname", "job/job"},     // a keyword in a directory part
		{"x$jobnumber", "x2ber"},             // fio does not look at what follows
		{"$jobname.$filenum", "job.3"},       // the default's order does not matter
		{"$filenum$jobnum$jobname", "32job"}, // run together
		{"$$jobname", "$job"},                // a lone $ stays
		{"a$jobname$jobname", "ajobjob"},     // twice in a row
		{"$jobname.$jobnum.$filenum.log", "job.2.3.log"},
	} {
		if got := formatFilename(tc.format, "job", 2, 3); got != tc.want {
			t.Errorf("formatFilename(%q) = %q, want %q", tc.format, got, tc.want)
		}
	}
	// A job name holding a keyword is not expanded again (fio would loop).
	if got := formatFilename("$jobname.$filenum", "$jobname", 0, 1); got != "$jobname.1" {
		t.Errorf("a job named $jobname: %q", got)
	}
}

func TestFilePaths(t *testing.T) {
	job := func(mod func(j *Job)) *Job {
		j := NewJob()
		j.Name = "w"
		mod(&j)
		return &j
	}
	for _, tc := range []struct {
		name string
		j    *Job
		want []string
	}{
		{"default name", job(func(j *Job) {}), []string{"w.0.0"}},
		{"nrfiles in a directory", job(func(j *Job) { j.Directory, j.NrFiles = "/d", 3 }), []string{"/d/w.0.0", "/d/w.0.1", "/d/w.0.2"}},
		{"clone's number", job(func(j *Job) { j.JobNum = 2 }), []string{"w.2.0"}},
		{"directories by clone", job(func(j *Job) { j.Directory, j.JobNum = "/a:/b", 3 }), []string{"/b/w.3.0"}},
		{"filename list", job(func(j *Job) { j.Filename, j.NrFiles = `f1:f\:2`, 5 }), []string{"f1", "f:2"}},
		{"directory before every name", job(func(j *Job) { j.Filename, j.Directory = "/dev/x:y", "/d" }), []string{"/d//dev/x", "/d/y"}},
		{"format", job(func(j *Job) { j.FilenameFormat, j.NrFiles = "data.$filenum", 2 }), []string{"data.0", "data.1"}},
		{"diskless", job(func(j *Job) { j.IOEngine = "null" }), nil},
	} {
		if got := tc.j.FilePaths(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestExpandJobNum: clones are numbered as fio's add_job numbers them.
func TestExpandJobNum(t *testing.T) {
	j := NewJob()
	j.NumJobs = 4
	var got []int
	for _, c := range Expand([]Job{j})[0].Jobs {
		got = append(got, c.JobNum)
	}
	if want := []int{0, 3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("jobnums %v, want %v", got, want)
	}
}

// TestLayout checks the regions fio's setup_files gives each file.
func TestLayout(t *testing.T) {
	const k = 1024
	for _, tc := range []struct {
		name  string
		mod   func(j *Job)
		files []fileState
		want  string // per file offset+iosize/realsize(extend), then the job's size
	}{
		{"size divided, the first files a block larger", func(j *Job) { j.Size, j.BS = 10, 1 },
			[]fileState{{"a", 0, true}, {"b", 0, true}, {"c", 0, true}},
			"[0+4/4! 0+3/3! 0+3/3!] 10"},
		{"size below a block per file", func(j *Job) { j.Size = 10 * k },
			[]fileState{{"a", 0, true}, {"b", 0, true}, {"c", 0, true}},
			"[0+3413/3413! 0+3413/3413! 0+3413/3413!] 10239"},
		{"existing file, no size", func(j *Job) {}, []fileState{{"a", 1 << 20, true}}, "[0+1048576/1048576] 1048576"},
		{"offset into it", func(j *Job) { j.Offset = 256 * k }, []fileState{{"a", 1 << 20, true}}, "[262144+786432/1048576] 786432"},
		{"file shorter than size is laid out", func(j *Job) { j.Size = 2 << 20 }, []fileState{{"a", 1 << 20, true}}, "[0+2097152/2097152!] 2097152"},
		{"filesize", func(j *Job) { j.FileSize = [2]int64{64 * k, 64 * k} }, []fileState{{"a", 0, true}, {"b", 0, true}},
			"[0+65536/65536! 0+65536/65536!] 131072"},
		{"filesize, file already that size", func(j *Job) { j.FileSize = [2]int64{64 * k, 64 * k} }, []fileState{{"a", 64 * k, true}},
			"[0+65536/65536] 65536"},
		{"size=50%", func(j *Job) { j.SizePercent = 50 }, []fileState{{"a", 1 << 20, true}}, "[0+524288/1048576] 524288"},
		{"size=50% with offset", func(j *Job) { j.SizePercent, j.Offset = 50, 768*k+512 }, []fileState{{"a", 1 << 20, true}},
			"[786944+258048/1048576] 258048"},
		{"offset=50%", func(j *Job) { j.OffsetPercent = 50; j.Size = 4 * k }, []fileState{{"a", 1<<20 + 1000, true}},
			"[528384+4096/1049576] 4096"},
		{"offset_increment", func(j *Job) { j.Size, j.OffsetIncrement, j.JobNum = 64*k, 256*k, 2 }, []fileState{{"a", 1 << 20, true}},
			"[524288+65536/1048576] 65536"},
		{"create_on_open", func(j *Job) { j.Size, j.CreateOnOpen = 64*k, true }, []fileState{{"a", 0, true}}, "[0+65536/65536] 65536"},
		{"a device", func(j *Job) { j.SizePercent = 100 }, []fileState{{"/dev/x", 4 << 20, false}}, "[0+4194304/4194304] 4194304"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewJob()
			j.Name = "j"
			tc.mod(&j)
			lay, err := j.layout(tc.files, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range lay.Files {
				s := fmt.Sprintf("%d+%d/%d", r.Offset, r.IOSize, r.RealSize)
				if r.Extend {
					s += "!"
				}
				got = append(got, s)
			}
			if s := fmt.Sprintf("%v %d", got, lay.Size); s != tc.want {
				t.Errorf("got  %s\nwant %s", s, tc.want)
			}
		})
	}
}

func TestLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mod   func(j *Job)
		files []fileState
		want  string
	}{
		{"nothing to size from", func(j *Job) {}, []fileState{{"a", 0, true}}, "a does not exist (or is empty); give --size"},
		{"device too small", func(j *Job) { j.Size = 8 << 20 }, []fileState{{"/dev/x", 4 << 20, false}}, "is 4.00MiB but the job needs 8.00MiB"},
		{"offset past a device", func(j *Job) { j.Offset, j.Size = 8<<20, 4096 }, []fileState{{"/dev/x", 4 << 20, false}}, "at or past the end"},
		{"region below a block", func(j *Job) { j.Size, j.BS = 4096, 8192 }, []fileState{{"a", 0, true}}, "smaller than one block"},
	} {
		j := NewJob()
		j.Name = "j"
		tc.mod(&j)
		if _, err := j.layout(tc.files, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// genAll runs a generator to its end and returns its I/Os.
func genAll(t *testing.T, j *Job, files []fileState) (out [][3]int64) {
	t.Helper()
	lay, err := j.layout(files, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := newIOGen(j, lay, 0)
	for range 1 << 20 {
		op, file, off, n, ok := g.next()
		if !ok {
			return out
		}
		out = append(out, [3]int64{int64(file), off, int64(n) * map[ioOp]int64{opRead: 1, opWrite: -1}[op]})
	}
	t.Fatal("the generator never ends")
	return nil
}

// TestGenerator pins offsets fio's fill_io_u gives (checked with fio 3.33
// and strace for the sequential cases).
func TestGenerator(t *testing.T) {
	const k = 1024
	one := []fileState{{"a", 64 * k, true}}
	for _, tc := range []struct {
		name string
		mod  func(j *Job)
		want string
	}{
		{"sequential", func(j *Job) { j.Size = 16 * k }, "[[0 0 4096] [0 4096 4096] [0 8192 4096] [0 12288 4096]]"},
		{"size not a multiple of bs reads past it", func(j *Job) { j.Size = 10 * k }, "[[0 0 4096] [0 4096 4096] [0 8192 4096]]"},
		// The hole takes the next I/O past the region: the file is done
		// (it wraps only at the end of the file).
		{"rw=read:4k holes", func(j *Job) { j.Size, j.RWSeqAdd = 16*k, 4*k }, "[[0 0 4096] [0 8192 4096]]"},
		{"rw=read:4k holes wrap at the end of the file", func(j *Job) { j.Size, j.RWSeqAdd = 64*k, 4*k },
			"[[0 0 4096] [0 8192 4096] [0 16384 4096] [0 24576 4096] [0 32768 4096] [0 40960 4096] [0 49152 4096] [0 57344 4096] " +
				"[0 0 4096] [0 8192 4096] [0 16384 4096] [0 24576 4096] [0 32768 4096] [0 40960 4096] [0 49152 4096] [0 57344 4096]]"},
		{"writes of their own size", func(j *Job) { j.RW, j.Size, j.WriteBS = "write", 16*k, 8*k }, "[[0 0 -8192] [0 8192 -8192]]"},
		{"number_ios", func(j *Job) { j.NumberIOs = 2 }, "[[0 0 4096] [0 4096 4096]]"},
		{"loops", func(j *Job) { j.Size, j.Loops = 8*k, 2 }, "[[0 0 4096] [0 4096 4096] [0 0 4096] [0 4096 4096]]"},
		{"strided zones", func(j *Job) {
			j.Size, j.ZoneMode, j.ZoneSize, j.ZoneRange, j.ZoneSkip = 16*k, "strided", 8*k, 16*k, 8*k
		},
			"[[0 0 4096] [0 4096 4096] [0 24576 4096] [0 28672 4096]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewJob()
			j.Name = "j"
			tc.mod(&j)
			if got := fmt.Sprint(genAll(t, &j, one)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestGeneratorFileService: roundrobin alternates, :N stays N I/Os,
// sequential finishes a file first.
func TestGeneratorFileService(t *testing.T) {
	two := []fileState{{"a", 16 << 10, true}, {"b", 16 << 10, true}}
	files := func(mod func(j *Job)) string {
		j := NewJob()
		j.Name = "j"
		mod(&j)
		var s []byte
		for _, io := range genAll(t, &j, two) {
			s = append(s, byte('a'+io[0]))
		}
		return string(s)
	}
	for _, tc := range []struct {
		name string
		mod  func(j *Job)
		want string
	}{
		{"roundrobin", func(j *Job) {}, "abababab"},
		{"roundrobin:2", func(j *Job) { j.FileServiceNr = 2 }, "aabbaabb"},
		{"sequential", func(j *Job) { j.FileService = "sequential" }, "aaaabbbb"},
	} {
		if got := files(tc.mod); got != tc.want {
			t.Errorf("%s: files %s, want %s", tc.name, got, tc.want)
		}
	}
	j := NewJob()
	j.Name, j.FileService = "j", "random"
	if got := files(func(j *Job) { j.FileService = "random" }); len(got) != 8 || got == "abababab" {
		t.Errorf("random: files %s", got)
	}
}

// TestGeneratorBlockSizes: bsrange and bssplit sizes are multiples of
// the smallest, in range, fit the region, and the bytes add up to size.
func TestGeneratorBlockSizes(t *testing.T) {
	for _, mod := range []func(j *Job){
		func(j *Job) { j.BSRange = [2][2]int64{{4096, 65536}, {4096, 65536}} },
		func(j *Job) { j.BSSplit[Read] = []BSSplit{{4096, 10}, {16384, 40}, {65536, 50}} },
		func(j *Job) { j.BSSplit[Read] = []BSSplit{{4096, 10}, {16384, 40}, {65536, 50}}; j.RW = "randread" },
	} {
		j := NewJob()
		// 8 MiB: a couple of hundred I/Os, so every size of the split
		// comes up whatever the seed.
		j.Name, j.Size = "j", 8<<20
		mod(&j)
		var total int64
		seen := map[int64]bool{}
		for _, io := range genAll(t, &j, []fileState{{"a", 8 << 20, true}}) {
			n := io[2]
			if n%4096 != 0 || n < 4096 || n > 65536 || io[1]+n > 8<<20 {
				t.Fatalf("%s: an I/O of %d at %d", j.RW, n, io[1])
			}
			total += n
			seen[n] = true
		}
		if total != 8<<20 || len(seen) < 3 {
			t.Errorf("%s: %d bytes in sizes %v", j.RW, total, seen)
		}
	}
}
