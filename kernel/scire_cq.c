// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: completion queues.
 *
 * A CQ is a struct scire_cq_ring. For a user CQ the ring is mapped into the
 * process, which polls and arms it without system calls; a kernel CQ uses
 * the same ring, polled through scire_poll_cq(). The kernel is the only
 * producer. It keeps its own producer index and treats the consumer index
 * and the arm word, which user space writes, as untrusted.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/cpumask.h>
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "scire.h"

/* CQE opcode -> ib_wc_opcode, one table (enum scire_cqe_opcode). */
static const enum ib_wc_opcode scire_wc_opcode[SCIRE_CQE_OP_MAX] = {
	[SCIRE_CQE_OP_SEND]		= IB_WC_SEND,
	[SCIRE_CQE_OP_RDMA_WRITE]	= IB_WC_RDMA_WRITE,
	[SCIRE_CQE_OP_RDMA_READ]	= IB_WC_RDMA_READ,
	[SCIRE_CQE_OP_COMP_SWAP]	= IB_WC_COMP_SWAP,
	[SCIRE_CQE_OP_FETCH_ADD]	= IB_WC_FETCH_ADD,
	[SCIRE_CQE_OP_LOCAL_INV]	= IB_WC_LOCAL_INV,
	[SCIRE_CQE_OP_REG_MR]		= IB_WC_REG_MR,
	[SCIRE_CQE_OP_BIND_MW]		= IB_WC_BIND_MW,
	[SCIRE_CQE_OP_RECV]		= IB_WC_RECV,
	/* SCIRE_CQE_OP_ATOMIC_WRITE, _FLUSH: user QPs post them, no kernel CQ sees them. */
	[SCIRE_CQE_OP_RECV_RDMA_IMM]	= IB_WC_RECV_RDMA_WITH_IMM,
};

static size_t scire_cq_ring_size(u32 num_entries)
{
	return offsetof(struct scire_cq_ring, cqe) +
	       (size_t)num_entries * sizeof(struct scire_cqe);
}

/*
 * Ring slots for a request of @cqe entries: a power of two, so indices can
 * run free and wrap at 2^32.
 */
static int scire_cq_num_entries(int cqe, u32 *num_entries)
{
	if (cqe < 1 || cqe > SCIRE_MAX_CQE)
		return -EINVAL;
	*num_entries = roundup_pow_of_two(cqe);
	return 0;
}

/*
 * Allocate a ring and, for a user CQ, its mmap entry. On success exactly one
 * of *mmap (user) or the returned ring (kernel) owns the memory.
 */
static struct scire_cq_ring *scire_cq_ring_alloc(struct ib_udata *udata,
						 u32 num_entries,
						 struct scire_mmap_entry **mmap)
{
	size_t size = scire_cq_ring_size(num_entries);
	struct scire_mmap_entry *entry;
	struct scire_ucontext *uctx;

	*mmap = NULL;
	if (!udata)
		return vmalloc_user(PAGE_ALIGN(size));

	uctx = rdma_udata_to_drv_context(udata, struct scire_ucontext, ibuc);
	entry = scire_mmap_alloc(&uctx->ibuc, size);
	if (IS_ERR(entry))
		return ERR_CAST(entry);
	*mmap = entry;
	return entry->addr;
}

static void scire_cq_ring_free(struct scire_cq_ring *ring,
			       struct scire_mmap_entry *mmap)
{
	if (mmap)
		scire_mmap_remove(mmap);
	else
		vfree(ring);
}

