// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: endpoints and the SCIF calls that open, bind, connect,
 * accept, close, send on, receive on and poll them. The semantics and
 * errnos are those of the original SCIF kernel header; where it is silent
 * the choice is written here.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/capability.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "scif_main.h"

/* --- endpoint objects ------------------------------------------------------------ */

/**
 * scif_ep_alloc() - a new, unbound endpoint of a namespace's node
 * @net: the namespace (the endpoint holds a reference)
 *
 * Context: process.
 * Return: the endpoint with one reference (its owner's), or NULL.
 */
struct scif_endpt *scif_ep_alloc(struct net *net)
{
	struct scif_endpt *ep;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		return NULL;
	kref_init(&ep->ref);
	mutex_init(&ep->lock);
	mutex_init(&ep->conn_mutex);
	mutex_init(&ep->send_mutex);
	mutex_init(&ep->recv_mutex);
	init_rwsem(&ep->res_sem);
	spin_lock_init(&ep->slock);
	init_waitqueue_head(&ep->wq);
	INIT_LIST_HEAD(&ep->pending);
	INIT_LIST_HEAD(&ep->pending_entry);
	INIT_HLIST_NODE(&ep->local);
	ep->state = SCIFEP_UNBOUND;
	ep->net = get_net(net);
	ep->sn = scif_net(net);
	ep->cm_event = -1;
	scif_msg_ep_init(ep);
	scif_rma_ep_init(ep);
	return ep;
}

/**
 * scif_ep_get() - take a reference on an endpoint
 * @ep: the endpoint
 */
void scif_ep_get(struct scif_endpt *ep)
{
	kref_get(&ep->ref);
}

static void scif_ep_release(struct kref *ref)
{
	struct scif_endpt *ep = container_of(ref, struct scif_endpt, ref);

	WARN_ON(ep->qp || ep->cm_id || !list_empty(&ep->pending) ||
		!hlist_unhashed(&ep->local));
	xa_destroy(&ep->calls);
	/* The proof an accept expected is as good as the secret for it. */
	memzero_explicit(&ep->auth, sizeof(ep->auth));
	kfree(ep->rma.ctx);
	vfree(ep->rx_ctl);
	put_net(ep->net);
	kfree(ep);
}

/**
 * scif_ep_put() - drop a reference; the last frees the endpoint
 * @ep: the endpoint
 *
 * Context: process.
 */
void scif_ep_put(struct scif_endpt *ep)
{
	kref_put(&ep->ref, scif_ep_release);
}

/**
 * scif_ep_set_state() - change an endpoint's state and wake its waiters
 * @ep: the endpoint
 * @state: the new state
 */
void scif_ep_set_state(struct scif_endpt *ep, enum scif_ep_state state)
{
	spin_lock_bh(&ep->slock);
	ep->state = state;
	spin_unlock_bh(&ep->slock);
	wake_up_all(&ep->wq);
}

/**
 * scif_ep_verify() - may the endpoint's connection be used
 * @ep: the endpoint
 *
 * Context: any; the answer is exact when the caller holds @ep->slock.
 * Return: 0 if connected, -ECONNRESET if the connection is gone,
 * -ENOTCONN if there never was one.
 */
int scif_ep_verify(struct scif_endpt *ep)
{
	switch (READ_ONCE(ep->state)) {
	case SCIFEP_CONNECTED:
		return 0;
	case SCIFEP_DISCONNECTED:
		return -ECONNRESET;
	default:
		return -ENOTCONN;
	}
}

/* --- ports ----------------------------------------------------------------------- */

