// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_rma_ktest.ko: the SCIF kernel API's windows, RMA and fences,
 * checked from a kernel module (selftests/104-scif-rma.sh). Loading it
 * connects two endpoints of the loading task's node (loopback) and runs
 * the checks; it fails with -EIO (after printing each failed check) if
 * any fails:
 *
 *   - register with SCIF_MAP_KERNEL on vmalloc and kmalloc memory: FIXED
 *     offsets, automatic offsets (a fresh endpoint's first window gets the
 *     same offset on both ends, just below 2^63), overlap refused
 *     (EADDRINUSE), bad alignment and flags refused (EINVAL), memory
 *     that is not kernel memory (EFAULT), not connected (ENOTCONN);
 *   - writeto / readfrom, SYNC and not (then fence_mark + fence_wait),
 *     over unaligned multi-page ranges, across two contiguous windows and
 *     through 4 MiB windows (several MRs on devices with short fast-reg
 *     page lists), ORDERED; every byte compared, and the bytes around the
 *     destination unchanged;
 *   - vwriteto / vreadfrom from unaligned kmalloc and vmalloc buffers;
 *   - refusals: offsets outside windows and negative (ENXIO), a range
 *     running into a hole (ENXIO), writes into read-only windows either
 *     way (EACCES), bad flags (EINVAL);
 *   - fence_signal: local and remote, of this side's and of the peer's
 *     RMAs, values checked, and after an asynchronous writeto the data is
 *     there when the signal is; refusals (EINVAL, ENXIO, EACCES);
 *   - fence_mark/fence_wait of the peer's RMAs (SCIF_REMOTE_FENCE);
 *   - pin_pages / register_pinned_pages / unpin_pages;
 *   - get_pages of the peer's window (in this kernel): the window's own
 *     pages, bytes and physical addresses, a write through the range seen
 *     in the window; ENXIO across two windows and outside windows; an
 *     unregister while a range is held is deferred until put_pages;
 *   - unregister: partial range (EINVAL), empty range (ENXIO), RMA into
 *     an unregistered window (ENXIO), unregister of both windows of an RMA
 *     in flight is deferred and the RMA completes byte-exact;
 *   - close with windows registered; the peer's RMAs then get ECONNRESET.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/scif.h>

#define BIG		(4 << 20)		/* bytes of the big windows */
#define WIN		(16 * PAGE_SIZE)	/* bytes of the small windows */
#define A_OFF		0x100000L		/* A's FIXED window */
#define B_OFF		0x200000L		/* B's FIXED window */
#define B_RO		0x400000L		/* B's read-only window */
#define B_PAIR		0x800000L		/* B's two contiguous windows */
#define A_RO		0x600000L		/* A's read-only window */
#define A_BIG		0x10000000L
#define B_BIG		0x20000000L
#define A_PIN		0x30000000L

static int failures, checks;

#define CHECK(cond, fmt, ...) do {						\
	checks++;								\
	if (!(cond)) {								\
		pr_err("scif_rma_ktest: FAIL line %d: " fmt "\n", __LINE__,	\
		       ##__VA_ARGS__);						\
		failures++;							\
	}									\
} while (0)

struct conn {
	scif_epd_t epd;
	struct scif_port_id dst;
	int ret;
	struct completion done;
};

static int connector(void *arg)
{
	struct conn *c = arg;

	c->ret = scif_connect(c->epd, &c->dst);
	complete(&c->done);
	return 0;
}

/*
 * Listen on @lep (a port scif_bind() picks) and connect @c->epd to it from
 * a kthread, as a peer program would. Returns 0 with *@a the accepted
 * endpoint, or an errno with *@a NULL; a check fails with it.
 */
static int connect_pair(scif_epd_t lep, struct conn *c, scif_epd_t *a)
{
	struct scif_port_id peer;
	struct task_struct *t;
	u16 nodes[8], self;
	int port, ret;

	*a = NULL;
	scif_get_node_ids(nodes, ARRAY_SIZE(nodes), &self);
	port = scif_bind(lep, 0);
	ret = scif_listen(lep, 4);
	CHECK(port > 0 && !ret, "bind %d / listen %d", port, ret);
	if (port <= 0 || ret)
		return port <= 0 ? port ?: -EINVAL : ret;
	c->dst.node = self;
	c->dst.port = port;
	init_completion(&c->done);
	t = kthread_run(connector, c, "scif_rma_ktest");
	if (IS_ERR(t)) {
		CHECK(0, "kthread_run: %ld", PTR_ERR(t));
		return PTR_ERR(t);
	}
	ret = scif_accept(lep, &peer, a, SCIF_ACCEPT_SYNC);
	wait_for_completion(&c->done);
	CHECK(!ret && c->ret > 0, "connect %d / accept %d", c->ret, ret);
	if (ret)
		return ret;
	if (c->ret <= 0) {
		scif_close(*a);
		*a = NULL;
		return c->ret ?: -ECONNREFUSED;
	}
	return 0;
}

