// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: an endpoint's RC connection: its verbs resources, the
 * messages on it (stream data, window updates, control requests and
 * replies) and their completions. The layout and the flow control are
 * described in scif_main.h.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "scif_main.h"

static unsigned int scif_recv_poll_us = 200;
module_param_named(recv_poll_us, scif_recv_poll_us, uint, 0644);
MODULE_PARM_DESC(recv_poll_us,
		 "microseconds a blocking scif_recv() polls for data on an otherwise idle CPU before it sleeps (default 200; 0: sleep at once)");

/**
 * struct scif_call - a control request waiting for its reply
 * @resp: where the reply's payload goes
 * @resp_len: room there, bytes
 * @status: the reply's status
 * @done: the reply arrived
 */
struct scif_call {
	void *resp;
	u32 resp_len;
	int status;
	bool done;
};

/**
 * struct scif_ctl - a received control request, for the endpoint's work
 * @list: on the endpoint's ctl_list
 * @type: enum scif_msg_type
 * @cookie: to answer with
 * @len: payload bytes
 * @payload: the bytes
 */
struct scif_ctl {
	struct list_head list;
	u16 type;
	u64 cookie;
	u32 len;
	u8 payload[];
};

static bool scif_connected(struct scif_endpt *ep)
{
	return READ_ONCE(ep->state) == SCIFEP_CONNECTED;
}

/* scif_send() may go on: the peer's ring has room, or the connection is gone. */
static bool scif_tx_room(struct scif_endpt *ep)
{
	return !scif_connected(ep) ||
	       READ_ONCE(ep->tx_sent) - READ_ONCE(ep->tx_acked) < SCIF_RX_RING;
}

/* scif_recv() may go on: bytes are in the ring, or the connection is gone. */
static bool scif_rx_ready(struct scif_endpt *ep)
{
	return !scif_connected(ep) ||
	       READ_ONCE(ep->rx_head) != READ_ONCE(ep->rx_tail);
}

/**
 * scif_rx_sync() - take in what a reader in user space has read
 * @ep: the endpoint
 *
 * A process that maps the receive ring (struct scire_scif_rx_ring) reads
 * the stream without a system call and moves @ep->rx_ctl->tail itself.
 * The value becomes @ep->rx_tail when it is valid: not behind @ep->rx_tail
 * and not past @ep->rx_head. Anything else is ignored, so a process that
 * writes nonsense there only stalls its own stream.
 *
 * Context: any; the caller holds @ep->slock.
 */
void scif_rx_sync(struct scif_endpt *ep)
{
	u64 tail;

	lockdep_assert_held(&ep->slock);
	if (!ep->rx_ctl)
		return;
	/* Pairs with the reader's release: it is done with those bytes. */
	tail = smp_load_acquire(&ep->rx_ctl->tail);
	if (tail - ep->rx_tail <= ep->rx_head - ep->rx_tail)
		ep->rx_tail = tail;
}

/*
 * Take the ring's reader lock (see struct scire_scif_rx_ring) for the
 * kernel. A reader in user space holds it for one copy; one that keeps it
 * stalls only this endpoint's readers, and a signal ends the wait.
 */
static int scif_rx_lock(struct scif_endpt *ep)
{
	unsigned int tries = 0;

	if (!ep->rx_ctl)
		return 0;
	while (cmpxchg(&ep->rx_ctl->lock, 0, SCIRE_SCIF_RX_LOCK_KERNEL)) {
		if (signal_pending(current))
			return -EINTR;
		if (++tries < 64)
			cond_resched();
		else
			schedule_timeout_interruptible(1);
	}
	return 0;
}

static void scif_rx_unlock(struct scif_endpt *ep)
{
	if (!ep->rx_ctl)
		return;
	/* The copy and the tail store come before the next holder's view. */
	smp_store_release(&ep->rx_ctl->lock, 0);
}

/**
 * scif_conn_lost() - the connection is gone (peer closed, link or QP error)
 * @ep: the endpoint
 *
 * A connected endpoint becomes SCIFEP_DISCONNECTED: what it received can
 * still be read, every other call fails with ECONNRESET. One still
 * connecting remembers it in @ep->conn_err, for scif_conn_established().
 * Waiters wake.
 *
 * Context: any; does not sleep.
 */
void scif_conn_lost(struct scif_endpt *ep)
{
	bool lost = false;

	spin_lock_bh(&ep->slock);
	if (ep->state == SCIFEP_CONNECTED) {
		ep->state = SCIFEP_DISCONNECTED;
		lost = true;
	} else if (ep->state == SCIFEP_CONNECTING && !ep->conn_err) {
		ep->conn_err = -ECONNRESET;
	}
	spin_unlock_bh(&ep->slock);
	if (lost)
		scif_rma_ep_disconnected(ep);
	wake_up_all(&ep->wq);
}

/*
 * Wake the endpoint's waiters (wait_event*() on @ep->wq, scif_poll(), a
 * poll() of /dev/scif) after what they wait for changed, for the changes
 * every message makes. Usually no one is there (a blocking reader polls
 * before it sleeps, scif_recv_poll()), and wake_up_all() would take the
 * wait queue's lock for nothing twice a message. wq_has_sleeper()'s
 * barrier pairs with the one of prepare_to_wait_event() (a waiter is on
 * the queue before it tests its condition); poll callers test theirs
 * under ep->slock, which the change was made under.
 */
