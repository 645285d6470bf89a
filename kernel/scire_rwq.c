// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: receive work queues (ibv_create_wq), their indirection tables
 * (ibv_create_rwq_ind_table) and receive-side scaling: a raw packet QP
 * created over a table (an RSS QP) spreads the frames its flows take over
 * the table's WQs by a Toeplitz hash of their addresses and ports.
 *
 * A WQ is a receive ring of its own, mapped into the process as an RQ is,
 * with a CQ. An RSS QP has no queues and no state: its flows steer frames
 * (scire_raw.c), the hash picks the WQ, and the WQ's work item places each
 * frame in its next WQE and completes it on the WQ's CQ. The core keeps
 * the chain alive: a QP holds its table, a table its WQs.
 *
 * Copyright (c) 2026 The scire authors.
 */

#include "scire.h"

/* Frames one WQ may have waiting for its work item; more are dropped. */
#define SCIRE_RWQ_RXQ_MAX	1024

static struct scire_rwq *to_srwq(struct ib_wq *ibwq)
{
	return container_of(ibwq, struct scire_rwq, ibwq);
}

/* Complete the WQE in @wqe on the WQ's CQ. */
static int scire_rwq_complete(struct scire_rwq *rwq,
			      const struct scire_recv_wqe *wqe,
			      enum ib_wc_status status, u32 byte_len)
{
	struct scire_cqe cqe = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = SCIRE_CQE_OP_RECV,
		.byte_len = byte_len,
		.qp_num = rwq->ibwq.wq_num,
		.vlan_id = 0xffff,
	};

	return scire_cq_post(to_scq(rwq->ibwq.cq), &cqe, NULL, false);
}

/* A WQ that cannot go on: its remaining WQEs are flushed at once. */
static void scire_rwq_fail(struct scire_rwq *rwq)
{
	WRITE_ONCE(rwq->state, IB_WQS_ERR);
	rwq->ibwq.state = IB_WQS_ERR;
	scire_rwq_flush(rwq);
}

/* Place one frame; the WQ is RDY. */
static void scire_rwq_place(struct scire_rwq *rwq, struct sk_buff *skb)
{
	struct scire_recv_wqe *wqe = rwq->wqe;
	struct scire_sgl sgl;
	unsigned long flags;
	u32 left;
	int ret;

	spin_lock_irqsave(&rwq->rq.lock, flags);
	ret = scire_wq_take(&rwq->rq, wqe, &left);
	spin_unlock_irqrestore(&rwq->rq.lock, flags);
	if (ret == -EAGAIN) {
		/* No WQE posted: the frame is lost, as on a NIC. */
		scire_count(rwq->sdev, SCIRE_CNT_RX_DROPS, 1);
		return;
	}
	if (ret) {
		/* -EINVAL: a WQE with too many SGEs; -EIO: a corrupt ring. */
		if (ret == -EINVAL)
			scire_rwq_complete(rwq, wqe, IB_WC_LOC_QP_OP_ERR, 0);
		scire_rwq_fail(rwq);
		return;
	}
	scire_sgl_init(&sgl, to_spd(rwq->ibwq.pd), wqe->sge, wqe->num_sge);
	ret = scire_pkt_to_sgl(skb, 0, skb->len, &sgl);
	scire_sgl_release(&sgl);
	if (ret == -ENOSPC) {
		/* Taken, so it cannot be given back: completed in error. */
		scire_count(rwq->sdev, SCIRE_CNT_RX_DROPS, 1);
		scire_rwq_complete(rwq, wqe, IB_WC_LOC_LEN_ERR, 0);
		return;
	}
	if (ret) {
		scire_rwq_complete(rwq, wqe, IB_WC_LOC_PROT_ERR, 0);
		scire_rwq_fail(rwq);
		return;
	}
	if (scire_rwq_complete(rwq, wqe, IB_WC_SUCCESS, skb->len)) {
		scire_rwq_fail(rwq);
		return;
	}
	scire_count(rwq->sdev, SCIRE_CNT_RAW_RX_FRAMES, 1);
}