/* Bind @ep to @pn (0: any free port >= SCIF_PORT_RSVD). Caller holds ep->lock. */
static int scif_port_bind(struct scif_endpt *ep, u16 pn)
{
	struct scif_net *sn = ep->sn;
	int ret = 0, i;

	mutex_lock(&sn->lock);
	if (pn) {
		if (xa_load(&sn->ports, pn))
			ret = -EINVAL;
		else
			ret = xa_err(xa_store(&sn->ports, pn, xa_mk_value(1), GFP_KERNEL));
	} else {
		ret = -ENOSPC;
		for (i = 0; i <= U16_MAX - SCIF_PORT_RSVD; i++) {
			u16 p = sn->next_port;

			sn->next_port = p == U16_MAX ? SCIF_PORT_RSVD : p + 1;
			if (xa_load(&sn->ports, p))
				continue;
			ret = xa_err(xa_store(&sn->ports, p, xa_mk_value(1), GFP_KERNEL));
			if (!ret)
				pn = p;
			break;
		}
	}
	mutex_unlock(&sn->lock);
	if (!ret) {
		scif_node_self(ep->net, &ep->port.node, NULL);
		ep->port.port = pn;
		scif_ep_set_state(ep, SCIFEP_BOUND);
	}
	return ret;
}

/* One more endpoint (an accepted one) on an already bound port. */
static void scif_port_share(struct scif_net *sn, u16 pn)
{
	void *v;

	mutex_lock(&sn->lock);
	v = xa_load(&sn->ports, pn);
	/* The listener holds the port, so the entry exists: no allocation. */
	xa_store(&sn->ports, pn, xa_mk_value(xa_to_value(v) + 1), GFP_KERNEL);
	mutex_unlock(&sn->lock);
}

static void scif_port_unbind(struct scif_net *sn, u16 pn)
{
	void *v;

	mutex_lock(&sn->lock);
	v = xa_load(&sn->ports, pn);
	if (v && xa_to_value(v) > 1)
		xa_store(&sn->ports, pn, xa_mk_value(xa_to_value(v) - 1), GFP_KERNEL);
	else
		xa_erase(&sn->ports, pn);
	mutex_unlock(&sn->lock);
}

/* --- the calls ------------------------------------------------------------------ */

/**
 * scif_open() - create an endpoint
 *
 * The endpoint belongs to the node of the calling task's network
 * namespace. (SCIF header: scif_open.)
 *
 * Context: process.
 * Return: the endpoint descriptor, or NULL when out of memory.
 */
scif_epd_t scif_open(void)
{
	struct net *net = current->nsproxy ? current->nsproxy->net_ns : &init_net;

	return scif_ep_alloc(net);
}
EXPORT_SYMBOL_GPL(scif_open);

/**
 * scif_bind() - bind an endpoint to a port of its node
 * @epd: an unbound endpoint
 * @pn: the port, 1 .. 65535; 0 picks a free one >= SCIF_PORT_RSVD
 *
 * Ports below SCIF_ADMIN_PORT_END need CAP_SYS_ADMIN. (SCIF header:
 * scif_bind.)
 *
 * Context: process.
 * Return: the port bound; -EINVAL if @epd is already bound or the port is
 * in use; -EISCONN if @epd is connected or listening; -EACCES for a
 * protected port; -ENOSPC if no port is free; -ENOMEM.
 */
