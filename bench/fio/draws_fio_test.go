package fio

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"iolab/bench"
)

// TestDrawsMatchFio runs size-bound jobs whose I/Os fio decides by its
// random draws — which direction (rwmix_state), which block size
// (bsrange_state per direction), which block (random_state and the random
// map) — side by side with fio 3.33 on one loop device, and compares each
// job's reads and writes: bytes and I/Os, exactly. Where the directions'
// block sizes differ, fio looks its random map up in one direction's
// blocks and marks it in the other's, and a draw that lands past the
// region ends the job early: iolab does the same, so it ends there too.
func TestDrawsMatchFio(t *testing.T) {
	fio := lookFio(t)
	dev := loopDevice(t, 16<<20)
	for _, args := range [][]string{
		// fio 5 reads + 3 writes, iolab used to do 2 + 6.
		{"--rw=randrw", "--bs=1m"},
		{"--rw=randrw", "--bs=64k"},
		// 5 reads of 64k and 3 writes of 1m: the writes' next free block
		// is the map's bit 8, their block 8, past the region.
		{"--rw=randrw", "--bs=64k,1m"},
		{"--rw=randwrite", "--bs=64k,1m"}, // the map counts 64k blocks though no read comes
		{"--rw=randrw", "--bs=1m,64k", "--io_size=16m"},
		{"--rw=randwrite", "--bssplit=64k/40:1024k/60"},
		{"--rw=randrw", "--bsrange=64k-1m"},
		{"--rw=randrw", "--bsrange=12k-100k"}, // not powers of two: sizes rounded down to 12k's multiples
		{"--rw=randrw", "--bssplit=4k/50:64k/50,16k/20:1m/80", "--ioengine=libaio", "--iodepth=8"},
		{"--rw=randrw", "--bsrange=4k-256k", "--ioengine=io_uring", "--iodepth=16"},
		{"--rw=randrw", "--bs=4k", "--rwmixread=70"},
		{"--rw=randrw", "--bs=16k", "--rwmixwrite=80"},
		{"--rw=rw", "--bs=64k,1m", "--rwmixread=30"},    // the mix of a sequential job
		{"--rw=randrw", "--bs=64k,256k", "--numjobs=3"}, // each clone's seeds
		{"--rw=randrw", "--bs=64k", "--percentage_random=30,70"},
		{"--rw=randrw", "--bs=64k,1m", "--norandommap"},
		{"--rw=randrw", "--bsrange=64k-1m", "--random_generator=tausworthe64"},
		{"--rw=randrw", "--bs=64k,1m", "--random_generator=lfsr"},
		{"--rw=randrw:4", "--bs=64k"}, // fio's first I/O of rw=…:N is random
		{"--rw=randrw", "--bsrange=64k-1m", "--loops=3"},
		{"--rw=randrw", "--bs=64k", "--randrepeat=0", "--randseed=42"},
		{"--rw=randrw", "--bs=64k,16k", "--random_distribution=zoned:50/10:50/90"},
		{"--rw=randrw", "--bs=64k,"},         // 64k reads, writes at the default 4k
		{"--rw=randrw", "--bsrange=64k-1m,"}, // ranged reads, 4k writes
		{"--rw=randrw", "--bssplit=4k/50:16k/50", "--rwmixread=90", "--number_ios=300"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			job := append([]string{"--name=draws", "--filename=" + dev, "--size=8m", "--ioengine=psync", "--direct=1"}, args...)
			reps, err := ParseReports(bytes.NewReader(runFio(t, fio, "", append([]string{"--output-format=json"}, job...)...)))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, j := range reps[len(reps)-1].Jobs {
				want = append(want, dirCounts(j.Read.IOBytes, j.Read.TotalIOs, j.Write.IOBytes, j.Write.TotalIOs))
			}
			inProcess.Lock()
			_, res, err := runArgs(job)
			inProcess.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range resultJobs(res) {
				r, w := &j.Dirs[bench.Read], &j.Dirs[bench.Write]
				got = append(got, dirCounts(r.Bytes, r.IOs, w.Bytes, w.IOs))
			}
			if !slices.Equal(got, want) {
				t.Errorf("per job, read and written:\n  fio   %v\n  iolab %v", want, got)
			}
		})
	}
}

func dirCounts(rb, rn, wb, wn uint64) string {
	return fmt.Sprintf("read %d B in %d, wrote %d B in %d", rb, rn, wb, wn)
}