/* The WQ's work item: places the frames the hash sent it, in order. */
static void scire_rwq_work(struct work_struct *work)
{
	struct scire_rwq *rwq = container_of(work, struct scire_rwq, work);
	unsigned int budget = 64;
	struct sk_buff *skb;

	mutex_lock(&rwq->mutex);
	while (budget-- && (skb = skb_dequeue(&rwq->rxq))) {
		if (READ_ONCE(rwq->state) == IB_WQS_RDY)
			scire_rwq_place(rwq, skb);
		else
			scire_count(rwq->sdev, SCIRE_CNT_RX_DROPS, 1);
		consume_skb(skb);
	}
	mutex_unlock(&rwq->mutex);
	if (!skb_queue_empty(&rwq->rxq))
		queue_work(system_wq, &rwq->work);
}

/**
 * scire_rwq_flush() - complete every posted WQE of a WQ in error.
 * @rwq: the WQ, in IB_WQS_ERR.
 *
 * Each WQE between the consumer and producer index completes with
 * IB_WC_WR_FLUSH_ERR on the WQ's CQ and is consumed. A corrupt producer
 * index flushes nothing.
 *
 * Context: process context; the caller holds rwq->mutex.
 */
void scire_rwq_flush(struct scire_rwq *rwq)
{
	unsigned long flags;
	u32 left;
	int ret;

	lockdep_assert_held(&rwq->mutex);
	for (;;) {
		spin_lock_irqsave(&rwq->rq.lock, flags);
		ret = scire_wq_take(&rwq->rq, rwq->wqe, &left);
		spin_unlock_irqrestore(&rwq->rq.lock, flags);
		if (ret && ret != -EINVAL)
			return;
		scire_rwq_complete(rwq, rwq->wqe, IB_WC_WR_FLUSH_ERR, 0);
	}
}

/**
 * scire_create_wq() - create a receive work queue (ibv_create_wq()).
 * @ibpd: the PD its WQEs' lkeys must belong to.
 * @attr: IB_WQT_RQ; max_wr 1..SCIRE_MAX_QP_WR and max_sge up to
 *	  SCIRE_MAX_SGE (updated to what the WQ got); no create flags.
 * @udata: the response is struct scire_create_wq_resp; no request.
 *
 * Context: process context, may sleep.
 * Return: the WQ, in IB_WQS_RESET (the core fills in its PD and CQ);
 * ERR_PTR(-EOPNOTSUPP) for a kernel caller, an InfiniBand port, another
 * WQ type or create flags; -EINVAL for sizes out of range; -ENOMEM.
 */
struct ib_wq *scire_create_wq(struct ib_pd *ibpd, struct ib_wq_init_attr *attr,
			      struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);
	struct scire_create_wq_resp resp = {};
	struct scire_rwq *rwq;
	int ret;

	if (!udata || sdev->link != SCIRE_LINK_ROCE ||
	    attr->wq_type != IB_WQT_RQ || attr->create_flags)
		return ERR_PTR(-EOPNOTSUPP);
	if (!attr->max_wr || attr->max_wr > SCIRE_MAX_QP_WR ||
	    attr->max_sge > SCIRE_MAX_SGE || !scire_udata_in_ok(udata) ||
	    udata->outlen < sizeof(resp))
		return ERR_PTR(-EINVAL);
	if (atomic_inc_return(&sdev->num_wq) > SCIRE_MAX_SRQ) {
		ret = -ENOMEM;
		goto err_count;
	}
	rwq = kzalloc(sizeof(*rwq) + SCIRE_RECV_WQE_MAX_SIZE, GFP_KERNEL);
	if (!rwq) {
		ret = -ENOMEM;
		goto err_count;
	}
	rwq->wqe = (struct scire_recv_wqe *)(rwq + 1);
	rwq->sdev = sdev;
	rwq->state = IB_WQS_RESET;
	mutex_init(&rwq->mutex);
	skb_queue_head_init(&rwq->rxq);
	INIT_WORK(&rwq->work, scire_rwq_work);
	scire_rq_shape(&rwq->rq, attr->max_wr, attr->max_sge);
	ret = scire_wq_alloc(&rwq->rq, udata);
	if (ret)
		goto err_free;
	rwq->ibwq.wq_num = atomic_inc_return(&sdev->wq_next) & SCIRE_QPN_MASK;

	resp.mmap_offset = rdma_user_mmap_get_offset(&rwq->rq.mmap->rdma);
	resp.mmap_size = (u64)rwq->rq.mmap->rdma.npages << PAGE_SHIFT;
	resp.wq_num = rwq->ibwq.wq_num;
	resp.num_entries = rwq->rq.num_entries;
	resp.wqe_size = rwq->rq.wqe_size;
	resp.max_sge = rwq->rq.max_sge;
	ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (ret)
		goto err_ring;
	attr->max_wr = rwq->rq.num_entries;
	attr->max_sge = rwq->rq.max_sge;
	return &rwq->ibwq;