static noinline int scire_cq_respond(struct scire_cq *cq, struct ib_udata *udata)
{
	struct scire_create_cq_resp resp = {
		.mmap_offset = rdma_user_mmap_get_offset(&cq->mmap->rdma),
		.mmap_size = cq->mmap->rdma.npages << PAGE_SHIFT,
		.cqn = cq->cqn,
		.num_entries = cq->num_entries,
	};

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

ALLOW_ERROR_INJECTION(scire_cq_respond, ERRNO);

static bool scire_comp_vector_events = true;
module_param_named(comp_vector_events, scire_comp_vector_events, bool, 0644);
MODULE_PARM_DESC(comp_vector_events,
		 "Completion events of kernel CQs that the core polls from its workqueue (IB_POLL_WORKQUEUE) are raised on the CPU of the CQ's completion vector, as an RNIC's interrupt is (default Y; N: where the completion is made)");

/* The completion event of a kernel CQ, raised on its vector's CPU. */
static void scire_cq_event_ipi(void *info)
{
	struct scire_cq *cq = info;

	/* A CQE made from here on raises an event of its own. */
	atomic_set(&cq->event_queued, 0);
	/*
	 * Clear before the handler's consumer polls; pairs with the smp_mb()
	 * between a producer's CQE and its arm check (scire_cq_post()).
	 */
	smp_mb__after_atomic();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	/* Pairs with scire_cq_event_sync(): the CQ may be freed after. */
	atomic_dec_return_release(&cq->event_inflight);
}

/*
 * Raise the completion event of @cq, whose arm request a CQE just took
 * (IBA 11.4.2.2).
 *
 * An RNIC raises a kernel CQ's event on the CPU its completion vector's
 * interrupt is bound to, and ULPs spread their queues over the vectors to
 * spread their completion work over the CPUs. Where the core polls the
 * CQ from its per-CPU workqueue, that work runs where the event is
 * raised, and a context switch is paid wherever that is: such events go
 * to the vector's CPU (an IPI, hardirq context there), so a ULP's
 * completion work does not queue behind the task whose post made the
 * completion. Everything else (user CQs, softirq polling, a consumer's own
 * handler, the vector's own CPU, an offline one) is raised here, at once:
 * there the hop would cost more than it spreads. An event that is queued
 * for the vector's CPU and has not started yet covers this one.
 */
static void scire_cq_event(struct scire_cq *cq)
{
	int cpu = cq->event_cpu;

	if (cpu >= 0 && READ_ONCE(scire_comp_vector_events) &&
	    cq->ibcq.poll_ctx == IB_POLL_WORKQUEUE &&
	    cpu != raw_smp_processor_id() && cpu_online(cpu)) {
		if (atomic_cmpxchg(&cq->event_queued, 0, 1))
			return;
		atomic_inc(&cq->event_inflight);
		if (!smp_call_function_single_async(cpu, &cq->event_csd))
			return;
		atomic_set(&cq->event_queued, 0);
		atomic_dec(&cq->event_inflight);
	}
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * scire_cq_event_sync() - wait for a completion event on its way to @cq.
 * @cq: a CQ of a QP being destroyed.
 *
 * A kernel consumer frees its CQ as soon as the CQ's QPs are destroyed
 * (ib_free_cq() stops its own poller first); an event raised on another
 * CPU by one of their last completions must have run by then.
 *
 * Context: process context; may sleep.
 */
void scire_cq_event_sync(struct scire_cq *cq)
{
	while (atomic_read_acquire(&cq->event_inflight))
		cond_resched();
}

/**
 * scire_create_cq() - create a completion queue.
 * @ibcq: the core-allocated CQ.
 * @attr: requested entries (1..max_cqe), completion vector, and of the
 *	  flags IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION only (libibverbs sets it
 *	  for a CQ whose wc_flags ask for completion timestamps).
 * @uarg: the udata, or on kernels since 6.11 the attribute bundle holding
 *	  it (scire_compat.h). CREATE_CQ UHW: no request fields; the response
 *	  is struct scire_create_cq_resp. NULL for a kernel caller.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for a bad entry count, a non-zero UHW request or a
 * short response buffer; -EOPNOTSUPP for another creation flag; -ENOMEM.
 */
int scire_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct scire_cq_uarg *uarg)
{
	struct ib_udata *udata = scire_cq_udata(uarg);
	struct scire_dev *sdev = to_sdev(ibcq->device);
	struct scire_cq *cq = to_scq(ibcq);
	int ret;

	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	cq->timestamp = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	ret = scire_cq_num_entries(attr->cqe, &cq->num_entries);
	if (ret)
		return ret;
	if (atomic_inc_return(&sdev->num_cq) > SCIRE_MAX_CQ) {
		ret = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	atomic_set(&cq->event_queued, 0);
	atomic_set(&cq->event_inflight, 0);
	INIT_CSD(&cq->event_csd, scire_cq_event_ipi, cq);
	/* Completion vector v is the v-th online CPU (scire_cq_event()). */
	cq->event_cpu = udata ? -1 :
		cpumask_local_spread(attr->comp_vector, NUMA_NO_NODE);
	cq->ring = scire_cq_ring_alloc(udata, cq->num_entries, &cq->mmap);
	if (IS_ERR_OR_NULL(cq->ring)) {
		ret = cq->ring ? PTR_ERR(cq->ring) : -ENOMEM;
		cq->ring = NULL;
		goto err_count;
	}
	if (!udata) {
		cq->qps = kvcalloc(cq->num_entries, sizeof(*cq->qps),
				   GFP_KERNEL);
		if (!cq->qps) {
			ret = -ENOMEM;
			goto err_ring;
		}
	}

	ret = xa_alloc_cyclic(&sdev->cq_xa, &cq->cqn, cq, xa_limit_32b,
			      &sdev->cq_next, GFP_KERNEL);
	if (ret < 0)
		goto err_qps;

	if (udata) {
		ret = scire_cq_respond(cq, udata);
		if (ret)
			goto err_xa;
	}
	ibcq->cqe = cq->num_entries;
	return 0;

err_xa:
	xa_erase(&sdev->cq_xa, cq->cqn);
err_qps:
	kvfree(cq->qps);
err_ring:
	scire_cq_ring_free(cq->ring, cq->mmap);
err_count:
	atomic_dec(&sdev->num_cq);
	return ret;
}

/**
 * scire_destroy_cq() - destroy a completion queue.
 * @ibcq: the CQ; the core has checked that no QP uses it.
 * @udata: unused.
 *
 * A user mapping of the ring stays valid until unmapped; it just receives
 * nothing more.
 *
 * Return: 0.
 */
int scire_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibcq->device);
	struct scire_cq *cq = to_scq(ibcq);

	xa_erase(&sdev->cq_xa, cq->cqn);
	scire_cq_event_sync(cq);
	kvfree(cq->qps);
	scire_cq_ring_free(cq->ring, cq->mmap);
	atomic_dec(&sdev->num_cq);
	return 0;
}

