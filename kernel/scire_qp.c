// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: queue pairs. Creation, the QP state machine (IBA 10.3, 11.2.4),
 * the SQ/RQ rings and their kernel post paths, and the QP's one execution
 * context, the work item that runs responder, completer and requester.
 *
 * Locks, outermost first:
 *  - qp->mutex serialises the verbs that read or change a QP's attributes
 *    and state (modify_qp, query_qp, destroy_qp). Process context.
 *  - qp->work_mutex is held by the work item for each run, and by
 *    modify_qp while it changes what the data path reads or starts the
 *    requester/responder, so one run sees one set of attributes.
 *    Process context.
 *  - bit 0 of qp->exec, the execution context proper: taken after
 *    work_mutex by its holders, and alone (trylock only) by the softirq
 *    that receives a wire packet for the QP and runs it there.
 *  - qp->state_lock (irqsave) orders state changes between modify_qp and
 *    scire_qp_error(), which the data path calls from any context.
 *  - wq->lock (irqsave): kernel posters of a kernel SQ/RQ/SRQ ring; for an
 *    SRQ also the QPs taking WQEs from it.
 *  - qp->rxq.lock (irqsave): received packets waiting for the work item.
 *
 * No work is left behind (no lost wake-up). Work is a packet on qp->rxq, a
 * pending bit (RETRANSMIT, RNR, FLUSH_RQ), new SQ WQEs, or a state change;
 * whoever adds it makes it visible first, then either runs the QP or sets
 * SCIRE_QP_P_KICK. A run clears KICK right after it has taken the context
 * (full barrier), then looks at every kind of work. So either the run saw
 * the work, or the KICK set after it is still set when the run ends.
 * Every holder of the context tests KICK after letting go of it (full
 * barrier after the unlock) and runs again or queues the work item:
 * scire_qp_run() (its callers scire_qp_run_again() and scire_qp_run_all()
 * rerun or kick), scire_qp_transition() and scire_qp_direct_unlock();
 * scire_qp_reset() and scire_qp_stop() leave a QP in RESET, which has no
 * work. Whoever sets KICK queues the work item (scire_qp_kick()) or tries
 * to take the context after it (full barrier between), and only gives up
 * if the context is still held, i.e. by a holder whose test of KICK is
 * still to come. A process-context run that takes work_mutex but finds
 * the bit held lets go of the mutex and sets KICK like any other loser.
 * A softirq run hands a QP it must not run (not RTR, RTS or SQD, nesting
 * too deep, short of memory) to the work item, which runs it in process
 * context. A kernel QP's post_send runs it as a softirq run does, BHs
 * off, where the poster's context allows (scire_qp_post_run()).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/vmalloc.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include <linux/sched/mm.h>

#include "scire.h"
#include "scire_trace.h"

/* Received packets a QP may have waiting; more are dropped (retransmitted). */
#define SCIRE_QP_RXQ_MAX	4096
/* Packets one run of the work item handles before it requeues itself. */
#define SCIRE_QP_RX_BUDGET	64
/*
 * Runs one caller without a run set makes when work was left to it during
 * the last (a reply its own request drew), before it hands over to the
 * work item (scire_qp_run_again()).
 */
#define SCIRE_QP_RUN_AGAIN	3
/*
 * Softirq runs one CPU may have nested (a run whose packet goes through
 * the loopback to a second free QP runs that one too, but no deeper).
 */
#define SCIRE_QP_BH_DEPTH	2

/* Bit of qp->exec. */
#define SCIRE_QP_EXEC		0

/* QPNs of RC/UC/UD QPs: 0 and 1 are the special QPs (SMI, GSI). */
#define SCIRE_QPN_SMI		0
#define SCIRE_QPN_GSI		1
#define SCIRE_QPN_MIN		2
#define SCIRE_QPN_MAX		SCIRE_QPN_MASK

/* UDP source ports come from the dynamic range 0xc000..0xffff. */
#define SCIRE_SRC_PORT_BASE	0xc000
#define SCIRE_SRC_PORT_BITS	14

/* Field limits of Modify QP (IBA 11.2.4.2). */
#define SCIRE_TIMEOUT_MAX	31	/* 5-bit local ACK timeout code */
#define SCIRE_RETRY_MAX		7	/* 3-bit retry and RNR retry counts */
#define SCIRE_RNR_TIMER_MAX	31	/* 5-bit RNR NAK timer code */

/*
 * Responder access rights a QP may grant (the FLUSH ones: scire_compat.h).
 * IB_ACCESS_ON_DEMAND is taken and means nothing for a QP (the MR decides,
 * as on mlx5): rdma-core's ODP tests hand the MR's flags to the QP too.
 */
#define SCIRE_QP_ACCESS		(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_ON_DEMAND | SCIRE_ACCESS_FLUSH)

/* Send flags a kernel send WR may carry. */
#define SCIRE_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

static void scire_qp_work(struct work_struct *work);
static void scire_qp_run_all(struct scire_qp *qp, bool doorbell);
static bool scire_qp_run(struct scire_qp *qp, bool doorbell,
			 struct scire_runset *rs, bool bh);
static void scire_qp_run_again(struct scire_qp *qp, bool doorbell, bool bh);

/* Softirq runs in progress on this CPU (scire_qp_run_bh()). */
static DEFINE_PER_CPU(unsigned int, scire_qp_bh_depth);

/* Take the execution context if it is free, as a softirq run does. */
static bool scire_qp_exec_trylock(struct scire_qp *qp)
{
	return !test_and_set_bit_lock(SCIRE_QP_EXEC, &qp->exec);
}

/*
 * Take the execution context with work_mutex held, for a change of the
 * QP's attributes or state, which must not be left to anyone. Any other
 * holder is a softirq run on another CPU (softirq runs never spin on it,
 * so none can be waiting under us on this one), which never sleeps and
 * ends after one budget. Runs do not wait: they hand the work over.
 */
static void scire_qp_exec_lock(struct scire_qp *qp)
{
	lockdep_assert_held(&qp->work_mutex);
	while (!scire_qp_exec_trylock(qp))
		cpu_relax();
}

static void scire_qp_exec_unlock(struct scire_qp *qp)
{
	clear_bit_unlock(SCIRE_QP_EXEC, &qp->exec);
}

/*
 * Take @qp's execution context for a run: work_mutex and the exec bit in
 * process context, the exec bit alone in a softirq run (@bh).
 */
static bool scire_qp_run_lock(struct scire_qp *qp, bool bh)
{
	if (bh)
		return scire_qp_exec_trylock(qp);
	if (!mutex_trylock(&qp->work_mutex))
		return false;
	if (scire_qp_exec_trylock(qp))
		return true;
	mutex_unlock(&qp->work_mutex);
	return false;
}

static void scire_qp_run_unlock(struct scire_qp *qp, bool bh)
{
	scire_qp_exec_unlock(qp);
	if (!bh)
		mutex_unlock(&qp->work_mutex);
}

/* The states a softirq run handles; it hands the others to the work item. */
static bool scire_qp_bh_state(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD;
}

/*
 * May a softirq run (or a direct request with BHs off) take @qp in
 * @state? Not while its PD has ODP MRs: reaching their pages may fault
 * them in, which sleeps (kernel/scire_odp.c); the work item runs it.
 */
static bool scire_qp_bh_ok(struct scire_qp *qp, enum ib_qp_state state)
{
	/* An XRC target learns its PD (an XRC SRQ's) from each request. */
	if (!qp->ibqp.pd)
		return false;
	return scire_qp_bh_state(state) &&
	       !atomic_read(&to_spd(qp->ibqp.pd)->num_odp_mr);
}

/* Bytes of a ring mapping: the head, then num_entries slots. */
static size_t scire_wq_ring_size(const struct scire_wq *wq)
{
	return SCIRE_WQ_RING_HDR_SIZE + (size_t)wq->num_entries * wq->wqe_size;
}

/*
 * Shape an SQ for at least @max_wr WQEs of @max_sge SGEs or @max_inline
 * bytes (bounded by the caller). The slot is a power of two; its rounding
 * slack is usable, so max_sge/max_inline report what a slot really holds.
 */
static void scire_sq_shape(struct scire_wq *wq, u32 max_wr, u32 max_sge,
			   u32 max_inline)
{
	u32 data = max_t(u32, max_sge * sizeof(struct scire_sge), max_inline);
	u32 room;

	wq->num_entries = roundup_pow_of_two(max(max_wr, 1U));
	wq->wqe_size = roundup_pow_of_two(sizeof(struct scire_send_wqe) + data);
	room = wq->wqe_size - sizeof(struct scire_send_wqe);
	wq->max_sge = min_t(u32, room / sizeof(struct scire_sge), SCIRE_MAX_SGE);
	wq->max_inline = min_t(u32, room, SCIRE_MAX_INLINE);
}

/**
 * scire_rq_shape() - size an RQ or SRQ ring.
 * @wq: the queue; num_entries, wqe_size and max_sge are set.
 * @max_wr: WQEs wanted, 0..SCIRE_MAX_QP_WR (or SCIRE_MAX_SRQ_WR); rounded
 *	    up to a power of two (at least 1).
 * @max_sge: SGEs per WQE wanted, 0..SCIRE_MAX_SGE; the slot is a power of
 *	     two and max_sge grows to what it holds (at most SCIRE_MAX_SGE).
 *
 * Context: any.
 */
void scire_rq_shape(struct scire_wq *wq, u32 max_wr, u32 max_sge)
{
	u32 room;

	wq->num_entries = roundup_pow_of_two(max(max_wr, 1U));
	wq->wqe_size = roundup_pow_of_two(sizeof(struct scire_recv_wqe) +
					  max_sge * sizeof(struct scire_sge));
	room = wq->wqe_size - sizeof(struct scire_recv_wqe);
	wq->max_sge = min_t(u32, room / sizeof(struct scire_sge), SCIRE_MAX_SGE);
	wq->max_inline = 0;
}

