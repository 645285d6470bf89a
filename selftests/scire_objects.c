// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_objects -d DEV: life cycle and bad input of the basic verbs
 * objects on one scire device: device and port attributes, PDs, MRs
 * (access flags, keys, bad addresses and lengths, PD in use), CQs (sizes
 * up to max_cqe, which must take libfabric's 196608, resize, empty poll,
 * arming without completions), QP numbers that are not a counter's
 * (64 in a row, no two successive ones neighbours) and a 1000-round
 * create/destroy loop that must leave no mapping or fd behind.
 *
 * Expected errors are those of the verbs man pages and the 6.1 core:
 * ib_check_mr_access() (EINVAL for remote write/atomic without local
 * write, or an access bit the core does not know), ib_umem_get() (EFAULT
 * for memory that is not mapped, EINVAL for length 0), the uverbs PD
 * destroy (EBUSY while an MR uses it).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scire_test.h"

/* Not an IB_ACCESS_* bit, and outside the "optional" range (bits 20-28)
 * that the core silently drops. */
#define ACCESS_UNKNOWN_BIT	(1 << 10)

static int count_dir(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n++;
	closedir(d);
	return n;
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void check_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	struct ibv_port_attr port;
	int ret;

	ret = ibv_query_device(ctx, attr);
	if (ret)
		t_fatal("ibv_query_device: %s", t_errname(ret));
	/* libfabric's verbs;ofi_rxm creates a CQ of 196608 entries. */
	if (attr->max_cqe < 196608)
		t_fail("ibv_query_device: max_cqe %d, expected >= 196608 (libfabric's ofi_rxm CQ)",
		       attr->max_cqe);
	/*
	 * UCX before 1.16 uses a device's atomics only if atomic_cap is
	 * exactly IBV_ATOMIC_HCA; scire's are stronger (GLOB) but say HCA.
	 */
	if (attr->atomic_cap != IBV_ATOMIC_HCA)
		t_fail("ibv_query_device: atomic_cap %d, expected IBV_ATOMIC_HCA (%d): UCX 1.11-1.15 turns atomics off for anything else",
		       attr->atomic_cap, IBV_ATOMIC_HCA);
	if (!attr->max_mr_size)
		t_fail("ibv_query_device: max_mr_size 0, expected > 0");
	if (attr->max_pd <= 0 || attr->max_cq <= 0 || attr->max_mr <= 0)
		t_fail("ibv_query_device: max_pd %d max_cq %d max_mr %d, expected all > 0",
		       attr->max_pd, attr->max_cq, attr->max_mr);
	if (attr->phys_port_cnt != 1)
		t_fail("ibv_query_device: phys_port_cnt %u, expected 1", attr->phys_port_cnt);

	ret = ibv_query_port(ctx, 1, &port);
	if (ret)
		t_fatal("ibv_query_port(1): %s", t_errname(ret));
	if (port.state != IBV_PORT_ACTIVE)
		t_fail("port 1 state %s, expected PORT_ACTIVE",
		       ibv_port_state_str(port.state));
	if (port.link_layer != IBV_LINK_LAYER_ETHERNET)
		t_fail("port 1 link_layer %u, expected IBV_LINK_LAYER_ETHERNET (%u)",
		       port.link_layer, IBV_LINK_LAYER_ETHERNET);
}

/* Expect ibv_reg_mr to fail with want; say what happened otherwise. */
static void expect_reg_fail(struct ibv_pd *pd, void *addr, size_t len, int access,
			    int want, const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (mr) {
		t_fail("reg_mr %s (addr %p len %zu access %#x) succeeded, expected %s",
		       what, addr, len, access, t_errname(want));
		ibv_dereg_mr(mr);
		return;
	}
	if (errno != want)
		t_fail("reg_mr %s (addr %p len %zu access %#x): %s, expected %s",
		       what, addr, len, access, t_errname(errno), t_errname(want));
}