static void scif_wake(struct scif_endpt *ep)
{
	if (wq_has_sleeper(&ep->wq))
		wake_up_all(&ep->wq);
}

/* --- send queue slots and message buffers ------------------------------------- */

/**
 * scif_sq_get() - reserve send queue slots
 * @ep: a connected endpoint
 * @n: slots (WRs) the caller will post, 1 .. SCIF_SQ_DEPTH
 *
 * Each completion of a WR posted with a reserved slot must give it back
 * with scif_sq_put().
 *
 * Context: process; sleeps until enough slots are free.
 * Return: 0, or -ECONNRESET / -ENOTCONN when the endpoint is (or gets) not
 * connected, -EINVAL for a bad @n.
 */
int scif_sq_get(struct scif_endpt *ep, int n)
{
	int ret;

	if (n < 1 || n > SCIF_SQ_DEPTH)
		return -EINVAL;
	for (;;) {
		spin_lock_bh(&ep->slock);
		ret = scif_ep_verify(ep);
		if (!ret && ep->sq_avail >= n) {
			ep->sq_avail -= n;
			spin_unlock_bh(&ep->slock);
			return 0;
		}
		spin_unlock_bh(&ep->slock);
		if (ret)
			return ret;
		wait_event(ep->wq, READ_ONCE(ep->sq_avail) >= n || !scif_connected(ep));
	}
}

/**
 * scif_sq_put() - give back send queue slots
 * @ep: the endpoint
 * @n: slots, as many as a completion (or a failed post) frees
 *
 * Context: any.
 */
void scif_sq_put(struct scif_endpt *ep, int n)
{
	spin_lock_bh(&ep->slock);
	ep->sq_avail += n;
	spin_unlock_bh(&ep->slock);
	scif_wake(ep);
}

static struct scif_buf *scif_tx_get(struct scif_endpt *ep)
{
	int i, ret;

	for (;;) {
		spin_lock_bh(&ep->slock);
		ret = scif_ep_verify(ep);
		i = find_first_bit(ep->tx_free, SCIF_TX_DEPTH);
		if (!ret && i < SCIF_TX_DEPTH && ep->sq_avail > 0) {
			__clear_bit(i, ep->tx_free);
			ep->sq_avail--;
			spin_unlock_bh(&ep->slock);
			return &ep->tx[i];
		}
		spin_unlock_bh(&ep->slock);
		if (ret)
			return ERR_PTR(ret);
		wait_event(ep->wq, !scif_connected(ep) ||
			   (READ_ONCE(ep->sq_avail) > 0 &&
			    find_first_bit(ep->tx_free, SCIF_TX_DEPTH) < SCIF_TX_DEPTH));
	}
}

static void scif_tx_put(struct scif_buf *buf)
{
	struct scif_endpt *ep = buf->ep;

	buf->rma_seq = 0;
	spin_lock_bh(&ep->slock);
	__set_bit(buf->idx, ep->tx_free);
	ep->sq_avail++;
	spin_unlock_bh(&ep->slock);
	scif_wake(ep);
}

/*
 * A WR of @ep's QP failed or was flushed: the QP is in the error state.
 * While the endpoint is still connecting, a flush is rdma_cm's doing: it
 * moves the QP to the error state as it takes in a REJ (a full backlog,
 * nobody on the port), a timeout or a DREQ, and the event it reports next
 * says why the connect failed (scif_cm_ep_handler()). Answering first
 * with ECONNRESET would hide that reason, and whether it did depended on
 * which of the two the CPU got to first (seen over rxe on the debug
 * kernel). Any other failure ends the connection here.
 */
static void scif_wc_failed(struct scif_endpt *ep, struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR &&
	    READ_ONCE(ep->state) == SCIFEP_CONNECTING)
		return;
	scif_conn_lost(ep);
}

static void scif_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scif_buf *buf = container_of(wc->wr_cqe, struct scif_buf, cqe);
	struct scif_endpt *ep = buf->ep;

	/*
	 * A flushed SEND means the QP is in the error state (an RMA of
	 * either side broke it, or teardown began): the connection is gone
	 * either way, and waiters for a reply must hear it now.
	 */
	if (wc->status != IB_WC_SUCCESS) {
		pr_debug("scire_scif: send failed on port %u: %s\n", ep->port.port,
			 ib_wc_status_msg(wc->status));
		scif_wc_failed(ep, wc);
	}
	if (buf->rma_seq)
		scif_rma_batch_done(ep, buf->rma_seq, buf->rma_nwr,
				    wc->status == IB_WC_SUCCESS);
	scif_tx_put(buf);
}

/*
 * Post the message in @buf (@len payload bytes after its header), with
 * how much of the stream this side has consumed. Caller holds res_sem;
 * on failure @buf is given back.
 */