/*
 * Entries waiting in @cq's ring, from the consumer index it holds. A user
 * ring's consumer index is whatever the process wrote: a value that does not
 * lie within the last num_entries produced is a corrupt ring.
 */
static int scire_cq_pending(struct scire_cq *cq, u32 *consumer)
{
	/* Pairs with the consumer's store-release of ring->consumer. */
	u32 cons = smp_load_acquire(&cq->ring->consumer);
	u32 pending = cq->producer - cons;

	if (pending > cq->num_entries)
		return -EINVAL;
	*consumer = cons;
	return pending;
}

/**
 * scire_resize_cq() - change the number of entries of a CQ.
 * @ibcq: the CQ.
 * @cqe: requested entries (1..max_cqe).
 * @udata: RESIZE_CQ UHW: no request fields; the response is
 *	   struct scire_create_cq_resp for the new ring. NULL for a kernel
 *	   caller.
 *
 * Unconsumed CQEs move to the new ring in order and keep their indices, and
 * the arm state moves with them. The caller (the provider, under its CQ lock)
 * does not poll during the call.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for a bad count, fewer entries than are pending, a
 * corrupt consumer index, a non-zero UHW request or a short response
 * buffer; -ENOMEM.
 */
int scire_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct scire_cq *cq = to_scq(ibcq);
	struct scire_mmap_entry *new_mmap, *old_mmap;
	struct scire_cq_ring *new_ring, *old_ring;
	struct ib_qp **new_qps = NULL, **old_qps;
	u32 num_entries, cons, i, old_mask, new_mask;
	int pending, ret;

	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	ret = scire_cq_num_entries(cqe, &num_entries);
	if (ret)
		return ret;
	if (udata && udata->outlen < sizeof(struct scire_create_cq_resp))
		return -EINVAL;

	new_ring = scire_cq_ring_alloc(udata, num_entries, &new_mmap);
	if (IS_ERR_OR_NULL(new_ring))
		return new_ring ? PTR_ERR(new_ring) : -ENOMEM;
	if (!udata) {
		new_qps = kvcalloc(num_entries, sizeof(*new_qps), GFP_KERNEL);
		if (!new_qps) {
			ret = -ENOMEM;
			goto err_ring;
		}
	}

	spin_lock_irq(&cq->lock);
	pending = scire_cq_pending(cq, &cons);
	if (pending < 0 || pending > num_entries) {
		spin_unlock_irq(&cq->lock);
		ret = -EINVAL;
		goto err_qps;
	}
	old_mask = cq->num_entries - 1;
	new_mask = num_entries - 1;
	for (i = cons; i != cq->producer; i++) {
		new_ring->cqe[i & new_mask] = cq->ring->cqe[i & old_mask];
		if (new_qps)
			new_qps[i & new_mask] = cq->qps[i & old_mask];
	}
	new_ring->consumer = cons;
	new_ring->producer = cq->producer;
	new_ring->arm = xchg(&cq->ring->arm, 0);
	new_ring->flags = READ_ONCE(cq->ring->flags);

	old_ring = cq->ring;
	old_mmap = cq->mmap;
	old_qps = cq->qps;
	cq->ring = new_ring;
	cq->mmap = new_mmap;
	cq->qps = new_qps;
	cq->num_entries = num_entries;
	spin_unlock_irq(&cq->lock);

	kvfree(old_qps);
	scire_cq_ring_free(old_ring, old_mmap);
	ibcq->cqe = num_entries;
	if (udata)
		return scire_cq_respond(cq, udata);
	return 0;