err_ring:
	scire_wq_free(&rwq->rq);
err_free:
	mutex_destroy(&rwq->mutex);
	kfree(rwq);
err_count:
	atomic_dec(&sdev->num_wq);
	return ERR_PTR(ret);
}

/**
 * scire_destroy_wq() - destroy a receive work queue.
 * @ibwq: the WQ; no indirection table holds it (the core checks).
 * @udata: unused.
 *
 * Frames still waiting for it are dropped.
 *
 * Context: process context, may sleep (waits for the WQ's work item).
 * Return: 0.
 */
int scire_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata)
{
	struct scire_rwq *rwq = to_srwq(ibwq);
	struct scire_dev *sdev = rwq->sdev;

	WRITE_ONCE(rwq->state, IB_WQS_RESET);
	cancel_work_sync(&rwq->work);
	skb_queue_purge(&rwq->rxq);
	scire_wq_free(&rwq->rq);
	mutex_destroy(&rwq->mutex);
	kfree(rwq);
	atomic_dec(&sdev->num_wq);
	return 0;
}

/**
 * scire_modify_wq() - move a WQ between its states (ibv_modify_wq()).
 * @ibwq: the WQ.
 * @attr: wq_state (and curr_wq_state, which must be the current one).
 * @mask: IB_WQ_STATE, optionally IB_WQ_CUR_STATE; IB_WQ_FLAGS is not
 *	  offered.
 * @udata: no request.
 *
 * RESET to RDY starts receiving; RDY to ERR flushes every posted WQE
 * (IB_WC_WR_FLUSH_ERR on the WQ's CQ); ERR to RESET discards what is
 * posted since, without completions. Moving to the current state is
 * allowed.
 *
 * Context: process context; takes the WQ's mutex.
 * Return: 0; -EINVAL for another move, a wrong current state or an
 * unknown state; -EOPNOTSUPP for IB_WQ_FLAGS.
 */
int scire_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask,
		    struct ib_udata *udata)
{
	struct scire_rwq *rwq = to_srwq(ibwq);
	enum ib_wq_state cur, next;
	int ret = 0;

	if (mask & ~(IB_WQ_STATE | IB_WQ_CUR_STATE))
		return -EOPNOTSUPP;
	if (!(mask & IB_WQ_STATE) || !scire_udata_in_ok(udata))
		return -EINVAL;
	mutex_lock(&rwq->mutex);
	cur = READ_ONCE(rwq->state);
	next = attr->wq_state;
	if ((mask & IB_WQ_CUR_STATE) && attr->curr_wq_state != cur) {
		ret = -EINVAL;
		goto out;
	}
	if (next == cur)
		goto out;
	if (cur == IB_WQS_RESET && next == IB_WQS_RDY) {
		WRITE_ONCE(rwq->state, next);
	} else if (cur == IB_WQS_RDY && next == IB_WQS_ERR) {
		WRITE_ONCE(rwq->state, next);
		scire_rwq_flush(rwq);
	} else if (cur == IB_WQS_ERR && next == IB_WQS_RESET) {
		/* Pairs with the poster's store-release after the slots. */
		u32 prod = smp_load_acquire(&rwq->rq.ring->producer);
		unsigned long flags;

		spin_lock_irqsave(&rwq->rq.lock, flags);
		if (prod - rwq->rq.consumer <= rwq->rq.num_entries) {
			rwq->rq.consumer = prod;
			/* Pairs with the poster's load-acquire of the consumer. */
			smp_store_release(&rwq->rq.ring->consumer, prod);
		}
		spin_unlock_irqrestore(&rwq->rq.lock, flags);
		WRITE_ONCE(rwq->state, next);
	} else {
		ret = -EINVAL;
	}
out:
	/* The core takes a move's current state from here when not told. */
	if (!ret)
		ibwq->state = READ_ONCE(rwq->state);
	mutex_unlock(&rwq->mutex);
	return ret;
}

