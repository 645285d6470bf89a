// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: queue pairs (RC, UC and UD). The SQ and RQ are rings the kernel
 * allocates and we map from the uverbs fd; posting writes WQEs into them
 * (scire_wqe.h) and moves our producer index (scire_ring.h). The kernel
 * learns about new send WQEs from one doorbell per ibv_post_send() call or
 * ibv_wr_complete(), a driver method on the QP object. Receives need no
 * doorbell, except on a QP the kernel has put in error, where it flushes
 * them only when told.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma-core/cmd_ioctl.h>

#include "scire.h"

/* ---- ring mappings --------------------------------------------------------- */

static bool scire_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/*
 * Check what the kernel said about one work queue and map it. A queue of 0
 * entries has no mapping (an SRQ user's RQ, or a queue created with no
 * work requests): posting to it finds no room. The lock is set up either
 * way. Returns 0 or an errno (EPROTO for a response we cannot use).
 */
int scire_wq_setup(struct scire_context *ctx, struct scire_wq *wq,
		   const char *what, uint64_t mmap_offset, uint64_t mmap_size,
		   uint32_t num_entries, uint32_t wqe_size, uint64_t min_wqe_size)
{
	void *ring = NULL;
	uint64_t need;
	int ret;

	if (num_entries) {
		/* Slot arithmetic masks indices: sizes must be powers of two. */
		if (!scire_is_pow2(num_entries) ||
		    num_entries > SCIRE_WQ_MAX_ENTRIES ||
		    !scire_is_pow2(wqe_size) || wqe_size < min_wqe_size) {
			verbs_err(&ctx->vctx,
				  "%s: %u slots of %u bytes, need a power of two of at least %llu bytes\n",
				  what, num_entries, wqe_size,
				  (unsigned long long)min_wqe_size);
			return EPROTO;
		}
		need = SCIRE_WQ_RING_HDR_SIZE + (uint64_t)num_entries * wqe_size;
		if (mmap_size < need) {
			verbs_err(&ctx->vctx,
				  "%s: mapping of %llu bytes, ring needs %llu\n",
				  what, (unsigned long long)mmap_size,
				  (unsigned long long)need);
			return EPROTO;
		}
		ring = mmap(NULL, (size_t)mmap_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, ctx->vctx.context.cmd_fd,
			    (off_t)mmap_offset);
		if (ring == MAP_FAILED)
			return errno;
	}

	ret = pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		if (ring)
			munmap(ring, (size_t)mmap_size);
		return ret;
	}
	wq->ring = ring;
	wq->map_size = ring ? (size_t)mmap_size : 0;
	wq->num_entries = num_entries;
	wq->wqe_size = wqe_size;
	/* A fresh ring: the kernel's consumer starts at 0 and so do we. */
	wq->prod = 0;
	return 0;
}

/* Undo scire_wq_setup(); only after the kernel object is gone. */
void scire_wq_teardown(struct scire_wq *wq)
{
	if (wq->ring)
		munmap(wq->ring, wq->map_size);
	wq->ring = NULL;
	pthread_spin_destroy(&wq->lock);
}

/* ---- doorbell ------------------------------------------------------------ */

/*
 * Tell the kernel to look at the rings named by queues (enum
 * scire_doorbell_flags). The system call orders every ring store before it
 * against the kernel's reads. Returns 0 or an errno.
 */
static int scire_qp_doorbell(struct scire_qp *qp, uint32_t queues)
{
	DECLARE_VERBS_CMD(cmd, UVERBS_OBJECT_QP, SCIRE_METHOD_QP_DOORBELL, 2);

	fill_attr_in_obj(cmd, SCIRE_ATTR_DOORBELL_QP_HANDLE, qp->vqp.qp.handle);
	fill_attr_in_uint32(cmd, SCIRE_ATTR_DOORBELL_FLAGS, queues);
	return execute_ioctl(qp->vqp.qp.context, cmd);
}

/*
 * The state libibverbs last recorded for the QP (ibv_modify_qp and
 * ibv_query_qp write it, without a lock, after our op returned).
 */
static enum ibv_qp_state scire_qp_state(struct scire_qp *qp)
{
	return __atomic_load_n(&qp->vqp.qp.state, __ATOMIC_RELAXED);
}

/* ---- ibv_post_send / ibv_post_recv ---------------------------------------- */

