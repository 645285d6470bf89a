// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: fences. A mark of this endpoint's RMAs is the sequence
 * number of the last batch of RMA WRs posted (scif_rma.h), without bit 31;
 * waiting for it is waiting for that batch's completion, which RC delivers
 * after every earlier one. A mark of the peer's RMAs (SCIF_FENCE_INIT_PEER)
 * is the peer's own mark with SCIF_REMOTE_FENCE set, and waiting for it
 * asks the peer to wait. A signal of this endpoint's RMAs writes a local
 * window with the CPU once the mark completes, and a peer window with an
 * RDMA WRITE queued behind the RMAs; a signal of the peer's RMAs asks the
 * peer to do the same with the sides swapped.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "scif_main.h"

#define SCIF_MARK_MASK		(~SCIF_REMOTE_FENCE)
#define SCIF_SIGNAL_FLAGS	(SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE)
#define SCIF_INIT_FLAGS		(SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER)

/**
 * struct scif_mark_msg - SCIF_MSG_FENCE_WAIT request, SCIF_MSG_FENCE_MARK reply
 * @mark: a mark of the peer's RMAs, without SCIF_REMOTE_FENCE
 */
struct scif_mark_msg {
	__le32 mark;
};

/**
 * struct scif_sig_msg - SCIF_MSG_FENCE_SIGNAL: a signal of the peer's RMAs,
 *	in the requester's terms
 * @loff: offset in the requester's windows (SCIF_SIGNAL_LOCAL)
 * @lval: value for it
 * @roff: offset in the peer's windows (SCIF_SIGNAL_REMOTE)
 * @rval: value for it
 * @flags: SCIF_SIGNAL_LOCAL and/or SCIF_SIGNAL_REMOTE
 * @rsvd: zero
 */
struct scif_sig_msg {
	__le64 loff;
	__le64 lval;
	__le64 roff;
	__le64 rval;
	__le32 flags;
	__le32 rsvd;
};

/**
 * scif_win_write() - store a u64 into a self window with the CPU
 * @win: the window (its pages are pinned)
 * @off: offset of the value in @win (4-byte aligned; may cross a page)
 * @val: the value
 *
 * Context: any; does not sleep.
 */
void scif_win_write(struct scif_window *win, u64 off, u64 val)
{
	const u8 *src = (const u8 *)&val;
	size_t left = sizeof(val);

	while (left) {
		struct page *page = win->pages[off >> PAGE_SHIFT];
		size_t in = offset_in_page(off), n = min(left, PAGE_SIZE - in);
		u8 *p = kmap_local_page(page);

		memcpy(p + in, src, n);
		kunmap_local(p);
		flush_dcache_page(page);
		src += n;
		off += n;
		left -= n;
	}
}

/**
 * scif_fence_complete() - write the local signals whose mark has completed
 * @ep: the endpoint
 *
 * Context: RMA completion; the caller holds @ep->rma.slock and has just
 * advanced @ep->rma.done.
 */
void scif_fence_complete(struct scif_endpt *ep)
{
	struct scif_rma_info *rma = &ep->rma;
	struct scif_signal *sig, *tmp;

	list_for_each_entry_safe(sig, tmp, &rma->signals, list) {
		if (sig->seq > rma->done)
			break;
		scif_win_write(sig->win, sig->off, sig->val);
		list_del(&sig->list);
		kfree(sig);
	}
}

/**
 * scif_fence_ep_teardown() - drop the signals that will never be written
 * @ep: the endpoint, whose QP is drained
 *
 * Context: process; the caller holds @ep->rma.lock.
 */
void scif_fence_ep_teardown(struct scif_endpt *ep)
{
	struct scif_rma_info *rma = &ep->rma;
	struct scif_signal *sig, *tmp;

	spin_lock_irq(&rma->slock);
	list_for_each_entry_safe(sig, tmp, &rma->signals, list) {
		list_del(&sig->list);
		kfree(sig);
	}
	spin_unlock_irq(&rma->slock);
}