/**
 * scire_create_rwq_ind_table() - an indirection table of WQs for RSS.
 * @ibtbl: the table; the core has filled in ind_tbl with the WQs (held)
 *	   and log_ind_tbl_size.
 * @attr: log_ind_tbl_size up to SCIRE_RSS_MAX_LOG_TABLE.
 * @udata: no request or response of scire's.
 *
 * Context: process context.
 * Return: 0; -EINVAL for a table too large or a WQ of another device.
 */
int scire_create_rwq_ind_table(struct ib_rwq_ind_table *ibtbl,
			       struct ib_rwq_ind_table_init_attr *attr,
			       struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibtbl->device);
	u32 i;

	if (attr->log_ind_tbl_size > SCIRE_RSS_MAX_LOG_TABLE ||
	    !scire_udata_in_ok(udata))
		return -EINVAL;
	for (i = 0; i < (1U << attr->log_ind_tbl_size); i++)
		if (attr->ind_tbl[i]->device != ibtbl->device)
			return -EINVAL;
	ibtbl->ind_tbl_num = atomic_inc_return(&sdev->wq_next) & SCIRE_QPN_MASK;
	return 0;
}

/**
 * scire_destroy_rwq_ind_table() - destroy an indirection table.
 * @ibtbl: the table; no QP holds it (the core checks).
 *
 * Return: 0.
 */
int scire_destroy_rwq_ind_table(struct ib_rwq_ind_table *ibtbl)
{
	return 0;
}

/**
 * scire_rss_parse() - take an RSS QP's hash from its CREATE_QP UHW.
 * @qp: the QP being created, a raw packet QP over an indirection table.
 * @tbl: the table.
 * @udata: CREATE_QP UHW: struct scire_create_qp_rss.
 *
 * Context: process context.
 * Return: 0; -EINVAL for a request too short, reserved bytes set or a key
 * length other than SCIRE_RSS_KEY_LEN; -EOPNOTSUPP for a hash function
 * other than Toeplitz or fields scire cannot hash; -ENOMEM.
 */
int scire_rss_parse(struct scire_qp *qp, struct ib_rwq_ind_table *tbl,
		    struct ib_udata *udata)
{
	struct scire_create_qp_rss cmd;
	struct scire_rss *rss;

	if (!udata || udata->inlen < sizeof(cmd) ||
	    (udata->inlen > sizeof(cmd) &&
	     !ib_is_udata_cleared(udata, sizeof(cmd),
				  udata->inlen - sizeof(cmd))))
		return -EINVAL;
	if (ib_copy_from_udata(&cmd, udata, sizeof(cmd)))
		return -EFAULT;
	if (memchr_inv(cmd.reserved, 0, sizeof(cmd.reserved)) ||
	    cmd.rx_hash_key_len != SCIRE_RSS_KEY_LEN)
		return -EINVAL;
	if (cmd.rx_hash_function != SCIRE_RX_HASH_FUNC_TOEPLITZ ||
	    (cmd.rx_hash_fields_mask & ~SCIRE_RX_HASH_FIELDS))
		return -EOPNOTSUPP;
	rss = kzalloc(sizeof(*rss), GFP_KERNEL);
	if (!rss)
		return -ENOMEM;
	memcpy(rss->key, cmd.rx_hash_key, sizeof(rss->key));
	rss->fields = cmd.rx_hash_fields_mask;
	rss->tbl = tbl;
	qp->rss = rss;
	return 0;
}

/* Toeplitz (the Microsoft RSS hash) of @len bytes of @in under @key. */
static u32 scire_rss_toeplitz(const u8 *key, const u8 *in, unsigned int len)
{
	u32 hash = 0, window = get_unaligned_be32(key);
	unsigned int i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & (0x80 >> b))
				hash ^= window;
			window <<= 1;
			if (key[i + 4] & (0x80 >> b))
				window |= 1;
		}
	}
	return hash;
}

