// Package randgen holds the random generators of fio 3.33 that iolab's jobs
// draw from, bit for bit: splitmix64 for what is no part of fio's output,
// fio's Tausworthe generators (lib/rand.c), its LFSR (lib/lfsr.c), the
// random map of the blocks already done (lib/axmap.c) and the random
// distributions (random_distribution: zipf, pareto, normal, zoned) with
// their parser.
//
// It knows nothing of jobs: bench's picker (randpick.go) and seeds
// (randseed.go) choose which generator a job uses and seed it from the
// job's options, so the same generators serve offsets, block sizes, the
// read/write mix, buffers and pacing.
package randgen
