// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: shared receive queues (IBA 10.2.9).
 *
 * An SRQ is one receive ring, laid out as a QP's RQ, from which every QP
 * created on it takes WQEs (scire_rq_take() in scire_qp.c, under the SRQ's
 * lock). A user SRQ's ring is mapped into the process, which posts without
 * system calls; a kernel SRQ is posted to by scire_post_srq_recv().
 *
 * An XRC SRQ (annex A19) is the same ring in an XRC domain, with a CQ of
 * its own. No QP is created on it: an XRC TGT QP of the same domain takes
 * its WQEs for each request whose XRCETH names it (scire_xsrq_get()), and
 * posts the receive completions to the SRQ's CQ.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <rdma/uverbs_ioctl.h>

#include "scire.h"

/**
 * scire_srq_resp() - describe a user SRQ's ring for user space.
 * @srq: a user SRQ.
 * @resp: filled in: where to map the ring, its slots and their shape.
 *
 * Context: any; the caller keeps the ring from changing (creation, or the
 * SRQ's handle held exclusively for a resize).
 */
void scire_srq_resp(const struct scire_srq *srq,
		    struct scire_create_srq_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->mmap_offset = rdma_user_mmap_get_offset(&srq->rq.mmap->rdma);
	resp->mmap_size = (u64)srq->rq.mmap->rdma.npages << PAGE_SHIFT;
	resp->srqn = srq->srqn;
	resp->num_entries = srq->rq.num_entries;
	resp->wqe_size = srq->rq.wqe_size;
	resp->max_sge = srq->rq.max_sge;
}

