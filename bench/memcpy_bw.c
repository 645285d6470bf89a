// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * memcpy_bw: single-threaded copy bandwidth, the ceiling a software RDMA
 * device copying payloads on one CPU can reach in the same (virtual)
 * machine.
 *
 *   memcpy_bw [-m METHOD] [-b BUF_MIB] [-t SECONDS] CHUNK...
 *
 * For each CHUNK (bytes; K and M suffixes allowed) copies CHUNK-sized
 * pieces from one buffer of BUF_MIB MiB (default 128) to another, walking
 * both buffers front to back and starting over at their end, for SECONDS
 * (default 1, fractions allowed), and prints one line per CHUNK:
 *
 *   METHOD CHUNK MIB_PER_S
 *
 * Methods (-m):
 *   memcpy    libc's memcpy (vector registers where the CPU has them);
 *   repmovsb  one "rep movsb" per chunk: how the x86-64 kernel's memcpy
 *             and copy_{to,from}_user copy on a CPU with ERMS or FSRM;
 *   repmovsq  one "rep movsq" per chunk: the kernel's way on a CPU with
 *             REP_GOOD but without those;
 *   movq      a loop of 8-byte loads and stores, four per iteration: the
 *             kernel's memcpy on a CPU with none of them (memcpy_orig).
 * The kernel builds without vector registers, so the last three are the
 * ceilings for a driver's copies. Under an emulator the three can differ
 * a lot: qemu's TCG runs a string instruction very differently from
 * plain loads and stores.
 *
 * MiB/s is 2^20 bytes per second: the unit perftest reports as "MB/sec".
 * The buffers are larger than any cache so that, like an RDMA payload
 * landing in a user buffer, the copy streams from and to memory.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void copy_fn(char *dst, const char *src, size_t len);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void copy_memcpy(char *dst, const char *src, size_t len)
{
	memcpy(dst, src, len);
}

#if defined(__x86_64__)
static void copy_repmovsb(char *dst, const char *src, size_t len)
{
	__asm__ __volatile__("rep movsb"
			     : "+D"(dst), "+S"(src), "+c"(len)
			     :
			     : "memory");
}

/* len: a multiple of 32, not 0 (the chunk sizes are checked for it). */
static void copy_repmovsq(char *dst, const char *src, size_t len)
{
	size_t n = len / 8;

	__asm__ __volatile__("rep movsq"
			     : "+D"(dst), "+S"(src), "+c"(n)
			     :
			     : "memory");
}

/* len: as for copy_repmovsq. */
static void copy_movq(char *dst, const char *src, size_t len)
{
	size_t n = len / 32;

	__asm__ __volatile__("1:\n\t"
			     "movq 0(%1), %%r8\n\t"
			     "movq 8(%1), %%r9\n\t"
			     "movq 16(%1), %%r10\n\t"
			     "movq 24(%1), %%r11\n\t"
			     "movq %%r8, 0(%0)\n\t"
			     "movq %%r9, 8(%0)\n\t"
			     "movq %%r10, 16(%0)\n\t"
			     "movq %%r11, 24(%0)\n\t"
			     "leaq 32(%1), %1\n\t"
			     "leaq 32(%0), %0\n\t"
			     "decq %2\n\t"
			     "jnz 1b"
			     : "+r"(dst), "+r"(src), "+r"(n)
			     :
			     : "r8", "r9", "r10", "r11", "memory", "cc");
}
#endif

static const struct {
	const char *name;
	copy_fn *fn;
} methods[] = {
	{ "memcpy", copy_memcpy },
#if defined(__x86_64__)
	{ "repmovsb", copy_repmovsb },
	{ "repmovsq", copy_repmovsq },
	{ "movq", copy_movq },
#endif
};

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	}
	if (*end || !v)
		return -1;
	*out = v;
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-m memcpy|repmovsb|repmovsq|movq] [-b BUF_MIB] [-t SECONDS] CHUNK...\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	size_t buf_len = (size_t)128 << 20, chunk, off, m = 0;
	double secs = 1.0, start, elapsed;
	unsigned long long copied;
	const char *method = "memcpy";
	char *src, *dst;
	int opt, i;

	while ((opt = getopt(argc, argv, "m:b:t:")) != -1) {
		switch (opt) {
		case 'm':
			method = optarg;
			break;
		case 'b':
			buf_len = strtoull(optarg, NULL, 0) << 20;
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind >= argc || !buf_len || secs <= 0)
		usage(argv[0]);
	while (m < sizeof(methods) / sizeof(methods[0]) && strcmp(methods[m].name, method))
		m++;
	if (m == sizeof(methods) / sizeof(methods[0])) {
		fprintf(stderr, "memcpy_bw: no method '%s' on this machine\n", method);
		return 2;
	}

	src = malloc(buf_len);
	dst = malloc(buf_len);
	if (!src || !dst) {
		fprintf(stderr, "memcpy_bw: cannot allocate 2 x %zu bytes\n", buf_len);
		return 1;
	}
	/* Fault every page in now, so the timed loop measures copying only. */
	memset(src, 0x5a, buf_len);
	memset(dst, 0xa5, buf_len);

	for (i = optind; i < argc; i++) {
		if (parse_size(argv[i], &chunk) || chunk > buf_len || chunk % 32) {
			fprintf(stderr, "memcpy_bw: bad chunk size '%s' (a multiple of 32, at most %zu)\n",
				argv[i], buf_len);
			return 2;
		}
		copied = 0;
		off = 0;
		start = now();
		do {
			if (off + chunk > buf_len)
				off = 0;
			methods[m].fn(dst + off, src + off, chunk);
			/*
			 * dst is never read: without this the compiler may
			 * drop the copies as dead stores.
			 */
			__asm__ __volatile__("" : : "r"(dst) : "memory");
			off += chunk;
			copied += chunk;
			elapsed = now() - start;
		} while (elapsed < secs);
		printf("%s %zu %.2f\n", methods[m].name, chunk, copied / elapsed / (1 << 20));
		fflush(stdout);
	}
	free(src);
	free(dst);
	return 0;
}