int scire_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct scire_qp *qp = to_scire_qp(ibqp);
	struct scire_wq *sq = &qp->sq;
	uint32_t posted = 0;
	int64_t room = 0;
	int ret = 0, db;

	/*
	 * Posting to a QP in Reset is an immediate error (IBA 10.3, QP
	 * states). It also keeps the rings at index 0 until the QP leaves
	 * RESET.
	 */
	if (scire_qp_state(qp) == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}

	scire_wq_lock(sq);
	for (; wr; wr = wr->next) {
		if (!room) {
			room = scire_wq_room(sq, sq->prod);
			if (room <= 0) {
				ret = room ? EIO : ENOMEM;
				break;
			}
		}
		ret = scire_wqe_from_send_wr(scire_wq_slot(sq, sq->prod),
					     &qp->sq_caps, wr);
		if (ret)
			break;
		/*
		 * The window's rkey is the new one from now on; a second bind
		 * of it in this list names it so (mw_rkey). If the bind fails
		 * the completion says so and the caller restores it.
		 */
		if (wr->opcode == IBV_WR_BIND_MW)
			wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
		sq->prod++;
		room--;
		posted++;
	}
	if (posted)
		scire_wq_publish(sq, sq->prod);
	scire_wq_unlock(sq);

	*bad_wr = ret ? wr : NULL;
	if (!posted)
		return ret;

	/*
	 * One doorbell for the whole list, outside the lock (it is a system
	 * call). If it fails the WQEs stay posted (they cannot be taken back
	 * once published) and the error is returned with *bad_wr NULL unless
	 * a work request had already failed.
	 */
	db = scire_qp_doorbell(qp, SCIRE_DOORBELL_SQ);
	return ret ? ret : db;
}

/*
 * ibv_bind_mw() of a type 1 window: one BIND_MW WQE on the SQ, like a
 * one-WR ibv_post_send(). On success the window's rkey is the new one at
 * once (ibv_bind_mw(3): the caller restores the old one if the completion
 * reports an error). Returns 0 or an errno: EINVAL (QP in RESET, a QP type
 * that cannot bind, a bad request), ENOMEM (SQ full), EIO, or the
 * doorbell's error once the WQE is posted.
 */
int scire_post_bind_mw1(struct ibv_qp *ibqp, struct ibv_mw *mw,
			const struct ibv_mw_bind *bind)
{
	struct scire_qp *qp = to_scire_qp(ibqp);
	struct scire_wq *sq = &qp->sq;
	uint32_t new_rkey;
	int64_t room;
	int ret;

	if (scire_qp_state(qp) == IBV_QPS_RESET)
		return EINVAL;

	scire_wq_lock(sq);
	room = scire_wq_room(sq, sq->prod);
	if (room <= 0) {
		ret = room ? EIO : ENOMEM;
	} else {
		ret = scire_wqe_from_bind1(scire_wq_slot(sq, sq->prod),
					   &qp->sq_caps, mw, bind, &new_rkey);
		if (!ret) {
			mw->rkey = new_rkey;
			sq->prod++;
			scire_wq_publish(sq, sq->prod);
		}
	}
	scire_wq_unlock(sq);
	if (ret)
		return ret;
	return scire_qp_doorbell(qp, SCIRE_DOORBELL_SQ);
}

/*
 * Post a list of receive work requests to an RQ or SRQ ring: as many as fit
 * and are valid, published together. Returns 0 or the errno of *bad_wr
 * (ENOMEM: ring full; EINVAL: bad SGE list; EIO: ring not ours any more);
 * *posted says how many went in.
 */
int scire_wq_post_recv(struct scire_wq *rq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr, uint32_t *posted)
{
	uint32_t n = 0;
	int64_t room = 0;
	int ret = 0;

	scire_wq_lock(rq);
	for (; wr; wr = wr->next) {
		if (!room) {
			room = scire_wq_room(rq, rq->prod);
			if (room <= 0) {
				ret = room ? EIO : ENOMEM;
				break;
			}
		}
		ret = scire_wqe_from_recv_wr(scire_wq_slot(rq, rq->prod),
					     rq->max_sge, wr);
		if (ret)
			break;
		rq->prod++;
		room--;
		n++;
	}
	if (n)
		scire_wq_publish(rq, rq->prod);
	scire_wq_unlock(rq);

	*bad_wr = ret ? wr : NULL;
	*posted = n;
	return ret;
}

int scire_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct scire_qp *qp = to_scire_qp(ibqp);
	uint32_t posted;
	int ret;

	/* Receives of an SRQ user go to the SRQ (ibv_post_srq_recv). */
	if (ibqp->srq || scire_qp_state(qp) == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}

	ret = scire_wq_post_recv(&qp->rq, wr, bad_wr, &posted);
	/*
	 * A QP in ERR flushes receive WQEs only when asked: the kernel sets
	 * the ring's error flag before flushing what it saw, and we check the
	 * flag after publishing, so one of us sees the other's WQEs.
	 */
	if (posted && scire_wq_in_error(&qp->rq)) {
		int db = scire_qp_doorbell(qp, SCIRE_DOORBELL_RQ);

		if (!ret)
			ret = db;
	}
	return ret;
}

/* ---- ibv_wr_* (struct ibv_qp_ex) ------------------------------------------ */

static void scire_wr_fail(struct scire_qp *qp, int err)
{
	if (!qp->ex.err)
		qp->ex.err = err;
}

static void scire_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);

	scire_wq_lock(&qp->sq);
	qp->ex.start = qp->sq.prod;
	qp->ex.room = 0;
	qp->ex.cur = NULL;
	qp->ex.err = 0;
	qp->ex.nbinds = 0;
}

/*
 * Last check of the session's current WQE, once no setter can follow: the
 * encoder's own check, and on a UD QP that ibv_wr_set_ud_addr() gave it a
 * destination (a WQE without one would name AH 0 and QP 0).
 */
