// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_limits -d DEV -m MODE [-n N] [-w]
 *
 * What a process without privileges can make a scire device hold, and what
 * it gets when it asks for more. Run by selftests/51-limits.sh as an
 * unprivileged uid, under the limits the administrator sets:
 *
 *   memlock    RLIMIT_MEMLOCK bounds the pages pinned by ibv_reg_mr(): with
 *              a finite limit L and no CAP_IPC_LOCK, regions of L/2 and L/2
 *              register, a third page more is ENOMEM, so is one region of
 *              L + 1 page alone; deregistering gives the pages back (a
 *              region of exactly L then registers). The kernel's
 *              ib_umem_get() enforces this; the test shows that scire's
 *              MRs go through it.
 *   objects    in an rdma cgroup with hca_object=N (rdma.max), PDs, CQs and
 *              MRs are created until one fails: it must fail with EAGAIN
 *              (the rdma cgroup's refusal) after at most N objects, and
 *              every object created before it must still answer (each CQ
 *              polls empty). With -w the process then prints "full" and
 *              holds everything until its standard input closes.
 *   contexts   in an rdma cgroup with hca_handle=N, device contexts are
 *              opened until one fails: EAGAIN after at most N (-w as
 *              above).
 *   spare      what another user needs at the same time: a PD, -n CQs, -n
 *              MRs of 4 KiB and an RC QP moved to INIT; every call must
 *              succeed.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <sys/mman.h>
#include <sys/resource.h>

#include "scire_test.h"

#define MAX_OBJS	4096

static long page_size;

/* Is CAP_IPC_LOCK (bit 14) in this process's effective set? */
static int has_ipc_lock(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		t_fatal("/proc/self/status: %s", t_errname(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return !!(eff & (1ULL << 14));
}

static void *pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		t_fatal("mmap(%zu): %s", len, t_errname(errno));
	memset(p, 0x5a, len);
	return p;
}

/* ibv_reg_mr(), 0 or the errno it failed with; *mrp set on success. */
static int try_reg(struct ibv_pd *pd, void *buf, size_t len, struct ibv_mr **mrp)
{
	errno = 0;
	*mrp = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	return *mrp ? 0 : (errno ? errno : EIO);
}

static void mode_memlock(struct ibv_context *ctx)
{
	struct ibv_mr *a, *b, *c;
	struct rlimit rl;
	size_t lim, half;
	char *buf;
	int err;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		t_fatal("getrlimit: %s", t_errname(errno));
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur < 4 * (size_t)page_size)
		t_fatal("RLIMIT_MEMLOCK is %llu: run with a finite limit of at least 4 pages",
			(unsigned long long)rl.rlim_cur);
	if (has_ipc_lock())
		t_fatal("this process has CAP_IPC_LOCK: RLIMIT_MEMLOCK does not bind it");
	lim = rl.rlim_cur / page_size * page_size;
	half = lim / 2 / page_size * page_size;

	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd)
		t_fatal("ibv_alloc_pd: %s", t_errname(errno));
	buf = pages(2 * lim + 2 * page_size);

	err = try_reg(pd, buf, half, &a);
	if (err)
		t_fatal("MR of %zu bytes (half of RLIMIT_MEMLOCK %zu): %s", half, lim,
			t_errname(err));
	err = try_reg(pd, buf + half, lim - half, &b);
	if (err)
		t_fatal("second MR, %zu bytes, up to RLIMIT_MEMLOCK: %s", lim - half,
			t_errname(err));
	err = try_reg(pd, buf + lim, page_size, &c);
	if (err != ENOMEM)
		t_fail("one page beyond RLIMIT_MEMLOCK (%zu bytes pinned): %s, expected ENOMEM",
		       lim, t_errname(err));
	else
		printf("memlock: %zu bytes pinned in two MRs, one page more: ENOMEM\n", lim);
	if (!err)
		ibv_dereg_mr(c);
	if (ibv_dereg_mr(a) || ibv_dereg_mr(b))
		t_fatal("ibv_dereg_mr: %s", t_errname(errno));

	err = try_reg(pd, buf, lim + page_size, &c);
	if (err != ENOMEM)
		t_fail("one MR of RLIMIT_MEMLOCK + 1 page: %s, expected ENOMEM", t_errname(err));
	if (!err)
		ibv_dereg_mr(c);
	/* The refused attempts must not have kept any pages counted. */
	err = try_reg(pd, buf + page_size, lim, &c);
	if (err)
		t_fail("after deregistering, one MR of exactly RLIMIT_MEMLOCK: %s (pages not given back?)",
		       t_errname(err));
	else {
		printf("memlock: after deregistration one MR of %zu bytes registers\n", lim);
		ibv_dereg_mr(c);
	}
	ibv_dealloc_pd(pd);
}

