// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_pd -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * Parent and thread domains (ibv_alloc_parent_domain(3), ibv_alloc_td(3)).
 * Every check is named and fails saying what differed:
 *
 *   attr        refused attributes: a TD comp_mask bit and an unknown
 *               parent domain comp_mask bit (EOPNOTSUPP), no PD, a parent
 *               domain as the PD, ALLOCATORS without callbacks, and
 *               IBV_CQ_INIT_ATTR_MASK_PD with a plain PD (EINVAL)
 *   td-alloc    a parent domain with a TD and allocators that count their
 *               calls: an extended CQ and two RC QPs (ibv_create_qp_ex
 *               with the ibv_wr_* API, and ibv_create_qp) on it, an MR,
 *               an SRQ and a memory window of it; the allocators are
 *               called with the parent domain and its pd_context; RC SEND
 *               (ibv_post_send) and RDMA WRITE (ibv_wr_rdma_write) deliver
 *               the bytes sent; every allocation is freed once its objects
 *               are gone. While QPs and the CQ use the parent domain,
 *               ibv_dealloc_pd of it and of its PD and ibv_dealloc_td of
 *               its TD are EBUSY; once they are gone the parent domain
 *               goes, and then the TD (and the PD at the end)
 *   default     allocators answering IBV_ALLOCATOR_USE_DEFAULT: the same
 *               traffic works and free is never called
 *   plain       a parent domain without TD or allocators: the same traffic
 *
 * Copyright (c) 2026 The scire authors.
 */
#include "scire_rc.h"

#define BUFLEN	4096

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct t_path path;

/* What the counting allocators saw. */
static struct {
	struct ibv_pd *want_pd;		/* the parent domain they belong to */
	int use_default;		/* answer IBV_ALLOCATOR_USE_DEFAULT */
	int allocs, frees, live;
	int bad_args;			/* calls with another pd or pd_context */
	uint64_t types;			/* bit per resource_type seen (< 64) */
} al;

static int al_ctx_cookie;

static void *count_alloc(struct ibv_pd *ibpd, void *pd_context, size_t size,
			 size_t alignment, uint64_t resource_type)
{
	void *p;

	if (ibpd != al.want_pd || pd_context != &al_ctx_cookie)
		al.bad_args++;
	al.allocs++;
	if (resource_type < 64)
		al.types |= 1ULL << resource_type;
	if (al.use_default)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (alignment < sizeof(void *) || posix_memalign(&p, alignment, size))
		return NULL;
	/* Not zeroed on purpose: the provider must not rely on it here. */
	memset(p, 0xa5, size);
	al.live++;
	return p;
}

static void count_free(struct ibv_pd *ibpd, void *pd_context, void *ptr,
		       uint64_t resource_type)
{
	if (ibpd != al.want_pd || pd_context != &al_ctx_cookie)
		al.bad_args++;
	al.frees++;
	al.live--;
	free(ptr);
}

static void expect_errno(const char *check, const char *what, int ret, int expect)
{
	if (ret != expect)
		t_fail("%s: %s: %s, expected %s", check, what, ret ? t_errname(ret) : "success",
		       expect ? t_errname(expect) : "success");
}

static struct ibv_pd *parent_new(struct ibv_td *td, int allocators)
{
	struct ibv_parent_domain_init_attr a = { .pd = pd, .td = td };
	struct ibv_pd *pdom;

	if (allocators) {
		a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			      IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
		a.alloc = count_alloc;
		a.free = count_free;
		a.pd_context = &al_ctx_cookie;
	}
	pdom = ibv_alloc_parent_domain(ctx, &a);
	if (!pdom)
		t_fatal("alloc_parent_domain: %s", t_errname(errno));
	return pdom;
}

static struct ibv_cq_ex *cq_new(struct ibv_pd *pdom)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = pdom,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	if (!cq)
		t_fatal("create_cq_ex with a parent domain: %s", t_errname(errno));
	return cq;
}

