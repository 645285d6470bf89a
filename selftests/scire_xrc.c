// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_xrc -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * XRC, IBA annex A19: an XRC domain opened through a file, XRC SRQs in it,
 * an XRC send QP (XRC_INI) connected to an XRC receive QP (XRC_TGT), and
 * the XRC SRQ each work request names. On one device: the fast path or
 * the wire path, as scire's fast_path parameter says.
 *
 *   caps	the device claims IBV_DEVICE_XRC.
 *   send	24 SENDs of random sizes up to 16 KiB (many packets each)
 *		land in order in the SRQ's buffers, byte for byte; their
 *		CQEs come on the SRQ's CQ with the receive QP's number; the
 *		send QP's CQ has the send completions.
 *   odp	the same with an on-demand paging MR on both ends (the SRQ's
 *		receive buffers and the sender's), which the device claims in
 *		xrc_odp_caps; every first touch of a page faults.
 *   rdma	RDMA WRITE, READ and FETCH_AND_ADD through the receive QP,
 *		with an R_Key of the SRQ's PD, posted with the ibv_wr_* API
 *		and ibv_wr_set_xrc_srqn(); a session WQE without a remote SRQ
 *		is refused at ibv_wr_complete() (EINVAL).
 *   two-srqs	one receive QP serves two XRC SRQs of its domain, each with
 *		its own CQ: alternating SENDs land in the SRQ they name.
 *   wrong-domain an XRC SRQ of another domain, or a number no SRQ has:
 *		the SEND ends in IBV_WC_REM_INV_REQ_ERR (NAK Invalid
 *		Request) and the other domain's SRQ receives nothing.
 *   pd		an RDMA WRITE with the R_Key of an MR outside the SRQ's PD
 *		ends in IBV_WC_REM_ACCESS_ERR and writes nothing.
 *   srq-gone	after its SRQ is destroyed, a SEND naming it ends in
 *		IBV_WC_REM_INV_REQ_ERR; a domain with an SRQ left cannot be
 *		closed (EBUSY).
 *   queues	a receive QP takes no posts of either kind, a send QP no
 *		receives.
 *   shared	a second process opens the domain through the same file
 *		(no O_CREAT), opens the receive QP by number
 *		(ibv_open_qp()), creates an XRC SRQ of its own in the domain
 *		and receives SENDs this process makes through the receive QP;
 *		a process without the right to open the file gets no handle
 *		to the domain; a file with no domain yet needs O_CREAT (the
 *		core's EAGAIN otherwise).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "scire_rc.h"

#define BUF_LEN		(1u << 20)
#define MAX_MSG		16384
#define NSEND		24

static struct t_path path;
static struct ibv_context *ctx;
static char domain_file[64];
static char dev_name[64];

struct xrig {
	int fd;
	struct ibv_xrcd *xrcd;
	struct ibv_pd *pd;
	struct ibv_cq *scq;	/* the send QP's */
	struct ibv_cq *rcq;	/* the SRQ's */
	struct ibv_srq *srq;
	uint32_t srqn;
	struct ibv_qp *ini, *tgt;
	uint8_t *buf;		/* receive half, then send half */
	struct ibv_mr *mr;
};

/*
 * Open the XRC domain of file (oflags: O_CREAT or 0). 0 with *xrcd and
 * *fdp set, or the errno of open(2) or of ibv_open_xrcd().
 */
static int domain_open(const char *file, int oflags, struct ibv_xrcd **xrcd, int *fdp)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = oflags,
	};
	int fd = open(file, O_RDONLY), err;

	*xrcd = NULL;
	if (fd < 0)
		return errno;
	a.fd = fd;
	*xrcd = ibv_open_xrcd(ctx, &a);
	if (!*xrcd) {
		err = errno;
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

static struct ibv_srq *xsrq_new(struct ibv_xrcd *xrcd, struct ibv_pd *pd,
				struct ibv_cq *cq, uint32_t *srqn)
{
	return t_xrc_srq(ctx, xrcd, pd, cq, 64, 1, srqn);
}

static struct ibv_qp *tgt_new(struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

	if (!qp)
		t_fatal("create XRC receive QP: %s", t_errname(errno));
	return qp;
}

static struct ibv_qp *ini_new(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.cap = { .max_send_wr = 64, .max_send_sge = 1 },
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);

	if (!qp)
		t_fatal("create XRC send QP: %s", t_errname(errno));
	return qp;
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		t_fatal("modify XRC QP %#x to %s: %s", qp->qp_num, what, t_errname(ret));
}

/* The receive QP to RTR and the send QP to RTS, each the other's peer. */
static void xrc_connect(struct ibv_qp *ini, struct ibv_qp *tgt)
{
	uint32_t psn_i = t_rand64() & 0xffffff, psn_t = t_rand64() & 0xffffff;
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.grh = { .dgid = path.gid, .sgid_index = path.gid_index, .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_qp_attr a;

	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = T_RC_ACCESS };
	modify(tgt, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       IBV_QP_ACCESS_FLAGS, "INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = path.mtu,
				  .dest_qp_num = ini->qp_num, .rq_psn = psn_i,
				  .max_dest_rd_atomic = T_RD_ATOMIC,
				  .min_rnr_timer = 1, .ah_attr = ah };
	modify(tgt, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");

	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 };
	modify(ini, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       IBV_QP_ACCESS_FLAGS, "INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = path.mtu,
				  .dest_qp_num = tgt->qp_num, .rq_psn = psn_t,
				  .ah_attr = ah };
	modify(ini, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN, "RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = t_qp_timeout,
				  .retry_cnt = 7, .rnr_retry = 7, .sq_psn = psn_i,
				  .max_rd_atomic = T_RD_ATOMIC };
	modify(ini, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static void xrig_new_access(struct xrig *r, int odp)
{
	int ret;

	*r = (struct xrig){ 0 };
	ret = domain_open(domain_file, O_CREAT, &r->xrcd, &r->fd);
	if (ret)
		t_fatal("open the XRC domain of %s (O_CREAT): %s", domain_file,
			t_errname(ret));
	r->pd = ibv_alloc_pd(ctx);
	r->scq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	r->rcq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	if (!r->pd || !r->scq || !r->rcq)
		t_fatal("PD or CQs: %s", t_errname(errno));
	r->srq = xsrq_new(r->xrcd, r->pd, r->rcq, &r->srqn);
	r->tgt = tgt_new(r->xrcd);
	r->ini = ini_new(r->pd, r->scq);
	xrc_connect(r->ini, r->tgt);
	r->buf = aligned_alloc(4096, 2 * BUF_LEN);
	if (!r->buf)
		t_fatal("buffer: out of memory");
	memset(r->buf, 0, 2 * BUF_LEN);
	r->mr = t_reg_mr(r->pd, r->buf, 2 * BUF_LEN,
			 IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS |
			 (odp ? IBV_ACCESS_ON_DEMAND : 0), "XRC buffer");
}

static void xrig_new(struct xrig *r)
{
	xrig_new_access(r, 0);
}

static void xrig_free(struct xrig *r)
{
	int ret = 0;

	ret |= ibv_destroy_qp(r->ini);
	ret |= ibv_destroy_qp(r->tgt);
	if (r->srq)
		ret |= ibv_destroy_srq(r->srq);
	ret |= ibv_dereg_mr(r->mr);
	ret |= ibv_destroy_cq(r->scq);
	ret |= ibv_destroy_cq(r->rcq);
	ret |= ibv_dealloc_pd(r->pd);
	ret |= ibv_close_xrcd(r->xrcd);
	close(r->fd);
	free(r->buf);
	if (ret)
		t_fatal("tearing down the XRC objects failed");
}

static void post_srq(struct ibv_srq *srq, struct ibv_mr *mr, void *addr, uint32_t len,
		     uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret = ibv_post_srq_recv(srq, &wr, &bad);

	if (ret)
		t_fatal("post to XRC SRQ: %s", t_errname(ret));
}

/* A signaled SEND of len bytes at addr from the send QP to SRQ srqn. */
static void post_send(struct xrig *r, uint32_t srqn, void *addr, uint32_t len,
		      uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, r->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	int ret;

	wr.qp_type.xrc.remote_srqn = srqn;
	ret = ibv_post_send(r->ini, &wr, &bad);
	if (ret)
		t_fatal("post SEND on the XRC send QP: %s", t_errname(ret));
}

/* The next CQE of cq within 20 s: 1, or 0 (a failure of check) if none. */
static int next_cqe(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	if (t_poll_one(cq, wc, t_now() + 20))
		return 1;
	t_fail("%s: no CQE within 20 s", what);
	return 0;
}

static void expect_send(struct xrig *r, enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc;

	if (next_cqe(r->scq, &wc, what) && wc.status != status)
		t_fail("%s: send CQE status %s, expected %s", what,
		       ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
}

/* No CQE on cq for 200 ms. */
static void expect_none(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	if (t_poll_one(cq, &wc, t_now() + 0.2))
		t_fail("%s: unexpected CQE (wr_id %" PRIu64 ", %s)", what, wc.wr_id,
		       ibv_wc_status_str(wc.status));
}

static void check_caps(void)
{
	struct ibv_device_attr a;
	int ret = ibv_query_device(ctx, &a);

	if (ret)
		t_fatal("ibv_query_device: %s", t_errname(ret));
	if (!(a.device_cap_flags & IBV_DEVICE_XRC))
		t_fail("device_cap_flags %#x lacks IBV_DEVICE_XRC", a.device_cap_flags);
}

static void check_send(int odp)
{
	uint32_t len[NSEND], off[NSEND], o = 0;
	struct ibv_wc wc;
	struct xrig r;
	int i;

	if (odp) {
		struct ibv_device_attr_ex a;
		uint32_t need = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_SRQ_RECV;

		if (ibv_query_device_ex(ctx, NULL, &a))
			t_fatal("odp: ibv_query_device_ex: %s", t_errname(errno));
		if ((a.xrc_odp_caps & need) != need) {
			t_fail("odp: xrc_odp_caps %#x lack SEND and SRQ_RECV",
			       a.xrc_odp_caps);
			return;
		}
	}
	xrig_new_access(&r, odp);
	for (i = 0; i < NSEND; i++) {
		len[i] = 1 + t_rand_below(MAX_MSG);
		off[i] = o;
		o += MAX_MSG;
		t_rand_fill(r.buf + BUF_LEN + off[i], len[i]);
		post_srq(r.srq, r.mr, r.buf + off[i], MAX_MSG, i);
	}
	for (i = 0; i < NSEND; i++)
		post_send(&r, r.srqn, r.buf + BUF_LEN + off[i], len[i], 100 + i);
	for (i = 0; i < NSEND; i++) {
		expect_send(&r, IBV_WC_SUCCESS, "send");
		if (!next_cqe(r.rcq, &wc, "send: receive"))
			break;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i ||
		    wc.byte_len != len[i] || wc.qp_num != r.tgt->qp_num ||
		    wc.opcode != IBV_WC_RECV) {
			t_fail("send: receive %d: status %s wr_id %" PRIu64 " len %u qp %#x opcode %d; expected wr_id %d len %u qp %#x",
			       i, ibv_wc_status_str(wc.status), wc.wr_id, wc.byte_len, wc.qp_num,
			       wc.opcode, i, len[i], r.tgt->qp_num);
			continue;
		}
		if (memcmp(r.buf + off[i], r.buf + BUF_LEN + off[i], len[i]))
			t_fail("send: message %d (%u bytes) differs from what was sent", i, len[i]);
	}
	expect_none(r.rcq, "send: after the messages");
	xrig_free(&r);
}

static void check_rdma(void)
{
	struct ibv_qp_ex *x;
	uint64_t *word;
	struct ibv_wc wc;
	struct xrig r;
	int ret;

	xrig_new(&r);
	x = ibv_qp_to_qp_ex(r.ini);
	if (!x)
		t_fatal("rdma: the XRC send QP offers no ibv_qp_ex");
	t_rand_fill(r.buf + BUF_LEN, 8192);
	word = (uint64_t *)(r.buf + 65536);
	*word = 1000;

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, r.mr->rkey, (uintptr_t)r.buf + 4096);
	ibv_wr_set_xrc_srqn(x, r.srqn);
	ibv_wr_set_sge(x, r.mr->lkey, (uintptr_t)r.buf + BUF_LEN, 8192);
	x->wr_id = 2;
	ibv_wr_rdma_read(x, r.mr->rkey, (uintptr_t)r.buf + 4096);
	ibv_wr_set_xrc_srqn(x, r.srqn);
	ibv_wr_set_sge(x, r.mr->lkey, (uintptr_t)r.buf + BUF_LEN + 65536, 8192);
	x->wr_id = 3;
	ibv_wr_atomic_fetch_add(x, r.mr->rkey, (uintptr_t)word, 24);
	ibv_wr_set_xrc_srqn(x, r.srqn);
	ibv_wr_set_sge(x, r.mr->lkey, (uintptr_t)r.buf + BUF_LEN + 131072, 8);
	ret = ibv_wr_complete(x);
	if (ret)
		t_fatal("rdma: ibv_wr_complete: %s", t_errname(ret));
	for (int i = 1; i <= 3; i++) {
		if (!next_cqe(r.scq, &wc, "rdma"))
			break;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i)
			t_fail("rdma: CQE %d: wr_id %" PRIu64 " status %s", i, wc.wr_id,
			       ibv_wc_status_str(wc.status));
	}
	if (memcmp(r.buf + 4096, r.buf + BUF_LEN, 8192))
		t_fail("rdma: the WRITE did not place its 8 KiB");
	if (memcmp(r.buf + BUF_LEN + 65536, r.buf + BUF_LEN, 8192))
		t_fail("rdma: the READ did not bring the 8 KiB back");
	if (*word != 1024 || *(uint64_t *)(r.buf + BUF_LEN + 131072) != 1000)
		t_fail("rdma: FETCH_AND_ADD: word %" PRIu64 " (expected 1024), fetched %" PRIu64
		       " (expected 1000)", *word, *(uint64_t *)(r.buf + BUF_LEN + 131072));
	expect_none(r.rcq, "rdma: SRQ CQ");

	/* A WQE with no remote SRQ would go to SRQ 0: refused. */
	ibv_wr_start(x);
	x->wr_id = 4;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, r.mr->lkey, (uintptr_t)r.buf + BUF_LEN, 8);
	ret = ibv_wr_complete(x);
	if (ret != EINVAL)
		t_fail("rdma: a session SEND without ibv_wr_set_xrc_srqn(): ibv_wr_complete %s, expected EINVAL",
		       t_errname(ret));
	expect_none(r.scq, "rdma: the refused session");
	xrig_free(&r);
}