struct objs {
	struct ibv_pd *pd;
	struct ibv_cq *cq[MAX_OBJS];
	struct ibv_mr *mr[MAX_OBJS];
	int ncq, nmr;
	char *buf;
};

/*
 * Create objects until the first failure (or MAX_OBJS of each kind),
 * alternating CQs and MRs. Returns the errno of the failure, 0 if none.
 */
static int fill(struct ibv_context *ctx, struct objs *o)
{
	o->buf = pages(MAX_OBJS * page_size);
	o->pd = ibv_alloc_pd(ctx);
	if (!o->pd)
		return errno ? errno : EIO;
	for (;;) {
		if (o->ncq == MAX_OBJS)
			return 0;
		errno = 0;
		o->cq[o->ncq] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		if (!o->cq[o->ncq])
			return errno ? errno : EIO;
		o->ncq++;
		errno = 0;
		o->mr[o->nmr] = ibv_reg_mr(o->pd, o->buf + o->nmr * page_size,
					   page_size, IBV_ACCESS_LOCAL_WRITE);
		if (!o->mr[o->nmr])
			return errno ? errno : EIO;
		o->nmr++;
	}
}

/* Every object created before the refusal still answers. */
static void check_live(struct objs *o)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < o->ncq; i++)
		if (ibv_poll_cq(o->cq[i], 1, &wc) != 0)
			t_fail("CQ %d of %d: poll did not return 0 (empty)", i, o->ncq);
	for (i = 0; i < o->nmr; i++)
		if (o->mr[i]->length != (size_t)page_size)
			t_fail("MR %d of %d lost its length", i, o->nmr);
}

static void release(struct objs *o)
{
	int i;

	for (i = 0; i < o->nmr; i++)
		if (ibv_dereg_mr(o->mr[i]))
			t_fail("ibv_dereg_mr %d: %s", i, t_errname(errno));
	for (i = 0; i < o->ncq; i++)
		if (ibv_destroy_cq(o->cq[i]))
			t_fail("ibv_destroy_cq %d: %s", i, t_errname(errno));
	if (o->pd && ibv_dealloc_pd(o->pd))
		t_fail("ibv_dealloc_pd: %s", t_errname(errno));
}

