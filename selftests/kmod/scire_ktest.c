// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_ktest: the kernel verbs API on one RDMA device, used as a kernel
 * ULP uses it. Module init connects two RC QPs of one PD to each other
 * through the port's RoCE v2 IPv4 GID and checks, with kernel work
 * requests and IB_POLL_DIRECT CQs: SEND and SEND_WITH_IMM through
 * local_dma_lkey, RDMA WRITE and READ through a fast-registration MR
 * (ib_map_mr_sg + IB_WR_REG_MR), LOCAL_INV and SEND_WITH_INV (the rkey is
 * refused afterwards and nothing is written), REG_MR posted behind a SEND
 * that is still outstanding (completions in order, in error too) and a
 * failing one behind a READ, FETCH_AND_ADD and CMP_AND_SWP, and the flush
 * of posted WQEs when a QP enters ERR.
 *
 *   insmod scire_ktest.ko dev=scire0
 *
 * Init prints "scire_ktest: FAIL <what differed>" for each failed check
 * and returns -EIO, or prints "scire_ktest: PASS <n> checks" and returns
 * 0; everything it created is destroyed before it returns, either way, so
 * the module can then be removed. Any virtual-DMA device (scire, rxe) can
 * be tested: the checks look at the target memory with the CPU.
 *
 * Copyright (c) 2026 The scire authors.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *kt_dev_name;
module_param_named(dev, kt_dev_name, charp, 0444);
MODULE_PARM_DESC(dev, "name of the RDMA device to test, e.g. scire0");

#define KT_PORT		1
#define KT_TIMEOUT_MS	5000	/* for one completion, or the port's GID */
#define KT_NUM_WR	16	/* SQ and RQ size; CQs hold both */

/*
 * The fast-reg MR: separately allocated pages, starting KT_MR_HEAD bytes
 * into the first and ending KT_MR_TAIL bytes short of the end of the last,
 * so page boundaries, a first-page offset and bytes just outside the MR
 * are all exercised.
 */
#define KT_MR_PAGES	4
#define KT_MR_HEAD	256
#define KT_MR_TAIL	128
#define KT_IMG_LEN	(KT_MR_PAGES * PAGE_SIZE)
#define KT_MR_LEN	(KT_IMG_LEN - KT_MR_HEAD - KT_MR_TAIL)
#define KT_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

#define KT_MSG_LEN	5000	/* several packets at the 1024-byte path MTU */
#define KT_IMM		0x12345678
#define KT_IMM_EMPTY	0xcafe0001
#define KT_BUF_LEN	KT_IMG_LEN

/* qp[0]'s send PSNs wrap around 2^24 within the first messages. */
static const u32 kt_sq_psn[2] = { 0xfffff8, 0x123456 };

/* A kmalloc'd buffer and its DMA address (a virtual address here). */
struct kt_buf {
	u8 *va;
	u64 dma;
	size_t len;
};

/* What is known of the fast-reg MR's key. */
enum kt_mr_state {
	KT_MR_UNKNOWN,	/* a check failed while changing it */
	KT_MR_FREE,	/* allocated or invalidated: REG_MR may be posted */
	KT_MR_VALID,	/* registered */
};

struct kt {
	struct ib_device *dev;
	u32 gid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	enum ib_mtu mtu;

	struct ib_pd *pd;
	struct ib_cq *cq[2];	/* cq[i]: send and receive CQ of qp[i] */
	struct ib_qp *qp[2];

	struct ib_mr *mr;
	enum kt_mr_state mr_state;
	struct page *pages[KT_MR_PAGES];
	struct scatterlist sgl[KT_MR_PAGES];
	int sg_nents;		/* as ib_dma_map_sg() returned; 0: unmapped */
	u8 *img;		/* what the pages must hold, back to back */

	struct kt_buf src;	/* what is sent or written */
	struct kt_buf dst;	/* where it is received or read to */
	struct kt_buf atom;	/* atomic results, then a guard word */

	unsigned int checks;
	unsigned int failed;
};

/* One check: count it, and say what differed if it failed. */
static __printf(3, 4) bool kt_check(struct kt *kt, bool ok, const char *fmt,
				    ...)
{
	struct va_format vaf;
	va_list args;

	kt->checks++;
	if (ok)
		return true;
	kt->failed++;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("FAIL %pV\n", &vaf);
	va_end(args);
	return false;
}

/* A byte pattern that differs per seed and does not repeat per page. */
static void kt_fill(u8 *p, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(((u32)i + seed * 7919U) * 2654435761U >> 24);
}

static bool kt_same(struct kt *kt, const char *what, const u8 *got,
		    const u8 *want, size_t len)
{
	size_t i;

	if (!memcmp(got, want, len))
		return kt_check(kt, true, "%s", what);
	for (i = 0; got[i] == want[i]; i++)
		;
	return kt_check(kt, false, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x",
			what, i, len, got[i], want[i]);
}

/* --- the fast-reg MR's pages and the image of what they must hold ------ */

static u8 *kt_page_va(struct kt *kt, unsigned int page)
{
	return page_address(kt->pages[page]);
}

/* Fill the pages (and their image) with a pattern, by the CPU. */
static void kt_pages_set(struct kt *kt, u32 seed)
{
	unsigned int i;

	kt_fill(kt->img, KT_IMG_LEN, seed);
	for (i = 0; i < KT_MR_PAGES; i++)
		memcpy(kt_page_va(kt, i), kt->img + i * PAGE_SIZE, PAGE_SIZE);
}

/* The pages hold exactly their image: nothing written where it must not. */
static bool kt_pages_check(struct kt *kt, const char *what)
{
	unsigned int i;

	for (i = 0; i < KT_MR_PAGES; i++) {
		const u8 *got = kt_page_va(kt, i);
		const u8 *want = kt->img + i * PAGE_SIZE;
		size_t off;

		if (!memcmp(got, want, PAGE_SIZE))
			continue;
		for (off = 0; got[off] == want[off]; off++)
			;
		return kt_check(kt, false,
				"%s: MR page %u byte %zu (MR offset %ld) is 0x%02x, expected 0x%02x",
				what, i, off,
				(long)(i * PAGE_SIZE + off) - KT_MR_HEAD,
				got[off], want[off]);
	}
	return kt_check(kt, true, "%s", what);
}

/* --- buffers -------------------------------------------------------------- */

static int kt_buf_alloc(struct kt *kt, struct kt_buf *buf, size_t len)
{
	buf->va = kzalloc(len, GFP_KERNEL);
	if (!kt_check(kt, buf->va, "kmalloc of %zu bytes failed", len))
		return -ENOMEM;
	buf->dma = ib_dma_map_single(kt->dev, buf->va, len, DMA_BIDIRECTIONAL);
	if (!kt_check(kt, !ib_dma_mapping_error(kt->dev, buf->dma),
		      "ib_dma_map_single of %zu bytes failed", len)) {
		kfree(buf->va);
		buf->va = NULL;
		return -ENOMEM;
	}
	buf->len = len;
	return 0;
}