static void check_two_srqs(void)
{
	struct ibv_cq *cq2 = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq *srq2;
	uint32_t srqn2;
	struct ibv_wc wc;
	struct xrig r;
	int i;

	xrig_new(&r);
	if (!cq2)
		t_fatal("two-srqs: CQ: %s", t_errname(errno));
	srq2 = xsrq_new(r.xrcd, r.pd, cq2, &srqn2);
	if (srqn2 == r.srqn)
		t_fail("two-srqs: both SRQs have number %u", srqn2);
	for (i = 0; i < 8; i++) {
		post_srq(r.srq, r.mr, r.buf + i * 64, 64, i);
		post_srq(srq2, r.mr, r.buf + 4096 + i * 64, 64, 100 + i);
	}
	for (i = 0; i < 16; i++) {
		memset(r.buf + BUF_LEN + i * 64, 'a' + i, 64);
		post_send(&r, i & 1 ? srqn2 : r.srqn, r.buf + BUF_LEN + i * 64, 64, i);
	}
	for (i = 0; i < 16; i++) {
		struct ibv_cq *cq = i & 1 ? cq2 : r.rcq;
		uint64_t id = (i & 1 ? 100 : 0) + (uint64_t)(i / 2);
		uint8_t *slot = i & 1 ? r.buf + 4096 + (i / 2) * 64 : r.buf + (i / 2) * 64;

		expect_send(&r, IBV_WC_SUCCESS, "two-srqs");
		if (!next_cqe(cq, &wc, "two-srqs: receive"))
			break;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id)
			t_fail("two-srqs: message %d: wr_id %" PRIu64 " status %s, expected wr_id %" PRIu64,
			       i, wc.wr_id, ibv_wc_status_str(wc.status), id);
		else if (slot[0] != 'a' + i || slot[63] != 'a' + i)
			t_fail("two-srqs: message %d landed elsewhere", i);
	}
	if (ibv_destroy_srq(srq2) || ibv_destroy_cq(cq2))
		t_fatal("two-srqs: teardown");
	xrig_free(&r);
}