static int scif_msg_send(struct scif_endpt *ep, struct scif_buf *buf, u32 len)
{
	struct scif_msg_hdr *hdr = buf->msg;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int ret;

	if (ep->qp_dead || !ep->qp) {
		scif_tx_put(buf);
		return -ECONNRESET;
	}
	spin_lock_bh(&ep->slock);
	scif_rx_sync(ep);
	hdr->consumed = cpu_to_le64(ep->rx_tail);
	ep->rx_reported = ep->rx_tail;
	WRITE_ONCE(ep->rx_ctl->reported, ep->rx_reported);
	spin_unlock_bh(&ep->slock);
	ib_dma_sync_single_for_device(ep->pd->device, buf->dma,
				      sizeof(*hdr) + len, DMA_TO_DEVICE);
	sge.addr = buf->dma;
	sge.length = sizeof(*hdr) + len;
	sge.lkey = ep->pd->local_dma_lkey;
	wr.wr_cqe = &buf->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	ret = ib_post_send(ep->qp, &wr, NULL);
	if (ret)
		scif_tx_put(buf);
	return ret;
}

static void scif_msg_fill(struct scif_buf *buf, u16 type, u64 cookie, int status,
			  const void *payload, u32 len)
{
	struct scif_msg_hdr *hdr = buf->msg;

	memset(hdr, 0, sizeof(*hdr));
	hdr->type = cpu_to_le16(type);
	hdr->len = cpu_to_le32(len);
	hdr->cookie = cpu_to_le64(cookie);
	hdr->status = cpu_to_le32(status);
	if (len)
		memcpy(hdr + 1, payload, len);
}

/**
 * scif_msg_post() - send one message to the peer endpoint
 * @ep: a connected endpoint
 * @type: enum scif_msg_type
 * @cookie: of a request (0 if none), or of the request a reply answers
 * @status: of a reply (0 or a negative errno); 0 otherwise
 * @payload: @len bytes
 * @len: 0 .. SCIF_MSG_PAYLOAD
 *
 * Every message also tells the peer how much of its stream this side has
 * consumed.
 *
 * Context: process; sleeps while all message buffers or send queue slots
 * are in use. Does not wait for the message to arrive.
 * Return: 0, -EINVAL for a too long payload, -ECONNRESET or -ENOTCONN when
 * not connected, or the errno of ib_post_send().
 */
int scif_msg_post(struct scif_endpt *ep, u16 type, u64 cookie, int status,
		  const void *payload, u32 len)
{
	struct scif_buf *buf;
	int ret;

	if (len > SCIF_MSG_PAYLOAD)
		return -EINVAL;
	buf = scif_tx_get(ep);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	scif_msg_fill(buf, type, cookie, status, payload, len);
	down_read(&ep->res_sem);
	ret = scif_msg_send(ep, buf, len);
	up_read(&ep->res_sem);
	return ret;
}

/**
 * scif_msg_post_auth() - send the client's proof of the secret
 * @ep: a connecting endpoint whose connection is established, before
 *	scif_conn_established(): nothing else has been sent on it
 * @mac: the proof (SCIF_AUTH_MAC_LEN bytes)
 *
 * The first message of the connection (SCIF_MSG_AUTH), which the accepting
 * side waits for before its scif_accept() returns (scif_auth.c). Every
 * message buffer is free at this point, so this does not wait.
 *
 * Context: process.
 * Return: 0, -ECONNRESET if the QP is gone, -EBUSY (never expected), or the
 * errno of ib_post_send().
 */
int scif_msg_post_auth(struct scif_endpt *ep, const u8 *mac)
{
	struct scif_buf *buf = NULL;
	int i, ret;

	spin_lock_bh(&ep->slock);
	i = find_first_bit(ep->tx_free, SCIF_TX_DEPTH);
	if (i < SCIF_TX_DEPTH && ep->sq_avail > 0) {
		__clear_bit(i, ep->tx_free);
		ep->sq_avail--;
		buf = &ep->tx[i];
	}
	spin_unlock_bh(&ep->slock);
	if (!buf)
		return -EBUSY;
	scif_msg_fill(buf, SCIF_MSG_AUTH, 0, 0, mac, SCIF_AUTH_MAC_LEN);
	down_read(&ep->res_sem);
	ret = scif_msg_send(ep, buf, SCIF_AUTH_MAC_LEN);
	up_read(&ep->res_sem);
	return ret;
}

/**
 * scif_msg_post_rma_done() - send a message whose completion completes RMA
 *	batch @seq
 * @ep: a connected endpoint
 * @seq: the last RMA batch posted, which went unsignaled
 * @nwr: unsignaled RMA WRs posted since the last signaled one, whose send
 *	queue slots come back with this message's completion
 *
 * An RMA batch that nobody waits for goes without a completion of its own
 * (scif_rma_flush()). When someone does wait, this stands in: a WINDOW
 * message (which the peer only reads its consumed count from) posted
 * behind the batch. RC reports the send queue's completions in posting
 * order (IBA 10.8.3.3), so when it completes, so has every RMA WR before
 * it, and scif_tx_done() advances the batch counter to @seq.
 *
 * Context: process; the caller holds @ep->res_sem (read) and rma.lock.
 * Sleeps while every message buffer is in use.
 * Return: 0; -ECONNRESET or -ENOTCONN when not connected; or the errno of
 * ib_post_send().
 */