static int scire_wr_check_cur(struct scire_qp *qp)
{
	uint8_t op = qp->ex.cur->opcode;

	/*
	 * UD needs an address, XRC a remote SRQ (0 is a valid number) for
	 * what goes to the target; a local invalidation or bind goes nowhere.
	 */
	if (qp->sq_caps.ud && !qp->ex.cur_addressed)
		return EINVAL;
	if (qp->sq_caps.xrc && !qp->ex.cur_addressed &&
	    op != SCIRE_WQE_OP_LOCAL_INV && op != SCIRE_WQE_OP_BIND_MW)
		return EINVAL;
	return scire_wqe_check(qp->ex.cur);
}

/* Forget every WQE of the session: the slots were never published. */
static void scire_wr_discard(struct scire_qp *qp)
{
	while (qp->ex.nbinds) {
		struct scire_mw_undo *u = &qp->ex.binds[--qp->ex.nbinds];

		u->mw->rkey = u->rkey;
	}
	qp->sq.prod = qp->ex.start;
	qp->ex.cur = NULL;
}

static int scire_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);
	int err = qp->ex.err;
	uint32_t n;

	if (!err && qp->ex.cur)
		err = scire_wr_check_cur(qp);
	if (!err && scire_qp_state(qp) == IBV_QPS_RESET)
		err = EINVAL;
	if (err) {
		/* ibv_wr_post(3): a failed session posts nothing. */
		scire_wr_discard(qp);
		scire_wq_unlock(&qp->sq);
		return err;
	}

	n = qp->sq.prod - qp->ex.start;
	if (n)
		scire_wq_publish(&qp->sq, qp->sq.prod);
	qp->ex.cur = NULL;
	scire_wq_unlock(&qp->sq);

	/* As in ibv_post_send(): one doorbell per batch, outside the lock. */
	return n ? scire_qp_doorbell(qp, SCIRE_DOORBELL_SQ) : 0;
}

static void scire_wr_abort(struct ibv_qp_ex *ibqpx)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);

	scire_wr_discard(qp);
	scire_wq_unlock(&qp->sq);
}

/*
 * Begin the next WQE of the session in the next free slot, with the
 * caller's wr_id and wr_flags. NULL if the session has failed (now or
 * before): the builder then does nothing.
 */
static struct scire_send_wqe *scire_wr_begin(struct scire_qp *qp, uint8_t op)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct scire_send_wqe *wqe;
	uint8_t flags;
	int64_t room;
	int err;

	if (qp->ex.err)
		return NULL;
	/* The previous WQE is complete now that no setter can follow. */
	if (qp->ex.cur) {
		err = scire_wr_check_cur(qp);
		qp->ex.cur = NULL;
		if (err) {
			scire_wr_fail(qp, err);
			return NULL;
		}
	}
	if (!qp->ex.room) {
		room = scire_wq_room(&qp->sq, qp->sq.prod);
		if (room <= 0) {
			scire_wr_fail(qp, room ? EIO : ENOMEM);
			return NULL;
		}
		qp->ex.room = (uint32_t)room;
	}
	/* Inline-ness comes from the setter, so IBV_SEND_INLINE is moot. */
	if (scire_wqe_flags(qpx->wr_flags & ~(unsigned int)IBV_SEND_INLINE,
			    &flags)) {
		scire_wr_fail(qp, EINVAL);
		return NULL;
	}

	wqe = scire_wq_slot(&qp->sq, qp->sq.prod);
	scire_wqe_init(wqe, op, flags, qpx->wr_id);
	qp->sq.prod++;
	qp->ex.room--;
	qp->ex.cur = wqe;
	qp->ex.cur_addressed = false;
	return wqe;
}

static void scire_wr_send(struct ibv_qp_ex *ibqpx)
{
	scire_wr_begin(to_scire_qp_ex(ibqpx), SCIRE_WQE_OP_SEND);
}

static void scire_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	struct scire_send_wqe *wqe;

	wqe = scire_wr_begin(to_scire_qp_ex(ibqpx), SCIRE_WQE_OP_SEND_IMM);
	if (wqe)
		wqe->imm_data = imm_data;
}

static void scire_wr_send_inv(struct ibv_qp_ex *ibqpx, uint32_t invalidate_rkey)
{
	struct scire_send_wqe *wqe;

	wqe = scire_wr_begin(to_scire_qp_ex(ibqpx), SCIRE_WQE_OP_SEND_INV);
	if (wqe)
		wqe->imm_data = invalidate_rkey;
}

static void scire_wr_rdma(struct ibv_qp_ex *ibqpx, uint8_t op, uint32_t rkey,
			  uint64_t remote_addr, __be32 imm_data)
{
	struct scire_send_wqe *wqe;

	wqe = scire_wr_begin(to_scire_qp_ex(ibqpx), op);
	if (!wqe)
		return;
	wqe->rdma.remote_addr = remote_addr;
	wqe->rdma.rkey = rkey;
	if (op == SCIRE_WQE_OP_RDMA_WRITE_IMM)
		wqe->imm_data = imm_data;
}