static void check_mrs(struct ibv_context *ctx, struct ibv_pd *pd)
{
	static const int access[] = {
		0,
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	};
	enum { NMR = sizeof(access) / sizeof(access[0]) };
	struct ibv_mr *mr[NMR], *big, *tiny;
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 4 * page;
	char *buf, *bigbuf;
	void *hole;
	int i, j, ret;

	buf = aligned_alloc(page, len * NMR);
	if (!buf)
		t_fatal("aligned_alloc: out of memory");
	memset(buf, 0x5a, len * NMR);

	for (i = 0; i < NMR; i++) {
		mr[i] = ibv_reg_mr(pd, buf + i * len, len, access[i]);
		if (!mr[i])
			t_fatal("reg_mr access %#x: %s", access[i], t_errname(errno));
		if (!mr[i]->lkey || !mr[i]->rkey)
			t_fail("reg_mr access %#x: lkey %#x rkey %#x, expected both nonzero",
			       access[i], mr[i]->lkey, mr[i]->rkey);
		if (mr[i]->addr != buf + i * len || mr[i]->length != len ||
		    mr[i]->pd != pd || mr[i]->context != ctx)
			t_fail("reg_mr access %#x: addr/length/pd/context not as registered",
			       access[i]);
		for (j = 0; j < i; j++) {
			if (mr[i]->lkey == mr[j]->lkey)
				t_fail("MRs %d and %d share lkey %#x", j, i, mr[i]->lkey);
			if (mr[i]->rkey == mr[j]->rkey)
				t_fail("MRs %d and %d share rkey %#x", j, i, mr[i]->rkey);
		}
	}

	/* Bad input: the core's access check. */
	expect_reg_fail(pd, buf, len, IBV_ACCESS_REMOTE_WRITE, EINVAL,
			"REMOTE_WRITE without LOCAL_WRITE");
	expect_reg_fail(pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC, EINVAL,
			"REMOTE_ATOMIC without LOCAL_WRITE");
	expect_reg_fail(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | ACCESS_UNKNOWN_BIT,
			EINVAL, "with an unknown access bit");
	/* ib_umem_get: no pages in a zero-length range. */
	expect_reg_fail(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE, EINVAL, "of length 0");

	/* Memory that is not mapped cannot be pinned. */
	hole = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		t_fatal("mmap: %s", t_errname(errno));
	munmap(hole, 2 * page);
	expect_reg_fail(pd, hole, page, IBV_ACCESS_LOCAL_WRITE, EFAULT,
			"of an unmapped range");
	expect_reg_fail(pd, (void *)0x10, 16, IBV_ACCESS_LOCAL_WRITE, EFAULT,
			"at address 0x10");

	/* A PD an MR still uses cannot go away. */
	ret = ibv_dealloc_pd(pd);
	if (ret != EBUSY)
		t_fatal("dealloc_pd with %d MRs registered: %s, expected EBUSY",
			NMR, t_errname(ret));

	/* A large MR, and a 1-byte one at an odd address. */
	bigbuf = malloc(64 << 20);
	if (!bigbuf)
		t_fatal("malloc 64 MiB: out of memory");
	big = ibv_reg_mr(pd, bigbuf, 64 << 20,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!big)
		t_fail("reg_mr of 64 MiB: %s%s", t_errname(errno),
		       errno == ENOMEM ? " (RLIMIT_MEMLOCK?)" : "");
	tiny = ibv_reg_mr(pd, buf + 1, 1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!tiny)
		t_fail("reg_mr of 1 byte at odd address %p: %s", buf + 1, t_errname(errno));
	else if (tiny->addr != buf + 1 || tiny->length != 1)
		t_fail("1-byte MR reports addr %p length %zu", tiny->addr, tiny->length);

	if (big && (ret = ibv_dereg_mr(big)))
		t_fail("dereg_mr 64 MiB: %s", t_errname(ret));
	if (tiny && (ret = ibv_dereg_mr(tiny)))
		t_fail("dereg_mr 1 byte: %s", t_errname(ret));
	free(bigbuf);
	for (i = 0; i < NMR; i++) {
		ret = ibv_dereg_mr(mr[i]);
		if (ret)
			t_fail("dereg_mr access %#x: %s", access[i], t_errname(ret));
	}
	free(buf);
}