err_qps:
	kvfree(new_qps);
err_ring:
	scire_cq_ring_free(new_ring, new_mmap);
	return ret;
}

/**
 * scire_cq_post() - add a completion to a CQ and raise its event if armed.
 * @cq: the CQ.
 * @cqe: the completion; copied into the ring.
 * @qp: the QP it belongs to (reported as ib_wc.qp on kernel CQs).
 * @solicited: the completion satisfies a solicited-only arm request (a
 *	       receive with the SE bit, or any error completion; IBA 11.4.2.2).
 *
 * A full ring is a CQ overrun (IBA 11.4.2.1, C11-32): the CQE is dropped,
 * the ring is flagged SCIRE_CQ_F_OVERFLOW and IB_EVENT_CQ_ERR is raised,
 * once; the CQ then stays in error and drops every later CQE, so a process
 * cannot turn overruns into an unbounded stream of events.
 *
 * The completion event of a kernel CQ polled from the core's workqueue is
 * raised on the CPU of its completion vector, in hardirq context when
 * that is not this CPU; every other event calls the comp_handler here
 * (scire_cq_event()).
 *
 * Context: any; takes cq->lock with interrupts saved.
 * Return: 0, or -ENOSPC on overrun (also for a corrupt user consumer index).
 */
int scire_cq_post(struct scire_cq *cq, const struct scire_cqe *cqe,
		  struct ib_qp *qp, bool solicited)
{
	u32 slot, cons, arm;
	unsigned long flags;
	int pending;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflowed) {
		/* One event per overrun: later losses are not news. */
		spin_unlock_irqrestore(&cq->lock, flags);
		return -ENOSPC;
	}
	pending = scire_cq_pending(cq, &cons);
	if (pending < 0 || pending == cq->num_entries) {
		cq->overflowed = true;
		WRITE_ONCE(cq->ring->flags,
			   READ_ONCE(cq->ring->flags) | SCIRE_CQ_F_OVERFLOW);
		spin_unlock_irqrestore(&cq->lock, flags);
		if (cq->ibcq.event_handler) {
			struct ib_event ev = {
				.device = cq->ibcq.device,
				.element.cq = &cq->ibcq,
				.event = IB_EVENT_CQ_ERR,
			};

			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -ENOSPC;
	}

	slot = cq->producer & (cq->num_entries - 1);
	cq->ring->cqe[slot] = *cqe;
	/* The device clock is CLOCK_MONOTONIC in ns (hca_core_clock 1 GHz). */
	if (cq->timestamp)
		cq->ring->cqe[slot].timestamp = ktime_get_ns();
	if (cq->qps)
		cq->qps[slot] = qp;
	cq->producer++;
	/* Pairs with the consumer's load-acquire of ring->producer. */
	smp_store_release(&cq->ring->producer, cq->producer);

	/*
	 * Order the producer store before reading the arm word, so a consumer
	 * that arms and then polls either sees this CQE or gets the event.
	 */
	smp_mb();
	arm = READ_ONCE(cq->ring->arm);
	if ((arm & SCIRE_CQ_ARM_NEXT) ||
	    ((arm & SCIRE_CQ_ARM_SOLICITED) && solicited))
		arm = xchg(&cq->ring->arm, 0);
	else
		arm = 0;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (arm && cq->ibcq.comp_handler)
		scire_cq_event(cq);
	return 0;
}