static void scire_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				uint64_t remote_addr)
{
	scire_wr_rdma(ibqpx, SCIRE_WQE_OP_RDMA_WRITE, rkey, remote_addr, 0);
}

static void scire_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	scire_wr_rdma(ibqpx, SCIRE_WQE_OP_RDMA_WRITE_IMM, rkey, remote_addr,
		      imm_data);
}

static void scire_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	scire_wr_rdma(ibqpx, SCIRE_WQE_OP_RDMA_READ, rkey, remote_addr, 0);
}

static void scire_wr_atomic(struct ibv_qp_ex *ibqpx, uint8_t op, uint32_t rkey,
			    uint64_t remote_addr, uint64_t compare_add,
			    uint64_t swap)
{
	struct scire_send_wqe *wqe;

	wqe = scire_wr_begin(to_scire_qp_ex(ibqpx), op);
	if (!wqe)
		return;
	wqe->atomic.remote_addr = remote_addr;
	wqe->atomic.compare_add = compare_add;
	wqe->atomic.swap = swap;
	wqe->atomic.rkey = rkey;
}

static void scire_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	scire_wr_atomic(ibqpx, SCIRE_WQE_OP_ATOMIC_CMP_SWP, rkey, remote_addr,
			compare, swap);
}

static void scire_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	scire_wr_atomic(ibqpx, SCIRE_WQE_OP_ATOMIC_FETCH_ADD, rkey, remote_addr,
			add, 0);
}

/* IBA 1.5 RDMA ATOMIC WRITE: the 8 bytes at atomic_wr, copied now. */
static void scire_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				  uint64_t remote_addr, const void *atomic_wr)
{
	struct scire_send_wqe *wqe;

	wqe = scire_wr_begin(to_scire_qp_ex(ibqpx), SCIRE_WQE_OP_ATOMIC_WRITE);
	if (!wqe)
		return;
	wqe->atomic_write.remote_addr = remote_addr;
	wqe->atomic_write.rkey = rkey;
	memcpy(wqe->atomic_write.value, atomic_wr,
	       sizeof(wqe->atomic_write.value));
}

#ifdef SCIRE_HAVE_WR_FLUSH
/*
 * IBA 1.5 RDMA FLUSH of len bytes at remote_addr (level IBV_FLUSH_RANGE) or
 * of the whole region rkey names (IBV_FLUSH_MR), for global visibility or
 * persistence (type). The RETH carries 32 bits of length: a longer range
 * fails the session with EINVAL; type and level are the responder's and
 * the kernel's to check.
 */
static void scire_wr_flush(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			   uint64_t remote_addr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);
	struct scire_send_wqe *wqe;

	if (len > UINT32_MAX) {
		scire_wr_fail(qp, EINVAL);
		return;
	}
	wqe = scire_wr_begin(qp, SCIRE_WQE_OP_FLUSH);
	if (!wqe)
		return;
	wqe->flush.remote_addr = remote_addr;
	wqe->flush.rkey = rkey;
	wqe->flush.length = (uint32_t)len;
	wqe->flush.type = type;
	wqe->flush.level = level;
}
#endif

static void scire_wr_local_inv(struct ibv_qp_ex *ibqpx, uint32_t invalidate_rkey)
{
	struct scire_send_wqe *wqe;

	wqe = scire_wr_begin(to_scire_qp_ex(ibqpx), SCIRE_WQE_OP_LOCAL_INV);
	if (wqe)
		wqe->imm_data = invalidate_rkey;
}

static void scire_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);
	struct scire_send_wqe *wqe;
	int err;

	wqe = scire_wr_begin(qp, SCIRE_WQE_OP_BIND_MW);
	if (!wqe)
		return;
	err = scire_wqe_set_bind(wqe, mw, rkey, bind_info);
	if (err) {
		scire_wr_fail(qp, err);
		return;
	}
	/*
	 * Every bind takes a slot, so a session never logs more binds than
	 * the ring has slots; the check only guards that arithmetic.
	 */
	if (qp->ex.nbinds >= qp->sq.num_entries) {
		scire_wr_fail(qp, ENOMEM);
		return;
	}
	/* As ibv_post_send() does, but undone if the session is discarded. */
	qp->ex.binds[qp->ex.nbinds++] = (struct scire_mw_undo){ mw, mw->rkey };
	mw->rkey = rkey;
}

/* The WQE a data setter applies to, or NULL after recording EINVAL. */
static struct scire_send_wqe *scire_wr_cur(struct scire_qp *qp)
{
	if (qp->ex.err)
		return NULL;
	if (!qp->ex.cur)
		scire_wr_fail(qp, EINVAL);	/* a setter with no builder */
	return qp->ex.cur;
}

static void scire_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);
	struct scire_send_wqe *wqe = scire_wr_cur(qp);
	int err;

	if (!wqe)
		return;
	/* Connected QPs have their destination in the QP context. */
	if (!qp->sq_caps.ud) {
		scire_wr_fail(qp, EINVAL);
		return;
	}
	err = scire_wqe_set_ud(wqe, ah, remote_qpn, remote_qkey);
	if (err) {
		scire_wr_fail(qp, err);
		return;
	}
	qp->ex.cur_addressed = true;
}