static void check_cq_sizes(struct ibv_context *ctx, const struct ibv_device_attr *attr)
{
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	int ret, n;

	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!cq)
		t_fatal("create_cq cqe 1: %s", t_errname(errno));
	if (cq->cqe < 1)
		t_fail("create_cq cqe 1: cq->cqe %d, expected >= 1", cq->cqe);
	n = ibv_poll_cq(cq, 4, wc);
	if (n != 0)
		t_fail("poll_cq on a new CQ returned %d, expected 0", n);

	/* Grow, then shrink: an empty CQ may take any size in range. */
	ret = ibv_resize_cq(cq, 4096);
	if (ret)
		t_fail("resize_cq 1 -> 4096: %s", t_errname(ret));
	else if (cq->cqe < 4096)
		t_fail("resize_cq 1 -> 4096: cq->cqe %d, expected >= 4096", cq->cqe);
	n = ibv_poll_cq(cq, 4, wc);
	if (n != 0)
		t_fail("poll_cq after growing returned %d, expected 0", n);
	ret = ibv_resize_cq(cq, 16);
	if (ret)
		t_fail("resize_cq 4096 -> 16: %s", t_errname(ret));
	else if (cq->cqe < 16)
		t_fail("resize_cq 4096 -> 16: cq->cqe %d, expected >= 16", cq->cqe);
	n = ibv_poll_cq(cq, 4, wc);
	if (n != 0)
		t_fail("poll_cq after shrinking returned %d, expected 0", n);
	ret = ibv_resize_cq(cq, attr->max_cqe + 1);
	if (ret != EINVAL)
		t_fail("resize_cq to max_cqe + 1 (%d): %s, expected EINVAL",
		       attr->max_cqe + 1, t_errname(ret));
	ret = ibv_destroy_cq(cq);
	if (ret)
		t_fail("destroy_cq: %s", t_errname(ret));

	cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	if (!cq)
		t_fail("create_cq cqe 4096: %s", t_errname(errno));
	else {
		if (cq->cqe < 4096)
			t_fail("create_cq cqe 4096: cq->cqe %d", cq->cqe);
		ibv_destroy_cq(cq);
	}

	/* The largest CQ: created, mapped, empty, and shrinkable. */
	cq = ibv_create_cq(ctx, attr->max_cqe, NULL, NULL, 0);
	if (!cq) {
		t_fail("create_cq cqe max_cqe (%d): %s", attr->max_cqe, t_errname(errno));
	} else {
		if (cq->cqe < attr->max_cqe)
			t_fail("create_cq cqe max_cqe (%d): cq->cqe %d", attr->max_cqe, cq->cqe);
		n = ibv_poll_cq(cq, 4, wc);
		if (n != 0)
			t_fail("poll_cq on a new CQ of max_cqe entries returned %d, expected 0", n);
		ret = ibv_resize_cq(cq, 16);
		if (ret)
			t_fail("resize_cq max_cqe -> 16: %s", t_errname(ret));
		ret = ibv_resize_cq(cq, attr->max_cqe);
		if (ret)
			t_fail("resize_cq 16 -> max_cqe: %s", t_errname(ret));
		ibv_destroy_cq(cq);
	}

	errno = 0;
	cq = ibv_create_cq(ctx, attr->max_cqe + 1, NULL, NULL, 0);
	if (cq) {
		t_fail("create_cq cqe max_cqe + 1 (%d) succeeded, expected EINVAL",
		       attr->max_cqe + 1);
		ibv_destroy_cq(cq);
	} else if (errno != EINVAL) {
		t_fail("create_cq cqe max_cqe + 1 (%d): %s, expected EINVAL",
		       attr->max_cqe + 1, t_errname(errno));
	}
}