/* This endpoint's mark: the last batch posted. */
static int scif_mark_self(struct scif_endpt *ep)
{
	u64 issued;

	spin_lock_irq(&ep->rma.slock);
	issued = ep->rma.issued;
	spin_unlock_irq(&ep->rma.slock);
	return issued & SCIF_MARK_MASK;
}

/* The batch this endpoint's mark @mark stands for. */
static u64 scif_mark_seq(struct scif_endpt *ep, u32 mark)
{
	struct scif_rma_info *rma = &ep->rma;
	u64 seq, back;

	spin_lock_irq(&rma->slock);
	/*
	 * The latest batch number not after @issued whose low 31 bits are
	 * @mark; a mark from before the first batch is reached at once.
	 */
	back = (rma->issued - mark) & SCIF_MARK_MASK;
	seq = back > rma->issued ? 0 : rma->issued - back;
	spin_unlock_irq(&rma->slock);
	return seq;
}

static int scif_wait_self(struct scif_endpt *ep, u32 mark)
{
	return scif_rma_wait(ep, scif_mark_seq(ep, mark), true, SCIF_TIMEOUT);
}

/*
 * A signal of this endpoint's RMAs: @lval at @loff of its windows and/or
 * @rval at @roff of the peer's, after every RMA posted so far. Both
 * offsets are checked before anything is written.
 */
static int scif_signal_self(struct scif_endpt *ep, u64 loff, u64 lval, u64 roff,
			    u64 rval, int sig)
{
	struct scif_rma_info *rma = &ep->rma;
	struct scif_window *lwin = NULL, *rwin = NULL;
	struct scif_signal *rec = NULL;
	int ret = 0;
	u64 seq;

	if (sig & SCIF_SIGNAL_LOCAL) {
		rec = kzalloc(sizeof(*rec), GFP_KERNEL);
		if (!rec)
			return -ENOMEM;
	}
	down_read(&ep->res_sem);
	if (ep->qp_dead || !ep->qp) {
		ret = scif_ep_verify(ep) ?: -ECONNRESET;
		goto out;
	}
	mutex_lock(&rma->lock);
	if (sig & SCIF_SIGNAL_LOCAL) {
		lwin = scif_win_find(&rma->self, loff, sizeof(u64), SCIF_PROT_WRITE, &ret);
		if (lwin && loff + sizeof(u64) - 1 > lwin->it.last) {
			lwin = NULL;
			ret = -ENXIO;
		}
		if (!lwin)
			goto unlock;
	}
	if (sig & SCIF_SIGNAL_REMOTE) {
		rwin = scif_win_find(&rma->peer, roff, sizeof(u64), SCIF_PROT_WRITE, &ret);
		if (rwin && roff + sizeof(u64) - 1 > rwin->it.last) {
			rwin = NULL;
			ret = -ENXIO;
		}
		if (!rwin)
			goto unlock;
		ret = scif_rma_post_signal(ep, rwin, roff - rwin->it.start, rval);
		if (ret)
			goto unlock;
	}
	if (lwin) {
		rec->win = lwin;
		rec->off = loff - lwin->it.start;
		rec->val = lval;
		spin_lock_irq(&rma->slock);
		seq = rma->issued;
		rec->seq = seq;
		/* Unregister frees the window only once this mark is done. */
		lwin->last_seq = max(lwin->last_seq, seq);
		if (rma->broken) {
			ret = -ECONNRESET;
		} else if (rma->done >= rec->seq && list_empty(&rma->signals)) {
			scif_win_write(lwin, rec->off, lval);
		} else {
			list_add_tail(&rec->list, &rma->signals);
			rec = NULL;
		}
		spin_unlock_irq(&rma->slock);
		/* Its batch may have gone without a completion to write it. */
		if (!rec && !ret)
			ret = scif_rma_cover(ep, seq);
	}
unlock:
	mutex_unlock(&rma->lock);
out:
	up_read(&ep->res_sem);
	kfree(rec);
	return ret;
}

