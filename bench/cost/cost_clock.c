// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * cost_clock.so: an LD_PRELOAD shim for the cost probe's perftest runs
 * (bench/cost/run-guest.sh). perftest calibrates its cycle counter by
 * calling gettimeofday() in a loop for a fixed time (about 0.2 s:
 * sample_get_cpu_mhz), a loop whose instruction count follows the
 * emulator's speed, not the work: under TCG it was hundreds of millions
 * of instructions, different in every run. Here gettimeofday() is a clock
 * that starts at the real time and advances 1 us a call, so that loop
 * runs the same number of times in every run and costs no system call.
 * perftest's own time figures are meaningless under it (nothing reads
 * them in a cost run).
 */
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static unsigned long long now_us;

int gettimeofday(struct timeval *tv, void *tz)
{
	unsigned long long t;

	(void)tz;
	if (!__atomic_load_n(&now_us, __ATOMIC_RELAXED)) {
		struct timeval real;

		syscall(SYS_gettimeofday, &real, NULL);
		t = (unsigned long long)real.tv_sec * 1000000 + real.tv_usec;
		__atomic_compare_exchange_n(&now_us, &(unsigned long long){ 0 }, t, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	t = __atomic_fetch_add(&now_us, 1, __ATOMIC_RELAXED);
	tv->tv_sec = t / 1000000;
	tv->tv_usec = t % 1000000;
	return 0;
}