static void kt_buf_free(struct kt *kt, struct kt_buf *buf)
{
	if (!buf->va)
		return;
	ib_dma_unmap_single(kt->dev, buf->dma, buf->len, DMA_BIDIRECTIONAL);
	kfree(buf->va);
	buf->va = NULL;
}

static struct ib_sge kt_sge(struct kt *kt, const struct kt_buf *buf,
			    size_t off, u32 len)
{
	struct ib_sge sge = {
		.addr = buf->dma + off,
		.length = len,
		.lkey = kt->pd->local_dma_lkey,
	};

	return sge;
}

/* --- completions ---------------------------------------------------------- */

/* The next completion of @cq, within KT_TIMEOUT_MS. */
static int kt_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(KT_TIMEOUT_MS);
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(50, 200);
		cond_resched();
	}
}

/*
 * The next completion on qp[@i]'s CQ must be @wr_id's, with @status and,
 * if @opcode is not negative (error completions carry none), @opcode.
 */
static int kt_expect(struct kt *kt, int i, const char *what, u64 wr_id,
		     enum ib_wc_status status, int opcode, struct ib_wc *wc)
{
	bool ok;
	int ret;

	memset(wc, 0, sizeof(*wc));
	ret = kt_poll(kt->cq[i], wc);
	if (!kt_check(kt, !ret, "%s: no completion on QP %u within %d ms (%d)",
		      what, kt->qp[i]->qp_num, KT_TIMEOUT_MS, ret))
		return -EIO;
	ok = kt_check(kt, wc->wr_id == wr_id,
		      "%s: completion of wr_id 0x%llx, expected 0x%llx", what,
		      wc->wr_id, wr_id);
	ok &= kt_check(kt, wc->status == status,
		       "%s: status %s (%d), expected %s", what,
		       ib_wc_status_msg(wc->status), wc->status,
		       ib_wc_status_msg(status));
	ok &= kt_check(kt, wc->qp == kt->qp[i],
		       "%s: completion names QP %u, expected QP %u", what,
		       wc->qp ? wc->qp->qp_num : 0, kt->qp[i]->qp_num);
	if (opcode >= 0 && wc->status == IB_WC_SUCCESS)
		ok &= kt_check(kt, wc->opcode == opcode,
			       "%s: opcode %d, expected %d", what, wc->opcode,
			       opcode);
	return ok ? 0 : -EIO;
}

/* No completion is waiting on qp[@i]'s CQ. */
static int kt_expect_none(struct kt *kt, int i, const char *what)
{
	struct ib_wc wc;
	int n;

	n = ib_poll_cq(kt->cq[i], 1, &wc);
	if (!kt_check(kt, n == 0,
		      "%s: unexpected completion on QP %u (wr_id 0x%llx, status %s)",
		      what, kt->qp[i]->qp_num, n > 0 ? wc.wr_id : 0,
		      n > 0 ? ib_wc_status_msg(wc.status) : "none"))
		return -EIO;
	return 0;
}

/* --- posting -------------------------------------------------------------- */

static int kt_post_send(struct kt *kt, int i, const char *what,
			const struct ib_send_wr *wr)
{
	int ret = ib_post_send(kt->qp[i], wr, NULL);

	if (!kt_check(kt, !ret, "%s: ib_post_send on QP %u: %d", what,
		      kt->qp[i]->qp_num, ret))
		return -EIO;
	return 0;
}

static int kt_post_recv(struct kt *kt, int i, const char *what, u64 wr_id,
			const struct ib_sge *sge, int num_sge)
{
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = (struct ib_sge *)sge,
		.num_sge = num_sge,
	};
	int ret = ib_post_recv(kt->qp[i], &wr, NULL);

	if (!kt_check(kt, !ret, "%s: ib_post_recv on QP %u: %d", what,
		      kt->qp[i]->qp_num, ret))
		return -EIO;
	return 0;
}

/* SEND (or SEND_WITH_IMM/_INV with @ex) of @len bytes at src + @off. */
static int kt_send(struct kt *kt, int i, const char *what, u64 wr_id,
		   enum ib_wr_opcode opcode, u32 ex, size_t off, u32 len)
{
	struct ib_sge sge = kt_sge(kt, &kt->src, off, len);
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = opcode,
		.send_flags = IB_SEND_SIGNALED,
	};

	if (opcode == IB_WR_SEND_WITH_IMM)
		wr.ex.imm_data = cpu_to_be32(ex);
	else if (opcode == IB_WR_SEND_WITH_INV)
		wr.ex.invalidate_rkey = ex;
	return kt_post_send(kt, i, what, &wr);
}

/* RDMA WRITE or READ between buf + @off and MR offset @mr_off. */
static int kt_rdma(struct kt *kt, int i, const char *what, u64 wr_id,
		   enum ib_wr_opcode opcode, struct kt_buf *buf, size_t off,
		   u64 mr_off, u32 len, u32 rkey)
{
	struct ib_sge sge = kt_sge(kt, buf, off, len);
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = kt->mr->iova + mr_off,
		.rkey = rkey,
	};

	return kt_post_send(kt, i, what, &wr.wr);
}

/* --- the two QPs ------------------------------------------------------------ */

static void kt_qp_event(struct ib_event *ev, void *ctx)
{
	pr_info("note: %s on QP %u\n", ib_event_msg(ev->event),
		ev->element.qp->qp_num);
}

static enum ib_qp_state kt_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

static int kt_modify(struct kt *kt, int i, const char *what,
		     struct ib_qp_attr *attr, int mask)
{
	int ret = ib_modify_qp(kt->qp[i], attr, mask);

	if (!kt_check(kt, !ret, "QP %u %s: ib_modify_qp: %d",
		      kt->qp[i]->qp_num, what, ret))
		return -EIO;
	return 0;
}