static void check_wrong_domain(void)
{
	char other[64];
	struct ibv_xrcd *xrcd2;
	struct ibv_srq *srq2;
	struct ibv_cq *cq2;
	uint32_t srqn2;
	int fd2, tfd;
	struct xrig r;

	snprintf(other, sizeof(other), "/tmp/scire_xrc_other.XXXXXX");
	tfd = mkstemp(other);
	if (tfd < 0)
		t_fatal("wrong-domain: mkstemp: %s", t_errname(errno));
	close(tfd);
	tfd = domain_open(other, O_CREAT, &xrcd2, &fd2);
	if (tfd)
		t_fatal("wrong-domain: second domain: %s", t_errname(tfd));
	cq2 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq2)
		t_fatal("wrong-domain: CQ: %s", t_errname(errno));

	for (int bad = 0; bad < 2; bad++) {
		xrig_new(&r);
		srq2 = xsrq_new(xrcd2, r.pd, cq2, &srqn2);
		post_srq(srq2, r.mr, r.buf, 64, 7);
		post_srq(r.srq, r.mr, r.buf + 64, 64, 8);
		post_send(&r, bad ? 0xfffffe : srqn2, r.buf + BUF_LEN, 64, 1);
		expect_send(&r, IBV_WC_REM_INV_REQ_ERR,
			    bad ? "wrong-domain: no such SRQ" : "wrong-domain: another domain's SRQ");
		expect_none(cq2, "wrong-domain: the other domain's SRQ");
		expect_none(r.rcq, "wrong-domain: the domain's own SRQ");
		if (ibv_destroy_srq(srq2))
			t_fatal("wrong-domain: destroy SRQ");
		xrig_free(&r);
	}
	if (ibv_destroy_cq(cq2) || ibv_close_xrcd(xrcd2))
		t_fatal("wrong-domain: teardown");
	close(fd2);
	unlink(other);
}