/**
 * scif_fence_mark() - mark the RMAs initiated so far on one side
 * @epd: a connected endpoint
 * @flags: exactly one of SCIF_FENCE_INIT_SELF (this endpoint's RMAs) and
 *	SCIF_FENCE_INIT_PEER (the peer endpoint's RMAs)
 * @mark: set to the mark, for scif_fence_wait(); a mark of the peer's
 *	RMAs has SCIF_REMOTE_FENCE set
 *
 * (SCIF header: scif_fence_mark.)
 *
 * Context: process; sleeps (SCIF_FENCE_INIT_PEER asks the peer).
 * Return: 0; -EINVAL for bad flags or a NULL @mark; -ENOTCONN;
 * -ECONNRESET; -ETIMEDOUT when the peer does not answer; -ENOMEM.
 */
int scif_fence_mark(scif_epd_t epd, int flags, int *mark)
{
	struct scif_endpt *ep = epd;
	struct scif_mark_msg resp = {};
	int ret;

	if (!mark || (flags != SCIF_FENCE_INIT_SELF && flags != SCIF_FENCE_INIT_PEER))
		return -EINVAL;
	ret = scif_ep_verify(ep);
	if (ret)
		return ret;
	if (flags == SCIF_FENCE_INIT_SELF) {
		*mark = scif_mark_self(ep);
		return 0;
	}
	ret = scif_msg_call(ep, SCIF_MSG_FENCE_MARK, NULL, 0, &resp, sizeof(resp),
			    SCIF_TIMEOUT);
	if (ret)
		return ret;
	*mark = (le32_to_cpu(resp.mark) & SCIF_MARK_MASK) | SCIF_REMOTE_FENCE;
	return 0;
}
EXPORT_SYMBOL_GPL(scif_fence_mark);

/**
 * scif_fence_wait() - wait until the RMAs of a mark have completed
 * @epd: a connected endpoint
 * @mark: from scif_fence_mark() on @epd
 *
 * Waits at most SCIF_TIMEOUT (30 s), on the peer too for a peer's mark.
 * (SCIF header: scif_fence_wait.)
 *
 * Context: process; sleeps (interruptible).
 * Return: 0; -ENOTCONN; -ECONNRESET (also when a marked RMA failed);
 * -ETIMEDOUT; -EINTR; -ENOMEM.
 */
int scif_fence_wait(scif_epd_t epd, int mark)
{
	struct scif_endpt *ep = epd;
	struct scif_mark_msg req;
	int ret;

	ret = scif_ep_verify(ep);
	if (ret)
		return ret;
	if (!((u32)mark & SCIF_REMOTE_FENCE))
		return scif_wait_self(ep, mark);
	req.mark = cpu_to_le32((u32)mark & SCIF_MARK_MASK);
	return scif_msg_call(ep, SCIF_MSG_FENCE_WAIT, &req, sizeof(req), NULL, 0,
			     2 * SCIF_TIMEOUT);
}
EXPORT_SYMBOL_GPL(scif_fence_wait);

/**
 * scif_fence_signal() - write values once the RMAs initiated so far on one
 *	side have completed
 * @epd: a connected endpoint
 * @loff: with SCIF_SIGNAL_LOCAL, where in this endpoint's windows (4-byte
 *	aligned, the 8 bytes in one writable window)
 * @lval: the u64 written there
 * @roff: with SCIF_SIGNAL_REMOTE, where in the peer's windows (likewise)
 * @rval: the u64 written there
 * @flags: exactly one of SCIF_FENCE_INIT_SELF and SCIF_FENCE_INIT_PEER
 *	(whose RMAs), and SCIF_SIGNAL_LOCAL and/or SCIF_SIGNAL_REMOTE
 *
 * Returns once the writes are queued: a local value is stored when the
 * marked RMAs have completed, a remote one is an RDMA WRITE behind them.
 * With SCIF_FENCE_INIT_PEER the peer queues the writes behind its RMAs.
 * (SCIF header: scif_fence_signal.)
 *
 * Context: process; sleeps.
 * Return: 0; -EINVAL for bad flags or unaligned offsets; -ENXIO when an
 * offset is not in a window (or is negative); -EACCES when the window is
 * not writable; -ENOTCONN; -ECONNRESET; -ETIMEDOUT; -ENOMEM.
 */