/* The extended CQ is optional; when offered, an empty one polls ENOENT. */
static void check_cq_ex(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex init = {
		.cqe = 8,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_cq_ex *cq;
	int ret;

	cq = ibv_create_cq_ex(ctx, &init);
	if (!cq) {
		if (errno == EOPNOTSUPP)
			return;
		t_fail("create_cq_ex with IBV_WC_STANDARD_FLAGS: %s", t_errname(errno));
		return;
	}
	ret = ibv_start_poll(cq, &pattr);
	if (ret != ENOENT) {
		t_fail("start_poll on an empty CQ: %s, expected ENOENT", t_errname(ret));
		if (!ret)
			ibv_end_poll(cq);
	}
	ret = ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	if (ret)
		t_fail("destroy_cq (ex): %s", t_errname(ret));
}

/* An armed CQ that completes nothing raises no event. */
static void check_cq_arm(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch;
	struct pollfd pfd;
	struct ibv_cq *cq;
	int ret, flags;

	ch = ibv_create_comp_channel(ctx);
	if (!ch)
		t_fatal("create_comp_channel: %s", t_errname(errno));
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	if (!cq)
		t_fatal("create_cq on a completion channel: %s", t_errname(errno));
	if (cq->channel != ch)
		t_fail("cq->channel is not the channel it was created on");

	ret = ibv_req_notify_cq(cq, 0);
	if (ret)
		t_fail("req_notify_cq(next): %s", t_errname(ret));
	ret = ibv_req_notify_cq(cq, 1);
	if (ret)
		t_fail("req_notify_cq(solicited): %s", t_errname(ret));

	flags = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	ret = poll(&pfd, 1, 200);
	if (ret < 0)
		t_fail("poll on the completion channel: %s", t_errname(errno));
	else if (ret > 0) {
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		t_fail("completion channel became readable (revents %#x) with no completions",
		       pfd.revents);
		if (!ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
			ibv_ack_cq_events(ev_cq, 1);
	}

	ret = ibv_destroy_cq(cq);
	if (ret)
		t_fail("destroy_cq on a channel: %s", t_errname(ret));
	ret = ibv_destroy_comp_channel(ch);
	if (ret)
		t_fail("destroy_comp_channel: %s", t_errname(ret));
}

/* Create and destroy PD, MR and CQ 1000 times; nothing may leak. */
static void check_leaks(struct ibv_context *ctx)
{
	long page = sysconf(_SC_PAGESIZE);
	int maps0 = -1, fds0 = -1, maps1, fds1, i;
	char *buf;

	buf = aligned_alloc(page, page);
	if (!buf)
		t_fatal("aligned_alloc: out of memory");

	/* One round first, so lazily created library state is not counted. */
	for (i = 0; i <= 1000; i++) {
		struct ibv_pd *pd;
		struct ibv_mr *mr;
		struct ibv_cq *cq;
		int ret;

		if (i == 1) {
			maps0 = count_maps();
			fds0 = count_dir("/proc/self/fd");
		}
		pd = ibv_alloc_pd(ctx);
		if (!pd)
			t_fatal("round %d: alloc_pd: %s", i, t_errname(errno));
		mr = ibv_reg_mr(pd, buf, page, IBV_ACCESS_LOCAL_WRITE);
		if (!mr)
			t_fatal("round %d: reg_mr: %s", i, t_errname(errno));
		cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		if (!cq)
			t_fatal("round %d: create_cq: %s", i, t_errname(errno));
		if ((ret = ibv_destroy_cq(cq)))
			t_fatal("round %d: destroy_cq: %s", i, t_errname(ret));
		if ((ret = ibv_dereg_mr(mr)))
			t_fatal("round %d: dereg_mr: %s", i, t_errname(ret));
		if ((ret = ibv_dealloc_pd(pd)))
			t_fatal("round %d: dealloc_pd: %s", i, t_errname(ret));
	}
	maps1 = count_maps();
	fds1 = count_dir("/proc/self/fd");
	if (maps1 != maps0)
		t_fail("1000 PD/MR/CQ rounds: /proc/self/maps went from %d to %d lines",
		       maps0, maps1);
	if (fds1 != fds0)
		t_fail("1000 PD/MR/CQ rounds: open fds went from %d to %d", fds0, fds1);
	free(buf);
}

/*
 * QP numbers are not a counter: 64 UD QPs created in a row get distinct
 * numbers in 2..2^24-1 of which no two successive ones are neighbours
 * (with numbers drawn at random that happens with a chance of about
 * 64 * 2 / 2^24; a cyclic allocator makes every pair neighbours).
 */
static void check_qpn_random(struct ibv_context *ctx)
{
	enum { NQP = 64 };
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp[NQP] = {};
	int i, j, adjacent = 0, ret;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!pd || !cq)
		t_fatal("QPN check: alloc_pd/create_cq: %s", t_errname(errno));
	init.send_cq = cq;
	init.recv_cq = cq;
	for (i = 0; i < NQP; i++) {
		qp[i] = ibv_create_qp(pd, &init);
		if (!qp[i])
			t_fatal("QPN check: create_qp %d: %s", i, t_errname(errno));
		if (qp[i]->qp_num < 2 || qp[i]->qp_num > 0xffffff)
			t_fail("QPN check: QP %d has number %#x, outside 2..0xffffff",
			       i, qp[i]->qp_num);
		for (j = 0; j < i; j++)
			if (qp[j]->qp_num == qp[i]->qp_num)
				t_fail("QPN check: QPs %d and %d share number %#x",
				       j, i, qp[i]->qp_num);
		if (i && (qp[i]->qp_num == qp[i - 1]->qp_num + 1 ||
			  qp[i]->qp_num + 1 == qp[i - 1]->qp_num))
			adjacent++;
	}
	if (adjacent > 1)
		t_fail("QPN check: %d of %d QPs created in a row got the neighbour of the previous one's number (%#x, %#x, %#x, ...): QPNs are predictable",
		       adjacent, NQP - 1, qp[0]->qp_num, qp[1]->qp_num, qp[2]->qp_num);
	for (i = 0; i < NQP; i++)
		if ((ret = ibv_destroy_qp(qp[i])))
			t_fail("QPN check: destroy_qp %d: %s", i, t_errname(ret));
	if ((ret = ibv_destroy_cq(cq)) || (ret = ibv_dealloc_pd(pd)))
		t_fail("QPN check: destroy_cq/dealloc_pd: %s", t_errname(ret));
}

int main(int argc, char **argv)
{
	struct ibv_device_attr attr;
	const char *dev = NULL;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int ret;

	ctx = t_open_from_args("scire_objects", argc, argv, &dev);
	check_device(ctx, &attr);

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));
	ret = ibv_dealloc_pd(pd);
	if (ret)
		t_fail("dealloc_pd of an unused PD: %s", t_errname(ret));

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));
	check_mrs(ctx, pd);
	ret = ibv_dealloc_pd(pd);
	if (ret)
		t_fail("dealloc_pd after all its MRs were deregistered: %s", t_errname(ret));

	check_cq_sizes(ctx, &attr);
	check_cq_ex(ctx);
	check_cq_arm(ctx);
	check_qpn_random(ctx);
	check_leaks(ctx);

	ret = ibv_close_device(ctx);
	if (ret)
		t_fail("close_device: %s", t_errname(ret));

	if (t_failures)
		return T_EXIT_FAIL;
	printf("PASS: %s on %s\n", t_name, dev);
	return T_EXIT_PASS;
}