static void check_pd(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_send_wr wr, *bad;
	struct ibv_mr *mr2;
	struct ibv_sge sge;
	uint8_t *target;
	struct xrig r;
	int ret;

	xrig_new(&r);
	target = calloc(1, 4096);
	if (!pd2 || !target)
		t_fatal("pd: PD or buffer");
	mr2 = t_reg_mr(pd2, target, 4096, IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS,
		       "pd");
	memset(r.buf + BUF_LEN, 0x5a, 256);
	sge = (struct ibv_sge){ (uintptr_t)r.buf + BUF_LEN, 256, r.mr->lkey };
	wr = (struct ibv_send_wr){
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)target, mr2->rkey },
	};
	wr.qp_type.xrc.remote_srqn = r.srqn;
	ret = ibv_post_send(r.ini, &wr, &bad);
	if (ret)
		t_fatal("pd: post WRITE: %s", t_errname(ret));
	expect_send(&r, IBV_WC_REM_ACCESS_ERR, "pd: WRITE with another PD's R_Key");
	for (int i = 0; i < 4096; i++)
		if (target[i]) {
			t_fail("pd: byte %d of the other PD's MR was written", i);
			break;
		}
	if (ibv_dereg_mr(mr2) || ibv_dealloc_pd(pd2))
		t_fatal("pd: teardown");
	free(target);
	xrig_free(&r);
}