/**
 * scire_wq_alloc() - allocate the ring of a shaped work queue.
 * @wq: the queue, shaped by scire_rq_shape() (or the SQ's shaping).
 * @udata: the creating verb's udata for a user queue (the ring is then
 *	   mmap-able memory of the caller's context), NULL for a kernel one.
 *
 * The ring starts zeroed: indices 0, no flags.
 *
 * Context: process context, may sleep.
 * Return: 0, -ENOMEM, or an error of rdma_user_mmap_entry_insert().
 */
int scire_wq_alloc(struct scire_wq *wq, struct ib_udata *udata)
{
	size_t size = scire_wq_ring_size(wq);
	struct scire_mmap_entry *entry;
	struct scire_ucontext *uctx;

	spin_lock_init(&wq->lock);
	wq->consumer = 0;
	wq->mmap = NULL;
	if (!udata) {
		wq->ring = vzalloc(size);
		return wq->ring ? 0 : -ENOMEM;
	}

	uctx = rdma_udata_to_drv_context(udata, struct scire_ucontext, ibuc);
	entry = scire_mmap_alloc(&uctx->ibuc, size);
	if (IS_ERR(entry)) {
		wq->ring = NULL;
		return PTR_ERR(entry);
	}
	wq->mmap = entry;
	wq->ring = entry->addr;
	return 0;
}

ALLOW_ERROR_INJECTION(scire_wq_alloc, ERRNO);

/**
 * scire_wq_free() - release the ring of a work queue.
 * @wq: the queue; may have no ring (an RQ replaced by an SRQ).
 *
 * A user ring stays mapped in the process until it unmaps it; the kernel
 * no longer looks at it.
 *
 * Context: process context.
 */
void scire_wq_free(struct scire_wq *wq)
{
	if (wq->mmap)
		scire_mmap_remove(wq->mmap);
	else
		vfree(wq->ring);
	wq->mmap = NULL;
	wq->ring = NULL;
}

static void scire_wq_set_error(struct scire_wq *wq)
{
	if (wq->ring)
		WRITE_ONCE(wq->ring->flags,
			   READ_ONCE(wq->ring->flags) | SCIRE_WQ_F_ERROR);
}

/*
 * Back to the indices of a new queue. A user producer is the process's to
 * reset; a kernel ring's producer is ours.
 */
static void scire_wq_reset(struct scire_wq *wq)
{
	unsigned long flags;

	if (!wq->ring)
		return;
	spin_lock_irqsave(&wq->lock, flags);
	wq->consumer = 0;
	WRITE_ONCE(wq->ring->consumer, 0);
	if (!wq->mmap)
		WRITE_ONCE(wq->ring->producer, 0);
	WRITE_ONCE(wq->ring->flags,
		   READ_ONCE(wq->ring->flags) & ~SCIRE_WQ_F_ERROR);
	spin_unlock_irqrestore(&wq->lock, flags);
}

static void scire_qp_event(struct scire_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * Publish @new as the QP's state; a change is traced. Caller holds
 * state_lock.
 */
static void scire_qp_set_state(struct scire_qp *qp, enum ib_qp_state new)
{
	lockdep_assert_held(&qp->state_lock);
	if (qp->state != new)
		trace_scire_qp_state(qp, qp->state, new);
	WRITE_ONCE(qp->state, new);
}

/* Enter ERR. Caller holds state_lock and kicks the worker afterwards. */
static void scire_qp_enter_err(struct scire_qp *qp)
{
	lockdep_assert_held(&qp->state_lock);
	scire_qp_set_state(qp, IB_QPS_ERR);
	qp->sq_draining = false;
	scire_wq_set_error(&qp->sq);
	if (!qp->srq)
		scire_wq_set_error(&qp->rq);
}

/**
 * scire_qp_kick() - make the QP's work item run.
 * @qp: the QP.
 *
 * Several kicks before the work item runs make one run. It runs on this
 * CPU (scire_wq is per CPU), unless it is pending or running elsewhere
 * already, so packets it sends follow those sent here.
 *
 * Context: any.
 */
void scire_qp_kick(struct scire_qp *qp)
{
	/* Seen by a run in progress when it ends (scire_qp_run()). */
	set_bit(SCIRE_QP_P_KICK, &qp->pending);
	queue_work(scire_wq, &qp->work);
}

/**
 * scire_qp_direct_lock() - take a peer QP's execution context for a direct
 * request, if it is free.
 * @qp: the peer QP, held.
 * @atomic: the caller's run is a softirq run, or a kernel poster's run with
 *	BHs off (scire_qp_post_run()): it may not sleep.
 *
 * Only tries: the caller holds its own QP's context, and the peer may be
 * trying the same towards it. From process context the peer's work_mutex
 * is taken too, and while it is held a doorbell on @qp waits for it, as
 * behind another QP's inline run (scire_qp_run()), instead of leaving its
 * WQEs to the work item. With @atomic only the exec bit is taken, as a
 * softirq run of @qp takes it, and only in the states a softirq run
 * handles (RTR, RTS, SQD); @qp then runs as a softirq run would
 * (run_atomic: allocations do not sleep). On success, release with
 * scire_qp_direct_unlock() and the same @atomic.
 *
 * Context: process context; BHs off if @atomic.
 * Return: true if taken; false if a run of @qp is in progress (or, with
 * @atomic, @qp is in a state only its work item handles).
 */
bool scire_qp_direct_lock(struct scire_qp *qp, bool atomic)
{
	if (!scire_qp_run_lock(qp, atomic))
		return false;
	if (!atomic) {
		WRITE_ONCE(qp->run_for_peer, true);
		return true;
	}
	/* Under the bit, only a move to ERR can still happen. */
	if (!scire_qp_bh_ok(qp, READ_ONCE(qp->state))) {
		scire_qp_direct_unlock(qp, true);
		return false;
	}
	qp->run_atomic = true;
	return true;
}

/**
 * scire_qp_direct_unlock() - release what scire_qp_direct_lock() took.
 * @qp: the peer QP.
 * @atomic: as given to scire_qp_direct_lock().
 *
 * A run that found the context taken meanwhile left its work to the
 * holder (scire_qp_run()): that is handed to the work item now.
 *
 * Context: as for scire_qp_direct_lock().
 */
void scire_qp_direct_unlock(struct scire_qp *qp, bool atomic)
{
	if (atomic)
		qp->run_atomic = false;
	else
		WRITE_ONCE(qp->run_for_peer, false);
	scire_qp_run_unlock(qp, atomic);
	/* Unlock before the look: pairs with scire_qp_run()'s barrier. */
	smp_mb();
	if (test_bit(SCIRE_QP_P_KICK, &qp->pending))
		queue_work(scire_wq, &qp->work);
}

/**
 * scire_qp_error() - move a QP to the Error state (IBA 10.3).
 * @qp: the QP.
 *
 * Sets SCIRE_WQ_F_ERROR on the SQ and RQ rings and kicks the work item,
 * which flushes every outstanding WQE with IB_WC_WR_FLUSH_ERR. A QP in
 * RESET stays there (nothing runs on it); one already in ERR is kicked
 * again, so WQEs posted since the last flush are flushed too.
 *
 * Context: any, including the QP's work item; takes state_lock with
 * interrupts saved.
 */
void scire_qp_error(struct scire_qp *qp)
{
	enum ib_qp_state state;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	state = qp->state;
	if (state != IB_QPS_RESET && state != IB_QPS_ERR)
		scire_qp_enter_err(qp);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (state != IB_QPS_RESET)
		scire_qp_kick(qp);
}

/**
 * scire_qp_sq_error() - move a UD or UC QP to Send Queue Error (IBA
 * 10.3.1.5).
 * @qp: the QP, whose SQ just completed a WQE in error.
 *
 * Receiving goes on; the work item flushes the SQ, now and whenever more
 * is posted, until modify_qp returns the QP to RTS. From a state other
 * than RTS or SQD (ERR, RESET, or a move in progress) nothing changes.
 *
 * Context: the QP's work item; takes state_lock with interrupts saved.
 */
void scire_qp_sq_error(struct scire_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) {
		scire_qp_set_state(qp, IB_QPS_SQE);
		qp->sq_draining = false;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	scire_qp_kick(qp);
}

/**
 * scire_qp_sq_drained() - the requester has nothing outstanding in SQD.
 * @qp: the QP.
 *
 * Ends the draining phase of SQD (IBA 10.3: attributes may change only
 * once drained) and, if the transition to SQD asked for it
 * (en_sqd_async_notify), raises IB_EVENT_SQ_DRAINED (IBA 11.6.3) once.
 * Calls outside SQD, or after the first, do nothing.
 *
 * Context: the QP's work item (process context); takes state_lock.
 */
void scire_qp_sq_drained(struct scire_qp *qp)
{
	unsigned long flags;
	bool notify = false;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == IB_QPS_SQD && qp->sq_draining) {
		qp->sq_draining = false;
		notify = qp->sqd_notify;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (notify)
		scire_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/**
 * scire_qp_get() - look up and hold a QP by number.
 * @sdev: the device.
 * @qpn: QP number from a BTH (24 bits).
 *
 * Context: any (RCU and the QP's reference count).
 * Return: the QP, held (release with scire_qp_put()), or NULL if no live,
 * fully created QP has this number.
 */
struct scire_qp *scire_qp_get(struct scire_dev *sdev, u32 qpn)
{
	struct scire_qp_ref *ref;
	struct scire_qp *qp = NULL;

	rcu_read_lock();
	ref = xa_load(&sdev->qp_xa, qpn);
	if (ref && refcount_inc_not_zero(&ref->count))
		qp = ref->qp;
	rcu_read_unlock();
	return qp;
}

/**
 * scire_qp_put() - release a reference taken by scire_qp_get().
 * @qp: the QP.
 *
 * Context: any.
 */
void scire_qp_put(struct scire_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref->count))
		complete(&qp->released);
}

/*
 * Add @qp to the QPs @rs runs next, held, unless it is there already.
 * Return: false if @rs is full (the caller kicks the work item instead).
 */