static void scire_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx, uint32_t remote_srqn)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);
	struct scire_send_wqe *wqe = scire_wr_cur(qp);

	if (!wqe)
		return;
	if (!qp->sq_caps.xrc || remote_srqn > 0xffffff) {
		scire_wr_fail(qp, EINVAL);
		return;
	}
	wqe->xrc_srqn = remote_srqn;
	qp->ex.cur_addressed = true;
}

static void scire_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);
	struct scire_send_wqe *wqe = scire_wr_cur(qp);
	int err;

	if (!wqe)
		return;
	err = scire_wqe_set_sge_list(wqe, &qp->sq_caps, num_sge, sg_list);
	if (err)
		scire_wr_fail(qp, err);
}

static void scire_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	scire_wr_set_sge_list(ibqpx, 1, &sge);
}

static void scire_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					  size_t num_buf,
					  const struct ibv_data_buf *buf_list)
{
	struct scire_qp *qp = to_scire_qp_ex(ibqpx);
	struct scire_send_wqe *wqe = scire_wr_cur(qp);
	size_t i;
	int err;

	if (!wqe)
		return;
	err = scire_wqe_start_inline(wqe);
	for (i = 0; !err && i < num_buf; i++)
		err = scire_wqe_add_inline(wqe, &qp->sq_caps, buf_list[i].addr,
					   buf_list[i].length);
	if (err)
		scire_wr_fail(qp, err);
}

static void scire_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				     size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	scire_wr_set_inline_data_list(ibqpx, 1, &buf);
}

/* IBV_QP_EX_WITH_* a QP with these caps can be asked for. */
static uint64_t scire_send_ops_supported(const struct scire_sq_caps *caps)
{
	uint64_t ops = 0;
	unsigned int op;

	for (op = 0; op < SCIRE_WQE_OP_MAX; op++)
		if (scire_op_allowed(caps, op))
			ops |= scire_op_info(op)->send_ops_flag;
	return ops;
}

/*
 * Offer the ibv_wr_* API with the builders asked for (send_ops_flags was
 * checked against scire_send_ops_supported()). Returns 0 or ENOMEM.
 */
static int scire_qp_ex_init(struct scire_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	if ((ops & IBV_QP_EX_WITH_BIND_MW) && qp->sq.num_entries) {
		qp->ex.binds = scire_obj_alloc(qp->pdom, qp->sq.num_entries *
					       sizeof(*qp->ex.binds),
					       SCIRE_OBJ_ALIGN,
					       SCIRE_RES_QP_BINDS,
					       &qp->binds_mem);
		if (!qp->ex.binds)
			return ENOMEM;
	}

	if (ops & IBV_QP_EX_WITH_SEND)
		x->wr_send = scire_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x->wr_send_imm = scire_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		x->wr_send_inv = scire_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		x->wr_rdma_write = scire_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x->wr_rdma_write_imm = scire_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		x->wr_rdma_read = scire_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		x->wr_atomic_cmp_swp = scire_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		x->wr_atomic_fetch_add = scire_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		x->wr_local_inv = scire_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		x->wr_bind_mw = scire_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		x->wr_atomic_write = scire_wr_atomic_write;
#ifdef SCIRE_HAVE_WR_FLUSH
	if (ops & IBV_QP_EX_WITH_FLUSH)
		x->wr_flush = scire_wr_flush;
#endif

	/*
	 * On every QP: libibverbs calls it unchecked, and on a connected QP
	 * the session then fails with EINVAL instead of calling NULL.
	 */
	x->wr_set_ud_addr = scire_wr_set_ud_addr;
	x->wr_set_xrc_srqn = scire_wr_set_xrc_srqn;
	x->wr_set_sge = scire_wr_set_sge;
	x->wr_set_sge_list = scire_wr_set_sge_list;
	x->wr_set_inline_data = scire_wr_set_inline_data;
	x->wr_set_inline_data_list = scire_wr_set_inline_data_list;
	x->wr_start = scire_wr_start;
	x->wr_complete = scire_wr_complete;
	x->wr_abort = scire_wr_abort;
	return 0;
}

/* ---- create / modify / query / destroy ------------------------------------- */

static bool scire_qp_type_ok(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD ||
	       type == IBV_QPT_RAW_PACKET;
}

/*
 * Every QP type scire offers needs both CQs; libibverbs would dereference
 * a NULL one while building the command, so say EINVAL first.
 */
static bool scire_qp_cqs_ok(const struct ibv_cq *send_cq,
			    const struct ibv_cq *recv_cq)
{
	return send_cq && recv_cq;
}

/*
 * Common tail of create_qp and create_qp_ex once the kernel QP exists:
 * check the response and map the rings. Returns 0 or an errno.
 */