int scif_msg_post_rma_done(struct scif_endpt *ep, u64 seq, int nwr)
{
	struct scif_buf *buf;

	buf = scif_tx_get(ep);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	scif_msg_fill(buf, SCIF_MSG_WINDOW, 0, 0, NULL, 0);
	buf->rma_seq = seq;
	buf->rma_nwr = nwr;
	return scif_msg_send(ep, buf, 0);
}

/**
 * scif_msg_call() - send a control request and wait for its reply
 * @ep: a connected endpoint
 * @type: the request, SCIF_MSG_RMA_FIRST .. SCIF_MSG_RMA_LAST
 * @req: payload, @req_len bytes (<= SCIF_MSG_PAYLOAD)
 * @req_len: bytes
 * @resp: receives the reply's payload, up to @resp_len bytes; may be NULL
 * @resp_len: bytes
 * @timeout: jiffies to wait for the reply (MAX_SCHEDULE_TIMEOUT: for ever)
 *
 * Context: process; sleeps (not interruptible: a request once sent is
 * answered, or the connection ends).
 * Return: the reply's status (0 or a negative errno the peer chose);
 * -ECONNRESET if the connection ended first; -ETIMEDOUT; or an errno of
 * scif_msg_post().
 */
int scif_msg_call(struct scif_endpt *ep, u16 type, const void *req, u32 req_len,
		  void *resp, u32 resp_len, long timeout)
{
	struct scif_call call = { .resp = resp, .resp_len = resp_len };
	u32 cookie;
	int ret;

	ret = xa_alloc_cyclic_bh(&ep->calls, &cookie, &call, xa_limit_32b,
				 &ep->next_cookie, GFP_KERNEL);
	if (ret < 0)
		return ret;
	ret = scif_msg_post(ep, type, cookie, 0, req, req_len);
	if (!ret) {
		wait_event_timeout(ep->wq, READ_ONCE(call.done) || !scif_connected(ep),
				   timeout);
		spin_lock_bh(&ep->slock);
		if (call.done)
			ret = call.status;
		else
			ret = scif_connected(ep) ? -ETIMEDOUT : -ECONNRESET;
		spin_unlock_bh(&ep->slock);
	}
	spin_lock_bh(&ep->slock);
	xa_erase(&ep->calls, cookie);
	spin_unlock_bh(&ep->slock);
	return ret;
}

/**
 * scif_msg_reply() - answer a control request of the peer
 * @ep: the endpoint the request came on
 * @cookie: the request's
 * @status: 0 or a negative errno for the requester
 * @data: payload, @len bytes (<= SCIF_MSG_PAYLOAD)
 * @len: bytes
 *
 * Context: process (scif_rma_handle_msg()).
 * Return: as scif_msg_post().
 */
int scif_msg_reply(struct scif_endpt *ep, u64 cookie, int status,
		   const void *data, u32 len)
{
	return scif_msg_post(ep, SCIF_MSG_REPLY, cookie, status, data, len);
}

/* --- receiving ------------------------------------------------------------------ */

static int scif_rx_post(struct scif_endpt *ep, struct scif_buf *buf)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	sge.addr = buf->dma;
	sge.length = SCIF_MSG_SIZE;
	sge.lkey = ep->pd->local_dma_lkey;
	wr.wr_cqe = &buf->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ib_post_recv(ep->qp, &wr, NULL);
}

/* Stream bytes into the ring; the peer kept within the window we gave. */
static int scif_rx_data(struct scif_endpt *ep, const u8 *data, u32 len)
{
	u64 head;
	u32 at, first;

	spin_lock_bh(&ep->slock);
	scif_rx_sync(ep);
	head = ep->rx_head;
	if (head - ep->rx_tail + len > SCIF_RX_RING) {
		spin_unlock_bh(&ep->slock);
		return -EPROTO;
	}
	spin_unlock_bh(&ep->slock);
	/* Only this handler writes; the bytes past rx_head are nobody's. */
	at = head & (SCIF_RX_RING - 1);
	first = min_t(u32, len, SCIF_RX_RING - at);
	memcpy(ep->rx_ring + at, data, first);
	memcpy(ep->rx_ring, data + first, len - first);
	spin_lock_bh(&ep->slock);
	ep->rx_head = head + len;
	/* Readers in user space see the bytes before the count. */
	smp_store_release(&ep->rx_ctl->head, ep->rx_head);
	spin_unlock_bh(&ep->slock);
	return 0;
}

static int scif_rx_reply(struct scif_endpt *ep, u64 cookie, int status,
			 const void *data, u32 len)
{
	struct scif_call *call;

	if (status > 0 || status < -MAX_ERRNO || cookie > U32_MAX)
		return -EPROTO;
	spin_lock_bh(&ep->slock);
	call = xa_load(&ep->calls, cookie);
	if (call && !call->done) {
		if (call->resp)
			memcpy(call->resp, data, min(len, call->resp_len));
		call->status = status;
		WRITE_ONCE(call->done, true);
	}
	spin_unlock_bh(&ep->slock);
	return 0;
}