int scif_bind(scif_epd_t epd, u16 pn)
{
	struct scif_endpt *ep = epd;
	int ret;

	if (pn && pn < SCIF_ADMIN_PORT_END && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	mutex_lock(&ep->lock);
	switch (ep->state) {
	case SCIFEP_UNBOUND:
		ret = scif_port_bind(ep, pn);
		if (!ret)
			ret = ep->port.port;
		break;
	case SCIFEP_BOUND:
		ret = -EINVAL;
		break;
	default:
		ret = -EISCONN;
	}
	mutex_unlock(&ep->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(scif_bind);

/**
 * scif_listen() - make a bound endpoint accept connections
 * @epd: a bound endpoint
 * @backlog: most connection requests kept waiting for scif_accept(),
 *	0 .. SCIF_MAX_BACKLOG (larger values are clamped); one more is refused
 *
 * (SCIF header: scif_listen.)
 *
 * Context: process.
 * Return: 0; -EINVAL if @epd is not bound or @backlog is negative;
 * -EISCONN if @epd is connected or listening already; an rdma_cm errno
 * (-EADDRINUSE) if the node cannot listen on cm_port.
 */
int scif_listen(scif_epd_t epd, int backlog)
{
	struct scif_endpt *ep = epd;
	struct scif_net *sn = ep->sn;
	int ret;

	if (backlog < 0)
		return -EINVAL;
	mutex_lock(&ep->lock);
	switch (ep->state) {
	case SCIFEP_BOUND:
		break;
	case SCIFEP_UNBOUND:
		ret = -EINVAL;
		goto out;
	default:
		ret = -EISCONN;
		goto out;
	}
	ret = scif_cm_listen_get(sn);
	if (ret)
		goto out;
	mutex_lock(&sn->lock);
	ret = xa_err(xa_store(&sn->listeners, ep->port.port, ep, GFP_KERNEL));
	if (!ret) {
		spin_lock_bh(&ep->slock);
		ep->backlog = min(backlog, SCIF_MAX_BACKLOG);
		ep->state = SCIFEP_LISTENING;
		spin_unlock_bh(&ep->slock);
	}
	mutex_unlock(&sn->lock);
	if (ret)
		scif_cm_listen_put(sn);
out:
	mutex_unlock(&ep->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(scif_listen);

/**
 * scif_connect() - connect an endpoint to a port of a node
 * @epd: an unbound or bound endpoint (unbound ones are bound to a free port)
 * @dst: the node and port to connect to; the node is this node itself or
 *	one of the node table (scif_nodes.c)
 *
 * Blocks until the peer's scif_accept() completes the connection or the
 * request fails. (SCIF header: scif_connect; the asynchronous mode of
 * O_NONBLOCK is not offered: the call always blocks.)
 *
 * Context: process; sleeps, interruptible.
 * Return: the local port; -EINVAL for a NULL @dst or port 0, or if the
 * endpoint's connection was lost (as upstream SCIF); -EISCONN if connected
 * already; -EOPNOTSUPP if listening; -ECONNREFUSED
 * if nobody listens on the port or its backlog is full; -ENODEV if the
 * node is unknown or does not answer; -ENOSPC if no local port is free;
 * -ETIMEDOUT; -EINTR; -ENOMEM.
 */
int scif_connect(scif_epd_t epd, struct scif_port_id *dst)
{
	struct scif_endpt *ep = epd;
	struct sockaddr_storage addr;
	bool bound_here = false;
	int ret;

	if (!dst || !dst->port)
		return -EINVAL;
	mutex_lock(&ep->lock);
	switch (ep->state) {
	case SCIFEP_UNBOUND:
		ret = scif_port_bind(ep, 0);
		if (ret)
			goto out;
		bound_here = true;
		break;
	case SCIFEP_BOUND:
		break;
	case SCIFEP_LISTENING:
		ret = -EOPNOTSUPP;
		goto out;
	case SCIFEP_DISCONNECTED:
		/* A connection, once lost, is not made again on its endpoint. */
		ret = -EINVAL;
		goto out;
	default:
		ret = -EISCONN;
		goto out;
	}
	ret = scif_node_addr(ep->net, dst->node, &addr);
	if (ret)
		goto unbind;
	spin_lock_bh(&ep->slock);
	ep->peer = *dst;
	ep->state = SCIFEP_CONNECTING;
	spin_unlock_bh(&ep->slock);
	ret = scif_cm_connect(ep, &addr, ep->port.node, dst);
	if (ret) {
		scif_ep_set_state(ep, SCIFEP_BOUND);
		goto unbind;
	}
	scif_conn_established(ep);
	ret = ep->port.port;
	goto out;
unbind:
	if (bound_here) {
		scif_port_unbind(ep->sn, ep->port.port);
		ep->port.port = 0;
		scif_ep_set_state(ep, SCIFEP_UNBOUND);
	}
out:
	mutex_unlock(&ep->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(scif_connect);

/* Take the first pending request of a listener, or wait for one. */
static struct scif_endpt *scif_accept_take(struct scif_endpt *lep, bool sync)
{
	struct scif_endpt *nep;

	for (;;) {
		spin_lock_bh(&lep->slock);
		if (lep->state != SCIFEP_LISTENING) {
			spin_unlock_bh(&lep->slock);
			return ERR_PTR(-EINVAL);
		}
		nep = list_first_entry_or_null(&lep->pending, struct scif_endpt,
					       pending_entry);
		if (nep)
			scif_pending_unlink(lep, nep);
		spin_unlock_bh(&lep->slock);
		if (nep)
			return nep;
		if (!sync)
			return ERR_PTR(-EAGAIN);
		if (wait_event_interruptible(lep->wq, !list_empty(&lep->pending) ||
					     READ_ONCE(lep->state) != SCIFEP_LISTENING))
			return ERR_PTR(-EINTR);
	}
}

/* A request that never became a connection: give everything back. */
static void scif_pending_drop(struct scif_endpt *nep)
{
	struct scif_endpt *lep = nep->listener;

	scif_cm_reject(nep);
	scif_conn_teardown(nep);
	scif_cm_destroy(nep);
	nep->listener = NULL;
	scif_ep_put(lep);
	scif_ep_put(nep);
}

/**
 * scif_accept() - accept a connection request on a listening endpoint
 * @epd: a listening endpoint
 * @peer: set to the node and port of the endpoint that connected
 * @newepd: set to the new connected endpoint, bound to @epd's port
 * @flags: 0 or SCIF_ACCEPT_SYNC (wait for a request)
 *
 * (SCIF header: scif_accept.)
 *
 * Context: process; sleeps with SCIF_ACCEPT_SYNC (interruptible) and while
 * the connection completes.
 * Return: 0; -EINVAL if @epd is not listening (or stops while waiting), for
 * bad @flags or NULL @peer/@newepd; -EAGAIN without SCIF_ACCEPT_SYNC when
 * no request waits or the one taken failed to complete; -EINTR; -ENOMEM.
 */
int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd,
		int flags)
{
	struct scif_endpt *lep = epd, *nep;
	bool sync = flags & SCIF_ACCEPT_SYNC;
	int ret;

	if (flags & ~SCIF_ACCEPT_SYNC || !peer || !newepd)
		return -EINVAL;
	for (;;) {
		nep = scif_accept_take(lep, sync);
		if (IS_ERR(nep))
			return PTR_ERR(nep);
		scif_port_share(lep->sn, nep->port.port);
		ret = scif_cm_accept(nep);
		if (!ret)
			break;
		/* The connector gave up or went away: try the next one. */
		scif_port_unbind(lep->sn, nep->port.port);
		scif_ep_put(nep->listener);
		nep->listener = NULL;
		scif_ep_put(nep);
		if (ret == -EINTR)
			return ret;
		if (!sync)
			return -EAGAIN;
	}
	scif_ep_put(nep->listener);
	nep->listener = NULL;
	scif_conn_established(nep);
	*peer = nep->peer;
	*newepd = nep;
	return 0;
}
EXPORT_SYMBOL_GPL(scif_accept);

/**
 * scif_close() - close an endpoint
 * @epd: the endpoint; freed by this call (descriptors are not valid after)
 *
 * A listener stops listening and refuses its pending requests. A connected
 * endpoint's RMAs complete or are flushed, its windows and the peer's
 * copies of them go, and the peer sees ECONNRESET once it has read what
 * was sent. (SCIF header: scif_close.)
 *
 * Context: process; sleeps.
 * Return: 0.
 */
int scif_close(scif_epd_t epd)
{
	struct scif_endpt *ep = epd, *nep;
	struct scif_net *sn = ep->sn;
	enum scif_ep_state old;

	/* While still connected: unsignaled RMAs get a completion to wait for. */
	scif_rma_cover_unlocked(ep, U64_MAX);
	mutex_lock(&ep->lock);
	spin_lock_bh(&ep->slock);
	old = ep->state;
	ep->state = SCIFEP_CLOSED;
	spin_unlock_bh(&ep->slock);
	wake_up_all(&ep->wq);

	if (old == SCIFEP_LISTENING) {
		mutex_lock(&sn->lock);
		xa_erase(&sn->listeners, ep->port.port);
		mutex_unlock(&sn->lock);
		scif_cm_listen_put(sn);
		/* No request can be queued any more: drop those waiting. */
		for (;;) {
			spin_lock_bh(&ep->slock);
			nep = list_first_entry_or_null(&ep->pending, struct scif_endpt,
						       pending_entry);
			if (nep)
				scif_pending_unlink(ep, nep);
			spin_unlock_bh(&ep->slock);
			if (!nep)
				break;
			scif_pending_drop(nep);
		}
	}
	if (old == SCIFEP_CONNECTED || old == SCIFEP_DISCONNECTED) {
		/*
		 * What was sent and the RMAs in flight complete before the
		 * connection ends (a disconnect would flush them): every
		 * send queue slot comes back, by success or by error. Once
		 * the peer has disconnected, nothing of ours can succeed any
		 * more: the rdma_cm handler has flushed it already. Unsignaled
		 * RMA WRs that no message covers (the connection was gone) give
		 * their slots back with nothing.
		 */
		wait_event_timeout(ep->wq, READ_ONCE(ep->sq_avail) +
				   READ_ONCE(ep->rma.unsig) == SCIF_SQ_DEPTH ||
				   !ep->qp, SCIF_TIMEOUT);
		scif_rma_ep_disconnected(ep);
		scif_cm_disconnect(ep);
		scif_conn_teardown(ep);
		scif_cm_destroy(ep);
	}
	if (old != SCIFEP_UNBOUND)
		scif_port_unbind(sn, ep->port.port);
	mutex_unlock(&ep->lock);
	scif_ep_put(ep);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_close);

/**
 * scif_send() - send bytes to the peer endpoint
 * @epd: a connected endpoint
 * @msg: @len bytes of kernel memory
 * @len: bytes, >= 0
 * @flags: 0 or SCIF_SEND_BLOCK (send all of @len)
 *
 * Bytes arrive in order and intact, as a stream: message boundaries are
 * not kept. Without SCIF_SEND_BLOCK only what the peer has room for
 * (64 KiB in flight) is sent. (SCIF header: scif_send.)
 *
 * Context: process; sleeps with SCIF_SEND_BLOCK (interruptible).
 * Return: bytes sent (0 when none could be); -EINVAL for bad @flags or a
 * negative @len; -ENOTCONN; -ECONNRESET; -EINTR (nothing sent).
 */
int scif_send(scif_epd_t epd, void *msg, int len, int flags)
{
	struct scif_endpt *ep = epd;
	int ret;

	if (flags & ~SCIF_SEND_BLOCK || len < 0)
		return -EINVAL;
	ret = scif_ep_verify(ep);
	if (ret || !len)
		return ret;
	return scif_stream_send(ep, msg, len, flags & SCIF_SEND_BLOCK);
}
EXPORT_SYMBOL_GPL(scif_send);

/**
 * scif_recv() - receive bytes from the peer endpoint
 * @epd: a connected endpoint, or one whose peer has gone (what arrived
 *	before can still be read)
 * @msg: room for @len bytes of kernel memory
 * @len: bytes, >= 0
 * @flags: 0 or SCIF_RECV_BLOCK (wait for all of @len)
 *
 * (SCIF header: scif_recv.)
 *
 * Context: process; sleeps with SCIF_RECV_BLOCK (interruptible).
 * Return: bytes received (0 when none were there); -EINVAL; -ENOTCONN;
 * -ECONNRESET once the peer is gone and everything was read; -EINTR.
 */
int scif_recv(scif_epd_t epd, void *msg, int len, int flags)
{
	struct scif_endpt *ep = epd;
	enum scif_ep_state state = READ_ONCE(ep->state);

	if (flags & ~SCIF_RECV_BLOCK || len < 0)
		return -EINVAL;
	if (state != SCIFEP_CONNECTED && state != SCIFEP_DISCONNECTED)
		return -ENOTCONN;
	if (!len)
		return 0;
	return scif_stream_recv(ep, msg, len, flags & SCIF_RECV_BLOCK);
}
EXPORT_SYMBOL_GPL(scif_recv);

/**
 * scif_ep_poll() - an endpoint's poll mask
 * @ep: the endpoint
 * @file: the file being polled (for poll_wait), or NULL
 * @wait: the poll table, or NULL
 *
 * EPOLLIN: a listener has a request waiting, or a connected endpoint has
 * bytes to read; EPOLLOUT: the peer has room for more bytes; EPOLLHUP: the
 * connection is gone (EPOLLIN too while bytes remain); EPOLLERR: the
 * endpoint is neither listening nor connected.
 *
 * Context: process.
 * Return: the mask.
 */
__poll_t scif_ep_poll(struct scif_endpt *ep, struct file *file, poll_table *wait)
{
	__poll_t mask = 0;

	if (file && wait)
		poll_wait(file, &ep->wq, wait);
	spin_lock_bh(&ep->slock);
	scif_rx_sync(ep);
	switch (ep->state) {
	case SCIFEP_LISTENING:
		if (!list_empty(&ep->pending))
			mask |= EPOLLIN | EPOLLRDNORM;
		break;
	case SCIFEP_CONNECTED:
		if (ep->rx_head != ep->rx_tail)
			mask |= EPOLLIN | EPOLLRDNORM;
		if (ep->tx_sent - ep->tx_acked < SCIF_RX_RING)
			mask |= EPOLLOUT | EPOLLWRNORM;
		break;
	case SCIFEP_DISCONNECTED:
		if (ep->rx_head != ep->rx_tail)
			mask |= EPOLLIN | EPOLLRDNORM;
		mask |= EPOLLHUP;
		break;
	case SCIFEP_CONNECTING:
		break;
	default:
		mask |= EPOLLERR;
	}
	spin_unlock_bh(&ep->slock);
	return mask;
}

struct scif_poll_waiter {
	wait_queue_entry_t wait;
	struct task_struct *task;
	bool woken;
};

static int scif_poll_wake(wait_queue_entry_t *wait, unsigned int mode, int sync,
			  void *key)
{
	struct scif_poll_waiter *w = wait->private;

	WRITE_ONCE(w->woken, true);
	return wake_up_process(w->task);
}

/**
 * scif_poll() - wait for events on several endpoints
 * @epds: the endpoints and the events (EPOLLIN, EPOLLOUT) wanted; revents
 *	is filled in (EPOLLERR and EPOLLHUP are reported whether asked or not)
 * @nepds: entries in @epds
 * @timeout: milliseconds to wait; 0: do not wait; negative: for ever
 *
 * (SCIF header: scif_poll.)
 *
 * Context: process; sleeps (interruptible).
 * Return: the number of entries with a non-zero revents (0 on timeout);
 * -EINTR; -ENOMEM.
 */
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout)
{
	struct scif_poll_waiter *w;
	long left = timeout < 0 ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(timeout);
	unsigned int i;
	int count;

	w = kcalloc(nepds, sizeof(*w), GFP_KERNEL);
	if (nepds && !w)
		return -ENOMEM;
	for (i = 0; i < nepds; i++) {
		w[i].task = current;
		init_waitqueue_func_entry(&w[i].wait, scif_poll_wake);
		w[i].wait.private = &w[i];
		add_wait_queue(&epds[i].epd->wq, &w[i].wait);
	}
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		count = 0;
		for (i = 0; i < nepds; i++) {
			epds[i].revents = scif_ep_poll(epds[i].epd, NULL, NULL) &
					  (epds[i].events | EPOLLERR | EPOLLHUP);
			if (epds[i].revents)
				count++;
		}
		if (count || !left)
			break;
		if (signal_pending(current)) {
			count = -EINTR;
			break;
		}
		left = schedule_timeout(left);
	}
	__set_current_state(TASK_RUNNING);
	for (i = 0; i < nepds; i++)
		remove_wait_queue(&epds[i].epd->wq, &w[i].wait);
	kfree(w);
	return count;
}
EXPORT_SYMBOL_GPL(scif_poll);

/**
 * scif_get_node_ids() - the nodes this node knows, and its own id
 * @nodes: filled with up to @len node ids, ascending
 * @len: entries of room in @nodes
 * @self: set to the calling namespace's node id
 *
 * (SCIF header: scif_get_node_ids; the nodes are this node and those of
 * the node table, see scif_nodes.c.)
 *
 * Context: process.
 * Return: the number of nodes (may exceed @len); -EINVAL for a negative
 * @len; -ENOMEM.
 */
int scif_get_node_ids(u16 *nodes, int len, u16 *self)
{
	struct net *net = current->nsproxy ? current->nsproxy->net_ns : &init_net;

	if (len < 0 || !self || (len && !nodes))
		return -EINVAL;
	return scif_node_ids(net, nodes, len, self);
}
EXPORT_SYMBOL_GPL(scif_get_node_ids);