static void fill(u8 *p, size_t len, int salt)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 131 + salt * 17 + (i >> 11));
}

/* Is dst[0..len) == src[0..len), with dst[-8..0) and dst[len..len+8) == fill? */
static bool same(const u8 *dst, const u8 *src, size_t len, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (dst[i] != src[i]) {
			pr_err("scif_rma_ktest: %s: byte %zu of %zu is 0x%02x, expected 0x%02x\n",
			       what, i, len, dst[i], src[i]);
			return false;
		}
	}
	return true;
}

static bool untouched(const u8 *p, size_t len, u8 val, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != val) {
			pr_err("scif_rma_ktest: %s: guard byte %zu is 0x%02x\n", what, i, p[i]);
			return false;
		}
	}
	return true;
}

/* Wait up to 5 s for a u64 to take a value (written by the peer or the CPU). */
static bool wait_u64(const void *p, u64 val)
{
	int i;

	for (i = 0; i < 250; i++) {
		if (READ_ONCE(*(const u64 *)p) == val)
			return true;
		msleep(20);
	}
	return false;
}

/* Copy A -> B with writeto at the given offsets, check bytes and guards. */
static void check_writeto(scif_epd_t a, u8 *abuf, long aoff, u8 *bbuf, long boff,
			  size_t len, int flags, const char *what)
{
	int ret, mark;

	fill(abuf + aoff, len, (int)len);
	memset(bbuf + boff - 8, 0xa5, len + 16);
	ret = scif_writeto(a, A_OFF + aoff, len, B_OFF + boff, flags);
	CHECK(!ret, "%s: writeto: %d", what, ret);
	if (!(flags & SCIF_RMA_SYNC)) {
		ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &mark);
		CHECK(!ret && mark >= 0, "%s: fence_mark: %d, mark %d", what, ret, mark);
		ret = scif_fence_wait(a, mark);
		CHECK(!ret, "%s: fence_wait: %d", what, ret);
	}
	CHECK(same(bbuf + boff, abuf + aoff, len, what), "%s: data differs", what);
	CHECK(untouched(bbuf + boff - 8, 8, 0xa5, what) &&
	      untouched(bbuf + boff + len, 8, 0xa5, what), "%s: wrote outside", what);
}

static void check_readfrom(scif_epd_t a, u8 *abuf, long aoff, u8 *bbuf, long boff,
			   size_t len, int flags, const char *what)
{
	int ret, mark;

	fill(bbuf + boff, len, (int)len + 3);
	memset(abuf + aoff - 8, 0x5a, len + 16);
	ret = scif_readfrom(a, A_OFF + aoff, len, B_OFF + boff, flags);
	CHECK(!ret, "%s: readfrom: %d", what, ret);
	if (!(flags & SCIF_RMA_SYNC)) {
		ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &mark);
		CHECK(!ret, "%s: fence_mark: %d", what, ret);
		ret = scif_fence_wait(a, mark);
		CHECK(!ret, "%s: fence_wait: %d", what, ret);
	}
	CHECK(same(abuf + aoff, bbuf + boff, len, what), "%s: data differs", what);
	CHECK(untouched(abuf + aoff - 8, 8, 0x5a, what) &&
	      untouched(abuf + aoff + len, 8, 0x5a, what), "%s: wrote outside", what);
}