/* An RC QP of the parent domain with the ibv_wr_* API (BIND_MW included). */
static struct ibv_qp *qp_ex_new(struct ibv_pd *pdom, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pdom,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_BIND_MW,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

	if (!qp)
		t_fatal("create_qp_ex with a parent domain: %s", t_errname(errno));
	return qp;
}

static void poll_ok(const char *check, struct ibv_cq *cq, const char *what,
		    enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	if (!t_poll_one(cq, &wc, t_now() + 20))
		t_fail("%s: no CQE for the %s within 20 s", check, what);
	else if (wc.status != IBV_WC_SUCCESS || wc.opcode != op)
		t_fail("%s: %s: %s %s, expected success %s", check, what,
		       ibv_wc_status_str(wc.status), t_wc_opcode_str(wc.opcode),
		       t_wc_opcode_str(op));
}

/* Two CQEs, of ops a and b in either order, both successful. */
static void poll_two(const char *check, struct ibv_cq *cq, const char *what,
		     enum ibv_wc_opcode a, enum ibv_wc_opcode b)
{
	int seen_a = 0, seen_b = 0, i;
	struct ibv_wc wc;

	for (i = 0; i < 2; i++) {
		if (!t_poll_one(cq, &wc, t_now() + 20)) {
			t_fail("%s: %s: CQE %d did not come within 20 s", check, what, i + 1);
			return;
		}
		if (wc.status != IBV_WC_SUCCESS)
			t_fail("%s: %s: %s for %s", check, what,
			       ibv_wc_status_str(wc.status), t_wc_opcode_str(wc.opcode));
		seen_a += wc.opcode == a;
		seen_b += wc.opcode == b;
	}
	if (seen_a != 1 || seen_b != 1)
		t_fail("%s: %s: %d %s and %d %s CQEs, expected one each", check, what,
		       seen_a, t_wc_opcode_str(a), seen_b, t_wc_opcode_str(b));
}

/* The CQ and QPs of a parent domain that traffic() makes. */
struct pd_objs {
	struct ibv_cq_ex *cq;
	struct ibv_qp *a, *b;
};

/*
 * The objects of a parent domain and traffic between its two QPs: a SEND
 * from a (ibv_post_send) to b, and an RDMA WRITE from a (ibv_wr_*) into
 * b's buffer; the bytes that land are checked. The MRs are gone on return;
 * the CQ and QPs are left in o for objs_free().
 */

