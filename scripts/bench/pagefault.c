// pagefault.c: the host's floor for a download into memory no array held
// before (transfer.lua's first_gbs): the rate at which the kernel faults in
// and zeroes fresh anonymous pages, on 1 to 16 threads, against the same
// work on memory whose pages are there.
//
//   cc -O2 -pthread -o pagefault pagefault.c && ./pagefault [MiB]   (default 1024)
//
// Each line is one way of filling MiB of fresh memory, with transparent
// huge pages allowed (MADV_HUGEPAGE, as glua's download arrays are
// advised) or not (MADV_NOHUGEPAGE):
//   memset    the first write to each page faults it in (fresh_gbs), and
//             the same again with the pages there (warm_gbs)
//   populate  MADV_POPULATE_WRITE asks for every page in one call per
//             thread, as glua's staging threads do (Linux 5.14); warm_gbs
//             is then memcpy's
//   memcpy    a copy from memory whose pages are there, as the copy out
//             of pinned staging is
// and map_populate is mmap's MAP_POPULATE, the kernel's own single thread.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { MEMSET, POPULATE, MEMCPY };
static const char *names[] = {"memset", "populate", "memcpy"};

typedef struct {
	char *dst, *src;
	size_t n;
	int mode;
} job;

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *work(void *p) {
	job *j = p;
	if (j->mode == MEMSET)
		memset(j->dst, 1, j->n);
	else if (j->mode == POPULATE)
		madvise(j->dst, j->n, MADV_POPULATE_WRITE);
	else
		memcpy(j->dst, j->src, j->n);
	return NULL;
}

// fill runs mode over n bytes of dst on threads threads, each a contiguous
// share of whole pages, and returns GB/s.
static double fill(char *dst, char *src, size_t n, int threads, int mode) {
	pthread_t th[64];
	job jobs[64];
	size_t per = (n / threads + 4095) & ~(size_t)4095;
	double t0 = now();
	for (int i = 0; i < threads; i++) {
		size_t lo = i * per < n ? i * per : n, hi = lo + per < n ? lo + per : n;
		jobs[i] = (job){dst + lo, src + lo, hi - lo, mode};
		pthread_create(&th[i], NULL, work, &jobs[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return n / (now() - t0) / 1e9;
}

int main(int argc, char **argv) {
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024, n = mib << 20;
	const size_t huge = 2 << 20;
	char *src = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(src, 7, n);
	int counts[] = {1, 4, 12, 16};
	for (int advise = 0; advise < 2; advise++)
		for (int mode = MEMSET; mode <= MEMCPY; mode++)
			for (int k = 0; k < 4; k++) {
				char *raw = mmap(NULL, n + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (raw == MAP_FAILED) {
					perror("mmap");
					return 1;
				}
				char *dst = (char *)(((size_t)raw + huge - 1) & ~(huge - 1));
				madvise(dst, n, advise ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
				double fresh = fill(dst, src, n, counts[k], mode);
				double warm = fill(dst, src, n, counts[k], mode == POPULATE ? MEMCPY : mode);
				printf("{\"bench\": \"pagefault\", \"mib\": %zu, \"huge\": %d, \"mode\": \"%s\", \"threads\": %d, "
				       "\"fresh_gbs\": %.2f, \"warm_gbs\": %.2f}\n",
				       mib, advise, names[mode], counts[k], fresh, warm);
				fflush(stdout);
				munmap(raw, n + huge);
			}
	double t0 = now();
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p != MAP_FAILED) {
		printf("{\"bench\": \"pagefault\", \"mib\": %zu, \"mode\": \"map_populate\", \"threads\": 1, \"fresh_gbs\": %.2f}\n",
		       mib, n / (now() - t0) / 1e9);
		munmap(p, n);
	}
	return 0;
}