static int scif_rx_ctl(struct scif_endpt *ep, u16 type, u64 cookie,
		       const void *data, u32 len)
{
	struct scif_ctl *ctl;

	/* In the CQ's softirq; a failure ends the connection (ENOMEM). */
	ctl = kmalloc(struct_size(ctl, payload, len), GFP_ATOMIC);
	if (!ctl)
		return -ENOMEM;
	ctl->type = type;
	ctl->cookie = cookie;
	ctl->len = len;
	memcpy(ctl->payload, data, len);
	spin_lock_bh(&ep->slock);
	list_add_tail(&ctl->list, &ep->ctl_list);
	spin_unlock_bh(&ep->slock);
	queue_work(system_wq, &ep->ctl_work);
	return 0;
}

static int scif_rx_msg(struct scif_endpt *ep, struct scif_buf *buf, u32 byte_len)
{
	const struct scif_msg_hdr *hdr = buf->msg;
	u64 consumed, cookie;
	u32 len;
	u16 type;
	int ret;

	if (byte_len < sizeof(*hdr))
		return -EPROTO;
	ib_dma_sync_single_for_cpu(ep->pd->device, buf->dma, byte_len,
				   DMA_FROM_DEVICE);
	type = le16_to_cpu(hdr->type);
	len = le32_to_cpu(hdr->len);
	consumed = le64_to_cpu(hdr->consumed);
	cookie = le64_to_cpu(hdr->cookie);
	if (len != byte_len - sizeof(*hdr))
		return -EPROTO;

	spin_lock_bh(&ep->slock);
	if (consumed > ep->tx_sent) {
		spin_unlock_bh(&ep->slock);
		return -EPROTO;
	}
	if (consumed > ep->tx_acked)
		ep->tx_acked = consumed;
	spin_unlock_bh(&ep->slock);

	/*
	 * An accept that waits for the client's proof takes nothing else,
	 * and nothing more once it is wrong.
	 */
	switch (READ_ONCE(ep->auth.state)) {
	case SCIF_AUTH_WAIT:
		return scif_auth_rx(ep, type, hdr + 1, len);
	case SCIF_AUTH_FAILED:
		return -EACCES;
	default:
		break;
	}

	switch (type) {
	case SCIF_MSG_DATA:
		ret = scif_rx_data(ep, (const u8 *)(hdr + 1), len);
		break;
	case SCIF_MSG_WINDOW:
		ret = 0;
		break;
	case SCIF_MSG_REPLY:
		ret = scif_rx_reply(ep, cookie, (s32)le32_to_cpu(hdr->status),
				    hdr + 1, len);
		break;
	case SCIF_MSG_RMA_FIRST ... SCIF_MSG_RMA_LAST:
		ret = scif_rx_ctl(ep, type, cookie, hdr + 1, len);
		break;
	default:
		ret = -EPROTO;
	}
	return ret;
}

static void scif_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scif_buf *buf = container_of(wc->wr_cqe, struct scif_buf, cqe);
	struct scif_endpt *ep = buf->ep;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		/* Flushed or failed: the QP is in the error state (as above). */
		scif_wc_failed(ep, wc);
		return;
	}
	ret = scif_rx_msg(ep, buf, wc->byte_len);
	if (ret == -EACCES) {
		/*
		 * No right proof of the secret. The accept ends the connection
		 * (scif_cm_server_auth()), once rdma_cm has it established:
		 * failing it here, before the RTU, would have the accept reject
		 * a connection that its client already sees established, and
		 * the client would never hear of the end.
		 */
		return;
	}
	if (ret) {
		pr_debug("scire_scif: bad message on port %u: %d\n", ep->port.port, ret);
		scif_conn_lost(ep);
		return;
	}
	/*
	 * Repost at once (see scif_main.h). Teardown drains the QP with
	 * qp_dead set before it frees anything, so the QP is still here.
	 */
	if (!READ_ONCE(ep->qp_dead) && scif_rx_post(ep, buf))
		scif_conn_lost(ep);
	scif_wake(ep);
}

static void scif_ctl_work(struct work_struct *work)
{
	struct scif_endpt *ep = container_of(work, struct scif_endpt, ctl_work);
	struct scif_ctl *ctl;

	/*
	 * The side that connects is established first and may send a request
	 * at once (scif_register() right after scif_connect()); it can reach
	 * the accepting side before rdma_cm has told it the connection is
	 * established, and either side before its own connect or accept has
	 * returned. A reply cannot be posted then (the endpoint is not yet
	 * connected) and, lost, would leave the requester waiting for
	 * SCIF_TIMEOUT: requests wait here for scif_conn_established().
	 */
	if (READ_ONCE(ep->state) == SCIFEP_CONNECTING)
		return;
	for (;;) {
		spin_lock_bh(&ep->slock);
		ctl = list_first_entry_or_null(&ep->ctl_list, struct scif_ctl, list);
		if (ctl)
			list_del(&ctl->list);
		spin_unlock_bh(&ep->slock);
		if (!ctl)
			break;
		scif_rma_handle_msg(ep, ctl->type, ctl->cookie, ctl->payload, ctl->len);
		kfree(ctl);
	}
}