static void traffic(const char *check, struct ibv_pd *pdom, struct pd_objs *o)
{
	uint8_t *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
	struct ibv_cq *cq;
	struct ibv_qp_ex *ax;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	int ret;

	o->cq = cq_new(pdom);
	cq = ibv_cq_ex_to_cq(o->cq);
	o->a = qp_ex_new(pdom, cq);
	o->b = t_rc_qp(pdom, cq, 8, 8);
	t_rc_connect_pair(o->a, o->b, &path);

	sbuf = calloc(1, BUFLEN);
	rbuf = calloc(1, BUFLEN);
	if (!sbuf || !rbuf)
		t_fatal("%s: out of memory", check);
	smr = ibv_reg_mr(pdom, sbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE);
	rmr = ibv_reg_mr(pdom, rbuf, BUFLEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	if (!smr || !rmr)
		t_fatal("%s: reg_mr with a parent domain: %s", check, t_errname(errno));

	/* SEND of the first half into b's receive buffer. */
	t_rand_fill(sbuf, BUFLEN);
	sge = (struct ibv_sge){ (uintptr_t)rbuf, BUFLEN / 2, rmr->lkey };
	if ((ret = ibv_post_recv(o->b, &rwr, &rbad)))
		t_fatal("%s: post_recv: %s", check, t_errname(ret));
	sge = (struct ibv_sge){ (uintptr_t)sbuf, BUFLEN / 2, smr->lkey };
	if ((ret = ibv_post_send(o->a, &swr, &sbad)))
		t_fatal("%s: post_send: %s", check, t_errname(ret));
	poll_two(check, cq, "SEND and its receive", IBV_WC_SEND, IBV_WC_RECV);
	if (memcmp(rbuf, sbuf, BUFLEN / 2))
		t_fail("%s: the SEND delivered other bytes than were sent", check);

	/* RDMA WRITE of the second half, through ibv_wr_*. */
	ax = ibv_qp_to_qp_ex(o->a);
	ibv_wr_start(ax);
	ax->wr_id = 3;
	ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(ax, rmr->rkey, (uintptr_t)rbuf + BUFLEN / 2);
	ibv_wr_set_sge(ax, smr->lkey, (uintptr_t)sbuf + BUFLEN / 2, BUFLEN / 2);
	if ((ret = ibv_wr_complete(ax)))
		t_fatal("%s: wr_complete: %s", check, t_errname(ret));
	poll_ok(check, cq, "RDMA WRITE", IBV_WC_RDMA_WRITE);
	if (memcmp(rbuf, sbuf, BUFLEN))
		t_fail("%s: after the RDMA WRITE the receive buffer differs from what was sent",
		       check);

	if ((ret = ibv_dereg_mr(smr)) || (ret = ibv_dereg_mr(rmr)))
		t_fail("%s: dereg_mr: %s", check, t_errname(ret));
	free(sbuf);
	free(rbuf);
}

static void objs_free(const char *check, struct pd_objs *o)
{
	int ret;

	if ((ret = ibv_destroy_qp(o->a)) || (ret = ibv_destroy_qp(o->b)))
		t_fail("%s: destroy_qp: %s", check, t_errname(ret));
	if ((ret = ibv_destroy_cq(ibv_cq_ex_to_cq(o->cq))))
		t_fail("%s: destroy_cq: %s", check, t_errname(ret));
}

int main(int argc, char **argv)
{
	struct t_rc_opts opt;
	struct ibv_pd *pdom;
	struct ibv_td *td;
	struct pd_objs o;
	int ret;

	ctx = t_rc_start("scire_pd", argc, argv, 1, &opt, &path);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));

	CHECK("attr") {
		struct ibv_td_init_attr ta = { .comp_mask = 1 };
		struct ibv_parent_domain_init_attr a = { .pd = pd, .comp_mask = 1 << 7 };
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pd,
		};
		struct ibv_pd *p2;

		errno = 0;
		td = ibv_alloc_td(ctx, &ta);
		expect_errno("attr", "alloc_td with comp_mask 1", td ? 0 : errno, EOPNOTSUPP);
		errno = 0;
		p2 = ibv_alloc_parent_domain(ctx, &a);
		expect_errno("attr", "a parent domain comp_mask bit 7", p2 ? 0 : errno,
			     EOPNOTSUPP);
		a = (struct ibv_parent_domain_init_attr){ .pd = NULL };
		errno = 0;
		p2 = ibv_alloc_parent_domain(ctx, &a);
		expect_errno("attr", "a parent domain without PD", p2 ? 0 : errno, EINVAL);
		a = (struct ibv_parent_domain_init_attr){
			.pd = pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
			.alloc = count_alloc,
		};
		errno = 0;
		p2 = ibv_alloc_parent_domain(ctx, &a);
		expect_errno("attr", "ALLOCATORS without free", p2 ? 0 : errno, EINVAL);
		pdom = parent_new(NULL, 0);
		a = (struct ibv_parent_domain_init_attr){ .pd = pdom };
		errno = 0;
		p2 = ibv_alloc_parent_domain(ctx, &a);
		expect_errno("attr", "a parent domain of a parent domain", p2 ? 0 : errno,
			     EINVAL);
		errno = 0;
		expect_errno("attr", "create_cq_ex with MASK_PD and a plain PD",
			     ibv_create_cq_ex(ctx, &ca) ? 0 : errno, EINVAL);
		if ((ret = ibv_dealloc_pd(pdom)))
			t_fail("attr: dealloc_pd of the parent domain: %s", t_errname(ret));
	}

	CHECK("td-alloc") {
		struct ibv_td_init_attr ta = {};
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
		struct ibv_srq *srq;
		struct ibv_mw *mw;

		td = ibv_alloc_td(ctx, &ta);
		if (!td)
			t_fatal("td-alloc: alloc_td: %s", t_errname(errno));
		memset(&al, 0, sizeof(al));
		pdom = parent_new(td, 1);
		al.want_pd = pdom;
		traffic("td-alloc", pdom, &o);
		/* The CQ, QP a and its bind array, QP b: 4 allocations. */
		if (al.allocs < 4 || al.live != al.allocs)
			t_fail("td-alloc: %d allocator calls (%d live), expected at least 4, all live",
			       al.allocs, al.live);
		if (al.bad_args)
			t_fail("td-alloc: %d allocator calls had another pd or pd_context",
			       al.bad_args);
		srq = ibv_create_srq(pdom, &sa);
		if (!srq)
			t_fail("td-alloc: create_srq with a parent domain: %s", t_errname(errno));
		else if ((ret = ibv_destroy_srq(srq)))
			t_fail("td-alloc: destroy_srq: %s", t_errname(ret));
		mw = ibv_alloc_mw(pdom, IBV_MW_TYPE_2);
		if (!mw)
			t_fail("td-alloc: alloc_mw with a parent domain: %s", t_errname(errno));
		else if ((ret = ibv_dealloc_mw(mw)))
			t_fail("td-alloc: dealloc_mw: %s", t_errname(ret));

		expect_errno("td-alloc", "dealloc_pd of the parent domain its QPs use",
			     ibv_dealloc_pd(pdom), EBUSY);
		expect_errno("td-alloc", "dealloc_pd of the PD a parent domain wraps",
			     ibv_dealloc_pd(pd), EBUSY);
		expect_errno("td-alloc", "dealloc_td of the TD a parent domain carries",
			     ibv_dealloc_td(td), EBUSY);
		objs_free("td-alloc", &o);
		if (al.live || al.frees != al.allocs)
			t_fail("td-alloc: %d allocations, %d frees after destroying the objects",
			       al.allocs, al.frees);
		if (al.types != (1 << 1 | 1 << 2 | 1 << 3))
			t_fail("td-alloc: resource types seen %#llx, expected QP (1), bind array (2), CQ (3)",
			       (unsigned long long)al.types);
		expect_errno("td-alloc", "dealloc_pd of the PD before its parent domain",
			     ibv_dealloc_pd(pd), EBUSY);
		expect_errno("td-alloc", "dealloc_td before its parent domain",
			     ibv_dealloc_td(td), EBUSY);
		expect_errno("td-alloc", "dealloc_pd of the unused parent domain",
			     ibv_dealloc_pd(pdom), 0);
		expect_errno("td-alloc", "dealloc_td once unused", ibv_dealloc_td(td), 0);
	}

	CHECK("default") {
		memset(&al, 0, sizeof(al));
		al.use_default = 1;
		pdom = parent_new(NULL, 1);
		al.want_pd = pdom;
		traffic("default", pdom, &o);
		objs_free("default", &o);
		if (al.allocs < 4 || al.frees || al.bad_args)
			t_fail("default: %d allocator calls, %d frees, %d with wrong arguments; expected at least 4, 0, 0",
			       al.allocs, al.frees, al.bad_args);
		if ((ret = ibv_dealloc_pd(pdom)))
			t_fail("default: dealloc_pd of the parent domain: %s", t_errname(ret));
	}

	CHECK("plain") {
		memset(&al, 0, sizeof(al));
		pdom = parent_new(NULL, 0);
		traffic("plain", pdom, &o);
		objs_free("plain", &o);
		if (al.allocs)
			t_fail("plain: %d allocator calls without allocators", al.allocs);
		if ((ret = ibv_dealloc_pd(pdom)))
			t_fail("plain: dealloc_pd of the parent domain: %s", t_errname(ret));
	}

	if ((ret = ibv_dealloc_pd(pd)))
		t_fail("dealloc_pd: %s", t_errname(ret));
	if ((ret = ibv_close_device(ctx)))
		t_fail("close_device: %s", t_errname(ret));
	return t_checks_done(opt.dev);
}
