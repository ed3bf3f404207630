// uring.c PATH DEPTH SECS: fio 3.33's io_uring system calls, nothing else:
// 4k random reads, each submitted alone (io_uring_enter(1, 0, GETEVENTS)),
// reaped from the ring, waiting with io_uring_enter(0, 1, GETEVENTS).
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <stdatomic.h>

int main(int argc, char **argv) {
	const char *path = argv[1]; int depth = atoi(argv[2]); double secs = atof(argv[3]);
	int fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0) { perror("open"); return 1; }
	off_t size = lseek(fd, 0, SEEK_END);
	struct io_uring_params p; memset(&p, 0, sizeof p);
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	p.cq_entries = depth;
	int rfd = syscall(__NR_io_uring_setup, depth, &p);
	if (rfd < 0) { perror("setup"); return 1; }
	if (getenv("MINI_WQ")) {
		unsigned v[2] = {atoi(getenv("MINI_WQ")), atoi(getenv("MINI_WQ"))};
		if (syscall(__NR_io_uring_register, rfd, 19, v, 2) < 0) { perror("register"); return 1; }
	}
	size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (cqsz > sqsz) sqsz = cqsz;
	char *sq = mmap(0, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rfd, IORING_OFF_SQ_RING);
	char *cq = sq;
	struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rfd, IORING_OFF_SQES);
	_Atomic unsigned *sqtail = (void *)(sq + p.sq_off.tail);
	unsigned sqmask = *(unsigned *)(sq + p.sq_off.ring_mask);
	unsigned *sqarray = (void *)(sq + p.sq_off.array);
	_Atomic unsigned *cqhead = (void *)(cq + p.cq_off.head), *cqtail = (void *)(cq + p.cq_off.tail);
	unsigned cqmask = *(unsigned *)(cq + p.cq_off.ring_mask);
	struct io_uring_cqe *cqes = (void *)(cq + p.cq_off.cqes);
	char *buf; if (posix_memalign((void **)&buf, 4096, 4096 * depth)) return 1;
	int *freeslots = malloc(depth * sizeof(int)); int nfree = depth;
	for (int i = 0; i < depth; i++) freeslots[i] = i;
	uint64_t x = 88172645463325252ull; long blocks = size / 4096;
	unsigned tail = atomic_load(sqtail);
	struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
	long done = 0; int inflight = 0;
	for (;;) {
		while (inflight < depth) {
			int slot = freeslots[--nfree];
			struct io_uring_sqe *s = &sqes[tail & sqmask];
			memset(s, 0, sizeof *s);
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			s->opcode = IORING_OP_READ; s->fd = fd; s->addr = (uint64_t)(buf + slot * 4096); s->len = 4096;
			s->off = (x % blocks) * 4096; s->user_data = slot;
			sqarray[tail & sqmask] = tail & sqmask;
			tail++;
			atomic_store_explicit(sqtail, tail, memory_order_release);
			if (syscall(__NR_io_uring_enter, rfd, 1, 0, IORING_ENTER_GETEVENTS, NULL, 0) != 1) { perror("enter"); return 1; }
			inflight++;
		}
		for (;;) {
			unsigned head = atomic_load_explicit(cqhead, memory_order_relaxed);
			unsigned ct = atomic_load_explicit(cqtail, memory_order_acquire);
			if (head != ct) {
				while (head != ct) {
					struct io_uring_cqe *c = &cqes[head & cqmask];
					if (c->res != 4096) { fprintf(stderr, "res %d\n", c->res); return 1; }
					freeslots[nfree++] = c->user_data; head++; inflight--; done++;
				}
				atomic_store_explicit(cqhead, head, memory_order_release);
				break;
			}
			syscall(__NR_io_uring_enter, rfd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0);
		}
		if ((done & 1023) < 8) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			double el = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
			if (el >= secs) { printf("%.0f\n", done / el); return 0; }
		}
	}
}
