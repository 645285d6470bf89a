// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * insn_plugin: scire's cost probe, a QEMU TCG plugin (issue 50).
 *
 * Counts the guest instructions executed between two points the guest
 * marks, per translation block start address, so that the counts can be
 * attributed afterwards (bench/cost/attribute.py) to user space, each
 * kernel module and the core kernel's functions from /proc/modules and
 * /proc/kallsyms of the same boot.
 *
 * The marker is a NOP that compilers never emit: the 9-byte
 * "nopw 0x5c1eCIII(%rax,%rax,1)" (66 0f 1f 84 00 + disp32), whose
 * displacement's top 16 bits are 0x5c1e, C (4 bits) the command and III
 * (12 bits) its argument. It is a NOP in user space and the kernel alike
 * and has no side effects; the plugin recognises it when it translates it.
 * Commands (bench/cost/cost_mark.c executes them):
 *
 *   1  start: zero every counter, then count
 *   2  stop: stop counting
 *   3  dump III: write the counters to OUT/III.tb (counting goes on)
 *
 * Counting is by translation block (TB): a TB's execution callback adds
 * one to the TB's counter of the vCPU that runs it (one slot per vCPU, so
 * -smp N with thread=multi needs no atomics: each slot has one writer).
 * A TB that leaves early (an exception in its middle) is counted whole;
 * under TCG an interrupt is taken between TBs, so that error is small.
 * QEMU 7.2 executes each iteration of a "rep movs"/"rep stos" as one
 * execution of a TB that holds that one instruction: such TBs are marked
 * (their element size), so that the analysis counts their executions as
 * bytes moved, not as instructions.
 *
 * A dump has one line per TB address executed since start:
 *
 *   VADDR NINSNS EXECS REP SYSCALLS
 *
 * VADDR hex; NINSNS the TB's instructions; EXECS its executions (all
 * vCPUs); REP 0, or the element size of the rep movs (positive) or
 * rep stos (negative) that the TB starts with; SYSCALLS the "syscall"
 * instructions in it. TBs translated more than once (the same address
 * and length) share one counter.
 *
 * Arguments: out=DIR (required), vcpus=N (slots, default 8).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_MAGIC 0x5c1eu
enum { MARK_START = 1, MARK_STOP = 2, MARK_DUMP = 3 };

struct tb_count {
	uint64_t vaddr;
	uint32_t ninsns;
	int16_t rep;
	uint16_t syscalls;
	struct tb_count *next;	/* hash chain */
	uint64_t execs[];	/* one per vCPU slot */
};

#define HASH_BITS 18
static struct tb_count *table[1u << HASH_BITS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int nslots = 8;
static const char *out_dir;
static volatile int counting;
static uint64_t dropped_vcpu;

static unsigned int hash(uint64_t vaddr, uint32_t ninsns)
{
	uint64_t h = (vaddr ^ ((uint64_t)ninsns << 48)) * 0x9e3779b97f4a7c15ull;

	return h >> (64 - HASH_BITS);
}

/* The counter of (vaddr, ninsns), made on first sight. */
static struct tb_count *tb_count_get(uint64_t vaddr, uint32_t ninsns, int rep, int syscalls)
{
	unsigned int h = hash(vaddr, ninsns);
	struct tb_count *c;

	pthread_mutex_lock(&table_lock);
	for (c = table[h]; c; c = c->next)
		if (c->vaddr == vaddr && c->ninsns == ninsns)
			break;
	if (!c) {
		c = calloc(1, sizeof(*c) + nslots * sizeof(c->execs[0]));
		if (!c)
			abort();
		c->vaddr = vaddr;
		c->ninsns = ninsns;
		c->rep = rep;
		c->syscalls = syscalls;
		c->next = table[h];
		/* Published last: a dump walks the chains under the lock. */
		table[h] = c;
	}
	pthread_mutex_unlock(&table_lock);
	return c;
}

static void tb_exec(unsigned int vcpu, void *udata)
{
	struct tb_count *c = udata;

	if (!counting)
		return;
	if (vcpu < nslots)
		c->execs[vcpu]++;
	else
		__atomic_fetch_add(&dropped_vcpu, 1, __ATOMIC_RELAXED);
}

static void reset(void)
{
	struct tb_count *c;
	unsigned int h;

	pthread_mutex_lock(&table_lock);
	for (h = 0; h < (1u << HASH_BITS); h++)
		for (c = table[h]; c; c = c->next)
			memset(c->execs, 0, nslots * sizeof(c->execs[0]));
	pthread_mutex_unlock(&table_lock);
}

static void dump(unsigned int id)
{
	char path[4096], tmp[4200];
	struct tb_count *c;
	unsigned int h, v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u.tb", out_dir, id);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "insn_plugin: %s: %s\n", tmp, strerror(errno));
		return;
	}
	pthread_mutex_lock(&table_lock);
	for (h = 0; h < (1u << HASH_BITS); h++) {
		for (c = table[h]; c; c = c->next) {
			uint64_t n = 0;

			for (v = 0; v < nslots; v++)
				n += c->execs[v];
			if (n)
				fprintf(f, "%" PRIx64 " %u %" PRIu64 " %d %u\n", c->vaddr, c->ninsns,
					n, c->rep, c->syscalls);
		}
	}
	pthread_mutex_unlock(&table_lock);
	fprintf(f, "# dropped_vcpu %" PRIu64 "\n", dropped_vcpu);
	fclose(f);
	rename(tmp, path);
}