static void scif_win_work(struct work_struct *work)
{
	struct scif_endpt *ep = container_of(work, struct scif_endpt, win_work);

	scif_msg_post(ep, SCIF_MSG_WINDOW, 0, 0, NULL, 0);
}

/* --- the stream ---------------------------------------------------------------- */

/**
 * scif_stream_send() - scif_send() on a connected endpoint
 * @ep: the endpoint
 * @buf: @len bytes (kernel memory)
 * @len: bytes, >= 0
 * @block: wait until all of @len is sent (SCIF_SEND_BLOCK)
 *
 * Context: process; sleeps when @block (interruptible).
 * Return: the number of bytes sent (may be short unless @block; a blocking
 * call interrupted or reset after sending some returns that count);
 * -ECONNRESET, -ENOTCONN or -EINTR when nothing was sent.
 */
int scif_stream_send(struct scif_endpt *ep, const void *buf, int len, bool block)
{
	int sent = 0, ret = 0;

	mutex_lock(&ep->send_mutex);
	while (sent < len) {
		u32 win, chunk;

		spin_lock_bh(&ep->slock);
		ret = scif_ep_verify(ep);
		win = SCIF_RX_RING - (u32)(ep->tx_sent - ep->tx_acked);
		chunk = min3((u32)(len - sent), win, (u32)SCIF_MSG_PAYLOAD);
		if (!ret && chunk)
			ep->tx_sent += chunk;
		spin_unlock_bh(&ep->slock);
		if (ret)
			break;
		if (!chunk) {
			if (!block)
				break;
			if (wait_event_interruptible(ep->wq, scif_tx_room(ep))) {
				ret = -EINTR;
				break;
			}
			continue;
		}
		ret = scif_msg_post(ep, SCIF_MSG_DATA, 0, 0, (const u8 *)buf + sent, chunk);
		if (ret)
			break;
		sent += chunk;
	}
	mutex_unlock(&ep->send_mutex);
	return sent ? sent : ret;
}

/*
 * Before a blocking scif_recv() sleeps, it watches the ring for up to
 * recv_poll_us. A message is handled in the softirq of the CPU that
 * completed it (the sender's, on one host), so a reader still polling
 * sees it without being woken: the wakeup and the two context switches
 * are most of a small message's round trip. The poll only uses a CPU
 * nobody else wants: it stops when another task is runnable here (often
 * the very peer it waits for), when this one should be rescheduled, and
 * on a signal. 200 us is KVM's halt_poll_ns default, chosen for the same
 * trade (a wakeup costs more than a short spin on an idle CPU).
 */
static bool scif_recv_poll(struct scif_endpt *ep)
{
	unsigned int us = READ_ONCE(scif_recv_poll_us);
	u64 end;

	if (!us)
		return false;
	end = local_clock() + (u64)us * NSEC_PER_USEC;
	do {
		if (scif_rx_ready(ep))
			return true;
		cpu_relax();
	} while (!need_resched() && single_task_running() &&
		 !signal_pending(current) && local_clock() < end);
	return scif_rx_ready(ep);
}

/**
 * scif_stream_recv() - scif_recv() on a connected or disconnected endpoint
 * @ep: the endpoint
 * @buf: room for @len bytes (kernel memory)
 * @len: bytes, >= 0
 * @block: wait until all of @len has arrived (SCIF_RECV_BLOCK)
 *
 * What arrived before a disconnection can still be read; after that the
 * call fails with ECONNRESET. A blocking call that finds the ring empty
 * polls it for up to recv_poll_us on an otherwise idle CPU before it
 * sleeps (scif_recv_poll()).
 *
 * Context: process; sleeps when @block (interruptible).
 * Return: the number of bytes received (short unless @block; an
 * interrupted or reset blocking call returns what it got); -ECONNRESET,
 * -ENOTCONN or -EINTR when it got nothing.
 */
int scif_stream_recv(struct scif_endpt *ep, void *buf, int len, bool block)
{
	int got = 0, ret = 0;
	bool update = false;

	mutex_lock(&ep->recv_mutex);
	while (got < len) {
		u32 avail, n, at, first;
		u64 tail;

		ret = scif_rx_lock(ep);
		if (ret)
			break;
		spin_lock_bh(&ep->slock);
		scif_rx_sync(ep);
		tail = ep->rx_tail;
		avail = ep->rx_head - tail;
		ret = avail ? 0 : scif_ep_verify(ep);
		spin_unlock_bh(&ep->slock);
		if (!avail) {
			scif_rx_unlock(ep);
			if (ret || !block)
				break;
			if (scif_recv_poll(ep))
				continue;
			if (wait_event_interruptible(ep->wq, scif_rx_ready(ep))) {
				ret = -EINTR;
				break;
			}
			continue;
		}
		n = min_t(u32, avail, len - got);
		at = tail & (SCIF_RX_RING - 1);
		first = min_t(u32, n, SCIF_RX_RING - at);
		memcpy((u8 *)buf + got, ep->rx_ring + at, first);
		memcpy((u8 *)buf + got + first, ep->rx_ring, n - first);
		got += n;
		spin_lock_bh(&ep->slock);
		ep->rx_tail = tail + n;
		/* The producer overwrites the bytes only after this. */
		smp_store_release(&ep->rx_ctl->tail, ep->rx_tail);
		update = ep->rx_tail - ep->rx_reported >= SCIF_RX_RING / 4;
		spin_unlock_bh(&ep->slock);
		scif_rx_unlock(ep);
		if (update && scif_connected(ep))
			queue_work(system_wq, &ep->win_work);
	}
	mutex_unlock(&ep->recv_mutex);
	return got ? got : ret;
}

