// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: shared receive queues (IBA 10.2.9).
 *
 * An SRQ is one receive ring, laid out as a QP's RQ, from which every QP
 * created on it takes WQEs (scire_rq_take() in scire_qp.c, under the SRQ's
 * lock). A user SRQ's ring is mapped into the process, which posts without
 * system calls; a kernel SRQ is posted to by scire_post_srq_recv().
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <rdma/uverbs_ioctl.h>

#include "scire.h"

static noinline int scire_srq_respond(struct scire_srq *srq, struct ib_udata *udata)
{
	struct scire_create_srq_resp resp = {
		.mmap_offset = rdma_user_mmap_get_offset(&srq->rq.mmap->rdma),
		.mmap_size = (u64)srq->rq.mmap->rdma.npages << PAGE_SHIFT,
		.srqn = srq->srqn,
		.num_entries = srq->rq.num_entries,
		.wqe_size = srq->rq.wqe_size,
		.max_sge = srq->rq.max_sge,
	};

	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

ALLOW_ERROR_INJECTION(scire_srq_respond, ERRNO);

/**
 * scire_create_srq() - create a shared receive queue (IBA 11.2.3).
 * @ibsrq: the core-allocated SRQ.
 * @init: IB_SRQT_BASIC only; attr.max_wr 1..SCIRE_MAX_SRQ_WR, attr.max_sge
 *	  0..SCIRE_MAX_SGE, attr.srq_limit 0 (disarmed) up to the entries
 *	  the SRQ gets. On success attr.max_wr and attr.max_sge hold what the
 *	  SRQ really got (a power of two of entries, SGE room filling the
 *	  slot).
 * @udata: CREATE_SRQ UHW for a user SRQ: no request fields; the response
 *	   is struct scire_create_srq_resp and must fit whole. NULL for a
 *	   kernel SRQ.
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for XRC or tag-matching SRQs; -EINVAL for values
 * out of range, a non-zero UHW request or a short response buffer;
 * -ENOMEM, also past SCIRE_MAX_SRQ; -EBUSY when no SRQ number is free;
 * -EFAULT if the response cannot be written.
 */
int scire_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibsrq->device);
	struct scire_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SCIRE_MAX_SRQ_WR ||
	    attr->max_sge > SCIRE_MAX_SGE)
		return -EINVAL;
	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(struct scire_create_srq_resp))
		return -EINVAL;

	scire_rq_shape(&srq->rq, attr->max_wr, attr->max_sge);
	if (attr->srq_limit > srq->rq.num_entries)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_srq) > SCIRE_MAX_SRQ) {
		ret = -ENOMEM;
		goto err_count;
	}

	ret = scire_wq_alloc(&srq->rq, udata);
	if (ret)
		goto err_count;
	srq->limit = attr->srq_limit;

	ret = xa_alloc_cyclic(&sdev->srq_xa, &srq->srqn, srq, xa_limit_32b,
			      &sdev->srq_next, GFP_KERNEL);
	if (ret < 0)
		goto err_ring;

	if (udata) {
		ret = scire_srq_respond(srq, udata);
		if (ret)
			goto err_xa;
	}
	attr->max_wr = srq->rq.num_entries;
	attr->max_sge = srq->rq.max_sge;
	return 0;

err_xa:
	xa_erase(&sdev->srq_xa, srq->srqn);
err_ring:
	scire_wq_free(&srq->rq);
err_count:
	atomic_dec(&sdev->num_srq);
	return ret;
}

/**
 * scire_modify_srq() - arm the SRQ limit (IBA 11.2.3).
 * @ibsrq: the SRQ.
 * @attr: with IB_SRQ_LIMIT, attr->srq_limit: 0 disarms, 1..max_wr arms;
 *	  the next time a QP leaves fewer WQEs than that,
 *	  IB_EVENT_SRQ_LIMIT_REACHED is raised once and the limit disarmed.
 * @mask: IB_SRQ_LIMIT. IB_SRQ_MAX_WR (resizing) is not supported.
 * @udata: UHW request; scire defines none, so any bytes sent must be zero.
 *
 * Context: process context; takes the SRQ's lock with interrupts saved.
 * Return: 0; -EOPNOTSUPP for IB_SRQ_MAX_WR; -EINVAL for unknown mask bits,
 * a limit above max_wr or a non-zero UHW request.
 */
int scire_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct scire_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;

	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.num_entries)
			return -EINVAL;
		spin_lock_irqsave(&srq->rq.lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return 0;
}

/**
 * scire_query_srq() - report an SRQ's attributes (IBA 11.2.3).
 * @ibsrq: the SRQ.
 * @attr: filled in: entries, SGEs per WQE, and the limit (0 when
 *	  disarmed, also after it fired).
 *
 * Context: any; takes the SRQ's lock with interrupts saved.
 * Return: 0.
 */
int scire_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct scire_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	attr->max_wr = srq->rq.num_entries;
	attr->max_sge = srq->rq.max_sge;
	spin_lock_irqsave(&srq->rq.lock, flags);
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return 0;
}

/**
 * scire_destroy_srq() - destroy a shared receive queue.
 * @ibsrq: the SRQ; the core has checked that no QP uses it, so no work
 *	   item takes WQEs from it any more.
 * @udata: unused.
 *
 * WQEs still posted are dropped without completions.
 *
 * Context: process context.
 * Return: 0.
 */
int scire_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibsrq->device);
	struct scire_srq *srq = to_ssrq(ibsrq);

	xa_erase(&sdev->srq_xa, srq->srqn);
	scire_wq_free(&srq->rq);
	atomic_dec(&sdev->num_srq);
	return 0;
}

/**
 * scire_post_srq_recv() - post receive work requests to a kernel SRQ
 * (IBA 11.4.1).
 * @ibsrq: a kernel SRQ.
 * @wr: the chain of work requests.
 * @bad_wr: on failure, the first request not posted.
 *
 * Context: any; takes the SRQ's lock with interrupts saved.
 * Return: 0; -EINVAL for a user SRQ or too many SGEs; -ENOMEM when the SRQ
 * is full.
 */
int scire_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct scire_srq *srq = to_ssrq(ibsrq);

	if (srq->rq.mmap) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return scire_wq_post_recv(&srq->rq, wr, bad_wr);
}