static void check_srq_gone(void)
{
	struct xrig r;
	int ret;

	xrig_new(&r);
	post_srq(r.srq, r.mr, r.buf, 64, 1);
	post_send(&r, r.srqn, r.buf + BUF_LEN, 64, 1);
	expect_send(&r, IBV_WC_SUCCESS, "srq-gone: first SEND");
	ret = ibv_close_xrcd(r.xrcd);
	if (ret != EBUSY)
		t_fail("srq-gone: closing a domain with an SRQ: %s, expected EBUSY",
		       t_errname(ret));
	ret = ibv_destroy_srq(r.srq);
	if (ret)
		t_fatal("srq-gone: destroy the SRQ: %s", t_errname(ret));
	r.srq = NULL;
	post_send(&r, r.srqn, r.buf + BUF_LEN, 64, 2);
	expect_send(&r, IBV_WC_REM_INV_REQ_ERR, "srq-gone: SEND to the destroyed SRQ");
	xrig_free(&r);
}

static void check_queues(void)
{
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *sbad;
	struct xrig r;

	xrig_new(&r);
	sge = (struct ibv_sge){ (uintptr_t)r.buf, 64, r.mr->lkey };
	if (!ibv_post_recv(r.tgt, &rwr, &rbad))
		t_fail("queues: a receive QP took a receive WQE");
	if (!ibv_post_send(r.tgt, &swr, &sbad))
		t_fail("queues: a receive QP took a send WQE");
	if (!ibv_post_recv(r.ini, &rwr, &rbad))
		t_fail("queues: a send QP took a receive WQE");
	expect_none(r.scq, "queues");
	expect_none(r.rcq, "queues");
	xrig_free(&r);
}