/* RESET -> INIT -> RTR -> RTS, towards qp[!i]. */
static int kt_qp_connect(struct kt *kt, int i)
{
	struct ib_qp_attr attr = {};
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = KT_PORT;
	attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
	ret = kt_modify(kt, i, "RESET->INIT", &attr,
			IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = kt->mtu;
	attr.dest_qp_num = kt->qp[!i]->qp_num;
	attr.rq_psn = kt_sq_psn[!i];
	attr.max_dest_rd_atomic = 4;
	attr.min_rnr_timer = 12;
	/* The core resolves no dmac for kernel QPs: the port's own MAC. */
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, KT_PORT);
	rdma_ah_set_grh(&attr.ah_attr, &kt->gid, 0, kt->gid_index, 64, 0);
	memcpy(attr.ah_attr.roce.dmac, kt->mac, ETH_ALEN);
	ret = kt_modify(kt, i, "INIT->RTR", &attr,
			IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = kt_sq_psn[i];
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 4;
	return kt_modify(kt, i, "RTR->RTS", &attr,
			 IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			 IB_QP_MAX_QP_RD_ATOMIC);
}

static void kt_pair_destroy(struct kt *kt)
{
	int i, ret;

	for (i = 0; i < 2; i++) {
		if (!kt->qp[i])
			continue;
		ret = ib_destroy_qp(kt->qp[i]);
		kt_check(kt, !ret, "ib_destroy_qp: %d", ret);
		kt->qp[i] = NULL;
	}
	for (i = 0; i < 2; i++) {
		if (kt->cq[i])
			ib_free_cq(kt->cq[i]);
		kt->cq[i] = NULL;
	}
}

/* Two fresh RC QPs, each with its own CQ, connected to each other. */
static int kt_pair_create(struct kt *kt)
{
	struct ib_qp_init_attr init = {
		.event_handler = kt_qp_event,
		.cap = {
			.max_send_wr = KT_NUM_WR,
			.max_recv_wr = KT_NUM_WR,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = KT_PORT,
	};
	struct ib_cq *cq;
	struct ib_qp *qp;
	int i;

	for (i = 0; i < 2; i++) {
		cq = ib_alloc_cq(kt->dev, NULL, 2 * KT_NUM_WR, 0,
				 IB_POLL_DIRECT);
		if (!kt_check(kt, !IS_ERR(cq), "ib_alloc_cq: %pe", cq))
			goto err;
		kt->cq[i] = cq;
		init.send_cq = cq;
		init.recv_cq = cq;
		qp = ib_create_qp(kt->pd, &init);
		if (!kt_check(kt, !IS_ERR(qp), "ib_create_qp (RC): %pe", qp))
			goto err;
		kt->qp[i] = qp;
	}
	for (i = 0; i < 2; i++)
		if (kt_qp_connect(kt, i))
			goto err;
	return 0;
err:
	kt_pair_destroy(kt);
	return -EIO;
}

/* --- the fast-reg MR ------------------------------------------------------- */

/* A new MR over the pages, mapped (ib_map_mr_sg), not yet registered. */
static int kt_mr_alloc(struct kt *kt)
{
	struct ib_mr *mr;
	int n;

	if (kt->mr)
		kt_check(kt, !ib_dereg_mr(kt->mr), "ib_dereg_mr failed");
	kt->mr = NULL;
	kt->mr_state = KT_MR_UNKNOWN;

	mr = ib_alloc_mr(kt->pd, IB_MR_TYPE_MEM_REG, KT_MR_PAGES);
	if (!kt_check(kt, !IS_ERR(mr), "ib_alloc_mr(MEM_REG, %d): %pe",
		      KT_MR_PAGES, mr))
		return -EIO;
	kt->mr = mr;
	n = ib_map_mr_sg(mr, kt->sgl, kt->sg_nents, NULL, PAGE_SIZE);
	if (!kt_check(kt, n == kt->sg_nents,
		      "ib_map_mr_sg mapped %d of %d entries", n, kt->sg_nents))
		return -EIO;
	if (!kt_check(kt, mr->iova == sg_dma_address(&kt->sgl[0]) &&
		      mr->length == KT_MR_LEN,
		      "ib_map_mr_sg: MR at 0x%llx+%llu, expected 0x%llx+%lu",
		      mr->iova, mr->length, sg_dma_address(&kt->sgl[0]),
		      KT_MR_LEN))
		return -EIO;
	kt->mr_state = KT_MR_FREE;
	return 0;
}

/* IB_WR_REG_MR of the MR, posted on qp[@i], with @access. */
static int kt_mr_reg(struct kt *kt, int i, const char *what, int access)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = 0xf00,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = kt->mr,
		.key = kt->mr->rkey,
		.access = access,
	};
	struct ib_wc wc;

	kt->mr_state = KT_MR_UNKNOWN;
	if (kt_post_send(kt, i, what, &wr.wr) ||
	    kt_expect(kt, i, what, 0xf00, IB_WC_SUCCESS, IB_WC_REG_MR, &wc))
		return -EIO;
	kt->mr_state = KT_MR_VALID;
	return 0;
}

/*
 * The MR free for a new REG_MR: normally it is, after the invalidation the
 * previous check ended with; after a failure, a fresh MR.
 */
static int kt_mr_want_free(struct kt *kt)
{
	if (kt->mr_state == KT_MR_FREE)
		return 0;
	return kt_mr_alloc(kt);
}

/*
 * A new key generation (ib_update_fast_reg_key), registered again over the
 * list mapped before: what a ULP reusing a mapped MR does.
 */
static int kt_mr_rereg(struct kt *kt, int i, const char *what, int access)
{
	u32 old = kt->mr->rkey;

	if (kt_mr_want_free(kt))
		return -EIO;
	ib_update_fast_reg_key(kt->mr, (u8)ib_inc_rkey(kt->mr->rkey));
	if (!kt_check(kt, kt->mr->rkey != old && kt->mr->lkey == kt->mr->rkey,
		      "%s: ib_update_fast_reg_key left lkey 0x%x rkey 0x%x (was 0x%x)",
		      what, kt->mr->lkey, kt->mr->rkey, old))
		return -EIO;
	return kt_mr_reg(kt, i, what, access);
}

/* --- the checks ------------------------------------------------------------ */