int scif_fence_signal(scif_epd_t epd, off_t loff, u64 lval, off_t roff,
		      u64 rval, int flags)
{
	struct scif_endpt *ep = epd;
	int sig = flags & SCIF_SIGNAL_FLAGS, init = flags & SCIF_INIT_FLAGS;
	struct scif_sig_msg req = {};
	int ret;

	if (flags & ~(SCIF_SIGNAL_FLAGS | SCIF_INIT_FLAGS) || !sig ||
	    (init != SCIF_FENCE_INIT_SELF && init != SCIF_FENCE_INIT_PEER))
		return -EINVAL;
	if ((sig & SCIF_SIGNAL_LOCAL && loff & 3) ||
	    (sig & SCIF_SIGNAL_REMOTE && roff & 3))
		return -EINVAL;
	if ((sig & SCIF_SIGNAL_LOCAL && loff < 0) ||
	    (sig & SCIF_SIGNAL_REMOTE && roff < 0))
		return -ENXIO;
	ret = scif_ep_verify(ep);
	if (ret)
		return ret;
	if (init == SCIF_FENCE_INIT_SELF)
		return scif_signal_self(ep, loff, lval, roff, rval, sig);
	req.loff = cpu_to_le64(loff);
	req.lval = cpu_to_le64(lval);
	req.roff = cpu_to_le64(roff);
	req.rval = cpu_to_le64(rval);
	req.flags = cpu_to_le32(sig);
	return scif_msg_call(ep, SCIF_MSG_FENCE_SIGNAL, &req, sizeof(req), NULL, 0,
			     SCIF_TIMEOUT);
}
EXPORT_SYMBOL_GPL(scif_fence_signal);

/**
 * scif_fence_handle_msg() - a fence request of the peer
 * @ep: the endpoint it came on
 * @type: SCIF_MSG_FENCE_MARK, _WAIT or _SIGNAL
 * @cookie: to answer with
 * @payload: @len bytes
 * @len: bytes
 *
 * Context: process (the endpoint's control work); a wait blocks the
 * endpoint's later requests until it ends (at most SCIF_TIMEOUT).
 */
void scif_fence_handle_msg(struct scif_endpt *ep, u16 type, u64 cookie,
			   const void *payload, u32 len)
{
	const struct scif_mark_msg *mreq = payload;
	const struct scif_sig_msg *sreq = payload;
	struct scif_mark_msg resp;
	int ret, sig, swapped = 0;
	u64 loff, roff;

	switch (type) {
	case SCIF_MSG_FENCE_MARK:
		resp.mark = cpu_to_le32(scif_mark_self(ep));
		scif_msg_reply(ep, cookie, 0, &resp, sizeof(resp));
		return;
	case SCIF_MSG_FENCE_WAIT:
		ret = len == sizeof(*mreq) ?
		      scif_wait_self(ep, le32_to_cpu(mreq->mark) & SCIF_MARK_MASK) :
		      -EPROTO;
		break;
	case SCIF_MSG_FENCE_SIGNAL:
		if (len != sizeof(*sreq)) {
			ret = -EPROTO;
			break;
		}
		sig = le32_to_cpu(sreq->flags);
		loff = le64_to_cpu(sreq->loff);
		roff = le64_to_cpu(sreq->roff);
		if (!sig || sig & ~SCIF_SIGNAL_FLAGS) {
			ret = -EINVAL;
			break;
		}
		/* The requester's local window is this side's remote one. */
		if (sig & SCIF_SIGNAL_LOCAL)
			swapped |= SCIF_SIGNAL_REMOTE;
		if (sig & SCIF_SIGNAL_REMOTE)
			swapped |= SCIF_SIGNAL_LOCAL;
		if ((swapped & SCIF_SIGNAL_LOCAL && (roff & 3 || (s64)roff < 0)) ||
		    (swapped & SCIF_SIGNAL_REMOTE && (loff & 3 || (s64)loff < 0))) {
			ret = -EINVAL;
			break;
		}
		ret = scif_signal_self(ep, roff, le64_to_cpu(sreq->rval), loff,
				       le64_to_cpu(sreq->lval), swapped);
		break;
	default:
		ret = -EOPNOTSUPP;
	}
	scif_msg_reply(ep, cookie, ret, NULL, 0);
}