/**
 * scif_stream_release() - tell the peer how much of the stream was read
 * @ep: the endpoint
 *
 * For a reader that maps the receive ring (SCIRE_SCIF_RX_RELEASE): it
 * moved the ring's tail itself, and a writer on the other side may wait
 * for the room. Sends a window update when anything was read since the
 * last one the peer was told of.
 *
 * Context: process.
 * Return: 0; -ECONNRESET or -ENOTCONN when not connected.
 */
int scif_stream_release(struct scif_endpt *ep)
{
	bool update;
	int ret;

	spin_lock_bh(&ep->slock);
	ret = scif_ep_verify(ep);
	scif_rx_sync(ep);
	update = !ret && ep->rx_tail != ep->rx_reported;
	spin_unlock_bh(&ep->slock);
	if (update)
		queue_work(system_wq, &ep->win_work);
	return ret;
}

/* --- setting up and tearing down -------------------------------------------------- */

/**
 * scif_conn_established() - a connect or accept has completed
 * @ep: the endpoint, state SCIFEP_CONNECTING, its connection established
 *
 * The endpoint becomes SCIFEP_CONNECTED, or SCIFEP_DISCONNECTED if the
 * connection was lost meanwhile (scif_conn_lost()), and the peer's control
 * requests that arrived before are handled now (scif_ctl_work()).
 *
 * Context: process.
 */
void scif_conn_established(struct scif_endpt *ep)
{
	/* Before it is connected: scif_mmap() finds the peer at once. */
	scif_local_qpn(ep);
	scif_local_add(ep);
	spin_lock_bh(&ep->slock);
	ep->state = ep->conn_err ? SCIFEP_DISCONNECTED : SCIFEP_CONNECTED;
	spin_unlock_bh(&ep->slock);
	wake_up_all(&ep->wq);
	queue_work(system_wq, &ep->ctl_work);
}

/**
 * scif_msg_ep_init() - the message part of a new endpoint
 * @ep: the endpoint being allocated
 */