/* SEND and SEND_WITH_IMM from kmalloc'd memory through local_dma_lkey. */
static int kt_test_send(struct kt *kt)
{
	struct ib_sge rsge[2];
	struct ib_sge ssge[2];
	struct ib_send_wr wr = {
		.wr_id = 0x201,
		.sg_list = ssge,
		.num_sge = 2,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;
	u8 *zero;
	int ret;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	zero = kzalloc(KT_BUF_LEN, GFP_KERNEL);
	if (!kt_check(kt, zero, "kmalloc failed")) {
		ret = -ENOMEM;
		goto out;
	}
	ret = -EIO;

	/* Gathered from two SGEs, scattered into two others split elsewhere. */
	kt_fill(kt->src.va, KT_BUF_LEN, 1);
	memset(kt->dst.va, 0, KT_BUF_LEN);
	rsge[0] = kt_sge(kt, &kt->dst, 0, 1000);
	rsge[1] = kt_sge(kt, &kt->dst, 1024, KT_BUF_LEN - 1024);
	ssge[0] = kt_sge(kt, &kt->src, 0, 3000);
	ssge[1] = kt_sge(kt, &kt->src, 3000, KT_MSG_LEN - 3000);
	if (kt_post_recv(kt, 1, "SEND", 0x101, rsge, 2) ||
	    kt_post_send(kt, 0, "SEND", &wr) ||
	    kt_expect(kt, 0, "SEND (requester)", 0x201, IB_WC_SUCCESS,
		      IB_WC_SEND, &wc) ||
	    kt_expect(kt, 1, "SEND (responder)", 0x101, IB_WC_SUCCESS,
		      IB_WC_RECV, &wc))
		goto out;
	kt_check(kt, wc.byte_len == KT_MSG_LEN,
		 "SEND: byte_len %u, expected %u", wc.byte_len, KT_MSG_LEN);
	kt_check(kt, !(wc.wc_flags & (IB_WC_WITH_IMM | IB_WC_WITH_INVALIDATE)),
		 "SEND: wc_flags 0x%x claim an immediate or invalidation",
		 wc.wc_flags);
	kt_same(kt, "SEND: first receive SGE", kt->dst.va, kt->src.va, 1000);
	kt_same(kt, "SEND: second receive SGE", kt->dst.va + 1024,
		kt->src.va + 1000, KT_MSG_LEN - 1000);
	kt_same(kt, "SEND: bytes between the receive SGEs", kt->dst.va + 1000,
		zero, 24);
	kt_same(kt, "SEND: bytes past the message", kt->dst.va + 24 + KT_MSG_LEN,
		zero, KT_BUF_LEN - 24 - KT_MSG_LEN);

	/* The other direction: qp[1]'s PSNs, an odd length (pad bytes). */
	kt_fill(kt->src.va, KT_BUF_LEN, 2);
	memset(kt->dst.va, 0, KT_BUF_LEN);
	rsge[0] = kt_sge(kt, &kt->dst, 0, KT_BUF_LEN);
	if (kt_post_recv(kt, 0, "SEND_WITH_IMM", 0x102, rsge, 1) ||
	    kt_send(kt, 1, "SEND_WITH_IMM", 0x202, IB_WR_SEND_WITH_IMM,
		    KT_IMM, 17, 1501) ||
	    kt_expect(kt, 1, "SEND_WITH_IMM (requester)", 0x202,
		      IB_WC_SUCCESS, IB_WC_SEND, &wc) ||
	    kt_expect(kt, 0, "SEND_WITH_IMM (responder)", 0x102,
		      IB_WC_SUCCESS, IB_WC_RECV, &wc))
		goto out;
	kt_check(kt, wc.byte_len == 1501,
		 "SEND_WITH_IMM: byte_len %u, expected 1501", wc.byte_len);
	kt_check(kt, wc.wc_flags & IB_WC_WITH_IMM,
		 "SEND_WITH_IMM: wc_flags 0x%x lack IB_WC_WITH_IMM",
		 wc.wc_flags);
	kt_check(kt, wc.ex.imm_data == cpu_to_be32(KT_IMM),
		 "SEND_WITH_IMM: imm_data 0x%08x, expected 0x%08x",
		 be32_to_cpu(wc.ex.imm_data), KT_IMM);
	kt_same(kt, "SEND_WITH_IMM: payload", kt->dst.va, kt->src.va + 17,
		1501);
	kt_same(kt, "SEND_WITH_IMM: bytes past the message", kt->dst.va + 1501,
		zero, 64);

	/* No payload at all: only the immediate data. */
	rsge[0] = kt_sge(kt, &kt->dst, 0, 64);
	if (kt_post_recv(kt, 1, "empty SEND_WITH_IMM", 0x103, rsge, 1) ||
	    kt_send(kt, 0, "empty SEND_WITH_IMM", 0x203, IB_WR_SEND_WITH_IMM,
		    KT_IMM_EMPTY, 0, 0) ||
	    kt_expect(kt, 0, "empty SEND_WITH_IMM (requester)", 0x203,
		      IB_WC_SUCCESS, IB_WC_SEND, &wc) ||
	    kt_expect(kt, 1, "empty SEND_WITH_IMM (responder)", 0x103,
		      IB_WC_SUCCESS, IB_WC_RECV, &wc))
		goto out;
	kt_check(kt, wc.byte_len == 0 && (wc.wc_flags & IB_WC_WITH_IMM) &&
		 wc.ex.imm_data == cpu_to_be32(KT_IMM_EMPTY),
		 "empty SEND_WITH_IMM: byte_len %u, wc_flags 0x%x, imm 0x%08x; expected 0, IB_WC_WITH_IMM, 0x%08x",
		 wc.byte_len, wc.wc_flags, be32_to_cpu(wc.ex.imm_data),
		 KT_IMM_EMPTY);

	if (!kt_expect_none(kt, 0, "after the SENDs") &&
	    !kt_expect_none(kt, 1, "after the SENDs"))
		ret = 0;
out:
	kfree(zero);
	kt_pair_destroy(kt);
	return ret;
}

/* RDMA WRITE and READ through a fast-registered MR of several pages. */
static int kt_test_rdma(struct kt *kt)
{
	const size_t straddle = 2 * PAGE_SIZE - KT_MR_HEAD - 50;
	const size_t inner = 3 * PAGE_SIZE - KT_MR_HEAD - 150;
	struct ib_wc wc;
	int ret;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	ret = -EIO;
	if (kt_mr_want_free(kt) || kt_mr_reg(kt, 1, "REG_MR", KT_MR_ACCESS))
		goto out;

	/* The whole MR: every page, not a byte before or after. */
	kt_pages_set(kt, 3);
	kt_fill(kt->src.va, KT_BUF_LEN, 4);
	if (kt_rdma(kt, 0, "RDMA WRITE", 0x301, IB_WR_RDMA_WRITE, &kt->src, 0,
		    0, KT_MR_LEN, kt->mr->rkey) ||
	    kt_expect(kt, 0, "RDMA WRITE", 0x301, IB_WC_SUCCESS,
		      IB_WC_RDMA_WRITE, &wc))
		goto out;
	memcpy(kt->img + KT_MR_HEAD, kt->src.va, KT_MR_LEN);
	kt_pages_check(kt, "RDMA WRITE of the whole MR");

	/* 100 bytes across the boundary of the second and third page. */
	kt_fill(kt->src.va, KT_BUF_LEN, 5);
	if (kt_rdma(kt, 0, "RDMA WRITE across pages", 0x302, IB_WR_RDMA_WRITE,
		    &kt->src, 7, straddle, 100, kt->mr->rkey) ||
	    kt_expect(kt, 0, "RDMA WRITE across pages", 0x302, IB_WC_SUCCESS,
		      IB_WC_RDMA_WRITE, &wc))
		goto out;
	memcpy(kt->img + KT_MR_HEAD + straddle, kt->src.va + 7, 100);
	kt_pages_check(kt, "RDMA WRITE across pages");

	/* READ what the CPU wrote since, the whole MR and a part of it. */
	kt_pages_set(kt, 6);
	memset(kt->dst.va, 0, KT_BUF_LEN);
	if (kt_rdma(kt, 0, "RDMA READ", 0x303, IB_WR_RDMA_READ, &kt->dst, 0, 0,
		    KT_MR_LEN, kt->mr->rkey) ||
	    kt_expect(kt, 0, "RDMA READ", 0x303, IB_WC_SUCCESS,
		      IB_WC_RDMA_READ, &wc))
		goto out;
	kt_same(kt, "RDMA READ of the whole MR", kt->dst.va,
		kt->img + KT_MR_HEAD, KT_MR_LEN);

	memset(kt->dst.va, 0, KT_BUF_LEN);
	if (kt_rdma(kt, 0, "RDMA READ of a part", 0x304, IB_WR_RDMA_READ,
		    &kt->dst, 5, inner, 300, kt->mr->rkey) ||
	    kt_expect(kt, 0, "RDMA READ of a part", 0x304, IB_WC_SUCCESS,
		      IB_WC_RDMA_READ, &wc))
		goto out;
	kt_same(kt, "RDMA READ of a part", kt->dst.va + 5,
		kt->img + KT_MR_HEAD + inner, 300);
	kt_check(kt, !memchr_inv(kt->dst.va, 0, 5) &&
		 !memchr_inv(kt->dst.va + 305, 0, 64),
		 "RDMA READ of a part: bytes around it were written");
	kt_pages_check(kt, "MR pages after the READs");

	if (!kt_expect_none(kt, 0, "after the RDMA WRITE/READ") &&
	    !kt_expect_none(kt, 1, "after the RDMA WRITE/READ"))
		ret = 0;
out:
	kt_pair_destroy(kt);
	return ret;
}

/*
 * A WRITE from qp[0] with an rkey that no longer resolves fails with a
 * remote access error and writes nothing; the requester's QP is then in
 * ERR.
 */
static int kt_write_refused(struct kt *kt, const char *what, u32 rkey)
{
	struct ib_wc wc;
	char msg[80];

	kt_pages_set(kt, 8);
	kt_fill(kt->src.va, KT_BUF_LEN, 9);
	snprintf(msg, sizeof(msg), "RDMA WRITE with the %s rkey", what);
	if (kt_rdma(kt, 0, msg, 0x3ff, IB_WR_RDMA_WRITE, &kt->src, 0, 0, 512,
		    rkey) ||
	    kt_expect(kt, 0, msg, 0x3ff, IB_WC_REM_ACCESS_ERR, -1, &wc))
		return -EIO;
	if (!kt_pages_check(kt, msg))
		return -EIO;
	if (!kt_check(kt, kt_qp_state(kt->qp[0]) == IB_QPS_ERR,
		      "%s: requester QP in state %d after the error completion, expected ERR (%d)",
		      msg, kt_qp_state(kt->qp[0]), IB_QPS_ERR))
		return -EIO;
	return 0;
}

/* LOCAL_INV: the rkey is refused afterwards. */
static int kt_test_local_inv(struct kt *kt)
{
	struct ib_send_wr wr = {
		.wr_id = 0x401,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;
	int ret;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	ret = -EIO;
	if (kt->mr_state != KT_MR_VALID &&
	    (kt_mr_want_free(kt) || kt_mr_reg(kt, 1, "REG_MR", KT_MR_ACCESS)))
		goto out;

	wr.ex.invalidate_rkey = kt->mr->rkey;
	kt->mr_state = KT_MR_UNKNOWN;
	if (kt_post_send(kt, 1, "LOCAL_INV", &wr) ||
	    kt_expect(kt, 1, "LOCAL_INV", 0x401, IB_WC_SUCCESS,
		      IB_WC_LOCAL_INV, &wc))
		goto out;
	kt->mr_state = KT_MR_FREE;
	ret = kt_write_refused(kt, "locally invalidated", kt->mr->rkey);
out:
	kt_pair_destroy(kt);
	return ret;
}

/* SEND_WITH_INV of a re-registered rkey. */
static int kt_test_send_inv(struct kt *kt)
{
	const size_t off = PAGE_SIZE - KT_MR_HEAD - 100;
	struct ib_sge sge;
	struct ib_wc wc;
	u32 rkey;
	int ret;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	ret = -EIO;
	if (kt_mr_rereg(kt, 1, "REG_MR again", KT_MR_ACCESS))
		goto out;
	rkey = kt->mr->rkey;

	/* The new registration covers the same pages. */
	kt_pages_set(kt, 10);
	kt_fill(kt->src.va, KT_BUF_LEN, 11);
	if (kt_rdma(kt, 0, "RDMA WRITE after REG_MR again", 0x501,
		    IB_WR_RDMA_WRITE, &kt->src, 0, off, 200, rkey) ||
	    kt_expect(kt, 0, "RDMA WRITE after REG_MR again", 0x501,
		      IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc))
		goto out;
	memcpy(kt->img + KT_MR_HEAD + off, kt->src.va, 200);
	if (!kt_pages_check(kt, "RDMA WRITE after REG_MR again"))
		goto out;

	kt_fill(kt->src.va, KT_BUF_LEN, 12);
	memset(kt->dst.va, 0, KT_BUF_LEN);
	sge = kt_sge(kt, &kt->dst, 0, KT_BUF_LEN);
	kt->mr_state = KT_MR_UNKNOWN;
	if (kt_post_recv(kt, 1, "SEND_WITH_INV", 0x502, &sge, 1) ||
	    kt_send(kt, 0, "SEND_WITH_INV", 0x503, IB_WR_SEND_WITH_INV, rkey,
		    3, 777) ||
	    kt_expect(kt, 0, "SEND_WITH_INV (requester)", 0x503,
		      IB_WC_SUCCESS, IB_WC_SEND, &wc) ||
	    kt_expect(kt, 1, "SEND_WITH_INV (responder)", 0x502,
		      IB_WC_SUCCESS, IB_WC_RECV, &wc))
		goto out;
	kt->mr_state = KT_MR_FREE;
	kt_check(kt, wc.byte_len == 777,
		 "SEND_WITH_INV: byte_len %u, expected 777", wc.byte_len);
	kt_check(kt, wc.wc_flags & IB_WC_WITH_INVALIDATE,
		 "SEND_WITH_INV: wc_flags 0x%x lack IB_WC_WITH_INVALIDATE",
		 wc.wc_flags);
	kt_check(kt, !(wc.wc_flags & IB_WC_WITH_IMM),
		 "SEND_WITH_INV: wc_flags 0x%x claim immediate data",
		 wc.wc_flags);
	kt_check(kt, wc.ex.invalidate_rkey == rkey,
		 "SEND_WITH_INV: invalidate_rkey 0x%x, expected 0x%x",
		 wc.ex.invalidate_rkey, rkey);
	kt_same(kt, "SEND_WITH_INV: payload", kt->dst.va, kt->src.va + 3, 777);

	ret = kt_write_refused(kt, "remotely invalidated", rkey);
out:
	kt_pair_destroy(kt);
	return ret;
}

/*
 * A SEND from qp[1] held back by RNR NAKs (qp[0] has no receive yet;
 * rnr_retry 7 retries for ever), with a REG_MR of the MR (@wr_id + 1) and
 * a second SEND (@wr_id + 2) posted behind it in one chain: what
 * nvme-rdma posts for every I/O, with I/Os still in flight before it.
 * Nothing may complete before the first SEND has.
 */
static int kt_reg_behind_post(struct kt *kt, const char *what, u64 wr_id)
{
	struct ib_sge sge[2] = {
		kt_sge(kt, &kt->src, 0, 1000),
		kt_sge(kt, &kt->src, 1000, 300),
	};
	struct ib_send_wr second = {
		.wr_id = wr_id + 2,
		.sg_list = &sge[1],
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_reg_wr reg = {
		.wr = {
			.next = &second,
			.wr_id = wr_id + 1,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = kt->mr,
		.key = kt->mr->rkey,
		.access = KT_MR_ACCESS,
	};
	struct ib_send_wr first = {
		.next = &reg.wr,
		.wr_id = wr_id,
		.sg_list = &sge[0],
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	if (kt_post_send(kt, 1, what, &first))
		return -EIO;
	/* Long enough for RNR NAKs and for the requester to go past it. */
	msleep(50);
	return kt_expect_none(kt, 1, what);
}

/*
 * REG_MR behind outstanding WQEs completes in its turn: after the SEND
 * before it, before the SEND after it, and the key works afterwards. A
 * REG_MR that fails there (its MR is not free) completes in error in its
 * turn too, and flushes what follows.
 */
static int kt_test_reg_behind(struct kt *kt)
{
	struct ib_sge rsge[2];
	struct ib_wc wc;
	u32 rkey;
	int ret;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	ret = -EIO;
	if (kt_mr_want_free(kt))
		goto out;
	ib_update_fast_reg_key(kt->mr, (u8)ib_inc_rkey(kt->mr->rkey));
	rkey = kt->mr->rkey;
	kt->mr_state = KT_MR_UNKNOWN;
	kt_fill(kt->src.va, KT_BUF_LEN, 14);
	memset(kt->dst.va, 0, KT_BUF_LEN);
	if (kt_reg_behind_post(kt, "SEND, REG_MR, SEND while the first waits for a receive",
			       0x801))
		goto out;
	rsge[0] = kt_sge(kt, &kt->dst, 0, 1024);
	rsge[1] = kt_sge(kt, &kt->dst, 1024, 1024);
	if (kt_post_recv(kt, 0, "receive for the held SEND", 0x901, &rsge[0], 1) ||
	    kt_post_recv(kt, 0, "receive for the SEND after REG_MR", 0x902,
			 &rsge[1], 1) ||
	    kt_expect(kt, 1, "held SEND", 0x801, IB_WC_SUCCESS, IB_WC_SEND,
		      &wc) ||
	    kt_expect(kt, 1, "REG_MR behind it", 0x802, IB_WC_SUCCESS,
		      IB_WC_REG_MR, &wc) ||
	    kt_expect(kt, 1, "SEND after REG_MR", 0x803, IB_WC_SUCCESS,
		      IB_WC_SEND, &wc) ||
	    kt_expect(kt, 0, "receive of the held SEND", 0x901, IB_WC_SUCCESS,
		      IB_WC_RECV, &wc) ||
	    kt_expect(kt, 0, "receive of the SEND after REG_MR", 0x902,
		      IB_WC_SUCCESS, IB_WC_RECV, &wc))
		goto out;
	kt->mr_state = KT_MR_VALID;
	kt_same(kt, "held SEND: payload", kt->dst.va, kt->src.va, 1000);
	kt_same(kt, "SEND after REG_MR: payload", kt->dst.va + 1024,
		kt->src.va + 1000, 300);

	/* The registration is the one the chain asked for. */
	kt_pages_set(kt, 15);
	kt_fill(kt->src.va, KT_BUF_LEN, 16);
	if (kt_rdma(kt, 0, "RDMA WRITE with the key REG_MR behind a SEND set",
		    0x804, IB_WR_RDMA_WRITE, &kt->src, 0, 100, 600, rkey) ||
	    kt_expect(kt, 0, "RDMA WRITE with the key REG_MR behind a SEND set",
		      0x804, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc))
		goto out;
	memcpy(kt->img + KT_MR_HEAD + 100, kt->src.va, 600);
	if (!kt_pages_check(kt, "RDMA WRITE with the key REG_MR behind a SEND set"))
		goto out;

	/* The MR is registered now: a second REG_MR of it must fail. */
	kt->mr_state = KT_MR_UNKNOWN;
	if (kt_reg_behind_post(kt, "SEND, REG_MR of a registered MR, SEND",
			       0x811))
		goto out;
	if (kt_post_recv(kt, 0, "receive for the second held SEND", 0x911,
			 &rsge[0], 1) ||
	    kt_expect(kt, 1, "second held SEND", 0x811, IB_WC_SUCCESS,
		      IB_WC_SEND, &wc) ||
	    kt_expect(kt, 1, "REG_MR of a registered MR", 0x812,
		      IB_WC_LOC_QP_OP_ERR, -1, &wc) ||
	    kt_expect(kt, 1, "SEND after the failed REG_MR", 0x813,
		      IB_WC_WR_FLUSH_ERR, -1, &wc))
		goto out;
	if (!kt_check(kt, kt_qp_state(kt->qp[1]) == IB_QPS_ERR,
		      "failed REG_MR: QP in state %d, expected ERR (%d)",
		      kt_qp_state(kt->qp[1]), IB_QPS_ERR))
		goto out;
	if (!kt_expect_none(kt, 1, "after the failed REG_MR"))
		ret = 0;
out:
	kt_pair_destroy(kt);
	return ret;
}

/*
 * A REG_MR that fails (its MR is registered) behind an RDMA READ still
 * outstanding: the READ completes, the REG_MR completes in error right
 * after it, with no ACK to come, and the SEND behind it is flushed.
 */
static int kt_test_fail_behind_read(struct kt *kt)
{
	struct ib_sge rsge = kt_sge(kt, &kt->dst, 0, 512);
	struct ib_sge ssge = kt_sge(kt, &kt->src, 0, 64);
	struct ib_send_wr send = {
		.wr_id = 0x823,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_reg_wr reg = {
		.wr = {
			.next = &send,
			.wr_id = 0x822,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.access = KT_MR_ACCESS,
	};
	struct ib_rdma_wr read = {
		.wr = {
			.next = &reg.wr,
			.wr_id = 0x821,
			.sg_list = &rsge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	struct ib_wc wc;
	int ret;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	ret = -EIO;
	if (kt_mr_rereg(kt, 1, "REG_MR before a READ", KT_MR_ACCESS))
		goto out;
	kt_pages_set(kt, 17);
	memset(kt->dst.va, 0, KT_BUF_LEN);
	read.remote_addr = kt->mr->iova + 40;
	read.rkey = kt->mr->rkey;
	reg.mr = kt->mr;
	reg.key = kt->mr->rkey;
	kt->mr_state = KT_MR_UNKNOWN;
	if (kt_post_send(kt, 0, "READ, REG_MR of a registered MR, SEND", &read.wr) ||
	    kt_expect(kt, 0, "READ before a failing REG_MR", 0x821,
		      IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc) ||
	    kt_expect(kt, 0, "REG_MR of a registered MR behind a READ", 0x822,
		      IB_WC_LOC_QP_OP_ERR, -1, &wc) ||
	    kt_expect(kt, 0, "SEND after the failed REG_MR", 0x823,
		      IB_WC_WR_FLUSH_ERR, -1, &wc))
		goto out;
	kt_same(kt, "READ before a failing REG_MR", kt->dst.va,
		kt->img + KT_MR_HEAD + 40, 512);
	if (!kt_check(kt, kt_qp_state(kt->qp[0]) == IB_QPS_ERR,
		      "failed REG_MR behind a READ: QP in state %d, expected ERR (%d)",
		      kt_qp_state(kt->qp[0]), IB_QPS_ERR))
		goto out;
	if (!kt_expect_none(kt, 0, "after the failed REG_MR behind a READ"))
		ret = 0;
out:
	kt_pair_destroy(kt);
	return ret;
}

/* One atomic from qp[0] on the MR word at @off; @orig is what it held. */
static int kt_atomic(struct kt *kt, const char *what, u64 wr_id,
		     enum ib_wr_opcode opcode, u64 off, u64 compare_add,
		     u64 swap, u64 orig, u64 after)
{
	u64 *result = (u64 *)kt->atom.va;
	u64 *target = (u64 *)(kt_page_va(kt, (KT_MR_HEAD + off) / PAGE_SIZE) +
			      (KT_MR_HEAD + off) % PAGE_SIZE);
	struct ib_sge sge = kt_sge(kt, &kt->atom, 0, sizeof(u64));
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = kt->mr->iova + off,
		.compare_add = compare_add,
		.swap = swap,
		.rkey = kt->mr->rkey,
	};
	struct ib_wc wc;
	bool ok;

	result[0] = 0xa5a5a5a5a5a5a5a5ULL;
	result[1] = 0x5a5a5a5a5a5a5a5aULL;
	if (kt_post_send(kt, 0, what, &wr.wr) ||
	    kt_expect(kt, 0, what, wr_id, IB_WC_SUCCESS,
		      opcode == IB_WR_ATOMIC_FETCH_AND_ADD ? IB_WC_FETCH_ADD :
							     IB_WC_COMP_SWAP,
		      &wc))
		return -EIO;
	ok = kt_check(kt, result[0] == orig,
		      "%s: returned 0x%016llx, expected the original 0x%016llx",
		      what, result[0], orig);
	ok &= kt_check(kt, result[1] == 0x5a5a5a5a5a5a5a5aULL,
		       "%s: the word after the result changed to 0x%016llx",
		       what, result[1]);
	ok &= kt_check(kt, READ_ONCE(*target) == after,
		       "%s: target holds 0x%016llx, expected 0x%016llx", what,
		       READ_ONCE(*target), after);
	memcpy(kt->img + KT_MR_HEAD + off, &after, sizeof(after));
	return ok ? 0 : -EIO;
}

/* FETCH_AND_ADD and CMP_AND_SWP (hit and miss) on an aligned MR word. */
static int kt_test_atomic(struct kt *kt)
{
	/* The second page's ninth word. */
	const u64 off = PAGE_SIZE - KT_MR_HEAD + 64;
	const u64 v0 = 0x0123456789abcdefULL;
	const u64 add = 0x1000000000000011ULL;
	const u64 v2 = 0xfedcba9876543210ULL;
	u64 *target;
	int ret;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	ret = -EIO;
	if (kt_mr_rereg(kt, 1, "REG_MR with remote atomic",
			KT_MR_ACCESS | IB_ACCESS_REMOTE_ATOMIC))
		goto out;

	kt_pages_set(kt, 13);
	target = (u64 *)(kt_page_va(kt, 1) + 64);
	WRITE_ONCE(*target, v0);
	memcpy(kt->img + KT_MR_HEAD + off, &v0, sizeof(v0));

	if (kt_atomic(kt, "ATOMIC_FETCH_AND_ADD", 0x601,
		      IB_WR_ATOMIC_FETCH_AND_ADD, off, add, 0, v0, v0 + add) ||
	    kt_atomic(kt, "ATOMIC_CMP_AND_SWP (no match)", 0x602,
		      IB_WR_ATOMIC_CMP_AND_SWP, off, v0, v2, v0 + add,
		      v0 + add) ||
	    kt_atomic(kt, "ATOMIC_CMP_AND_SWP (match)", 0x603,
		      IB_WR_ATOMIC_CMP_AND_SWP, off, v0 + add, v2, v0 + add,
		      v2))
		goto out;
	if (kt_pages_check(kt, "MR pages around the atomic target") &&
	    !kt_expect_none(kt, 0, "after the atomics") &&
	    !kt_expect_none(kt, 1, "after the atomics"))
		ret = 0;
out:
	kt_pair_destroy(kt);
	return ret;
}

/* Posted receives, and WQEs posted in ERR, complete with a flush error. */
static int kt_test_flush(struct kt *kt)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_send_wr wr = {
		.wr_id = 0x7f0,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_sge sge;
	struct ib_wc wc;
	char msg[64];
	int ret, k;

	ret = kt_pair_create(kt);
	if (ret)
		return ret;
	ret = -EIO;
	for (k = 0; k < 4; k++) {
		sge = kt_sge(kt, &kt->dst, k * 1024, 1024);
		if (kt_post_recv(kt, 1, "receive before ERR", 0x700 + k, &sge,
				 1))
			goto out;
	}
	if (kt_modify(kt, 1, "RTS->ERR", &attr, IB_QP_STATE))
		goto out;
	for (k = 0; k < 4; k++) {
		snprintf(msg, sizeof(msg), "receive %d posted before ERR", k);
		if (kt_expect(kt, 1, msg, 0x700 + k, IB_WC_WR_FLUSH_ERR, -1,
			      &wc))
			goto out;
	}

	/* IBA 10.3.1: WQEs posted in ERR are flushed too. */
	sge = kt_sge(kt, &kt->dst, 0, 64);
	if (kt_post_recv(kt, 1, "receive in ERR", 0x710, &sge, 1) ||
	    kt_expect(kt, 1, "receive posted in ERR", 0x710,
		      IB_WC_WR_FLUSH_ERR, -1, &wc) ||
	    kt_post_send(kt, 1, "SEND in ERR", &wr) ||
	    kt_expect(kt, 1, "SEND posted in ERR", 0x7f0, IB_WC_WR_FLUSH_ERR,
		      -1, &wc))
		goto out;
	if (!kt_expect_none(kt, 1, "after the flush") &&
	    kt_check(kt, kt_qp_state(kt->qp[1]) == IB_QPS_ERR,
		     "QP %u in state %d after modify to ERR",
		     kt->qp[1]->qp_num, kt_qp_state(kt->qp[1])))
		ret = 0;
out:
	kt_pair_destroy(kt);
	return ret;
}

/* --- set up and tear down ------------------------------------------------ */

/*
 * The port's RoCE v2 GID holding an IPv4 address, and its netdev's MAC;
 * the core adds GIDs asynchronously, so wait for one a while.
 */
static int kt_find_gid(struct kt *kt)
{
	unsigned long end = jiffies + msecs_to_jiffies(KT_TIMEOUT_MS);
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int i, n, ret;

	for (;;) {
		ret = ib_query_port(kt->dev, KT_PORT, &pattr);
		if (!kt_check(kt, !ret, "ib_query_port: %d", ret))
			return ret;
		n = pattr.state == IB_PORT_ACTIVE ? pattr.gid_tbl_len : 0;
		for (i = 0; i < n; i++) {
			attr = rdma_get_gid_attr(kt->dev, KT_PORT, i);
			if (IS_ERR(attr))
				continue;
			if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
			    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
				kt->gid_index = i;
				kt->gid = attr->gid;
				ret = rdma_read_gid_l2_fields(attr, NULL,
							      kt->mac);
				rdma_put_gid_attr(attr);
				kt->mtu = min_t(enum ib_mtu, pattr.active_mtu,
						IB_MTU_1024);
				kt_check(kt, !ret,
					 "rdma_read_gid_l2_fields: %d", ret);
				return ret;
			}
			rdma_put_gid_attr(attr);
		}
		if (time_after(jiffies, end))
			break;
		msleep(100);
	}
	kt_check(kt, false,
		 "%s port %d: no RoCE v2 IPv4 GID on an active port within %d ms (state %d)",
		 dev_name(&kt->dev->dev), KT_PORT, KT_TIMEOUT_MS, pattr.state);
	return -ENODEV;
}

static int kt_setup(struct kt *kt)
{
	struct ib_pd *pd;
	unsigned int i;
	int ret;

	if (!kt_check(kt, ib_uses_virt_dma(kt->dev),
		      "%s does not use virtual DMA: the checks read its target memory with the CPU",
		      dev_name(&kt->dev->dev)))
		return -EINVAL;
	if (!kt_check(kt, kt->dev->attrs.device_cap_flags &
		      IB_DEVICE_MEM_MGT_EXTENSIONS,
		      "%s lacks IB_DEVICE_MEM_MGT_EXTENSIONS (fast registration)",
		      dev_name(&kt->dev->dev)))
		return -EINVAL;
	ret = kt_find_gid(kt);
	if (ret)
		return ret;

	pd = ib_alloc_pd(kt->dev, 0);
	if (!kt_check(kt, !IS_ERR(pd), "ib_alloc_pd: %pe", pd))
		return PTR_ERR(pd);
	kt->pd = pd;

	kt->img = kmalloc(KT_IMG_LEN, GFP_KERNEL);
	if (!kt_check(kt, kt->img, "kmalloc failed"))
		return -ENOMEM;
	ret = kt_buf_alloc(kt, &kt->src, KT_BUF_LEN);
	if (!ret)
		ret = kt_buf_alloc(kt, &kt->dst, KT_BUF_LEN);
	if (!ret)
		ret = kt_buf_alloc(kt, &kt->atom, 2 * sizeof(u64));
	if (ret)
		return ret;

	/* Separate pages: the MR is not physically contiguous. */
	sg_init_table(kt->sgl, KT_MR_PAGES);
	for (i = 0; i < KT_MR_PAGES; i++) {
		unsigned int off = i == 0 ? KT_MR_HEAD : 0;
		unsigned int len = PAGE_SIZE - off;

		kt->pages[i] = alloc_page(GFP_KERNEL);
		if (!kt_check(kt, kt->pages[i], "alloc_page failed"))
			return -ENOMEM;
		if (i == KT_MR_PAGES - 1)
			len -= KT_MR_TAIL;
		sg_set_page(&kt->sgl[i], kt->pages[i], len, off);
	}
	kt->sg_nents = ib_dma_map_sg(kt->dev, kt->sgl, KT_MR_PAGES,
				     DMA_BIDIRECTIONAL);
	if (!kt_check(kt, kt->sg_nents > 0, "ib_dma_map_sg: %d", kt->sg_nents))
		return -ENOMEM;
	return kt_mr_alloc(kt);
}

static void kt_teardown(struct kt *kt)
{
	unsigned int i;

	kt_pair_destroy(kt);
	if (kt->mr)
		kt_check(kt, !ib_dereg_mr(kt->mr), "ib_dereg_mr failed");
	if (kt->sg_nents > 0)
		ib_dma_unmap_sg(kt->dev, kt->sgl, KT_MR_PAGES,
				DMA_BIDIRECTIONAL);
	for (i = 0; i < KT_MR_PAGES; i++)
		if (kt->pages[i])
			__free_page(kt->pages[i]);
	kt_buf_free(kt, &kt->atom);
	kt_buf_free(kt, &kt->dst);
	kt_buf_free(kt, &kt->src);
	kfree(kt->img);
	if (kt->pd)
		ib_dealloc_pd(kt->pd);
}

/*
 * The device named dev=: found through an ib_client, whose add() the core
 * calls for every registered device, since ib_device_get_by_name() is no
 * longer exported to modules (7.x). A reference is taken as that did.
 */
static struct ib_device *kt_found;

static int kt_client_add(struct ib_device *dev)
{
	if (!kt_found && !strcmp(dev_name(&dev->dev), kt_dev_name) &&
	    ib_device_try_get(dev))
		kt_found = dev;
	/* No client data: the core calls nothing more of this client. */
	return -EOPNOTSUPP;
}

static struct ib_client kt_client = {
	.name = "scire_ktest",
	.add = kt_client_add,
};

static struct ib_device *kt_device_get(void)
{
	kt_found = NULL;
	if (ib_register_client(&kt_client))
		return NULL;
	ib_unregister_client(&kt_client);
	return kt_found;
}

static int __init kt_init(void)
{
	struct kt *kt;
	int ret;

	if (!kt_dev_name || !*kt_dev_name) {
		pr_err("FAIL no device: insmod scire_ktest.ko dev=<ibdev>\n");
		return -EINVAL;
	}
	kt = kzalloc(sizeof(*kt), GFP_KERNEL);
	if (!kt)
		return -ENOMEM;
	kt->dev = kt_device_get();
	if (!kt->dev) {
		pr_err("FAIL no RDMA device named %s\n", kt_dev_name);
		kfree(kt);
		return -ENODEV;
	}

	ret = kt_setup(kt);
	if (!ret) {
		kt_test_send(kt);
		kt_test_rdma(kt);
		kt_test_local_inv(kt);
		kt_test_send_inv(kt);
		kt_test_reg_behind(kt);
		kt_test_fail_behind_read(kt);
		kt_test_atomic(kt);
		kt_test_flush(kt);
	}
	kt_teardown(kt);
	ib_device_put(kt->dev);

	if (ret || kt->failed) {
		pr_err("FAIL %u of %u checks failed on %s\n", kt->failed,
		       kt->checks, kt_dev_name);
		ret = -EIO;
	} else {
		pr_info("PASS %u checks\n", kt->checks);
	}
	kfree(kt);
	return ret;
}

/* Init left nothing behind. */
static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);

MODULE_AUTHOR("The scire authors");
MODULE_DESCRIPTION("scire selftest: kernel verbs (kernel QPs, fast registration, atomics)");
MODULE_LICENSE("Dual BSD/GPL");