static int scire_qp_setup(struct scire_context *ctx, struct scire_qp *qp,
			  const struct scire_create_qp_resp *resp)
{
	uint64_t sq_data, min_sq, min_rq;
	int ret;

	/* struct scire_send_wqe.num_sge is a byte. */
	if (resp->max_send_sge > UINT8_MAX) {
		verbs_err(&ctx->vctx, "QP %u: max_send_sge %u\n", resp->qpn,
			  resp->max_send_sge);
		return EPROTO;
	}
	sq_data = (uint64_t)resp->max_send_sge * sizeof(struct scire_sge);
	if (sq_data < resp->max_inline_data)
		sq_data = resp->max_inline_data;
	min_sq = sizeof(struct scire_send_wqe) + sq_data;
	min_rq = sizeof(struct scire_recv_wqe) +
		 (uint64_t)resp->max_recv_sge * sizeof(struct scire_sge);

	ret = scire_wq_setup(ctx, &qp->sq, "SQ", resp->sq_mmap_offset,
			     resp->sq_mmap_size, resp->sq_entries,
			     resp->sq_wqe_size, min_sq);
	if (ret)
		return ret;
	qp->sq.max_sge = resp->max_send_sge;
	qp->sq.max_inline = resp->max_inline_data;
	qp->sq_caps.max_sge = resp->max_send_sge;
	qp->sq_caps.max_inline = resp->max_inline_data;
	qp->sq_caps.uc = qp->vqp.qp.qp_type == IBV_QPT_UC;
	qp->sq_caps.ud = qp->vqp.qp.qp_type == IBV_QPT_UD;
	qp->sq_caps.xrc = qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND;
	qp->sq_caps.raw = qp->vqp.qp.qp_type == IBV_QPT_RAW_PACKET;

	/*
	 * With an SRQ the kernel maps no RQ: receives go to the SRQ. An XRC
	 * send QP receives nothing at all.
	 */
	if (qp->vqp.qp.srq || qp->sq_caps.xrc)
		ret = scire_wq_setup(ctx, &qp->rq, "RQ", 0, 0, 0, 0, 0);
	else
		ret = scire_wq_setup(ctx, &qp->rq, "RQ", resp->rq_mmap_offset,
				     resp->rq_mmap_size, resp->rq_entries,
				     resp->rq_wqe_size, min_rq);
	if (ret) {
		scire_wq_teardown(&qp->sq);
		return ret;
	}
	qp->rq.max_sge = qp->vqp.qp.srq || qp->sq_caps.xrc ?
			 0 : resp->max_recv_sge;
	return 0;
}

/*
 * An XRC receive QP, created or opened: the kernel's, with no queue here
 * (its receives come from the XRC SRQ each message names). Empty rings
 * keep post, reset and destroy uniform: posting to them finds no room.
 */
static int scire_qp_setup_none(struct scire_context *ctx, struct scire_qp *qp)
{
	int ret;

	ret = scire_wq_setup(ctx, &qp->sq, "SQ", 0, 0, 0, 0, 0);
	if (ret)
		return ret;
	ret = scire_wq_setup(ctx, &qp->rq, "RQ", 0, 0, 0, 0, 0);
	if (ret)
		scire_wq_teardown(&qp->sq);
	return ret;
}

/*
 * The provider's memory of a QP created with pd (a PD or a parent domain),
 * from the parent domain's allocators if it has them. NULL with errno set.
 */
static struct scire_qp *scire_qp_alloc(struct ibv_pd *pd)
{
	/* An XRC receive QP has an XRC domain instead of a PD. */
	struct scire_pd *pdom = pd ? scire_parent_domain(pd) : NULL;
	struct scire_obj_mem mem;
	struct scire_qp *qp;

	qp = scire_obj_alloc(pdom, sizeof(*qp), SCIRE_OBJ_ALIGN, SCIRE_RES_QP,
			     &mem);
	if (!qp)
		return NULL;
	qp->mem = mem;
	qp->pdom = pdom;
	return qp;
}

static void scire_qp_free(struct scire_qp *qp)
{
	struct scire_obj_mem mem = qp->mem;

	scire_obj_free(qp->ex.binds, SCIRE_RES_QP_BINDS, &qp->binds_mem);
	scire_obj_free(qp, SCIRE_RES_QP, &mem);
}

/*
 * The QP exists and is set up: a TD of its parent domain means one thread
 * uses it, and the parent domain may not go while the QP holds its
 * allocators.
 */
static void scire_qp_attach_pd(struct scire_qp *qp)
{
	if (qp->pdom && qp->pdom->td) {
		qp->sq.single_thread = true;
		qp->rq.single_thread = true;
	}
	scire_pd_get(qp->pdom);
}