/*
 * The second process of "shared": open the domain through the file, the
 * receive QP by number, make an XRC SRQ, say its number on wfd, receive 4
 * SENDs into it. Exit status 0 when all is as expected.
 */
static int shared_child(uint32_t tgt_qpn, int wfd)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt_qpn,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qattr;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	uint32_t srqn;
	uint8_t *buf;
	int fd, i;

	ctx = t_open_device(dev_name);
	i = domain_open(domain_file, 0, &xrcd, &fd);
	if (i)
		t_fatal("shared (child): open the domain without O_CREAT: %s", t_errname(i));
	oa.xrcd = xrcd;
	qp = ibv_open_qp(ctx, &oa);
	if (!qp)
		t_fatal("shared (child): ibv_open_qp(%#x): %s", tgt_qpn, t_errname(errno));
	if (qp->qp_num != tgt_qpn || ibv_query_qp(qp, &qattr, IBV_QP_STATE, &init) ||
	    qattr.qp_state != IBV_QPS_RTR)
		t_fatal("shared (child): the opened QP is %#x in state %d, expected %#x in RTR",
			qp->qp_num, qattr.qp_state, tgt_qpn);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	buf = calloc(4, 256);
	if (!pd || !cq || !buf)
		t_fatal("shared (child): PD, CQ or buffer");
	mr = t_reg_mr(pd, buf, 4 * 256, IBV_ACCESS_LOCAL_WRITE, "shared (child)");
	srq = xsrq_new(xrcd, pd, cq, &srqn);
	for (i = 0; i < 4; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + i * 256, 256, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			t_fatal("shared (child): post to the SRQ");
	}
	if (write(wfd, &srqn, sizeof(srqn)) != sizeof(srqn))
		t_fatal("shared (child): pipe");
	for (i = 0; i < 4; i++) {
		if (!t_poll_one(cq, &wc, t_now() + 20))
			t_fatal("shared (child): message %d did not come", i);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i ||
		    wc.byte_len != 200 || wc.qp_num != tgt_qpn || buf[i * 256] != 'A' + i ||
		    buf[i * 256 + 199] != 'A' + i)
			t_fatal("shared (child): message %d: status %s wr_id %" PRIu64 " len %u qp %#x",
				i, ibv_wc_status_str(wc.status), wc.wr_id, wc.byte_len, wc.qp_num);
	}
	if (ibv_destroy_qp(qp) || ibv_destroy_srq(srq) || ibv_dereg_mr(mr) ||
	    ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_xrcd(xrcd))
		t_fatal("shared (child): teardown");
	close(fd);
	return T_EXIT_PASS;
}