void scif_msg_ep_init(struct scif_endpt *ep)
{
	INIT_LIST_HEAD(&ep->ctl_list);
	INIT_WORK(&ep->ctl_work, scif_ctl_work);
	INIT_WORK(&ep->win_work, scif_win_work);
	/* Replies look calls up in the CQ's softirq. */
	xa_init_flags(&ep->calls, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
}

static void scif_qp_event(struct ib_event *ev, void *ctx)
{
	struct scif_endpt *ep = ctx;

	pr_debug("scire_scif: QP event %s on port %u\n", ib_event_msg(ev->event),
		 ep->port.port);
	if (ev->event == IB_EVENT_QP_FATAL || ev->event == IB_EVENT_QP_ACCESS_ERR ||
	    ev->event == IB_EVENT_QP_REQ_ERR)
		scif_conn_lost(ep);
}

static int scif_bufs_alloc(struct scif_endpt *ep, struct scif_buf *bufs, int n,
			   enum dma_data_direction dir,
			   void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct ib_device *dev = ep->pd->device;
	int i;

	for (i = 0; i < n; i++) {
		bufs[i].ep = ep;
		bufs[i].idx = i;
		bufs[i].cqe.done = done;
		/* Charged to the connecting or accepting process's memcg. */
		bufs[i].msg = kmalloc(SCIF_MSG_SIZE, GFP_KERNEL_ACCOUNT);
		if (!bufs[i].msg)
			return -ENOMEM;
		bufs[i].dma = ib_dma_map_single(dev, bufs[i].msg, SCIF_MSG_SIZE, dir);
		if (ib_dma_mapping_error(dev, bufs[i].dma)) {
			kfree(bufs[i].msg);
			bufs[i].msg = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

static void scif_bufs_free(struct scif_endpt *ep, struct scif_buf *bufs, int n,
			   enum dma_data_direction dir)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!bufs[i].msg)
			continue;
		ib_dma_unmap_single(ep->pd->device, bufs[i].dma, SCIF_MSG_SIZE, dir);
		kfree(bufs[i].msg);
		bufs[i].msg = NULL;
	}
}

/**
 * scif_conn_setup() - the verbs resources of a connection
 * @ep: an endpoint whose rdma_cm ID has a device (route resolved, or a
 *	connection request)
 *
 * PD, CQ (polled in softirq), RC QP, message buffers, the stream's
 * receive ring, and every receive buffer posted.
 *
 * Context: process.
 * Return: 0, or a negative errno with everything undone.
 */
int scif_conn_setup(struct scif_endpt *ep)
{
	struct ib_device *dev = ep->cm_id->device;
	struct ib_qp_init_attr attr = {};
	int ret, i;

	BUILD_BUG_ON(sizeof(struct scire_scif_rx_ring) > SCIRE_SCIF_RX_DATA_OFFSET);
	if (!ep->rx_ctl) {
		/*
		 * Zeroed, mappable into the process by page (scif_fd_mmap()),
		 * and charged to its memory cgroup, which vmalloc_user()
		 * cannot do.
		 */
		ep->rx_ctl = __vmalloc(SCIRE_SCIF_RX_MAP_LEN,
				       GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!ep->rx_ctl)
			return -ENOMEM;
		ep->rx_ring = (u8 *)ep->rx_ctl + SCIRE_SCIF_RX_DATA_OFFSET;
	}
	memset(ep->rx_ctl, 0, sizeof(*ep->rx_ctl));
	ep->rx_head = 0;
	ep->rx_tail = 0;
	ep->rx_reported = 0;
	ep->tx_sent = 0;
	ep->tx_acked = 0;
	scif_rma_conn_init(ep);
	ep->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(ep->pd)) {
		ret = PTR_ERR(ep->pd);
		ep->pd = NULL;
		goto err;
	}
	/*
	 * Softirq, not the core's workqueue: a message's handler then runs
	 * right where its completion is made and wakes scif_recv() itself,
	 * one thread switch fewer each way (bench/profiles.md, scif-send).
	 * Everything the handlers take is BH-safe for it: ep->slock,
	 * ep->calls, rma->slock.
	 */
	ep->cq = ib_alloc_cq(dev, ep, SCIF_SQ_DEPTH + SCIF_RX_DEPTH, 0,
			     IB_POLL_SOFTIRQ);
	if (IS_ERR(ep->cq)) {
		ret = PTR_ERR(ep->cq);
		ep->cq = NULL;
		goto err;
	}
	attr.event_handler = scif_qp_event;
	attr.qp_context = ep;
	attr.send_cq = ep->cq;
	attr.recv_cq = ep->cq;
	attr.cap.max_send_wr = SCIF_SQ_DEPTH;
	attr.cap.max_recv_wr = SCIF_RX_DEPTH;
	attr.cap.max_send_sge = min_t(u32, dev->attrs.max_send_sge, 16);
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(ep->cm_id, ep->pd, &attr);
	if (ret)
		goto err;
	ep->qp = ep->cm_id->qp;
	ep->qp_dead = false;
	ep->sq_avail = SCIF_SQ_DEPTH;
	bitmap_fill(ep->tx_free, SCIF_TX_DEPTH);

	ret = scif_bufs_alloc(ep, ep->tx, SCIF_TX_DEPTH, DMA_TO_DEVICE, scif_tx_done);
	if (!ret)
		ret = scif_bufs_alloc(ep, ep->rx, SCIF_RX_DEPTH, DMA_FROM_DEVICE,
				      scif_rx_done);
	for (i = 0; !ret && i < SCIF_RX_DEPTH; i++)
		ret = scif_rx_post(ep, &ep->rx[i]);
	if (ret)
		goto err;
	return 0;
err:
	scif_conn_teardown(ep);
	return ret;
}

/**
 * scif_conn_teardown() - free a connection's verbs resources
 * @ep: the endpoint; its rdma_cm ID stays (scif_cm_destroy())
 *
 * Stops all posting, drains the QP (every completion handler has run when
 * it returns), lets the RMA part give back its MRs and pages, then frees
 * the QP, CQ, buffers and PD. Idempotent.
 *
 * Context: process; also the rdma_cm handler of DEVICE_REMOVAL. Takes
 * @ep->conn_mutex and @ep->res_sem.
 */
void scif_conn_teardown(struct scif_endpt *ep)
{
	/* No new mapping of its windows from here on. */
	scif_local_del(ep);
	mutex_lock(&ep->conn_mutex);
	down_write(&ep->res_sem);
	ep->qp_dead = true;
	up_write(&ep->res_sem);

	if (ep->qp)
		ib_drain_qp(ep->qp);
	cancel_work_sync(&ep->ctl_work);
	cancel_work_sync(&ep->win_work);

	down_write(&ep->res_sem);
	if (ep->pd)
		scif_rma_ep_teardown(ep);
	if (ep->qp) {
		rdma_destroy_qp(ep->cm_id);
		ep->qp = NULL;
	}
	if (ep->cq) {
		ib_free_cq(ep->cq);
		ep->cq = NULL;
	}
	if (ep->pd) {
		scif_bufs_free(ep, ep->tx, SCIF_TX_DEPTH, DMA_TO_DEVICE);
		scif_bufs_free(ep, ep->rx, SCIF_RX_DEPTH, DMA_FROM_DEVICE);
		ib_dealloc_pd(ep->pd);
		ep->pd = NULL;
	}
	up_write(&ep->res_sem);

	spin_lock_bh(&ep->slock);
	while (!list_empty(&ep->ctl_list)) {
		struct scif_ctl *ctl = list_first_entry(&ep->ctl_list, struct scif_ctl, list);

		list_del(&ctl->list);
		kfree(ctl);
	}
	spin_unlock_bh(&ep->slock);
	mutex_unlock(&ep->conn_mutex);
}