struct ibv_qp *scire_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct scire_context *ctx = to_scire_ctx(pd->context);
	struct scire_create_qp_cmd_resp resp = {};
	struct scire_qp *qp;
	int ret;

	/*
	 * ibv_create_qp_ex() with only a PD comes here: an XRC send QP goes
	 * the way of create_qp_ex.
	 */
	if (attr->qp_type == IBV_QPT_XRC_SEND) {
		struct ibv_qp_init_attr_ex ex = {
			.qp_context = attr->qp_context,
			.send_cq = attr->send_cq,
			.recv_cq = attr->recv_cq,
			.srq = attr->srq,
			.cap = attr->cap,
			.qp_type = attr->qp_type,
			.sq_sig_all = attr->sq_sig_all,
			.comp_mask = IBV_QP_INIT_ATTR_PD,
			.pd = pd,
		};
		struct ibv_qp *ibqp = scire_create_qp_ex(pd->context, &ex);

		if (ibqp)
			attr->cap = ex.cap;
		return ibqp;
	}
	/* No raw packet QPs; QP1 is the kernel's own. */
	if (!scire_qp_type_ok(attr->qp_type)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!scire_qp_cqs_ok(attr->send_cq, attr->recv_cq)) {
		errno = EINVAL;
		return NULL;
	}

	qp = scire_qp_alloc(pd);
	if (!qp)
		return NULL;

	/* CREATE_QP takes no scire request payload: send none. */
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, NULL, 0, &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;

	ret = scire_qp_setup(ctx, qp, &resp.drv_payload);
	if (ret)
		goto err_destroy;
	scire_qp_attach_pd(qp);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	scire_qp_free(qp);
	errno = ret;
	return NULL;
}

/* Everything create_qp_ex can honour; the rest is EOPNOTSUPP. */
#define SCIRE_QP_INIT_ATTR_MASK						\
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |			\
	 IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | \
	 IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH)

/* CREATE_QP with scire's request: an RSS QP's hash. */
VERBS_FAM_NESTED_BEGIN
struct scire_create_qp_rss_cmd {
	struct ibv_create_qp_ex ibv_cmd;
	struct scire_create_qp_rss drv_payload;
};
VERBS_FAM_NESTED_END
_Static_assert(offsetof(struct scire_create_qp_rss_cmd, drv_payload) ==
	       sizeof(struct ibv_create_qp_ex), "no padding before the request");

/*
 * An RSS QP (as mlx5 offers them): a raw packet QP over an
 * indirection table of WQs, with a Toeplitz hash. It has no queues and
 * no CQs, and receives only, through the table's WQs.
 */
static bool scire_qp_rss_attr_ok(const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;

	return attr->qp_type == IBV_QPT_RAW_PACKET &&
	       (attr->comp_mask & IBV_QP_INIT_ATTR_PD) && attr->pd &&
	       (attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) &&
	       attr->rwq_ind_tbl && !attr->srq &&
	       h->rx_hash_key_len == SCIRE_RSS_KEY_LEN && h->rx_hash_key;
}

static struct ibv_qp *scire_create_rss_qp(struct ibv_context *ibctx,
					  struct ibv_qp_init_attr_ex *attr)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);
	struct scire_create_qp_ex_cmd_resp resp = {};
	struct scire_create_qp_rss_cmd cmd = {};
	struct scire_qp *qp;
	int ret;

	if (!scire_qp_rss_attr_ok(attr)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->rx_hash_conf.rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ ||
	    (attr->rx_hash_conf.rx_hash_fields_mask & ~SCIRE_RX_HASH_FIELDS) ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cmd.drv_payload.rx_hash_fields_mask = attr->rx_hash_conf.rx_hash_fields_mask;
	cmd.drv_payload.rx_hash_function = attr->rx_hash_conf.rx_hash_function;
	cmd.drv_payload.rx_hash_key_len = attr->rx_hash_conf.rx_hash_key_len;
	memcpy(cmd.drv_payload.rx_hash_key, attr->rx_hash_conf.rx_hash_key,
	       SCIRE_RSS_KEY_LEN);

	qp = scire_qp_alloc(attr->pd);
	if (!qp)
		return NULL;
	ret = scire_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				      sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = scire_qp_setup_none(ctx, qp);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		goto err_free;
	}
	scire_qp_attach_pd(qp);
	return &qp->vqp.qp;

err_free:
	scire_qp_free(qp);
	errno = ret;
	return NULL;
}

/*
 * create_qp_ex's QP types: RC, UC, UD, and XRC's two halves (annex A19):
 * a send QP (a PD, a send CQ, no RQ) and a receive QP (an XRC domain, no
 * CQ or queue). Is attr complete for its type?
 */
static bool scire_qp_ex_attr_ok(const struct ibv_qp_init_attr_ex *attr)
{
	switch (attr->qp_type) {
	case IBV_QPT_XRC_SEND:
		return (attr->comp_mask & IBV_QP_INIT_ATTR_PD) && attr->pd &&
		       attr->send_cq && !attr->srq;
	case IBV_QPT_XRC_RECV:
		return (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) &&
		       attr->xrcd;
	default:
		return (attr->comp_mask & IBV_QP_INIT_ATTR_PD) && attr->pd &&
		       scire_qp_cqs_ok(attr->send_cq, attr->recv_cq);
	}
}