static bool scire_runset_add(struct scire_runset *rs, struct scire_qp *qp)
{
	unsigned int i;

	for (i = rs->head; i != rs->tail; i++)
		if (rs->qp[i % SCIRE_RUNSET_SIZE] == qp)
			return true;
	if (rs->tail - rs->head >= SCIRE_RUNSET_SIZE ||
	    !refcount_inc_not_zero(&qp->ref->count))
		return false;
	rs->qp[rs->tail++ % SCIRE_RUNSET_SIZE] = qp;
	return true;
}

/*
 * Run @qp now, in the softirq (or loopback, BHs disabled) that received a
 * wire packet for it, if its execution context is free: the packet is
 * handled, and its ACK or the response sent, without waking the work item
 * and without waiting for a CPU the application may keep busy polling. If
 * a run is in progress it takes the packet (scire_qp_run()). Nested runs
 * (a softirq run's loopback packet to another QP) stop at
 * SCIRE_QP_BH_DEPTH, so the stack stays bounded; deeper ones kick.
 */
static void scire_qp_run_bh(struct scire_qp *qp)
{
	unsigned int *depth = this_cpu_ptr(&scire_qp_bh_depth);

	if (*depth >= SCIRE_QP_BH_DEPTH) {
		/*
		 * Too deep to run it here. A run in progress takes the work
		 * when it ends: most often that run is further up this very
		 * stack (a kernel QP's request, its same-host peer's ACK), and
		 * a work item woken for it would find nothing left. Only a
		 * free QP needs its work item (the rule at the top).
		 */
		set_bit(SCIRE_QP_P_KICK, &qp->pending);
		/* Bit before the look: pairs with smp_mb() in scire_qp_run(). */
		smp_mb__after_atomic();
		if (!test_bit(SCIRE_QP_EXEC, &qp->exec))
			scire_qp_kick(qp);
		return;
	}
	(*depth)++;
	scire_qp_run_again(qp, false, true);
	(*depth)--;
}

/*
 * Run a kernel QP whose SQ was just posted to (scire_post_send()). Kernel
 * posters may be in any context: where softirqs could run (not in a
 * hardirq or NMI, interrupts on) the QP runs here as a softirq run would,
 * BHs off (scire_qp_run_bh()), so what was posted goes out, and a
 * same-host peer answers, without waking the work item; that is the hop
 * rxe's kernel QPs avoid with a tasklet. A CQ event it raises calls the
 * CQ's comp_handler here, as a softirq run's would. Anywhere else, and
 * for whatever the run leaves, the work item runs it.
 */
static void scire_qp_post_run(struct scire_qp *qp)
{
	if (in_hardirq() || in_nmi() || irqs_disabled()) {
		scire_qp_kick(qp);
		return;
	}
	local_bh_disable();
	scire_qp_run_bh(qp);
	local_bh_enable();
}

/**
 * scire_qp_rcv() - hand a received packet to the QP's execution context.
 * @qp: the destination QP, held by the caller.
 * @skb: the packet, parsed into scire_pkt(skb); always consumed.
 * @rs: for a packet sent from this host by a QP run with the fast path
 *	on (a same-host unit, or a wire packet that came back through the
 *	softirq of the sender's ip_local_out(), as over a veth pair), that
 *	run's run set: @qp then runs right after it, in the same context,
 *	instead of in its work item (NULL: see @bh).
 * @bh: the caller runs with BHs disabled (a wire packet's softirq, or the
 *	loopback): without @rs, @qp runs here at once if its execution
 *	context is free. Otherwise the work item is kicked.
 *
 * A QP in RESET, INIT or ERR discards incoming packets (IBA 10.3), and so
 * does one with SCIRE_QP_RXQ_MAX packets already waiting: the sender
 * recovers by retransmission.
 *
 * Context: any (softirq on receive); takes rxq.lock with interrupts saved.
 * BHs disabled if @bh. @rs is only valid in the task that runs the
 * sending QP, or in a softirq running on that task's CPU while it waits
 * in ip_local_out().
 */
void scire_qp_rcv(struct scire_qp *qp, struct sk_buff *skb,
		  struct scire_runset *rs, bool bh)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	bool queued = false;

	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_ERR) {
		kfree_skb(skb);
		return;
	}

	spin_lock_irqsave(&qp->rxq.lock, flags);
	if (skb_queue_len(&qp->rxq) < SCIRE_QP_RXQ_MAX) {
		__skb_queue_tail(&qp->rxq, skb);
		queued = true;
	}
	spin_unlock_irqrestore(&qp->rxq.lock, flags);

	if (!queued) {
		scire_net_drop(qp->sdev, skb, SCIRE_DROP_RXQ_FULL);
		return;
	}
	if (rs && scire_runset_add(rs, qp))
		return;
	if (bh && !rs)
		scire_qp_run_bh(qp);
	else
		scire_qp_kick(qp);
}

/**
 * scire_qp_doorbell() - user space posted to a QP's rings.
 * @qp: a user QP.
 * @flags: enum scire_doorbell_flags. SCIRE_DOORBELL_SQ: new SQ WQEs; the
 *	   requester runs at once in the caller's context (in RTS/SQD) or
 *	   they are flushed (ERR, SQE), unless the QP's work item is busy
 *	   with the QP, which then does it; with the fast path, so do the
 *	   same-host QPs it sends to (scire_qp_run_all()). So a datagram,
 *	   or anything a peer answers in time, has often completed when this
 *	   returns.
 *	   SCIRE_DOORBELL_RQ: new RQ WQEs; in ERR they are flushed, in other
 *	   states they wait for incoming messages and need no doorbell.
 *
 * Context: process context (the SCIRE_METHOD_QP_DOORBELL handler).
 * Return: 0, or -EINVAL for unknown flag bits or an RQ doorbell on a QP
 * whose receives come from an SRQ.
 */
int scire_qp_doorbell(struct scire_qp *qp, u32 flags)
{
	if (flags & ~(SCIRE_DOORBELL_SQ | SCIRE_DOORBELL_RQ))
		return -EINVAL;
	if ((flags & SCIRE_DOORBELL_RQ) && (qp->srq || scire_qp_is_xrc(qp)))
		return -EINVAL;

	if ((flags & SCIRE_DOORBELL_RQ) &&
	    READ_ONCE(qp->state) == IB_QPS_ERR) {
		set_bit(SCIRE_QP_P_FLUSH_RQ, &qp->pending);
		scire_qp_kick(qp);
	}
	/*
	 * A run in progress elsewhere takes over the new WQEs; one that is a
	 * peer on this host answering us inline ends soon, and is waited for
	 * rather than leave them to a work item that must be scheduled on a
	 * CPU the application keeps busy (scire_qp_run()).
	 */
	if (flags & SCIRE_DOORBELL_SQ)
		scire_qp_run_all(qp, true);
	return 0;
}

/**
 * scire_wq_take() - take one WQE from a receive ring.
 * @wq: an RQ, SRQ or receive WQ ring.
 * @rwqe: filled as by scire_rq_take().
 * @left: set to the WQEs still posted after it.
 *
 * Context: any; the caller serialises the consumers of @wq.
 * Return: as scire_rq_take().
 */
int scire_wq_take(struct scire_wq *wq, struct scire_recv_wqe *rwqe, u32 *left)
{
	const struct scire_recv_wqe *slot;
	u32 prod, cons;
	int ret = 0;

	/* Pairs with the producer's store-release after writing the slot. */
	prod = smp_load_acquire(&wq->ring->producer);
	cons = wq->consumer;
	if (prod - cons > wq->num_entries)
		return -EIO;
	if (prod == cons)
		return -EAGAIN;

	slot = scire_wq_slot(wq, cons);
	memcpy(rwqe, slot, sizeof(*rwqe));
	/* From here on only the copy counts; the slot may change under us. */
	if (rwqe->num_sge > wq->max_sge) {
		rwqe->num_sge = 0;
		ret = -EINVAL;
	} else {
		memcpy(rwqe->sge, slot->sge,
		       rwqe->num_sge * sizeof(struct scire_sge));
	}

	wq->consumer = ++cons;
	/* Pairs with the producer's load-acquire of the consumer index. */
	smp_store_release(&wq->ring->consumer, cons);
	*left = prod - cons;
	return ret;
}

/**
 * scire_rq_take() - take the next receive WQE of a QP's RQ or SRQ.
 * @qp: the QP whose responder needs a WQE for an incoming message.
 * @rwqe: filled with a copy of the WQE; room for SCIRE_RECV_WQE_MAX_SIZE
 *	  bytes (a header and up to SCIRE_MAX_SGE SGEs).
 *
 * The slot is read once, into @rwqe, and the WQE is consumed: the ring's
 * consumer index is published with a store-release. For an SRQ an armed
 * limit (IBA 10.2.9) is checked afterwards: when fewer WQEs than the limit
 * remain, the limit is disarmed and IB_EVENT_SRQ_LIMIT_REACHED raised.
 *
 * Context: the QP's work item. Takes the SRQ's lock with interrupts saved;
 * a QP's own RQ has a single consumer and needs none. An XRC TGT QP takes
 * from the XRC SRQ its responder holds (struct scire_resp.xsrq).
 * Return: 0; -EAGAIN if the queue is empty (RNR); -EINVAL if the WQE
 * carries more SGEs than the queue allows (it is consumed, @rwqe->wr_id is
 * valid and @rwqe->num_sge is 0: complete it in error); -EIO if the
 * producer index is corrupt (the caller moves the QP to ERR).
 */
int scire_rq_take(struct scire_qp *qp, struct scire_recv_wqe *rwqe)
{
	struct scire_srq *srq = qp->srq;
	unsigned long flags;
	bool limit_hit;
	u32 left;
	int ret;

	/* An XRC TGT QP: the XRC SRQ the request named (scire_resp.c). */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		srq = qp->resp.xsrq;
		if (WARN_ON_ONCE(!srq))
			return -EIO;
	}
	if (!srq)
		return scire_wq_take(&qp->rq, rwqe, &left);

	spin_lock_irqsave(&srq->rq.lock, flags);
	ret = scire_wq_take(&srq->rq, rwqe, &left);
	limit_hit = (!ret || ret == -EINVAL) && srq->limit && left < srq->limit;
	if (limit_hit)
		srq->limit = 0;
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	if (limit_hit && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return ret;
}