static int wait_child(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		t_fatal("waitpid: %s", t_errname(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void check_shared(void)
{
	int pfd[2], st;
	uint32_t srqn;
	struct xrig r;
	pid_t pid;

	xrig_new(&r);
	if (pipe(pfd))
		t_fatal("shared: pipe");
	pid = fork();
	if (pid < 0)
		t_fatal("shared: fork: %s", t_errname(errno));
	if (!pid) {
		close(pfd[0]);
		_exit(shared_child(r.tgt->qp_num, pfd[1]));
	}
	close(pfd[1]);
	if (read(pfd[0], &srqn, sizeof(srqn)) != sizeof(srqn)) {
		t_fail("shared: the second process gave no SRQ number");
	} else {
		for (int i = 0; i < 4; i++) {
			memset(r.buf + BUF_LEN + i * 256, 'A' + i, 200);
			post_send(&r, srqn, r.buf + BUF_LEN + i * 256, 200, i);
			expect_send(&r, IBV_WC_SUCCESS, "shared: SEND to the other process's SRQ");
		}
	}
	close(pfd[0]);
	st = wait_child(pid);
	if (st)
		t_fail("shared: the second process exited with %d", st);
	expect_none(r.rcq, "shared: this process's SRQ");
	xrig_free(&r);

	/* Without the right to open the file there is no fd to name it by. */
	pid = fork();
	if (pid < 0)
		t_fatal("shared: fork: %s", t_errname(errno));
	if (!pid) {
		struct ibv_xrcd *x;
		int fd;

		if (getuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(3);
		_exit(domain_open(domain_file, 0, &x, &fd) == EACCES && !x ? 0 : 2);
	}
	st = wait_child(pid);
	if (st == 2)
		t_fail("shared: a process that may not open the domain's file (mode 0600) opened it");
	else if (st)
		t_fail("shared: dropping privileges failed (%d)", st);

	/* A file with no domain yet needs O_CREAT. */
	{
		char fresh[64] = "/tmp/scire_xrc_fresh.XXXXXX";
		struct ibv_xrcd *x;
		int tfd = mkstemp(fresh), fd, ret;

		if (tfd < 0)
			t_fatal("shared: mkstemp");
		close(tfd);
		ret = domain_open(fresh, 0, &x, &fd);
		if (ret != EAGAIN)
			t_fail("shared: ibv_open_xrcd without O_CREAT on a file with no domain: %s, expected EAGAIN",
			       t_errname(ret));
		if (x) {
			ibv_close_xrcd(x);
			close(fd);
		}
		unlink(fresh);
	}
}

int main(int argc, char **argv)
{
	struct t_rc_opts o;
	int fd;

	ctx = t_rc_start("scire_xrc", argc, argv, 1, &o, &path);
	snprintf(dev_name, sizeof(dev_name), "%s", o.dev);
	snprintf(domain_file, sizeof(domain_file), "/tmp/scire_xrc.XXXXXX");
	fd = mkstemp(domain_file);	/* mode 0600 */
	if (fd < 0)
		t_fatal("mkstemp: %s", t_errname(errno));
	close(fd);

	CHECK("caps") check_caps();
	CHECK("send") check_send(0);
	CHECK("odp") check_send(1);
	CHECK("rdma") check_rdma();
	CHECK("two-srqs") check_two_srqs();
	CHECK("wrong-domain") check_wrong_domain();
	CHECK("pd") check_pd();
	CHECK("srq-gone") check_srq_gone();
	CHECK("queues") check_queues();
	CHECK("shared") check_shared();
	unlink(domain_file);
	return t_checks_done(o.dev);
}