struct ibv_qp *scire_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);
	struct scire_create_qp_ex_cmd_resp resp = {};
	struct scire_sq_caps caps = { .uc = attr->qp_type == IBV_QPT_UC,
				      .ud = attr->qp_type == IBV_QPT_UD,
				      .xrc = attr->qp_type == IBV_QPT_XRC_SEND,
				      .raw = attr->qp_type == IBV_QPT_RAW_PACKET };
	bool xrc_recv = attr->qp_type == IBV_QPT_XRC_RECV;
	uint64_t ops = 0;
	struct scire_qp *qp;
	int ret;

	if (attr->comp_mask & (IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH))
		return scire_create_rss_qp(ibctx, attr);
	/* No TSO, create flags or builders scire cannot carry. */
	if ((attr->comp_mask & ~(uint32_t)SCIRE_QP_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    (!scire_qp_type_ok(attr->qp_type) && !caps.xrc && !xrc_recv)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!scire_qp_ex_attr_ok(attr)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		if (xrc_recv || (ops & ~scire_send_ops_supported(&caps))) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}

	qp = scire_qp_alloc(xrc_recv ? NULL : attr->pd);
	if (!qp)
		return NULL;

	ret = scire_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, NULL, 0,
				      &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	/*
	 * An XRC send QP has no receive side: the kernel took no reference
	 * on a receive CQ the caller may have named, which may therefore go
	 * at any time; forget it.
	 */
	if (caps.xrc) {
		qp->vqp.qp.recv_cq = NULL;
		qp->vqp.qp.srq = NULL;
	}
	/* The kernel answers an XRC receive QP without a scire payload. */
	if (xrc_recv)
		ret = scire_qp_setup_none(ctx, qp);
	else
		ret = scire_qp_setup(ctx, qp, &resp.drv_payload);
	if (ret)
		goto err_destroy;

	/* The command zeroed comp_mask; ibv_qp_to_qp_ex() reads it. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = scire_qp_ex_init(qp, ops);
		if (ret)
			goto err_teardown;
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	scire_qp_attach_pd(qp);
	return &qp->vqp.qp;

err_teardown:
	scire_wq_teardown(&qp->rq);
	scire_wq_teardown(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	scire_qp_free(qp);
	errno = ret;
	return NULL;
}

/*
 * The QP went to RESET or was destroyed: the kernel produces no more CQEs
 * for it (both commands wait for its runs to end), and those still unpolled
 * on its CQs describe work requests that no longer exist. Remove them, as
 * mlx5 does, so a QP brought back from RESET does not report stale flushes.
 */
static void scire_qp_clean_cqs(struct ibv_qp *ibqp)
{
	if (ibqp->recv_cq)
		scire_cq_clean(ibqp->recv_cq, ibqp->qp_num);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		scire_cq_clean(ibqp->send_cq, ibqp->qp_num);
}

int scire_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct scire_qp *qp = to_scire_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	/* MODIFY_QP takes no scire payload. */
	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;

	/*
	 * On any move to RESET the kernel has dropped every WQE and set its
	 * consumers to 0 before the command returned: follow with our
	 * producers, so the QP starts again from slot 0 with no work request
	 * left (IBA 10.3, the Reset state).
	 */
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		scire_wq_lock(&qp->sq);
		scire_wq_reset(&qp->sq);
		scire_wq_unlock(&qp->sq);
		scire_wq_lock(&qp->rq);
		scire_wq_reset(&qp->rq);
		scire_wq_unlock(&qp->rq);
		scire_qp_clean_cqs(ibqp);
	}
	return 0;
}

/*
 * ibv_create_flow(): steer received Ethernet frames to a raw packet QP.
 * The kernel does the steering (kernel/scire_raw.c); the flow is only a
 * handle here.
 */
struct ibv_flow *scire_create_flow(struct ibv_qp *ibqp,
				   struct ibv_flow_attr *attr)
{
	struct ibv_flow *flow;
	int ret;

	flow = calloc(1, sizeof(*flow));
	if (!flow) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_flow(ibqp, flow, attr, NULL, 0);
	if (ret) {
		free(flow);
		errno = ret;
		return NULL;
	}
	return flow;
}

int scire_destroy_flow(struct ibv_flow *flow)
{
	int ret = ibv_cmd_destroy_flow(flow);

	if (ret)
		return ret;
	free(flow);
	return 0;
}

/*
 * ibv_open_qp(): a handle to an XRC receive QP another process (or this
 * one) created in an XRC domain this context has opened.
 */
struct ibv_qp *scire_open_qp(struct ibv_context *ibctx,
			     struct ibv_qp_open_attr *attr)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct scire_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = scire_qp_alloc(NULL);
	if (!qp)
		return NULL;
	ret = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = scire_qp_setup_none(ctx, qp);
	if (ret)
		goto err_destroy;
	scire_qp_attach_pd(qp);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	scire_qp_free(qp);
	errno = ret;
	return NULL;
}

int scire_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int scire_destroy_qp(struct ibv_qp *ibqp)
{
	struct scire_qp *qp = to_scire_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;	/* the QP stays usable */

	/* The kernel no longer reads the rings; our mappings can go. */
	scire_qp_clean_cqs(ibqp);
	scire_wq_teardown(&qp->rq);
	scire_wq_teardown(&qp->sq);
	scire_pd_put(qp->pdom);
	scire_qp_free(qp);
	return 0;
}