/**
 * scire_rq_flush() - complete every posted RQ WQE with a flush error.
 * @qp: a QP in ERR.
 *
 * Each WQE between the consumer and producer index gets a receive CQE with
 * IB_WC_WR_FLUSH_ERR on the receive CQ (IBA 10.3, Error state) and is
 * consumed. WQEs of an SRQ belong to the SRQ and stay. A corrupt user
 * producer index flushes nothing: the QP is already in ERR.
 *
 * Context: the QP's work item.
 */
void scire_rq_flush(struct scire_qp *qp)
{
	struct scire_wq *wq = &qp->rq;
	struct scire_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = SCIRE_CQE_OP_RECV,
		.qp_num = qp->ibqp.qp_num,
		.vlan_id = 0xffff,
	};
	const struct scire_recv_wqe *slot;
	u32 prod, cons;

	if (qp->srq)
		return;

	/* Pairs with the producer's store-release after writing the slot. */
	prod = smp_load_acquire(&wq->ring->producer);
	cons = wq->consumer;
	if (prod - cons > wq->num_entries)
		return;

	for (; cons != prod; cons++) {
		slot = scire_wq_slot(wq, cons);
		cqe.wr_id = READ_ONCE(slot->wr_id);
		/* An overrun CQ is in error already; keep retiring WQEs. */
		scire_cq_post(qp->rcq, &cqe, &qp->ibqp, true);
		wq->consumer = cons + 1;
		/* The CQE is visible before the slot is given back. */
		smp_store_release(&wq->ring->consumer, cons + 1);
	}
}

/* ERR: flush everything, once per kick. */
static void scire_qp_flush(struct scire_qp *qp)
{
	skb_queue_purge(&qp->rxq);
	clear_bit(SCIRE_QP_P_FLUSH_RQ, &qp->pending);
	scire_req_flush(qp);
	scire_resp_flush(qp);
	scire_rq_flush(qp);

	/*
	 * IBA 11.6.3: a QP on an SRQ reports that it will take no more WQEs
	 * from it, so the consumer knows when it may destroy the QP.
	 */
	if (qp->srq && !qp->last_wqe_reached) {
		qp->last_wqe_reached = true;
		scire_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
}

/*
 * One run of the QP's execution context: received packets, completer
 * timers, requester. It runs in the QP's work item, inline in a user
 * doorbell, inline in another QP's run set (scire_qp_run_all()), or
 * (@bh) in the softirq that received a wire packet for it
 * (scire_qp_run_bh()). The exec bit serialises runs with each other and
 * with modify_qp; the requester, completer and responder state is touched
 * nowhere else while the QP is out of RESET.
 *
 * No one waits for a run in progress (a waiting worker only burns the CPU
 * the run needs, and a vCPU may be descheduled holding it), except a
 * doorbell (@doorbell) behind another QP's inline run of this one, which
 * is short. Whoever finds the context taken leaves the work to its
 * holder: it sets SCIRE_QP_P_KICK (as every scire_qp_kick() does) and
 * tries once more; a run clears the bit when it starts, and looks at it
 * again once it has let go of the context.
 *
 * A softirq run only handles a QP in RTR, RTS or SQD; anything else it
 * hands to the work item. Its requester's direct requests take only the
 * peer's exec bit (scire_qp_direct_lock()).
 *
 * @rs, if not NULL, collects the QPs this run sends same-host packets to;
 * its first QP is the one the run set was started for.
 * Return: true if the run left work and the work item must run again.
 */
static bool scire_qp_run(struct scire_qp *qp, bool doorbell,
			 struct scire_runset *rs, bool bh)
{
	unsigned int budget = SCIRE_QP_RX_BUDGET;
	enum ib_qp_state state;
	struct sk_buff *skb;
	unsigned int noio = 0;
	bool req_active;
	bool more = false;
	bool locked;

	/*
	 * Block ULPs (nvme-rdma) may need this QP to make progress for
	 * writeback: packet and CQE allocations here must not recurse into
	 * I/O reclaim, or the worker could wait on itself. A softirq run
	 * allocates atomically, and must not change the flags of the task
	 * it interrupted.
	 */
	if (!bh)
		noio = memalloc_noio_save();
	locked = scire_qp_run_lock(qp, bh);
	if (!locked && doorbell && READ_ONCE(qp->run_for_peer)) {
		mutex_lock(&qp->work_mutex);
		locked = scire_qp_exec_trylock(qp);
		if (!locked)
			mutex_unlock(&qp->work_mutex);
	}
	if (!locked) {
		/* Leave it to the holder, unless it has just left. */
		set_bit(SCIRE_QP_P_KICK, &qp->pending);
		/* Bit before the lock: pairs with smp_mb() at the end. */
		smp_mb__after_atomic();
		if (!scire_qp_run_lock(qp, bh)) {
			if (!bh)
				memalloc_noio_restore(noio);
			return false;
		}
	}
	state = READ_ONCE(qp->state);
	if (bh && !scire_qp_bh_ok(qp, state)) {
		/* The caller kicks the work item, which runs it instead. */
		scire_qp_run_unlock(qp, bh);
		return true;
	}
	clear_bit(SCIRE_QP_P_KICK, &qp->pending);
	/* Kicks from here on are seen after the run (see the end). */
	smp_mb__after_atomic();
	qp->run_atomic = bh;
	if (rs) {
		qp->runset = rs;
		WRITE_ONCE(qp->run_task, current);
		WRITE_ONCE(qp->run_for_peer, rs->qp[0] != qp);
	}
	switch (state) {
	case IB_QPS_ERR:
		scire_qp_flush(qp);
		goto out;
	case IB_QPS_RESET:
	case IB_QPS_INIT:
		skb_queue_purge(&qp->rxq);
		goto out;
	default:
		break;
	}

	/* Only RTS and SQD have a started requester (scire_req_start()). */
	req_active = state == IB_QPS_RTS || state == IB_QPS_SQD;
	/*
	 * Meanwhile the QP can only leave for ERR or RESET (other moves wait
	 * for work_mutex); the run those kicked acts on that. The lockless
	 * look spares an idle QP (a doorbell) the irq-off lock: a packet
	 * queued after it kicks, and the run is repeated.
	 */
	while (budget && READ_ONCE(qp->state) == state &&
	       !skb_queue_empty_lockless(&qp->rxq) &&
	       (skb = skb_dequeue(&qp->rxq))) {
		budget--;
		if (!(scire_pkt(skb)->mask & SCIRE_M_RESP))
			scire_resp_rcv(qp, skb);
		else if (req_active)
			scire_comp_rcv(qp, skb);
		else
			kfree_skb(skb);
	}
	scire_resp_batch_end(qp);

	if (req_active && READ_ONCE(qp->state) == state) {
		scire_comp_timers(qp);
		more = scire_req_run(qp);
	}
	/* SQE: what is posted to the SQ is flushed (IBA 10.3.1.5). */
	if (state == IB_QPS_SQE && READ_ONCE(qp->state) == state)
		scire_req_flush(qp);
	more = more || !budget || !skb_queue_empty(&qp->rxq);
out:
	WRITE_ONCE(qp->run_task, NULL);
	WRITE_ONCE(qp->run_for_peer, false);
	qp->runset = NULL;
	qp->run_atomic = false;
	scire_qp_run_unlock(qp, bh);
	if (!bh)
		memalloc_noio_restore(noio);
	/*
	 * Whoever failed to take the context meanwhile set KICK before
	 * trying: the barrier orders the unlock before the look at it, so
	 * either we see the bit or they saw the context free.
	 */
	smp_mb();
	return more || test_bit(SCIRE_QP_P_KICK, &qp->pending);
}

/*
 * Run @qp (@doorbell, @bh as scire_qp_run()) without a run set, and again
 * while work was left to this run meanwhile: a reply to what it sent, or
 * the peer's next request, often comes back through the loopback or a
 * softirq while it runs and finds it busy. Taking that here, a few times
 * at most, is what spares a work item wakeup per packet; the rest is
 * kicked.
 */
static void scire_qp_run_again(struct scire_qp *qp, bool doorbell, bool bh)
{
	unsigned int runs = 0;
	bool more;

	do
		more = scire_qp_run(qp, doorbell, NULL, bh);
	while (more && ++runs < SCIRE_QP_RUN_AGAIN &&
	       test_bit(SCIRE_QP_P_KICK, &qp->pending));
	if (more)
		scire_qp_kick(qp);
}

/*
 * Run @qp (@doorbell as scire_qp_run()). With the fast path on, also run
 * the QPs it delivered same-host packets to, then those they answered, and
 * so on, in this context: a message, its ACK and both completions take
 * one system call or one work item instead of a work item hop per
 * direction. After SCIRE_RUNSET_MAX_RUNS runs whatever is left is kicked,
 * so one caller never carries the whole host's traffic.
 */
static void scire_qp_run_all(struct scire_qp *qp, bool doorbell)
{
	struct scire_runset rs = { };

	/* A work item may run while destroy_qp waits for the last reference. */
	if (!READ_ONCE(scire_fast_path) ||
	    !refcount_inc_not_zero(&qp->ref->count)) {
		scire_qp_run_again(qp, doorbell, false);
		return;
	}
	rs.qp[rs.tail++] = qp;
	while (rs.head != rs.tail) {
		struct scire_qp *next = rs.qp[rs.head++ % SCIRE_RUNSET_SIZE];
		bool more = true;

		if (rs.runs++ < SCIRE_RUNSET_MAX_RUNS)
			more = scire_qp_run(next, doorbell && next == qp, &rs,
					    false);
		if (more)
			scire_qp_kick(next);
		scire_qp_put(next);
	}
}

static void scire_qp_work(struct work_struct *work)
{
	struct scire_qp *qp = container_of(work, struct scire_qp, work);

	scire_qp_run_all(qp, false);
}

/*
 * Stop everything that runs on its own: publish RESET, so later runs drop
 * what they find and leave the requester alone (a softirq run hands a QP
 * in RESET to the work item), wait for a run in progress wherever it runs
 * (the work item, a doorbell, a softirq), send the ACK an RC responder
 * still owes for what it has completed (scire_resp_stop_ack()), then stop
 * the requester's timers, which nothing can arm again: a run that read the
 * old state may still be sending and arming the retransmit timer until it
 * lets go of the context.
 */
static void scire_qp_stop(struct scire_qp *qp)
{
	enum ib_qp_state was;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	was = qp->state;
	scire_qp_set_state(qp, IB_QPS_RESET);
	qp->sq_draining = false;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	mutex_lock(&qp->work_mutex);
	scire_qp_exec_lock(qp);
	scire_qp_exec_unlock(qp);
	mutex_unlock(&qp->work_mutex);
	cancel_work_sync(&qp->work);
	if (scire_qp_is_rc(qp) &&
	    (was == IB_QPS_RTR || was == IB_QPS_RTS || was == IB_QPS_SQD ||
	     was == IB_QPS_SQE)) {
		mutex_lock(&qp->work_mutex);
		scire_qp_exec_lock(qp);
		scire_resp_stop_ack(qp);
		scire_qp_exec_unlock(qp);
		mutex_unlock(&qp->work_mutex);
	}
	scire_req_stop(qp);
}

/* Modify to RESET: back to the QP as created, attributes aside. */
static void scire_qp_reset(struct scire_qp *qp)
{
	scire_qp_stop(qp);

	mutex_lock(&qp->work_mutex);
	scire_qp_exec_lock(qp);
	skb_queue_purge(&qp->rxq);
	scire_req_reset(qp);
	scire_resp_reset(qp);
	scire_wq_reset(&qp->sq);
	if (!qp->srq)
		scire_wq_reset(&qp->rq);
	clear_bit(SCIRE_QP_P_RETRANSMIT, &qp->pending);
	clear_bit(SCIRE_QP_P_RNR, &qp->pending);
	clear_bit(SCIRE_QP_P_FLUSH_RQ, &qp->pending);
	clear_bit(SCIRE_QP_P_KICK, &qp->pending);
	qp->last_wqe_reached = false;
	qp->resp_live = false;
	qp->req_live = false;
	scire_qp_exec_unlock(qp);
	mutex_unlock(&qp->work_mutex);
}

/* Check every attribute @mask carries; resolve a new AV into @av. */
static int scire_qp_check_attr(struct scire_qp *qp,
			       const struct ib_qp_attr *attr, int mask,
			       struct scire_av *av)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= scire_pkey_tbl_len(qp->sdev))
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SCIRE_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (ib_mtu_enum_to_int(attr->path_mtu) < 0 ||
	     attr->path_mtu > scire_active_mtu(qp->sdev)))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SCIRE_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SCIRE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SCIRE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > SCIRE_TIMEOUT_MAX)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > SCIRE_RETRY_MAX)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > SCIRE_RETRY_MAX)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) &&
	    attr->min_rnr_timer > SCIRE_RNR_TIMER_MAX)
		return -EINVAL;
	/* No alternate path, so nothing to migrate to. */
	if (mask & IB_QP_ALT_PATH)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		/* scire_av_init() checks the AV's type for the link. */
		if (rdma_ah_get_port_num(&attr->ah_attr) != 1)
			return -EINVAL;
		return scire_av_init(qp->sdev, av, &attr->ah_attr);
	}
	return 0;
}

