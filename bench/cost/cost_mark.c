// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * cost_mark: execute one marker of the cost probe (bench/cost/insn_plugin.c)
 *
 *   cost_mark start | stop | dump ID | loop N
 *
 * start zeroes the probe's counters and starts counting, stop stops it,
 * dump ID (0..4095) makes it write its counters to OUT/ID.tb. "loop N":
 * start, a loop of N iterations of a known instruction count, dump 4095,
 * stop: the probe's self-test (bench/cost/selftest.sh). Outside the probe
 * every marker is a NOP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MARK(cmd, arg) \
	asm volatile(".byte 0x66, 0x0f, 0x1f, 0x84, 0x00\n\t.long %c0" \
		     : : "i"(0x5c1e0000u | ((cmd) << 12) | (arg)) : "memory")

/*
 * A marker with a run-time argument: the 9 bytes and a ret written into
 * an executable page and called (the plugin translates it there).
 */
static int mark_dyn(unsigned int cmd, unsigned int arg)
{
	unsigned int disp = 0x5c1e0000u | cmd << 12 | arg;
	unsigned char *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("cost_mark: mmap");
		return 1;
	}
	memcpy(p, "\x66\x0f\x1f\x84\x00", 5);
	memcpy(p + 5, &disp, 4);
	p[9] = 0xc3;
	((void (*)(void))p)();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "start")) {
		MARK(1, 0);
	} else if (argc == 2 && !strcmp(argv[1], "stop")) {
		MARK(2, 0);
	} else if (argc == 3 && !strcmp(argv[1], "dump")) {
		unsigned long id = strtoul(argv[2], NULL, 0);

		if (id > 4095) {
			fprintf(stderr, "cost_mark: dump ID is 0..4095\n");
			return 2;
		}
		return mark_dyn(3, id);
	} else if (argc == 3 && !strcmp(argv[1], "loop")) {
		unsigned long n = strtoul(argv[2], NULL, 0);

		MARK(1, 0);
		/*
		 * Four instructions an iteration (add, add, dec, jnz), one
		 * TB each time round: the self-test expects 4 * N of them at
		 * this loop's address, within the probe's per-TB granularity.
		 */
		asm volatile("1:\n\t"
			     "add $1, %%rax\n\t"
			     "add $2, %%rdx\n\t"
			     "dec %0\n\t"
			     "jnz 1b"
			     : "+r"(n) : : "rax", "rdx", "cc");
		MARK(3, 4095);
		MARK(2, 0);
	} else {
		fprintf(stderr, "usage: cost_mark start | stop | dump ID | loop N\n");
		return 2;
	}
	return 0;
}