/* A CQE's network_hdr_type is an enum rdma_network_type (scire-abi.h). */
static_assert((int)SCIRE_CQE_NET_IB == (int)RDMA_NETWORK_IB);
static_assert((int)SCIRE_CQE_NET_ROCE_V1 == (int)RDMA_NETWORK_ROCE_V1);
static_assert((int)SCIRE_CQE_NET_IPV4 == (int)RDMA_NETWORK_IPV4);
static_assert((int)SCIRE_CQE_NET_IPV6 == (int)RDMA_NETWORK_IPV6);

/*
 * wc->sl stays the service level (0 on RoCE): kernel consumers have
 * network_hdr_type, as mlx5's kernel driver reports it. Only the provider
 * puts the header type in sl, where ibv_wc has no other field for it.
 */
static void scire_cqe_to_wc(const struct scire_cqe *cqe, struct ib_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status < SCIRE_CQE_STATUS_MAX ?
		cqe->status : IB_WC_GENERAL_ERR;
	wc->opcode = cqe->opcode < SCIRE_CQE_OP_MAX ?
		scire_wc_opcode[cqe->opcode] : IB_WC_SEND;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->wc_flags = 0;
	/* The MAD layer and ib_cm build reply AHs from the GRH's type. */
	if (cqe->flags & SCIRE_CQE_F_GRH)
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	if (cqe->flags & SCIRE_CQE_F_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = (__force __be32)cqe->imm_data;
	} else if (cqe->flags & SCIRE_CQE_F_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->imm_data;
	}
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->network_hdr_type = cqe->network_hdr_type;
	wc->port_num = 1;
}

/**
 * scire_poll_cq() - take completions from a kernel CQ.
 * @ibcq: a CQ created by a kernel consumer.
 * @num_entries: room in @wc.
 * @wc: filled with up to @num_entries completions, oldest first.
 *
 * Context: any; takes the CQ lock with interrupts saved.
 * Return: the number of completions taken (0 when empty).
 */
int scire_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct scire_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int pending, n;
	u32 cons, slot;

	spin_lock_irqsave(&cq->lock, flags);
	/* A kernel ring is not shared: the consumer index is ours. */
	pending = scire_cq_pending(cq, &cons);
	for (n = 0; n < num_entries && n < pending; n++, cons++) {
		slot = cons & (cq->num_entries - 1);
		scire_cqe_to_wc(&cq->ring->cqe[slot], &wc[n]);
		wc[n].qp = cq->qps[slot];
	}
	/* Pairs with the producer's load-acquire in scire_cq_pending(). */
	smp_store_release(&cq->ring->consumer, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * scire_req_notify_cq() - arm a kernel CQ.
 * @ibcq: the CQ.
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, optionally with
 *	   IB_CQ_REPORT_MISSED_EVENTS.
 *
 * User CQs are armed by the provider in the shared ring, without a system
 * call; this is the same operation for kernel consumers.
 *
 * Context: any.
 * Return: 0, or 1 with IB_CQ_REPORT_MISSED_EVENTS when completions are
 * already waiting (the caller must poll again).
 */
int scire_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct scire_cq *cq = to_scq(ibcq);
	u32 arm = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		SCIRE_CQ_ARM_SOLICITED : SCIRE_CQ_ARM_NEXT;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	WRITE_ONCE(cq->ring->arm, READ_ONCE(cq->ring->arm) | arm);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->producer != READ_ONCE(cq->ring->consumer))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