/* Apply checked attributes. Caller holds work_mutex: no run is going on. */
static void scire_qp_apply_attr(struct scire_qp *qp,
				const struct ib_qp_attr *attr, int mask,
				const struct scire_av *av)
{
	lockdep_assert_held(&qp->work_mutex);

	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		WRITE_ONCE(qp->qp_access, attr->qp_access_flags);
	if (mask & IB_QP_AV) {
		qp->av = *av;
		dst_cache_reset(&qp->req.route);
		qp->ah_attr = attr->ah_attr;
		/* The core holds the GID attribute; query_qp reports none. */
		qp->ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_PATH_MTU) {
		qp->path_mtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = scire_psn(attr->rq_psn);
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = scire_psn(attr->sq_psn);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
}

/* A move between (or within) INIT, RTR, RTS, SQD and SQE. */
static int scire_qp_transition(struct scire_qp *qp,
			       const struct ib_qp_attr *attr, int mask,
			       enum ib_qp_state cur, enum ib_qp_state new,
			       const struct scire_av *av)
{
	unsigned long flags;
	int ret = 0;

	mutex_lock(&qp->work_mutex);
	scire_qp_exec_lock(qp);
	/*
	 * IBA 10.3: attributes may change in SQD only once the SQ has
	 * drained. sq_draining is only cleared by the work item, which is
	 * excluded now.
	 */
	if (cur == IB_QPS_SQD && new == IB_QPS_SQD &&
	    (mask & ~IB_QP_STATE) && READ_ONCE(qp->sq_draining)) {
		ret = -EINVAL;
		goto unlock;
	}
	/*
	 * Fail before changing anything if the data path has moved the QP
	 * to ERR since modify_qp looked (checked again below, for a move
	 * that races with this one).
	 */
	if (READ_ONCE(qp->state) != cur) {
		ret = -EINVAL;
		goto unlock;
	}

	scire_qp_apply_attr(qp, attr, mask, av);
	if (cur == IB_QPS_INIT && new == IB_QPS_RTR) {
		scire_resp_start(qp);
		qp->resp_live = true;
	}
	if (cur == IB_QPS_RTR && new == IB_QPS_RTS) {
		scire_req_start(qp);
		qp->req_live = true;
	}

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != cur) {
		/* The data path moved the QP to ERR since we looked. */
		ret = -EINVAL;
	} else {
		if (new == IB_QPS_SQD && cur != IB_QPS_SQD) {
			qp->sq_draining = true;
			qp->sqd_notify = (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
					 attr->en_sqd_async_notify;
		} else if (new != IB_QPS_SQD) {
			qp->sq_draining = false;
		}
		scire_qp_set_state(qp, new);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
unlock:
	scire_qp_exec_unlock(qp);
	mutex_unlock(&qp->work_mutex);

	/*
	 * RTR starts receiving, RTS sending, SQD may be drained already; a
	 * run that found work_mutex taken by us left its work to us.
	 */
	smp_mb();
	if ((!ret && new != cur) || test_bit(SCIRE_QP_P_KICK, &qp->pending))
		scire_qp_kick(qp);
	return ret;
}

/**
 * scire_modify_qp() - change a QP's state and attributes (IBA 11.2.4.2).
 * @ibqp: the QP.
 * @attr: new values of the attributes in @mask.
 * @mask: enum ib_qp_attr_mask. Which attributes a transition requires and
 *	  permits is decided by ib_modify_qp_is_ok() (IBA table 92); with
 *	  IB_QP_CUR_STATE, @attr->cur_qp_state must be the QP's state.
 * @udata: UHW request; scire defines none, so any bytes sent must be zero.
 *
 * Values are checked against the device: port 1, P_Key index 0, path MTU
 * up to the port's active MTU, max_rd_atomic and max_dest_rd_atomic up to
 * SCIRE_MAX_RD_ATOMIC, timeout and min_rnr_timer 0..31, retry_cnt and
 * rnr_retry 0..7, access flags among LOCAL_WRITE and REMOTE_WRITE/READ/
 * ATOMIC, a RoCE AV on port 1. No alternate path.
 *
 * INIT->RTR starts the responder (ePSN = rq_psn), RTR->RTS the requester
 * (next PSN = sq_psn), each before the new state is visible to the data
 * path. RTS->SQD stops starting new WQEs; IB_EVENT_SQ_DRAINED follows
 * once nothing is outstanding if en_sqd_async_notify is set. ERR flushes
 * every WQE (the work item does it). RESET stops the work item and the
 * timers, drops waiting packets, forgets requester and responder state and
 * zeroes the ring indices; a user process must zero its own producer
 * indices.
 *
 * Context: process context, may sleep; serialised with query_qp and
 * destroy_qp by the QP's mutex.
 * Return: 0; -EINVAL for a transition or mask IBA does not allow, a wrong
 * current state, an out-of-range value, a non-zero UHW request, attribute
 * changes in SQD before the SQ has drained, or a QP the data path moved to
 * ERR meanwhile; -EOPNOTSUPP for attributes outside the standard mask
 * (rate limit); errors of scire_av_init() for the AV.
 */
int scire_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct scire_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, new;
	struct scire_av av;
	int ret;

	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	/* An RSS QP has no state: its WQs' states are what counts. */
	if (qp->rss)
		return -EOPNOTSUPP;

	mutex_lock(&qp->mutex);
	/* Only the data path changes the state now, and only to ERR. */
	cur = READ_ONCE(qp->state);
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	ret = -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		goto out;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		goto out;
	ret = scire_qp_check_attr(qp, attr, mask, &av);
	if (ret)
		goto out;

	switch (new) {
	case IB_QPS_RESET:
		scire_qp_reset(qp);
		break;
	case IB_QPS_ERR:
		scire_qp_error(qp);
		break;
	default:
		ret = scire_qp_transition(qp, attr, mask, cur, new, &av);
		break;
	}
out:
	mutex_unlock(&qp->mutex);
	return ret;
}

static void scire_qp_caps(const struct scire_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.num_entries;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.num_entries;
	cap->max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
	/* XRC: the initiator only sends, the target has no queues at all. */
	if (scire_qp_is_xrc(qp)) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		cap->max_send_wr = 0;
		cap->max_send_sge = 0;
		cap->max_inline_data = 0;
	}
}