static noinline int scire_srq_respond(struct scire_srq *srq, struct ib_udata *udata)
{
	struct scire_create_srq_resp resp;

	scire_srq_resp(srq, &resp);
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

ALLOW_ERROR_INJECTION(scire_srq_respond, ERRNO);

/**
 * scire_create_srq() - create a shared receive queue (IBA 11.2.3).
 * @ibsrq: the core-allocated SRQ.
 * @init: IB_SRQT_BASIC, or IB_SRQT_XRC (ext.xrc.xrcd and ext.cq set by the
 *	  core, which holds both); attr.max_wr 1..SCIRE_MAX_SRQ_WR, attr.max_sge
 *	  0..SCIRE_MAX_SGE, attr.srq_limit 0 (disarmed) up to the entries
 *	  the SRQ gets. On success attr.max_wr and attr.max_sge hold what the
 *	  SRQ really got (a power of two of entries, SGE room filling the
 *	  slot).
 * @udata: CREATE_SRQ UHW for a user SRQ: no request fields; the response
 *	   is struct scire_create_srq_resp and must fit whole. NULL for a
 *	   kernel SRQ.
 *
 * Context: process context, may sleep.
 * The SRQ number (an XRC SRQ's, for the XRCETH of requests to it) is
 * 24 bits wide.
 *
 * Return: 0; -EOPNOTSUPP for tag-matching SRQs; -EINVAL for values
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

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (init->srq_type == IB_SRQT_XRC &&
	    (!init->ext.xrc.xrcd || !init->ext.cq))
		return -EINVAL;
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
	refcount_set(&srq->users, 1);
	init_completion(&srq->gone);

	ret = xa_alloc_cyclic(&sdev->srq_xa, &srq->srqn, srq,
			      XA_LIMIT(0, SCIRE_QPN_MASK), &sdev->srq_next,
			      GFP_KERNEL);
	if (ret < 0)
		goto err_ring;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srqn;

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

/* The posted, untaken WQEs of @rq: -EIO for a producer index out of range. */
static int scire_srq_posted(struct scire_wq *rq, u32 *cons, u32 *prod)
{
	lockdep_assert_held(&rq->lock);
	/* Pairs with the producer's store-release after writing the slot. */
	*prod = smp_load_acquire(&rq->ring->producer);
	*cons = rq->consumer;
	return *prod - *cons > rq->num_entries ? -EIO : 0;
}

/**
 * scire_srq_resize() - give an SRQ a ring of another size (IBA 11.2.3.3).
 * @srq: the SRQ.
 * @max_wr: the WQEs it must hold, 1..SCIRE_MAX_SRQ_WR; rounded up to a
 *	    power of two. Smaller than now is allowed while the posted,
 *	    untaken WQEs and the armed limit still fit.
 * @udata: for a user SRQ, the udata of the calling verb (the new ring is
 *	   mmap-able memory of its context); NULL for a kernel SRQ.
 *
 * The WQEs posted and not yet taken move to the new ring at the same
 * indices, so the producer and consumer indices carry on. They are copied
 * outside the SRQ's lock while QPs go on taking WQEs from the old ring;
 * under the lock, WQEs posted meanwhile are copied too and the rings
 * swapped. The old user ring stays mapped in the process, which unmaps
 * it; the kernel no longer reads it. The provider does not post while
 * this runs (its SRQ lock); a process that does anyway only loses its own
 * WQEs.
 *
 * Context: process context, may sleep; takes the SRQ's lock with
 * interrupts saved. The caller excludes other resizes and destroy (the
 * uverbs handle held exclusively, or a kernel ULP's own ordering).
 * Return: 0; -EINVAL for @max_wr out of range or too small for what is
 * posted or for the armed limit; -EIO for a corrupt producer index;
 * -ENOMEM, or an error of the mmap entry.
 */
int scire_srq_resize(struct scire_srq *srq, u32 max_wr, struct ib_udata *udata)
{
	struct scire_wq *rq = &srq->rq, new = {}, old = {};
	u32 cons, prod, prod0, i;
	unsigned long flags;
	int ret;

	if (!max_wr || max_wr > SCIRE_MAX_SRQ_WR)
		return -EINVAL;
	scire_rq_shape(&new, max_wr, rq->max_sge);
	/* The same SGEs give the same slots; keep what the process mapped. */
	new.wqe_size = rq->wqe_size;
	new.max_sge = rq->max_sge;
	ret = scire_wq_alloc(&new, udata);
	if (ret)
		return ret;

	spin_lock_irqsave(&rq->lock, flags);
	ret = scire_srq_posted(rq, &cons, &prod0);
	spin_unlock_irqrestore(&rq->lock, flags);
	if (ret)
		goto err;
	ret = -EINVAL;
	if (prod0 - cons > new.num_entries)
		goto err;
	/* The bulk, unlocked: these slots are the poster's, not the QPs'. */
	for (i = cons; i != prod0; i++)
		memcpy(scire_wq_slot(&new, i), scire_wq_slot(rq, i),
		       rq->wqe_size);

	spin_lock_irqsave(&rq->lock, flags);
	ret = scire_srq_posted(rq, &cons, &prod);
	if (!ret && (prod - cons > new.num_entries ||
		     srq->limit > new.num_entries))
		ret = -EINVAL;
	if (ret) {
		spin_unlock_irqrestore(&rq->lock, flags);
		goto err;
	}
	/* WQEs posted while we copied: few, or none from the provider. */
	for (i = prod0; i != prod; i++)
		memcpy(scire_wq_slot(&new, i), scire_wq_slot(rq, i),
		       rq->wqe_size);
	new.ring->producer = prod;
	new.ring->consumer = cons;
	new.ring->flags = READ_ONCE(rq->ring->flags);
	old.ring = rq->ring;
	old.mmap = rq->mmap;
	rq->ring = new.ring;
	rq->mmap = new.mmap;
	rq->num_entries = new.num_entries;
	spin_unlock_irqrestore(&rq->lock, flags);

	scire_wq_free(&old);
	return 0;

err:
	scire_wq_free(&new);
	return ret;
}

/**
 * scire_modify_srq() - resize an SRQ or arm its limit (IBA 11.2.3).
 * @ibsrq: the SRQ.
 * @attr: with IB_SRQ_MAX_WR, attr->max_wr: the WQEs the SRQ must hold
 *	  (scire_srq_resize()); with IB_SRQ_LIMIT, attr->srq_limit: 0
 *	  disarms, 1..max_wr arms; the next time a QP leaves fewer WQEs
 *	  than that, IB_EVENT_SRQ_LIMIT_REACHED is raised once and the limit
 *	  disarmed.
 * @mask: IB_SRQ_MAX_WR and/or IB_SRQ_LIMIT; a resize comes first.
 * @udata: UHW request; scire defines none, so any bytes sent must be zero.
 *
 * A user SRQ is resized through SCIRE_METHOD_SRQ_RESIZE, whose response
 * says where the new ring is: MODIFY_SRQ has no response to say it in.
 *
 * Context: process context; takes the SRQ's lock with interrupts saved.
 * Return: 0; -EOPNOTSUPP for IB_SRQ_MAX_WR on a user SRQ; -EINVAL for
 * unknown mask bits, a limit above max_wr or a non-zero UHW request; the
 * errors of scire_srq_resize().
 */
int scire_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct scire_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int ret;

	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (udata)
			return -EOPNOTSUPP;
		ret = scire_srq_resize(srq, attr->max_wr, NULL);
		if (ret)
			return ret;
		attr->max_wr = srq->rq.num_entries;
	}

	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->rq.lock, flags);
		if (attr->srq_limit > srq->rq.num_entries) {
			spin_unlock_irqrestore(&srq->rq.lock, flags);
			return -EINVAL;
		}
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
 *	   item takes WQEs from it any more. An XRC SRQ has no QPs: XRC TGT
 *	   QPs find it by number for one run at a time; once its number no
 *	   longer resolves, the call waits for the runs holding it (a batch
 *	   of packets each, so not long) and for lookups under RCU.
 * @udata: unused.
 *
 * WQEs still posted are dropped without completions.
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int scire_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibsrq->device);
	struct scire_srq *srq = to_ssrq(ibsrq);

	xa_erase(&sdev->srq_xa, srq->srqn);
	if (ibsrq->srq_type == IB_SRQT_XRC) {
		if (!refcount_dec_and_test(&srq->users))
			wait_for_completion(&srq->gone);
		/* A lookup that found it before the erase reads the count. */
		synchronize_rcu();
		scire_cq_event_sync(to_scq(ibsrq->ext.cq));
	}
	scire_wq_free(&srq->rq);
	atomic_dec(&sdev->num_srq);
	return 0;
}