/**
 * scire_rss_hash() - the RSS hash of a frame.
 * @rss: the QP's hash: its key and fields (IBV_RX_HASH_*).
 * @f: the frame's headers, parsed by the packet handler.
 *
 * The input is, in this order and as far as the fields ask for them and
 * the frame has them: the source and destination IPv4 or IPv6 address,
 * then the TCP or UDP source and destination port (of an unfragmented
 * or first-fragment IPv4 packet, or an IPv6 packet whose next header is
 * TCP or UDP). A frame with none of them hashes to 0.
 *
 * Return: the 32-bit Toeplitz hash.
 */
u32 scire_rss_hash(const struct scire_rss *rss, const struct scire_raw_frame *f)
{
	static const struct {
		u64 field;
		u8 l4;		/* the port's protocol, 0 for an address */
		bool ipv6;
		u8 off;		/* in struct scire_raw_frame */
		u8 len;
	} in_order[] = {
		{ SCIRE_RX_HASH_SRC_IPV4, 0, false,
		  offsetof(struct scire_raw_frame, ip4.src_ip), 4 },
		{ SCIRE_RX_HASH_DST_IPV4, 0, false,
		  offsetof(struct scire_raw_frame, ip4.dst_ip), 4 },
		{ SCIRE_RX_HASH_SRC_IPV6, 0, true,
		  offsetof(struct scire_raw_frame, ip6.src_ip), 16 },
		{ SCIRE_RX_HASH_DST_IPV6, 0, true,
		  offsetof(struct scire_raw_frame, ip6.dst_ip), 16 },
		{ SCIRE_RX_HASH_SRC_PORT_TCP, IPPROTO_TCP, false,
		  offsetof(struct scire_raw_frame, ports.src_port), 2 },
		{ SCIRE_RX_HASH_DST_PORT_TCP, IPPROTO_TCP, false,
		  offsetof(struct scire_raw_frame, ports.dst_port), 2 },
		{ SCIRE_RX_HASH_SRC_PORT_UDP, IPPROTO_UDP, false,
		  offsetof(struct scire_raw_frame, ports.src_port), 2 },
		{ SCIRE_RX_HASH_DST_PORT_UDP, IPPROTO_UDP, false,
		  offsetof(struct scire_raw_frame, ports.dst_port), 2 },
	};
	unsigned int i, n = 0;
	u8 in[36];

	for (i = 0; i < ARRAY_SIZE(in_order); i++) {
		if (!(rss->fields & in_order[i].field))
			continue;
		if (in_order[i].l4 ? f->l4 != in_order[i].l4 :
		    !(in_order[i].ipv6 ? f->ipv6 : f->ipv4))
			continue;
		memcpy(in + n, (const u8 *)f + in_order[i].off, in_order[i].len);
		n += in_order[i].len;
	}
	return scire_rss_toeplitz(rss->key, in, n);
}

/**
 * scire_rss_deliver() - hand a frame an RSS QP's flow took to the WQ its
 * hash picks.
 * @qp: the RSS QP, held by the caller.
 * @skb: the frame, skb->data at its Ethernet header; consumed.
 * @f: its headers, parsed by the packet handler.
 *
 * The WQ's work item places it (it may sleep: ODP MRs). A WQ not RDY, or
 * with SCIRE_RWQ_RXQ_MAX frames waiting, drops it (rx_drops).
 *
 * Context: any (softirq from the packet handler); the caller's QP
 * reference keeps the table and its WQs alive until the frame is queued,
 * and a WQ's destroy waits for its work item.
 */
void scire_rss_deliver(struct scire_qp *qp, struct sk_buff *skb,
		       const struct scire_raw_frame *f)
{
	const struct scire_rss *rss = qp->rss;
	struct ib_rwq_ind_table *tbl = rss->tbl;
	u32 idx = scire_rss_hash(rss, f) &
		  ((1U << tbl->log_ind_tbl_size) - 1);
	struct scire_rwq *rwq = to_srwq(tbl->ind_tbl[idx]);

	if (READ_ONCE(rwq->state) != IB_WQS_RDY ||
	    skb_queue_len(&rwq->rxq) >= SCIRE_RWQ_RXQ_MAX) {
		scire_net_drop(qp->sdev, skb, SCIRE_DROP_RXQ_FULL);
		return;
	}
	skb_queue_tail(&rwq->rxq, skb);
	queue_work(system_wq, &rwq->work);
}