static void mark_exec(unsigned int vcpu, void *udata)
{
	unsigned int disp = (unsigned int)(uintptr_t)udata;
	unsigned int cmd = (disp >> 12) & 0xf, arg = disp & 0xfff;

	(void)vcpu;
	switch (cmd) {
	case MARK_START:
		counting = 0;
		reset();
		counting = 1;
		break;
	case MARK_STOP:
		counting = 0;
		break;
	case MARK_DUMP:
		dump(arg);
		break;
	}
}

/* The displacement of a marker NOP, or 0 if INSN is none. */
static unsigned int mark_of(const uint8_t *p, size_t n)
{
	static const uint8_t head[] = { 0x66, 0x0f, 0x1f, 0x84, 0x00 };
	unsigned int disp;

	if (n != 9 || memcmp(p, head, sizeof(head)))
		return 0;
	disp = p[5] | p[6] << 8 | p[7] << 16 | (unsigned int)p[8] << 24;
	return (disp >> 16) == MARK_MAGIC ? disp : 0;
}

/*
 * The element size of a rep movs/stos INSN starts with (positive for
 * movs, negative for stos), or 0. Prefixes: f3 (rep), 66 (16-bit), 48-4f
 * (REX, W gives 8 bytes), in the order compilers and the kernel use.
 */
static int rep_of(const uint8_t *p, size_t n)
{
	size_t i = 0;
	int rep = 0, size16 = 0, w = 0;

	for (; i < n; i++) {
		if (p[i] == 0xf3)
			rep = 1;
		else if (p[i] == 0x66)
			size16 = 1;
		else if ((p[i] & 0xf0) == 0x40)
			w = p[i] & 8;
		else
			break;
	}
	if (!rep || i >= n)
		return 0;
	switch (p[i]) {
	case 0xa4: return 1;
	case 0xaa: return -1;
	case 0xa5: return w ? 8 : size16 ? 2 : 4;
	case 0xab: return w ? -8 : size16 ? -2 : -4;
	}
	return 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	int rep = 0, syscalls = 0;
	struct tb_count *c;

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *p = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn);
		unsigned int disp;

		if (i == 0)
			rep = rep_of(p, len);
		if (len == 2 && p[0] == 0x0f && p[1] == 0x05)
			syscalls++;
		disp = mark_of(p, len);
		if (disp)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_exec, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)disp);
	}
	c = tb_count_get(qemu_plugin_tb_vaddr(tb), n, rep, syscalls);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, c);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out_dir = argv[i] + 4;
		else if (!strncmp(argv[i], "vcpus=", 6))
			nslots = strtoul(argv[i] + 6, NULL, 0);
		else {
			fprintf(stderr, "insn_plugin: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!out_dir || !nslots) {
		fprintf(stderr, "insn_plugin: needs out=DIR\n");
		return -1;
	}
	if (info->system_emulation && info->system.max_vcpus > (int)nslots)
		nslots = info->system.max_vcpus;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