/**
 * scire_query_qp() - report a QP's state and attributes (IBA 11.2.4.3).
 * @ibqp: the QP.
 * @attr: filled with every attribute, whatever @mask asks for.
 * @mask: the attributes the caller needs (all are reported).
 * @init: filled with the creation attributes and the real capacities.
 *
 * The primary AV is the rdma_ah_attr last given to modify_qp (type RoCE),
 * without a GID attribute reference. rq_psn is the responder's ePSN once
 * INIT->RTR started it, sq_psn the PSN of the requester's next new
 * request once RTR->RTS started it; before that (and after RESET) they
 * are the values modify_qp set.
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int scire_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct scire_qp *qp = to_sqp(ibqp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	mutex_lock(&qp->mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	attr->qp_state = qp->state;
	attr->sq_draining = qp->state == IB_QPS_SQD && qp->sq_draining;
	attr->en_sqd_async_notify = qp->sqd_notify;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	/*
	 * Once started, where the responder and requester are: the ePSN and
	 * the PSN the next new request gets (as rdma_rxe and mlx5 report).
	 */
	attr->rq_psn = qp->resp_live ? READ_ONCE(qp->resp.psn) : qp->rq_psn;
	attr->sq_psn = qp->req_live ? READ_ONCE(qp->req.tail_psn) : qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->qp_access;
	scire_qp_caps(qp, &attr->cap);
	attr->ah_attr = qp->ah_attr;
	attr->pkey_index = qp->pkey_index;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->port_num = 1;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = 1;
	mutex_unlock(&qp->mutex);
	return 0;
}

/* The SQ head, what a requester that stopped moving waits on; or zeroes. */
static struct scire_req_wqe scire_res_sq_head(struct scire_qp *qp, u8 *opcode)
{
	struct scire_req *req = &qp->req;
	u32 head = READ_ONCE(qp->sq.consumer);
	struct scire_req_wqe w = {};

	if (req->wqe && head != READ_ONCE(req->fetched)) {
		w = *scire_req_wqe(req, head);
		*opcode = scire_req_shadow(req, head)->opcode;
	}
	return w;
}

/**
 * scire_fill_res_qp_entry() - add the transport state of a QP to an
 * `rdma res show qp -dd` answer (RDMA_NLDEV_ATTR_DRIVER attributes).
 * @msg: the netlink message being built.
 * @ibqp: the QP.
 *
 * Reports the requester's SQ indices and PSNs (comp_psn, cur_psn, hi_psn,
 * tail_psn), the SQ head WQE (opcode, state, PSN range, length), the
 * READ/atomic count, retry state and whether the timers run, and the
 * responder's ePSN and MSN: what is needed to tell why a connection
 * stopped moving (`rdma res show qp -dd`, attributes prefixed drv_). A
 * snapshot taken without stopping the worker, so the values may come from
 * slightly different moments.
 *
 * Context: process context (the core's restrack dump).
 * Return: 0; -EMSGSIZE when @msg is full (the core retries with more room).
 */
int scire_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct scire_qp *qp = to_sqp(ibqp);
	struct scire_req *req = &qp->req;
	u8 head_op = 0;
	const struct scire_req_wqe w = scire_res_sq_head(qp, &head_op);
	const struct {
		const char *name;
		u32 value;
	} v[] = {
		{ "sq_consumer", READ_ONCE(qp->sq.consumer) },
		{ "sq_fetched", READ_ONCE(req->fetched) },
		{ "sq_started", READ_ONCE(req->started) },
		{ "sq_cur", READ_ONCE(req->cur) },
		{ "comp_psn", READ_ONCE(req->comp_psn) },
		{ "cur_psn", READ_ONCE(req->cur_psn) },
		{ "hi_psn", READ_ONCE(req->hi_psn) },
		{ "tail_psn", READ_ONCE(req->tail_psn) },
		{ "local", READ_ONCE(req->local) },
		{ "mtu", READ_ONCE(req->mtu) },
		{ "head_opcode", head_op },
		{ "head_state", w.state },
		{ "head_first_psn", w.first_psn },
		{ "head_last_psn", w.last_psn },
		{ "head_len", w.len },
		{ "rd_atomic", READ_ONCE(req->rd_atomic) },
		{ "went_back", READ_ONCE(req->went_back) },
		{ "read_retry", READ_ONCE(req->read_retry) },
		{ "retry_left", READ_ONCE(req->retry_left) },
		{ "rnr_left", READ_ONCE(req->rnr_left) },
		{ "rnr_wait", READ_ONCE(req->rnr_wait) },
		{ "retrans_armed", READ_ONCE(req->retrans_armed) },
		{ "rnr_timer", timer_pending(&req->rnr_timer) },
		{ "pending", (u32)READ_ONCE(qp->pending) },
		{ "resp_epsn", READ_ONCE(qp->resp.psn) },
		{ "resp_msn", READ_ONCE(qp->resp.msn) },
		{ "resp_rxq", skb_queue_len(&qp->rxq) },
	};
	struct nlattr *nest;
	unsigned int i;

	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		if (rdma_nl_put_driver_u32(msg, v[i].name, v[i].value)) {
			nla_nest_cancel(msg, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int scire_qp_check_init(const struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_XRC_INI:
		/* User space only: a kernel send WR names no remote XRC SRQ. */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_RAW_PACKET:
		/*
		 * User space only, as flows are; the core has checked the
		 * caller's CAP_NET_RAW, the caller the link type.
		 */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/*
		 * The core creates a target as its own object, without udata,
		 * and hands the processes of the domain handles to it.
		 */
		if (!init->xrcd)
			return -EINVAL;
		break;
	case IB_QPT_GSI:
	case IB_QPT_SMI:
		/*
		 * The MAD layer's QP1 and (on scire_ib only, checked by the
		 * caller) QP0 of port 1 (IBA 10.2.4.4).
		 */
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags ||
	    (init->rwq_ind_tbl && init->qp_type != IB_QPT_RAW_PACKET) ||
	    (init->xrcd && init->qp_type != IB_QPT_XRC_TGT))
		return -EOPNOTSUPP;
	if (init->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    init->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	/* XRC: an initiator has a send CQ only, a target no CQ (annex A19). */
	if (init->qp_type == IB_QPT_XRC_TGT)
		return 0;
	/*
	 * RSS: a raw packet QP over an indirection table receives through
	 * the table's WQs only; no CQ, no queue. Its request is its hash
	 * (scire_rss_parse()).
	 */
	if (init->rwq_ind_tbl)
		return udata->outlen < sizeof(struct scire_create_qp_resp) ?
		       -EINVAL : 0;
	if (!init->send_cq ||
	    (!init->recv_cq && init->qp_type != IB_QPT_XRC_INI))
		return -EINVAL;
	if (init->qp_type == IB_QPT_XRC_INI && init->srq)
		return -EINVAL;
	if (init->srq && init->srq->srq_type != IB_SRQT_BASIC)
		return -EINVAL;
	if (cap->max_send_wr > SCIRE_MAX_QP_WR ||
	    cap->max_send_sge > SCIRE_MAX_SGE ||
	    cap->max_inline_data > SCIRE_MAX_INLINE)
		return -EINVAL;
	/* With an SRQ the RQ capacities are ignored. */
	if (!init->srq && (cap->max_recv_wr > SCIRE_MAX_QP_WR ||
			   cap->max_recv_sge > SCIRE_MAX_SGE))
		return -EINVAL;
	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(struct scire_create_qp_resp))
		return -EINVAL;
	return 0;
}

static noinline int scire_qp_respond(struct scire_qp *qp, struct ib_udata *udata)
{
	struct scire_create_qp_resp resp = {
		.qpn = qp->ibqp.qp_num,
	};

	/* An XRC target maps no ring, an XRC initiator only its SQ. */
	if (qp->sq.mmap) {
		resp.sq_mmap_offset =
			rdma_user_mmap_get_offset(&qp->sq.mmap->rdma);
		resp.sq_mmap_size = (u64)qp->sq.mmap->rdma.npages << PAGE_SHIFT;
		resp.sq_entries = qp->sq.num_entries;
		resp.sq_wqe_size = qp->sq.wqe_size;
		resp.max_send_sge = qp->sq.max_sge;
		resp.max_inline_data = qp->sq.max_inline;
	}
	if (qp->rq.mmap) {
		resp.rq_mmap_offset =
			rdma_user_mmap_get_offset(&qp->rq.mmap->rdma);
		resp.rq_mmap_size = (u64)qp->rq.mmap->rdma.npages << PAGE_SHIFT;
		resp.rq_entries = qp->rq.num_entries;
		resp.rq_wqe_size = qp->rq.wqe_size;
		resp.max_recv_sge = qp->rq.max_sge;
	}
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

ALLOW_ERROR_INJECTION(scire_qp_respond, ERRNO);

/**
 * scire_create_qp() - create an RC, UC, UD, XRC, GSI or SMI QP (IBA
 * 11.2.4.1, annex A19).
 * @ibqp: the core-allocated QP (PD, CQs, SRQ, type and event handler set).
 * @init: creation attributes. Capacities up to SCIRE_MAX_QP_WR WQEs,
 *	  SCIRE_MAX_SGE SGEs and SCIRE_MAX_INLINE inline bytes; on success
 *	  @init->cap holds what the QP really got (entries rounded up to a
 *	  power of two, SGE and inline room filling the slot).
 * @udata: CREATE_QP UHW for a user QP: no request fields; the response is
 *	   struct scire_create_qp_resp and must fit whole. NULL for a kernel
 *	   QP.
 *
 * A user QP's SQ and RQ are rings in memory the process maps (offsets in
 * the response); a kernel QP's rings are written by scire_post_send() and
 * scire_post_recv(). The QP starts in RESET with a QPN in 2..2^24-1; the
 * GSI QP (kernel only, one per device, for the MAD layer) is QP1, and on a
 * scire_ib device the SMI QP is QP0.
 *
 * XRC: an initiator (XRC_INI, user only) has a mapped SQ and a send CQ,
 * no RQ; each WQE names the remote XRC SRQ. A target (XRC_TGT) is created
 * by the core for an XRC domain, without udata or CQs, and has no queues:
 * it takes receive WQEs from, and completes them on the CQ of, the XRC
 * SRQ of its domain each request names (scire_resp.c).
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for a QP type other than RC/UC/UD/XRC/GSI (and
 * SMI on scire_ib), a kernel XRC initiator, creation flags or RSS;
 * -EINVAL for capacities past the limits, a bad sq_sig_type, missing CQs
 * (an XRC target without its domain), a non-zero UHW request, a short
 * response buffer, or a GSI or SMI QP from user space or not on port 1;
 * -EBUSY for a second one; -ENOMEM, also past SCIRE_MAX_QP; -EBUSY when
 * no QPN is free; -EFAULT if the response cannot be written; errors of
 * scire_req_init() and scire_resp_init().
 */
int scire_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibqp->device);
	struct scire_qp *qp = to_sqp(ibqp);
	const struct ib_qp_cap *cap = &init->cap;
	u32 qpn;
	int ret;

	BUILD_BUG_ON(sizeof(struct scire_wq_ring) != SCIRE_WQ_RING_HDR_SIZE);
	BUILD_BUG_ON(sizeof(struct scire_send_wqe) != 64);
	BUILD_BUG_ON(sizeof(struct scire_recv_wqe) != 16);
	BUILD_BUG_ON(sizeof(struct scire_sge) != 16);

	ret = scire_qp_check_init(init, udata);
	/* Only an InfiniBand port has a subnet management interface. */
	if (!ret && init->qp_type == IB_QPT_SMI && sdev->link != SCIRE_LINK_IB)
		ret = -EOPNOTSUPP;
	/* Raw Ethernet frames need an Ethernet port (scire_raw.c). */
	if (!ret && init->qp_type == IB_QPT_RAW_PACKET &&
	    sdev->link != SCIRE_LINK_ROCE)
		ret = -EOPNOTSUPP;
	if (ret)
		return ret;
	if (atomic_inc_return(&sdev->num_qp) > SCIRE_MAX_QP) {
		ret = -ENOMEM;
		goto err_count;
	}

	qp->sdev = sdev;
	qp->ref = kzalloc(sizeof(*qp->ref), GFP_KERNEL);
	if (!qp->ref) {
		ret = -ENOMEM;
		goto err_count;
	}
	refcount_set(&qp->ref->count, 1);
	qp->ref->qp = qp;
	init_completion(&qp->released);
	mutex_init(&qp->mutex);
	mutex_init(&qp->work_mutex);
	spin_lock_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	INIT_WORK(&qp->work, scire_qp_work);
	skb_queue_head_init(&qp->rxq);
	qp->scq = init->send_cq ? to_scq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_scq(init->recv_cq) : NULL;
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->path_mtu = IB_MTU_256;
	qp->mtu = ib_mtu_enum_to_int(IB_MTU_256);
	qp->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&qp->ah_attr, 1);

	/*
	 * An XRC target's queues and an XRC initiator's RQ are never posted
	 * to (post_send, post_recv and the doorbell refuse them): one empty
	 * kernel slot each keeps every ring walk valid.
	 */
	if (init->qp_type == IB_QPT_XRC_TGT || init->rwq_ind_tbl)
		scire_sq_shape(&qp->sq, 1, 0, 0);
	else
		scire_sq_shape(&qp->sq, cap->max_send_wr, cap->max_send_sge,
			       cap->max_inline_data);
	ret = scire_wq_alloc(&qp->sq,
			     init->qp_type == IB_QPT_XRC_TGT || init->rwq_ind_tbl ?
			     NULL : udata);
	if (ret)
		goto err_mutex;
	if (scire_qp_is_xrc(qp) || init->rwq_ind_tbl) {
		scire_rq_shape(&qp->rq, 1, 0);
		ret = scire_wq_alloc(&qp->rq, NULL);
		if (ret)
			goto err_sq;
	} else if (!qp->srq) {
		scire_rq_shape(&qp->rq, cap->max_recv_wr, cap->max_recv_sge);
		ret = scire_wq_alloc(&qp->rq, udata);
		if (ret)
			goto err_sq;
	}

	if (init->rwq_ind_tbl) {
		ret = scire_rss_parse(qp, init->rwq_ind_tbl, udata);
		if (ret)
			goto err_rq;
	}

	/* Reserved, not yet published: lookups from the wire see nothing. */
	if (init->qp_type == IB_QPT_GSI || init->qp_type == IB_QPT_SMI) {
		qpn = init->qp_type == IB_QPT_GSI ? SCIRE_QPN_GSI :
						     SCIRE_QPN_SMI;
		ret = xa_insert(&sdev->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		/*
		 * The QPN is half of what a blind attacker must guess to
		 * inject into a connection (the PSN is the other): take the
		 * first free number from a random point, not the next of a
		 * counter a peer can read off its last connection.
		 */
		u32 next = SCIRE_QPN_MIN +
			   reciprocal_scale(get_random_u32(),
					    SCIRE_QPN_MAX - SCIRE_QPN_MIN + 1);

		ret = xa_alloc_cyclic(&sdev->qp_xa, &qpn, NULL,
				      XA_LIMIT(SCIRE_QPN_MIN, SCIRE_QPN_MAX),
				      &next, GFP_KERNEL);
	}
	if (ret < 0)
		goto err_rq;
	ibqp->qp_num = qpn;
	/* Spread flows over ECMP paths and receive queues, as rxe does. */
	qp->src_port = SCIRE_SRC_PORT_BASE | hash_32(qpn, SCIRE_SRC_PORT_BITS);

	ret = scire_req_init(qp);
	if (ret)
		goto err_xa;
	ret = scire_resp_init(qp);
	if (ret)
		goto err_req;

	if (udata && init->qp_type != IB_QPT_XRC_TGT) {
		ret = scire_qp_respond(qp, udata);
		if (ret)
			goto err_resp;
	}

	ret = xa_err(xa_store(&sdev->qp_xa, qpn, qp->ref, GFP_KERNEL));
	if (ret)
		goto err_resp;

	scire_qp_caps(qp, &init->cap);
	return 0;

err_resp:
	scire_resp_cleanup(qp);
err_req:
	scire_req_cleanup(qp);
err_xa:
	xa_erase(&sdev->qp_xa, qpn);
err_rq:
	kfree(qp->rss);
	scire_wq_free(&qp->rq);
err_sq:
	scire_wq_free(&qp->sq);
err_mutex:
	mutex_destroy(&qp->work_mutex);
	mutex_destroy(&qp->mutex);
	kfree(qp->ref);
err_count:
	atomic_dec(&sdev->num_qp);
	return ret;
}

