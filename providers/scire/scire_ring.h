/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libscire: work queue rings (SQ, RQ, SRQ) as the producer sees them, and
 * all of their index arithmetic.
 *
 * The ring rule is written once, in scire-abi.h: we write a WQE, then
 * publish the producer index with a store-release; the kernel loads the
 * producer with a load-acquire before it copies WQEs out, and publishes its
 * consumer with a store-release once it no longer needs the slots below it.
 * Each helper below names the half of that pairing it implements. Indices
 * are free-running 32-bit counters; a slot is index & (num_entries - 1).
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RING_H
#define SCIRE_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/scire-abi.h>

_Static_assert(sizeof(struct scire_wq_ring) == SCIRE_WQ_RING_HDR_SIZE,
	       "scire_wq_ring header fills SCIRE_WQ_RING_HDR_SIZE");
_Static_assert(offsetof(struct scire_wq_ring, consumer) == SCIRE_RING_LINE,
	       "WQ consumer index on its own line");
_Static_assert(offsetof(struct scire_wq_ring, flags) == 2 * SCIRE_RING_LINE,
	       "WQ flags on their own line");

/*
 * Largest ring we accept: used = producer - consumer must stay meaningful
 * in 32 bits, so num_entries may not exceed 2^31.
 */
#define SCIRE_WQ_MAX_ENTRIES	(1U << 31)

/*
 * One SQ, RQ or SRQ ring. Everything but prod and the ring contents is what
 * the kernel said at create time and never changes.
 * @ring:	the mapping (NULL when the queue has no slots).
 * @map_size:	mmap length.
 * @num_entries: slots, a power of two, or 0 for "no queue".
 * @wqe_size:	bytes per slot, a power of two.
 * @max_sge:	SGEs a WQE may carry.
 * @max_inline:	SQ only: inline bytes a WQE may carry.
 * @prod:	our producer index; ring->producer is its published copy.
 * @lock:	serialises posters (and, for the SQ, an ibv_wr_* session).
 */
struct scire_wq {
	struct scire_wq_ring *ring;
	size_t map_size;
	uint32_t num_entries;
	uint32_t wqe_size;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t prod;
	pthread_spinlock_t lock;
	bool single_thread;	/* a TD: lock is not taken */
};

/* The lock of a work queue, unless a TD says one thread uses it. */
static inline void scire_wq_lock(struct scire_wq *wq)
{
	if (!wq->single_thread)
		pthread_spin_lock(&wq->lock);
}

static inline void scire_wq_unlock(struct scire_wq *wq)
{
	if (!wq->single_thread)
		pthread_spin_unlock(&wq->lock);
}

static inline void *scire_wq_slot(const struct scire_wq *wq, uint32_t idx)
{
	return (char *)wq->ring + SCIRE_WQ_RING_HDR_SIZE +
	       (size_t)(idx & (wq->num_entries - 1)) * wq->wqe_size;
}

/*
 * Free slots for the next WQE at index prod (which may run ahead of the
 * published producer inside a batch). Load-acquire of the consumer pairs
 * with the kernel's store-release once it has copied (and, on the SQ,
 * retired) the WQEs below it, so our writes into those slots cannot be seen
 * before its reads are done. Returns the count, 0 when full, or -1 when the
 * consumer is not one our producer can have (more slots in use than exist:
 * the mapping no longer holds our ring).
 */
static inline int64_t scire_wq_room(const struct scire_wq *wq, uint32_t prod)
{
	uint32_t cons, used;

	if (!wq->num_entries)
		return 0;
	cons = __atomic_load_n(&wq->ring->consumer, __ATOMIC_ACQUIRE);
	used = prod - cons;
	if (used > wq->num_entries)
		return -1;
	return wq->num_entries - used;
}

/*
 * Publish WQEs up to (not including) index prod. Store-release pairs with
 * the kernel's load-acquire of the producer: every byte of the WQEs below
 * prod is visible before the index that hands them over.
 */
static inline void scire_wq_publish(struct scire_wq *wq, uint32_t prod)
{
	__atomic_store_n(&wq->ring->producer, prod, __ATOMIC_RELEASE);
}

/*
 * After publishing receive WQEs: has the kernel put the queue in error, so
 * that they are flushed only if we ring the doorbell? This is a store->load
 * handshake (we store the producer then load flags; the kernel sets flags
 * then loads the producer to flush), so a release/acquire pair is not
 * enough: the full fence keeps our load from passing our earlier producer
 * store, and the kernel must likewise order its flag store before its
 * producer load (smp_mb). Then at least one side sees the other: the kernel
 * flushes our WQEs or we ring. Load-acquire of flags pairs with the
 * kernel's release of the error state.
 */
static inline bool scire_wq_in_error(const struct scire_wq *wq)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&wq->ring->flags, __ATOMIC_ACQUIRE) &
	       SCIRE_WQ_F_ERROR;
}

/*
 * The QP went to RESET: the kernel has forgotten every WQE and set its
 * consumer to 0 before the modify command returned, and reads no ring until
 * the QP leaves RESET. Start again from index 0. Store-release for the same
 * reason as scire_wq_publish(): the kernel loads the producer with acquire.
 * Caller holds wq->lock.
 */
static inline void scire_wq_reset(struct scire_wq *wq)
{
	wq->prod = 0;
	if (wq->num_entries)
		scire_wq_publish(wq, 0);
}

#endif /* SCIRE_RING_H */