/**
 * scire_xsrq_get() - find the XRC SRQ an XRC request names (annex A19).
 * @sdev: the device the request arrived on.
 * @xrcd: the XRC domain of the XRC TGT QP that received it.
 * @srqn: the XRCETH's XRC SRQ number (24 bits).
 *
 * The SRQ must exist, be an XRC SRQ, and belong to @xrcd: a target QP
 * takes receive WQEs, and lends R_Keys the protection domain, of no other
 * domain's SRQ.
 *
 * Context: any; takes and drops the RCU read lock.
 * Return: the SRQ, held: scire_destroy_srq() waits for
 * scire_xsrq_put(); NULL if there is no such SRQ in @xrcd or it is being
 * destroyed.
 */
struct scire_srq *scire_xsrq_get(struct scire_dev *sdev,
				 const struct ib_xrcd *xrcd, u32 srqn)
{
	struct scire_srq *srq;

	rcu_read_lock();
	srq = xa_load(&sdev->srq_xa, srqn);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    srq->ibsrq.ext.xrc.xrcd != xrcd ||
		    !refcount_inc_not_zero(&srq->users)))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}

/**
 * scire_xsrq_put() - let go of an XRC SRQ from scire_xsrq_get().
 * @srq: the SRQ.
 *
 * Context: any.
 */
void scire_xsrq_put(struct scire_srq *srq)
{
	if (refcount_dec_and_test(&srq->users))
		complete(&srq->gone);
}

/**
 * scire_alloc_xrcd() - create an XRC domain (IBA annex A19).
 * @ibxrcd: the core-allocated domain; the core shares it between the
 *	    processes that open the same file (ibv_open_xrcd()).
 * @udata: unused; scire defines no UHW for it.
 *
 * Context: process context.
 * Return: 0.
 */
int scire_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

/**
 * scire_dealloc_xrcd() - destroy an XRC domain.
 * @ibxrcd: the domain; the core has checked that no SRQ or QP uses it.
 * @udata: unused.
 *
 * Context: process context.
 * Return: 0.
 */
int scire_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
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