/**
 * scire_destroy_qp() - destroy a queue pair.
 * @ibqp: the QP; the core has checked that nothing else uses it.
 * @udata: unused.
 *
 * Outstanding WQEs are dropped without completions. The QP number stops
 * resolving at once; the call then waits for the work item, the timers and
 * every packet holding a reference, so nothing touches the QP after it
 * returns. Lookups under RCU that still find it find its reference count
 * at zero (struct scire_qp_ref), freed a grace period later.
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int scire_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct scire_qp *qp = to_sqp(ibqp);
	struct scire_dev *sdev = qp->sdev;

	mutex_lock(&qp->mutex);
	xa_erase(&sdev->qp_xa, ibqp->qp_num);
	scire_qp_stop(qp);

	scire_qp_put(qp);
	wait_for_completion(&qp->released);
	/* Packets those references delivered may have kicked it again. */
	cancel_work_sync(&qp->work);
	skb_queue_purge(&qp->rxq);

	scire_resp_cleanup(qp);
	scire_req_cleanup(qp);
	kfree(qp->rss);
	scire_wq_free(&qp->rq);
	scire_wq_free(&qp->sq);
	mutex_unlock(&qp->mutex);
	/* The consumer may free the CQs next: no event of ours may be left. */
	if (qp->scq)
		scire_cq_event_sync(qp->scq);
	if (qp->rcq && qp->rcq != qp->scq)
		scire_cq_event_sync(qp->rcq);

	mutex_destroy(&qp->work_mutex);
	mutex_destroy(&qp->mutex);
	/* Readers under RCU may still look at the count, never at the QP. */
	kfree_rcu(qp->ref, rcu);
	atomic_dec(&sdev->num_qp);
	return 0;
}

/* What a kernel send WR becomes in the SQ (struct scire_wr_op.flags). */
#define SCIRE_WR_VALID		BIT(0)
#define SCIRE_WR_UC		BIT(1)	/* UC has it (IBA 9.2.1, table 38) */
#define SCIRE_WR_SGL		BIT(2)	/* takes a local SGE list */
#define SCIRE_WR_INLINE		BIT(3)	/* may carry its data inline */
#define SCIRE_WR_UD		BIT(4)	/* UD and GSI have it */

struct scire_wr_op {
	u8 opcode;	/* enum scire_wqe_opcode */
	u8 flags;
};

/* enum ib_wr_opcode -> SQ WQE, one table. */
static const struct scire_wr_op scire_wr_ops[] = {
	[IB_WR_SEND] = { SCIRE_WQE_OP_SEND, SCIRE_WR_VALID | SCIRE_WR_UC |
			 SCIRE_WR_UD | SCIRE_WR_SGL | SCIRE_WR_INLINE },
	[IB_WR_SEND_WITH_IMM] = { SCIRE_WQE_OP_SEND_IMM, SCIRE_WR_VALID |
				  SCIRE_WR_UC | SCIRE_WR_UD | SCIRE_WR_SGL |
				  SCIRE_WR_INLINE },
	[IB_WR_SEND_WITH_INV] = { SCIRE_WQE_OP_SEND_INV, SCIRE_WR_VALID |
				  SCIRE_WR_SGL | SCIRE_WR_INLINE },
	[IB_WR_RDMA_WRITE] = { SCIRE_WQE_OP_RDMA_WRITE, SCIRE_WR_VALID |
			       SCIRE_WR_UC | SCIRE_WR_SGL | SCIRE_WR_INLINE },
	[IB_WR_RDMA_WRITE_WITH_IMM] = { SCIRE_WQE_OP_RDMA_WRITE_IMM,
					SCIRE_WR_VALID | SCIRE_WR_UC |
					SCIRE_WR_SGL | SCIRE_WR_INLINE },
	[IB_WR_RDMA_READ] = { SCIRE_WQE_OP_RDMA_READ, SCIRE_WR_VALID |
			      SCIRE_WR_SGL },
	[IB_WR_ATOMIC_CMP_AND_SWP] = { SCIRE_WQE_OP_ATOMIC_CMP_SWP,
				       SCIRE_WR_VALID | SCIRE_WR_SGL },
	[IB_WR_ATOMIC_FETCH_AND_ADD] = { SCIRE_WQE_OP_ATOMIC_FETCH_ADD,
					 SCIRE_WR_VALID | SCIRE_WR_SGL },
	[IB_WR_LOCAL_INV] = { SCIRE_WQE_OP_LOCAL_INV, SCIRE_WR_VALID |
			      SCIRE_WR_UC },
	[IB_WR_REG_MR] = { SCIRE_WQE_OP_REG_MR, SCIRE_WR_VALID | SCIRE_WR_UC },
};