static void hold_until_eof(void)
{
	char c;

	printf("full\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}

static void mode_objects(struct ibv_context *ctx, int n, int wait)
{
	static struct objs o;
	int err = fill(ctx, &o);
	int made = !!o.pd + o.ncq + o.nmr;

	if (err != EAGAIN)
		t_fail("after %d objects (PD, %d CQs, %d MRs): %s, expected EAGAIN from the rdma cgroup",
		       made, o.ncq, o.nmr, t_errname(err));
	if (made > n)
		t_fail("%d objects created under hca_object=%d", made, n);
	printf("objects: %d created (PD, %d CQs, %d MRs) under hca_object=%d, then %s\n",
	       made, o.ncq, o.nmr, n, t_errname(err));
	check_live(&o);
	if (wait)
		hold_until_eof();
	release(&o);
}

static void mode_contexts(const char *dev, struct ibv_context *first, int n, int wait)
{
	struct ibv_context *ctx[64] = { first };
	int made = 1, err = 0, i;

	while (made < 64) {
		struct ibv_device **list = ibv_get_device_list(NULL);

		if (!list)
			t_fatal("ibv_get_device_list: %s", t_errname(errno));
		for (i = 0; list[i]; i++)
			if (!strcmp(ibv_get_device_name(list[i]), dev))
				break;
		if (!list[i])
			t_fatal("%s is gone", dev);
		errno = 0;
		ctx[made] = ibv_open_device(list[i]);
		err = ctx[made] ? 0 : (errno ? errno : EIO);
		ibv_free_device_list(list);
		if (err)
			break;
		made++;
	}
	if (err != EAGAIN)
		t_fail("after %d contexts: %s, expected EAGAIN from the rdma cgroup", made,
		       t_errname(err));
	if (made > n)
		t_fail("%d contexts opened under hca_handle=%d", made, n);
	printf("contexts: %d opened under hca_handle=%d, then %s\n", made, n, t_errname(err));
	if (wait)
		hold_until_eof();
	for (i = 1; i < made; i++)
		if (ibv_close_device(ctx[i]))
			t_fail("ibv_close_device %d: %s", i, t_errname(errno));
}

static void mode_spare(struct ibv_context *ctx, int n)
{
	static struct objs o;
	struct ibv_qp_init_attr qia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp;
	int i;

	o.buf = pages((size_t)n * page_size);
	o.pd = ibv_alloc_pd(ctx);
	if (!o.pd)
		t_fatal("ibv_alloc_pd: %s", t_errname(errno));
	for (i = 0; i < n && i < MAX_OBJS; i++) {
		o.cq[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		if (!o.cq[i])
			t_fatal("CQ %d of %d: %s", i, n, t_errname(errno));
		o.ncq++;
		o.mr[i] = ibv_reg_mr(o.pd, o.buf + i * page_size, page_size,
				     IBV_ACCESS_LOCAL_WRITE);
		if (!o.mr[i])
			t_fatal("MR %d of %d: %s", i, n, t_errname(errno));
		o.nmr++;
	}
	qia.send_cq = qia.recv_cq = o.cq[0];
	qp = ibv_create_qp(o.pd, &qia);
	if (!qp)
		t_fatal("ibv_create_qp: %s", t_errname(errno));
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		t_fatal("RC QP to INIT: %s", t_errname(errno));
	printf("spare: PD, %d CQs, %d MRs and an RC QP in INIT\n", o.ncq, o.nmr);
	if (ibv_destroy_qp(qp))
		t_fail("ibv_destroy_qp: %s", t_errname(errno));
	release(&o);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *mode = NULL;
	struct ibv_context *ctx;
	int c, n = 0, wait = 0;

	t_name = "scire_limits";
	while ((c = getopt(argc, argv, "d:m:n:w")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'm': mode = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'w': wait = 1; break;
		default: return T_EXIT_FAIL;
		}
	}
	if (!dev || !mode) {
		fprintf(stderr, "usage: %s -d DEV -m memlock|objects|contexts|spare [-n N] [-w]\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	page_size = sysconf(_SC_PAGESIZE);
	ctx = t_open_device(dev);
	if (!strcmp(mode, "memlock"))
		mode_memlock(ctx);
	else if (!strcmp(mode, "objects"))
		mode_objects(ctx, n, wait);
	else if (!strcmp(mode, "contexts"))
		mode_contexts(dev, ctx, n, wait);
	else if (!strcmp(mode, "spare"))
		mode_spare(ctx, n);
	else
		t_fatal("unknown mode %s", mode);
	if (ibv_close_device(ctx))
		t_fail("ibv_close_device: %s", t_errname(errno));
	return t_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}