static void run_rma(scif_epd_t a, scif_epd_t b, scif_epd_t lone)
{
	u8 *abuf, *bbuf, *aro, *bro, *pair, *abig, *bbig, *kbuf, *vbuf, *pin;
	scif_pinned_pages_t pp = NULL;
	struct scif_range *range;
	off_t off, off2;
	int ret, mark, i;

	abuf = vzalloc(WIN);
	bbuf = vzalloc(WIN);
	aro = vzalloc(4 * PAGE_SIZE);
	bro = vzalloc(4 * PAGE_SIZE);
	pair = vzalloc(8 * PAGE_SIZE);
	abig = vzalloc(BIG);
	bbig = vzalloc(BIG);
	kbuf = kzalloc(3 * PAGE_SIZE, GFP_KERNEL);
	vbuf = vzalloc(6 * PAGE_SIZE);
	pin = vzalloc(4 * PAGE_SIZE);
	if (!abuf || !bbuf || !aro || !bro || !pair || !abig || !bbig || !kbuf ||
	    !vbuf || !pin) {
		CHECK(0, "out of memory");
		goto out;
	}

	/* --- registration ------------------------------------------------------- */
	off = scif_register(lone, abuf, WIN, 0, SCIF_PROT_READ, SCIF_MAP_KERNEL);
	CHECK(off == -ENOTCONN, "register on an unconnected endpoint: %ld", off);
	off = scif_register(a, abig, BIG, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL);
	off2 = scif_register(b, bbig, BIG, 0x1234000, SCIF_PROT_READ | SCIF_PROT_WRITE,
			     SCIF_MAP_KERNEL);
	CHECK(off > 0 && off == off2, "first automatic offsets: %ld and %ld", off, off2);
	CHECK(off + BIG <= (off_t)(BIT_ULL(63) - 1) && off >= (off_t)BIT_ULL(62),
	      "automatic offset 0x%lx not just below 2^63", off);
	CHECK(!(off & ~PAGE_MASK), "automatic offset 0x%lx unaligned", off);
	/* The big windows move to fixed offsets, to name them simply. */
	ret = scif_unregister(a, off, BIG);
	CHECK(!ret, "unregister automatic window: %d", ret);
	ret = scif_unregister(b, off2, BIG);
	CHECK(!ret, "unregister automatic window: %d", ret);
	off = scif_register(a, abig, BIG, A_BIG, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == A_BIG, "register A_BIG: %ld", off);
	off = scif_register(b, bbig, BIG, B_BIG, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == B_BIG, "register B_BIG: %ld", off);

	off = scif_register(a, abuf, WIN, A_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == A_OFF, "register FIXED: %ld", off);
	off = scif_register(a, aro, 4 * PAGE_SIZE, A_OFF + WIN - PAGE_SIZE,
			    SCIF_PROT_READ, SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EADDRINUSE, "overlapping FIXED: %ld", off);
	off = scif_register(a, aro, 4 * PAGE_SIZE, A_OFF - PAGE_SIZE,
			    SCIF_PROT_READ, SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EADDRINUSE, "overlapping FIXED below: %ld", off);
	off = scif_register(a, aro, 4 * PAGE_SIZE, A_RO + 8, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EINVAL, "unaligned FIXED offset: %ld", off);
	off = scif_register(a, aro + 8, 2 * PAGE_SIZE, A_RO, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EINVAL, "unaligned address: %ld", off);
	off = scif_register(a, aro, PAGE_SIZE + 1, A_RO, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EINVAL, "unaligned length: %ld", off);
	off = scif_register(a, aro, 0, A_RO, SCIF_PROT_READ, SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EINVAL, "zero length: %ld", off);
	off = scif_register(a, aro, PAGE_SIZE, A_RO, 0, SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EINVAL, "no prot: %ld", off);
	off = scif_register(a, aro, PAGE_SIZE, A_RO, SCIF_PROT_READ | 4,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EINVAL, "bad prot: %ld", off);
	off = scif_register(a, aro, PAGE_SIZE, A_RO, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED | 1);
	CHECK(off == -EINVAL, "bad map flags: %ld", off);
	off = scif_register(a, aro, PAGE_SIZE, -PAGE_SIZE, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EINVAL, "negative FIXED offset: %ld", off);
	off = scif_register(a, (void *)0x1000, PAGE_SIZE, A_RO, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == -EFAULT, "register of no kernel memory: %ld", off);
	off = scif_register(a, aro, 4 * PAGE_SIZE, A_RO, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == A_RO, "register read-only: %ld", off);

	off = scif_register(b, bbuf, WIN, B_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == B_OFF, "register B FIXED: %ld", off);
	off = scif_register(b, bro, 4 * PAGE_SIZE, B_RO, SCIF_PROT_READ,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == B_RO, "register B read-only: %ld", off);
	off = scif_register(b, pair, 3 * PAGE_SIZE, B_PAIR, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	off2 = scif_register(b, pair + 3 * PAGE_SIZE, 5 * PAGE_SIZE, B_PAIR + 3 * PAGE_SIZE,
			     SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == B_PAIR && off2 == B_PAIR + 3 * PAGE_SIZE, "register pair: %ld %ld",
	      off, off2);

	/* --- writeto / readfrom ------------------------------------------------------ */
	check_writeto(a, abuf, 123, bbuf, 4001, 3 * PAGE_SIZE + 777, SCIF_RMA_SYNC,
		      "writeto SYNC, unaligned, 4 pages");
	check_writeto(a, abuf, 4096, bbuf, 8, 8 * PAGE_SIZE, 0, "writeto async + fence");
	check_writeto(a, abuf, 9, bbuf, 17, 1, SCIF_RMA_SYNC, "writeto 1 byte");
	check_writeto(a, abuf, 100, bbuf, 200, 5 * PAGE_SIZE + 3,
		      SCIF_RMA_SYNC | SCIF_RMA_ORDERED, "writeto ORDERED");
	check_readfrom(a, abuf, 13, bbuf, PAGE_SIZE + 9, 2 * PAGE_SIZE + 100, SCIF_RMA_SYNC,
		       "readfrom SYNC, unaligned");
	check_readfrom(a, abuf, 64, bbuf, 8, 10 * PAGE_SIZE - 80, 0, "readfrom async + fence");
	check_readfrom(a, abuf, 700, bbuf, 1300, 3 * PAGE_SIZE, SCIF_RMA_SYNC | SCIF_RMA_ORDERED,
		       "readfrom ORDERED");

	/* Several RMAs in flight, one fence for all. */
	fill(abuf, WIN, 11);
	memset(bbuf, 0, WIN);
	for (i = 0; i < 16; i++) {
		ret = scif_writeto(a, A_OFF + i * PAGE_SIZE, PAGE_SIZE, B_OFF + i * PAGE_SIZE, 0);
		CHECK(!ret, "writeto page %d: %d", i, ret);
	}
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &mark);
	CHECK(!ret, "fence_mark: %d", ret);
	ret = scif_fence_wait(a, mark);
	CHECK(!ret, "fence_wait: %d", ret);
	CHECK(same(bbuf, abuf, WIN, "16 async writetos"), "16 async writetos differ");

	/* Across B's two contiguous windows. */
	fill(abuf, WIN, 12);
	memset(pair, 0, 8 * PAGE_SIZE);
	ret = scif_writeto(a, A_OFF + 10, 6 * PAGE_SIZE, B_PAIR + PAGE_SIZE + 50, SCIF_RMA_SYNC);
	CHECK(!ret, "writeto across two windows: %d", ret);
	CHECK(same(pair + PAGE_SIZE + 50, abuf + 10, 6 * PAGE_SIZE, "across two windows"),
	      "across two windows: data differs");
	ret = scif_writeto(a, A_OFF, 2 * PAGE_SIZE, B_PAIR + 7 * PAGE_SIZE, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "writeto running past the pair: %d", ret);

	/* The 4 MiB windows, both ways, odd offsets. */
	fill(abig, BIG, 21);
	memset(bbig, 0, BIG);
	ret = scif_writeto(a, A_BIG + 3, BIG - 1000, B_BIG + 901, SCIF_RMA_SYNC);
	CHECK(!ret, "4 MiB writeto: %d", ret);
	CHECK(same(bbig + 901, abig + 3, BIG - 1000, "4 MiB writeto"), "4 MiB writeto differs");
	fill(bbig, BIG, 22);
	memset(abig, 0, BIG);
	ret = scif_readfrom(a, A_BIG + 77, BIG - 4096, B_BIG + 4095, 0);
	CHECK(!ret, "4 MiB readfrom: %d", ret);
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &mark);
	ret = ret ?: scif_fence_wait(a, mark);
	CHECK(!ret, "4 MiB readfrom fence: %d", ret);
	CHECK(same(abig + 77, bbig + 4095, BIG - 4096, "4 MiB readfrom"),
	      "4 MiB readfrom differs");

	/* --- v* ----------------------------------------------------------------------------- */
	fill(kbuf, 3 * PAGE_SIZE, 31);
	memset(bbuf, 0, WIN);
	ret = scif_vwriteto(a, kbuf + 13, 2 * PAGE_SIZE + 5, B_OFF + 333, SCIF_RMA_SYNC);
	CHECK(!ret, "vwriteto kmalloc: %d", ret);
	CHECK(same(bbuf + 333, kbuf + 13, 2 * PAGE_SIZE + 5, "vwriteto kmalloc"),
	      "vwriteto kmalloc differs");
	fill(bbuf, WIN, 32);
	memset(vbuf, 0, 6 * PAGE_SIZE);
	ret = scif_vreadfrom(a, vbuf + 4097, 5 * PAGE_SIZE - 3000, B_OFF + 11, 0);
	CHECK(!ret, "vreadfrom vmalloc: %d", ret);
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &mark);
	ret = ret ?: scif_fence_wait(a, mark);
	CHECK(!ret, "vreadfrom fence: %d", ret);
	CHECK(same(vbuf + 4097, bbuf + 11, 5 * PAGE_SIZE - 3000, "vreadfrom vmalloc"),
	      "vreadfrom vmalloc differs");
	CHECK(untouched(vbuf, 4097, 0, "vreadfrom") &&
	      untouched(vbuf + 4097 + 5 * PAGE_SIZE - 3000, 3000 - 4097 + PAGE_SIZE, 0,
			"vreadfrom"), "vreadfrom wrote outside");
	ret = scif_vwriteto(a, (void *)0x1000, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(ret == -EFAULT, "vwriteto from an address that is no kernel memory: %d", ret);
	ret = scif_vwriteto(a, vbuf, 16, B_RO, SCIF_RMA_SYNC);
	CHECK(ret == -EACCES, "vwriteto into read-only: %d", ret);
	ret = scif_vreadfrom(a, vbuf, 16, B_OFF + WIN, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "vreadfrom outside windows: %d", ret);

	/* --- refusals ---------------------------------------------------------------------- */
	ret = scif_writeto(a, A_OFF, 16, B_OFF + WIN - 8, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "writeto past a window's end: %d", ret);
	ret = scif_writeto(a, A_OFF + WIN - 8, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "writeto from past a local window's end: %d", ret);
	ret = scif_writeto(a, 0x7000, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "writeto from no window: %d", ret);
	ret = scif_readfrom(a, A_OFF, 16, 0x7000, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "readfrom no window: %d", ret);
	ret = scif_readfrom(a, -PAGE_SIZE, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "negative loffset: %d", ret);
	ret = scif_writeto(a, A_OFF, 16, -8, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "negative roffset: %d", ret);
	ret = scif_writeto(a, A_OFF, 16, LONG_MAX - 4, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "roffset wrapping: %d", ret);
	ret = scif_writeto(a, A_OFF, 16, B_RO, SCIF_RMA_SYNC);
	CHECK(ret == -EACCES, "writeto read-only peer window: %d", ret);
	ret = scif_readfrom(a, A_RO, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(ret == -EACCES, "readfrom into read-only local window: %d", ret);
	memset(bro, 0x77, 4 * PAGE_SIZE);
	ret = scif_readfrom(a, A_OFF, 4 * PAGE_SIZE, B_RO, SCIF_RMA_SYNC);
	CHECK(!ret && same(abuf, bro, 4 * PAGE_SIZE, "read of read-only"),
	      "readfrom read-only peer window: %d", ret);
	ret = scif_writeto(a, A_RO, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(!ret, "writeto from read-only local window: %d", ret);
	ret = scif_writeto(a, A_OFF, 16, B_OFF, 0x100);
	CHECK(ret == -EINVAL, "bad RMA flags: %d", ret);
	ret = scif_writeto(lone, A_OFF, 16, B_OFF, 0);
	CHECK(ret == -ENOTCONN, "writeto unconnected: %d", ret);

	/* --- fences ------------------------------------------------------------------------ */
	ret = scif_fence_signal(a, 64, 0x1122334455667788ULL, 0, 0,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL);
	CHECK(ret == -ENXIO, "signal outside windows: %d", ret);
	ret = scif_fence_signal(a, A_OFF + 2, 1, 0, 0, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL);
	CHECK(ret == -EINVAL, "unaligned signal: %d", ret);
	ret = scif_fence_signal(a, A_OFF, 1, B_OFF, 1, SCIF_FENCE_INIT_SELF |
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL);
	CHECK(ret == -EINVAL, "two INIT flags: %d", ret);
	ret = scif_fence_signal(a, A_OFF, 1, B_OFF, 1, SCIF_FENCE_INIT_SELF);
	CHECK(ret == -EINVAL, "no SIGNAL flag: %d", ret);
	ret = scif_fence_signal(a, A_RO, 1, 0, 0, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL);
	CHECK(ret == -EACCES, "signal into a read-only window: %d", ret);
	ret = scif_fence_signal(a, 0, 0, B_RO, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE);
	CHECK(ret == -EACCES, "remote signal into a read-only window: %d", ret);
	ret = scif_fence_signal(a, A_OFF + WIN - 4, 1, 0, 0,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL);
	CHECK(ret == -ENXIO, "signal running past a window: %d", ret);
	ret = scif_fence_mark(a, 3, &mark);
	CHECK(ret == -EINVAL, "fence_mark bad flags: %d", ret);

	/* Local and remote signals of A's RMAs, after an async writeto. */
	fill(abig, BIG, 41);
	memset(bbig, 0, BIG);
	memset(abuf, 0, WIN);
	memset(bbuf, 0, WIN);
	ret = scif_writeto(a, A_BIG, BIG, B_BIG, 0);
	CHECK(!ret, "async 4 MiB writeto: %d", ret);
	ret = scif_fence_signal(a, A_OFF + 8, 0xabcdef0123456789ULL, B_OFF + 4092,
				0x0102030405060708ULL, SCIF_FENCE_INIT_SELF |
				SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE);
	CHECK(!ret, "signal local + remote: %d", ret);
	CHECK(wait_u64(abuf + 8, 0xabcdef0123456789ULL), "local signal value: 0x%llx",
	      *(u64 *)(abuf + 8));
	CHECK(wait_u64(bbuf + 4092, 0x0102030405060708ULL),
	      "remote signal value (across a page): 0x%llx", *(u64 *)(bbuf + 4092));
	CHECK(same(bbig, abig, BIG, "data before the signal"),
	      "the signal came before the data");

	/* Signals of B's RMAs, asked for by A. */
	ret = scif_fence_signal(a, A_OFF + 64, 77, B_OFF + 128, 88,
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE);
	CHECK(!ret, "signal of the peer's RMAs: %d", ret);
	CHECK(wait_u64(abuf + 64, 77), "INIT_PEER local value: %llu", *(u64 *)(abuf + 64));
	CHECK(wait_u64(bbuf + 128, 88), "INIT_PEER remote value: %llu", *(u64 *)(bbuf + 128));
	ret = scif_fence_signal(a, A_OFF + 256, 99, 0, 0,
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL);
	CHECK(!ret && wait_u64(abuf + 256, 99), "INIT_PEER local only: %d, %llu", ret,
	      *(u64 *)(abuf + 256));
	ret = scif_fence_signal(a, 0, 0, B_OFF + 512, 111,
				SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_REMOTE);
	CHECK(!ret && wait_u64(bbuf + 512, 111), "INIT_PEER remote only: %d, %llu", ret,
	      *(u64 *)(bbuf + 512));
	ret = scif_fence_signal(a, A_RO, 1, 0, 0, SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL);
	CHECK(ret == -EACCES, "INIT_PEER signal into read-only: %d", ret);
	ret = scif_fence_signal(a, 0, 0, 0x7000, 1, SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_REMOTE);
	CHECK(ret == -ENXIO, "INIT_PEER signal outside: %d", ret);

	/* A waits for B's RMAs. */
	fill(bbig, BIG, 42);
	memset(abig, 0, BIG);
	ret = scif_writeto(b, B_BIG, BIG, A_BIG, 0);
	CHECK(!ret, "B's async writeto: %d", ret);
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_PEER, &mark);
	CHECK(!ret && (mark & SCIF_REMOTE_FENCE), "peer mark: %d, 0x%x", ret, mark);
	ret = scif_fence_wait(a, mark);
	CHECK(!ret, "wait for the peer's mark: %d", ret);
	CHECK(same(abig, bbig, BIG, "B's writeto"), "B's writeto differs after the fence");

	/* --- pinned pages ------------------------------------------------------------------ */
	ret = scif_pin_pages(pin, 4 * PAGE_SIZE, SCIF_PROT_READ | SCIF_PROT_WRITE,
			     SCIF_MAP_KERNEL, &pp);
	CHECK(!ret, "pin_pages: %d", ret);
	if (!ret) {
		off = scif_register_pinned_pages(a, pp, A_PIN, SCIF_MAP_FIXED);
		CHECK(off == A_PIN, "register_pinned_pages: %ld", off);
		off = scif_register_pinned_pages(a, pp, 0, SCIF_MAP_KERNEL);
		CHECK(off == -EINVAL, "register_pinned_pages bad flags: %ld", off);
		ret = scif_unpin_pages(pp);
		CHECK(!ret, "unpin_pages: %d", ret);
		fill(bbuf, WIN, 51);
		ret = scif_readfrom(a, A_PIN + 1, 4 * PAGE_SIZE - 2, B_OFF + 1, SCIF_RMA_SYNC);
		CHECK(!ret && same(pin + 1, bbuf + 1, 4 * PAGE_SIZE - 2, "pinned window"),
		      "readfrom into the pinned window: %d", ret);
		ret = scif_unregister(a, A_PIN, 4 * PAGE_SIZE);
		CHECK(!ret, "unregister pinned window: %d", ret);
	}
	ret = scif_pin_pages(pin, 4 * PAGE_SIZE, 0, SCIF_MAP_KERNEL, &pp);
	CHECK(ret == -EINVAL, "pin_pages no prot: %d", ret);
	ret = scif_pin_pages(pin + 1, PAGE_SIZE, SCIF_PROT_READ, SCIF_MAP_KERNEL, &pp);
	CHECK(ret == -EINVAL, "pin_pages unaligned: %d", ret);

	/*
	 * --- get_pages: B is in this kernel, so its window's pages are memory
	 * here, handed out as they are.
	 */
	fill(bbuf, WIN, 71);
	range = NULL;
	ret = scif_get_pages(a, B_OFF + PAGE_SIZE, 3 * PAGE_SIZE, &range);
	CHECK(!ret && range, "get_pages: %d", ret);
	if (!ret && range) {
		CHECK(range->nr_pages == 3 &&
		      range->prot_flags == (SCIF_PROT_READ | SCIF_PROT_WRITE),
		      "get_pages: %d pages, prot %d", range->nr_pages, range->prot_flags);
		for (i = 0; i < 3 && i < range->nr_pages; i++) {
			u8 *want = bbuf + (i + 1) * PAGE_SIZE;

			CHECK(range->phys_addr[i] == page_to_phys(vmalloc_to_page(want)),
			      "get_pages: page %d is not the window's", i);
			CHECK(range->va[i] &&
			      same((u8 __force *)range->va[i], want, PAGE_SIZE, "get_pages"),
			      "get_pages: page %d's bytes differ", i);
		}
		/* Coherent: a store through the range is in B's memory. */
		memset((u8 __force *)range->va[0], 0x77, 64);
		CHECK(untouched(bbuf + PAGE_SIZE, 64, 0x77, "get_pages write"),
		      "get_pages: a write through the range is not in the window");
		ret = scif_put_pages(range);
		CHECK(!ret, "put_pages: %d", ret);
	}
	ret = scif_put_pages(NULL);
	CHECK(ret == -EINVAL, "put_pages of NULL: %d", ret);
	ret = scif_get_pages(a, B_PAIR + 2 * PAGE_SIZE, 2 * PAGE_SIZE, &range);
	CHECK(ret == -ENXIO, "get_pages across two windows: %d", ret);
	ret = scif_get_pages(a, B_RO, PAGE_SIZE, &range);
	CHECK(!ret && range->prot_flags == SCIF_PROT_READ, "get_pages of a read-only window: %d",
	      ret);
	if (!ret)
		scif_put_pages(range);
	ret = scif_get_pages(a, 0x7000, PAGE_SIZE, &range);
	CHECK(ret == -ENXIO, "get_pages outside: %d", ret);
	ret = scif_get_pages(a, B_OFF + 1, PAGE_SIZE, &range);
	CHECK(ret == -EINVAL, "get_pages unaligned: %d", ret);

	/* --- unregister ---------------------------------------------------------------------- */
	ret = scif_unregister(b, B_PAIR, 2 * PAGE_SIZE);
	CHECK(ret == -EINVAL, "unregister of part of a window: %d", ret);
	ret = scif_unregister(b, 0x7000, PAGE_SIZE);
	CHECK(ret == -ENXIO, "unregister of nothing: %d", ret);
	range = NULL;
	ret = scif_get_pages(a, B_PAIR + 3 * PAGE_SIZE, 2 * PAGE_SIZE, &range);
	CHECK(!ret, "get_pages of the second pair window: %d", ret);
	ret = scif_unregister(b, B_PAIR, 8 * PAGE_SIZE);
	CHECK(!ret, "unregister of both pair windows: %d", ret);
	if (range) {
		/* Deferred: the held window's offsets stay taken, its pages stay. */
		off = scif_register(b, pair, 8 * PAGE_SIZE, B_PAIR,
				    SCIF_PROT_READ | SCIF_PROT_WRITE,
				    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
		CHECK(off == -EADDRINUSE, "register over a window held by get_pages: %ld", off);
		pair[3 * PAGE_SIZE] = 0x3c;
		CHECK(((u8 __force *)range->va[0])[0] == 0x3c,
		      "get_pages range after the unregister");
		ret = scif_put_pages(range);
		CHECK(!ret, "put_pages after the unregister: %d", ret);
	}
	ret = scif_writeto(a, A_OFF, 16, B_PAIR, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "writeto into an unregistered window: %d", ret);
	ret = scif_unregister(b, B_PAIR, 8 * PAGE_SIZE);
	CHECK(ret == -ENXIO, "unregister twice: %d", ret);
	off = scif_register(b, pair, 8 * PAGE_SIZE, B_PAIR, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == B_PAIR, "register again over freed offsets: %ld", off);

	/* Unregister both ends of an RMA in flight: deferred, the data arrives. */
	fill(abig, BIG, 61);
	memset(bbig, 0, BIG);
	ret = scif_writeto(a, A_BIG, BIG, B_BIG, 0);
	CHECK(!ret, "writeto before unregister: %d", ret);
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &mark);
	CHECK(!ret, "mark before unregister: %d", ret);
	ret = scif_unregister(a, A_BIG, BIG);
	CHECK(!ret, "unregister the source in flight: %d", ret);
	ret = scif_unregister(b, B_BIG, BIG);
	CHECK(!ret, "unregister the destination in flight: %d", ret);
	ret = scif_fence_wait(a, mark);
	CHECK(!ret, "fence_wait after unregister: %d", ret);
	CHECK(same(bbig, abig, BIG, "RMA across unregister"), "RMA across unregister differs");
	ret = scif_writeto(a, A_OFF, 16, B_BIG, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "writeto into the unregistered big window: %d", ret);
	ret = scif_readfrom(a, A_BIG, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(ret == -ENXIO, "readfrom into the unregistered local window: %d", ret);
	off = scif_register(a, abig, BIG, A_BIG, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == A_BIG, "register the big window again: %ld", off);

	/* Windows stay registered: close cleans them up (caller's out path). */
out:
	/* The windows point into these buffers: close before freeing them. */
	scif_close(a);
	scif_close(b);
	vfree(abuf);
	vfree(bbuf);
	vfree(aro);
	vfree(bro);
	vfree(pair);
	vfree(abig);
	vfree(bbig);
	kfree(kbuf);
	vfree(vbuf);
	vfree(pin);
}

static void run(void)
{
	scif_epd_t lep, a, lone;
	struct conn c = {};

	lep = scif_open();
	lone = scif_open();
	c.epd = scif_open();
	if (!lep || !lone || !c.epd) {
		CHECK(0, "scif_open");
		goto out;
	}
	if (connect_pair(lep, &c, &a))
		goto out;
	run_rma(a, c.epd, lone);
	c.epd = NULL;
out:
	if (c.epd)
		scif_close(c.epd);
	if (lone)
		scif_close(lone);
	if (lep)
		scif_close(lep);
}

/* The peer's close: RMAs get ECONNRESET, nothing leaks. */
static void run_close(void)
{
	struct scif_pollepd pe;
	scif_epd_t lep, a = NULL;
	struct conn c = {};
	u8 *abuf, *bbuf;
	off_t off;
	int ret, i;

	abuf = vzalloc(WIN);
	bbuf = vzalloc(WIN);
	lep = scif_open();
	c.epd = scif_open();
	if (!abuf || !bbuf || !lep || !c.epd) {
		CHECK(0, "out of memory");
		goto out;
	}
	if (connect_pair(lep, &c, &a))
		goto out;
	off = scif_register(a, abuf, WIN, A_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == A_OFF, "register: %ld", off);
	off = scif_register(c.epd, bbuf, WIN, B_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_KERNEL | SCIF_MAP_FIXED);
	CHECK(off == B_OFF, "register: %ld", off);
	off = scif_register(c.epd, bbuf, WIN, 0, SCIF_PROT_READ, SCIF_MAP_KERNEL);
	CHECK(off > 0, "register automatic: %ld", off);
	ret = scif_writeto(a, A_OFF, WIN, B_OFF, 0);
	CHECK(!ret, "writeto before close: %d", ret);
	scif_close(c.epd);
	c.epd = NULL;
	pe.epd = a;
	pe.events = EPOLLIN;
	for (i = 0; i < 100; i++) {
		ret = scif_poll(&pe, 1, 100);
		if (ret == 1 && (pe.revents & EPOLLHUP))
			break;
	}
	CHECK(pe.revents & EPOLLHUP, "no EPOLLHUP after the peer closed");
	ret = scif_writeto(a, A_OFF, 16, B_OFF, SCIF_RMA_SYNC);
	CHECK(ret == -ECONNRESET, "writeto after the peer closed: %d", ret);
	off = scif_register(a, abuf, WIN, 0, SCIF_PROT_READ, SCIF_MAP_KERNEL);
	CHECK(off == -ECONNRESET, "register after the peer closed: %ld", off);
	ret = scif_fence_mark(a, SCIF_FENCE_INIT_SELF, &i);
	CHECK(ret == -ECONNRESET, "fence_mark after the peer closed: %d", ret);
out:
	if (a)
		scif_close(a);
	if (c.epd)
		scif_close(c.epd);
	if (lep)
		scif_close(lep);
	vfree(abuf);
	vfree(bbuf);
}

static int __init scif_rma_ktest_init(void)
{
	run();
	run_close();
	if (failures) {
		pr_err("scif_rma_ktest: %d of %d checks failed\n", failures, checks);
		return -EIO;
	}
	pr_info("scif_rma_ktest: PASS %d checks\n", checks);
	return 0;
}

static void __exit scif_rma_ktest_exit(void)
{
}

module_init(scif_rma_ktest_init);
module_exit(scif_rma_ktest_exit);
MODULE_AUTHOR("The scire authors");
MODULE_DESCRIPTION("SCIF kernel API window, RMA and fence checks");
MODULE_LICENSE("Dual BSD/GPL");