/* Inline data: with virtual DMA, kernel SGE addresses are virtual. */
static int scire_wqe_inline(struct scire_wq *sq, const struct ib_send_wr *wr,
			    struct scire_send_wqe *wqe)
{
	u64 len = 0;
	u8 *dst;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > sq->max_inline)
		return -EINVAL;

	dst = wqe->data;
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		dst += wr->sg_list[i].length;
	}
	wqe->inline_len = len;
	wqe->num_sge = 0;
	wqe->flags |= SCIRE_WQE_F_INLINE;
	return 0;
}

/* Write @wr into the SQ slot @wqe. The requester validates the rest. */
static int scire_wqe_build(struct scire_qp *qp, const struct ib_send_wr *wr,
			   struct scire_send_wqe *wqe)
{
	struct scire_sge *sge = (struct scire_sge *)wqe->data;
	bool ud = scire_qp_is_datagram(qp);
	const struct scire_wr_op *op;
	int i;

	if (wr->opcode >= ARRAY_SIZE(scire_wr_ops))
		return -EINVAL;
	op = &scire_wr_ops[wr->opcode];
	if (!(op->flags & SCIRE_WR_VALID))
		return -EINVAL;
	if (qp->ibqp.qp_type == IB_QPT_UC && !(op->flags & SCIRE_WR_UC))
		return -EINVAL;
	if (ud && !(op->flags & SCIRE_WR_UD))
		return -EINVAL;
	if (wr->send_flags & ~SCIRE_SEND_FLAGS)
		return -EINVAL;
	if ((wr->send_flags & IB_SEND_INLINE) && !(op->flags & SCIRE_WR_INLINE))
		return -EINVAL;
	if ((op->flags & SCIRE_WR_SGL) &&
	    (wr->num_sge < 0 ||
	     (!(wr->send_flags & IB_SEND_INLINE) &&
	      wr->num_sge > qp->sq.max_sge)))
		return -EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = op->opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		wqe->flags |= SCIRE_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		wqe->flags |= SCIRE_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		wqe->flags |= SCIRE_WQE_F_FENCE;

	if (ud) {
		wqe->ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
		wqe->ud.remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->ud.remote_qkey = ud_wr(wr)->remote_qkey;
		/* The MAD layer picks a GSI send's P_Key (IBA 13.5.3.3). */
		if (qp->ibqp.qp_type == IB_QPT_GSI)
			wqe->ud.pkey_index = ud_wr(wr)->pkey_index;
	}
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
		wqe->imm_data = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->imm_data = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->imm_data = (__force u32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		wqe->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->atomic.swap = atomic_wr(wr)->swap;
		wqe->atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		wqe->reg.mr = (u64)(uintptr_t)to_smr(reg_wr(wr)->mr);
		wqe->reg.key = reg_wr(wr)->key;
		wqe->reg.access = reg_wr(wr)->access;
		break;
	default:
		break;
	}

	if (!(op->flags & SCIRE_WR_SGL))
		return 0;
	if (wr->send_flags & IB_SEND_INLINE)
		return scire_wqe_inline(&qp->sq, wr, wqe);

	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	wqe->num_sge = wr->num_sge;
	return 0;
}

/**
 * scire_post_send() - post send work requests to a kernel QP (IBA 11.4.1).
 * @ibqp: a kernel RC, UC, UD or GSI QP.
 * @wr: the chain of work requests: SEND, SEND_WITH_IMM, SEND_WITH_INV,
 *	RDMA_WRITE(_WITH_IMM), RDMA_READ, ATOMIC_CMP_AND_SWP,
 *	ATOMIC_FETCH_AND_ADD, LOCAL_INV, REG_MR (UC: no READ, atomics or
 *	SEND_WITH_INV; UD and GSI: SEND and SEND_WITH_IMM only, with the
 *	ib_ud_wr's AH, remote QPN and Q_Key). IB_SEND_INLINE copies the
 *	SGEs' data (kernel virtual addresses) into the WQE.
 * @bad_wr: on failure, the first request not posted.
 *
 * Requests are written to the SQ ring in order, then the QP runs: here,
 * BHs disabled, unless the caller is in a hardirq or has interrupts off
 * (scire_qp_post_run()), or in its work item. In ERR they are accepted
 * and then flushed with IB_WC_WR_FLUSH_ERR.
 *
 * Context: any; takes the SQ lock with interrupts saved. Outside a
 * hardirq with interrupts on, completions the run makes may call a CQ's
 * comp_handler before this returns.
 * Return: 0; -EINVAL for a QP in RESET, a user QP, an unsupported opcode or
 * send flag, too many SGEs or too much inline data; -ENOMEM when the SQ is
 * full.
 */
int scire_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct scire_qp *qp = to_sqp(ibqp);
	struct scire_wq *sq = &qp->sq;
	unsigned long flags;
	u32 prod, cons;
	int ret = 0;

	if (READ_ONCE(qp->state) == IB_QPS_RESET || sq->mmap ||
	    scire_qp_is_xrc(qp)) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&sq->lock, flags);
	prod = sq->ring->producer;
	/* Pairs with the completer's store-release of retired WQEs. */
	cons = smp_load_acquire(&sq->ring->consumer);
	for (; wr; wr = wr->next) {
		if (prod - cons >= sq->num_entries) {
			/* Full as last seen: look again (same pairing). */
			cons = smp_load_acquire(&sq->ring->consumer);
			if (prod - cons >= sq->num_entries) {
				ret = -ENOMEM;
				break;
			}
		}
		ret = scire_wqe_build(qp, wr, scire_wq_slot(sq, prod));
		if (ret)
			break;
		prod++;
	}
	/* Pairs with the requester's load-acquire of the producer index. */
	smp_store_release(&sq->ring->producer, prod);
	spin_unlock_irqrestore(&sq->lock, flags);

	if (ret)
		*bad_wr = wr;
	scire_qp_post_run(qp);
	return ret;
}

/**
 * scire_wq_post_recv() - write receive work requests into a kernel RQ/SRQ.
 * @wq: a kernel QP's RQ or a kernel SRQ.
 * @wr: the chain of work requests.
 * @bad_wr: on failure, the first request not posted.
 *
 * Context: any; takes @wq->lock with interrupts saved.
 * Return: 0; -EINVAL for too many SGEs; -ENOMEM when the queue is full.
 */
int scire_wq_post_recv(struct scire_wq *wq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct scire_recv_wqe *rwqe;
	unsigned long flags;
	u32 prod, cons;
	int ret = 0;
	int i;

	spin_lock_irqsave(&wq->lock, flags);
	prod = wq->ring->producer;
	/* Pairs with the store-release in scire_rq_take()/scire_rq_flush(). */
	cons = smp_load_acquire(&wq->ring->consumer);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > wq->max_sge) {
			ret = -EINVAL;
			break;
		}
		if (prod - cons >= wq->num_entries) {
			/* Full as last seen: look again (same pairing). */
			cons = smp_load_acquire(&wq->ring->consumer);
			if (prod - cons >= wq->num_entries) {
				ret = -ENOMEM;
				break;
			}
		}
		rwqe = scire_wq_slot(wq, prod);
		rwqe->wr_id = wr->wr_id;
		rwqe->num_sge = wr->num_sge;
		rwqe->reserved = 0;
		for (i = 0; i < wr->num_sge; i++) {
			rwqe->sge[i].addr = wr->sg_list[i].addr;
			rwqe->sge[i].length = wr->sg_list[i].length;
			rwqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	/* Pairs with the load-acquire in scire_rq_take(). */
	smp_store_release(&wq->ring->producer, prod);
	spin_unlock_irqrestore(&wq->lock, flags);

	if (ret)
		*bad_wr = wr;
	return ret;
}

/**
 * scire_post_recv() - post receive work requests to a kernel QP
 * (IBA 11.4.1).
 * @ibqp: a kernel QP without an SRQ.
 * @wr: the chain of work requests.
 * @bad_wr: on failure, the first request not posted.
 *
 * In ERR the requests are accepted and flushed with IB_WC_WR_FLUSH_ERR.
 *
 * Context: any; takes the RQ lock with interrupts saved.
 * Return: 0; -EINVAL for a QP in RESET, a user QP, a QP with an SRQ or too
 * many SGEs; -ENOMEM when the RQ is full.
 */
int scire_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct scire_qp *qp = to_sqp(ibqp);
	int ret;

	if (qp->srq || qp->rq.mmap || scire_qp_is_xrc(qp) ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	ret = scire_wq_post_recv(&qp->rq, wr, bad_wr);

	/*
	 * Order the producer store before the state load: either a move to
	 * ERR after it flushes these WQEs, or we see ERR and flush them.
	 */
	smp_mb();
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		set_bit(SCIRE_QP_P_FLUSH_RQ, &qp->pending);
		scire_qp_kick(qp);
	}
	return ret;
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "../kunit/scire_ring_test.c"
#include "../kunit/scire_uhw_test.c"
#endif
