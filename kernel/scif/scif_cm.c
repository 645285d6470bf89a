// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: connections with rdma_cm. A node listens on cm_port while
 * any of its endpoints listens; the SCIF ports travel in the private data
 * of the CM request, and the request waits on the listening endpoint
 * until scif_accept() takes it (or the backlog is full: rejected).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <rdma/ib_cm.h>

#include "scif_main.h"

#define SCIF_CM_TIMEOUT_MS	2000	/* address and route resolution */

/**
 * struct scif_cm_priv - private data of a CM request and reply
 * @magic: SCIF_CM_MAGIC
 * @version: SCIF_CM_VERSION
 * @rsvd: zero
 * @src_node: the sender's node id
 * @src_port: the sender's port
 * @dst_node: the node asked for
 * @dst_port: the port asked for (request) or accepted on (reply)
 */
struct scif_cm_priv {
	__be32 magic;
	u8 version;
	u8 rsvd[3];
	__be16 src_node;
	__be16 src_port;
	__be16 dst_node;
	__be16 dst_port;
};

static int scif_cm_ep_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static void scif_cm_event(struct scif_endpt *ep, int event, int err)
{
	spin_lock_bh(&ep->slock);
	ep->cm_event = event;
	if (err && !ep->conn_err)
		ep->conn_err = err;
	spin_unlock_bh(&ep->slock);
	wake_up_all(&ep->wq);
}

/* A CM request for a port of this node: queue it on the listener. */
static int scif_cm_request(struct scif_net *sn, struct rdma_cm_id *id,
			   struct rdma_cm_event *ev)
{
	const struct scif_cm_priv *priv = ev->param.conn.private_data;
	struct scif_endpt *lep, *nep;
	u16 self;

	if (!priv || ev->param.conn.private_data_len < sizeof(*priv) ||
	    be32_to_cpu(priv->magic) != SCIF_CM_MAGIC ||
	    priv->version != SCIF_CM_VERSION)
		return -EPROTO;
	scif_node_self(sn->net, &self, NULL);
	if (be16_to_cpu(priv->dst_node) != self)
		return -ENODEV;
	/*
	 * The private data names the sender's node, and a SCIF program has
	 * no other way to know who its peer is: take the claim only from the
	 * address the node table gives that node.
	 */
	if (scif_node_check_peer(sn->net, be16_to_cpu(priv->src_node),
				 &id->route.addr.dst_addr)) {
		atomic64_inc(&scif_cm_rejected);
		net_warn_ratelimited("scire_scif: connection request claiming node %u from %pISc refused: not that node's address\n",
				     be16_to_cpu(priv->src_node),
				     &id->route.addr.dst_addr);
		return -EACCES;
	}

	nep = scif_ep_alloc(sn->net);
	if (!nep)
		return -ENOMEM;
	nep->state = SCIFEP_CONNECTING;
	nep->cm_id = id;
	nep->port.node = self;
	nep->port.port = be16_to_cpu(priv->dst_port);
	nep->peer.node = be16_to_cpu(priv->src_node);
	nep->peer.port = be16_to_cpu(priv->src_port);

	mutex_lock(&sn->lock);
	lep = xa_load(&sn->listeners, nep->port.port);
	if (lep) {
		bool queued = false;

		spin_lock_bh(&lep->slock);
		if (lep->state == SCIFEP_LISTENING && lep->npending < lep->backlog) {
			/* From here on the events of this ID are the endpoint's. */
			id->context = nep;
			id->event_handler = scif_cm_ep_handler;
			scif_ep_get(lep);
			nep->listener = lep;
			list_add_tail(&nep->pending_entry, &lep->pending);
			lep->npending++;
			queued = true;
		}
		spin_unlock_bh(&lep->slock);
		if (queued)
			wake_up_all(&lep->wq);
		else
			lep = NULL;
	}
	mutex_unlock(&sn->lock);
	if (!lep) {
		/* rdma_cm destroys the ID; the ib_cm rejects the request. */
		nep->cm_id = NULL;
		scif_ep_put(nep);
		return -ECONNREFUSED;
	}
	return 0;
}

static int scif_cm_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct scif_net *sn = id->context;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	/* Non-zero: rdma_cm destroys the new ID and the request is rejected. */
	return scif_cm_request(sn, id, ev) ? 1 : 0;
}

static int scif_cm_ep_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct scif_endpt *ep = id->context;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_ESTABLISHED:
		scif_cm_event(ep, ev->event, 0);
		break;
	case RDMA_CM_EVENT_REJECTED:
		scif_cm_event(ep, ev->event, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		scif_cm_event(ep, ev->event, -ENODEV);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		scif_cm_event(ep, ev->event, -ECONNRESET);
		scif_conn_lost(ep);
		/*
		 * The peer's QP is in the error state from now on and drops
		 * what reaches it, so a send of ours it has not acknowledged
		 * (a window update or a request posted as it closed) would
		 * end only after every RC retry: 8 local ACK timeouts, 18 s
		 * under rdma_cm's RoCE timeout, all spent in scif_close(),
		 * which waits for the send queue. Move our QP to the error
		 * state now (and answer the DREQ), which flushes them.
		 */
		rdma_disconnect(id);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * The device goes now: give back everything of it, then let
		 * rdma_cm destroy the ID (non-zero return) unless a close
		 * has already taken it to destroy it itself. The endpoint
		 * stays, disconnected, until its owner closes it.
		 */
		scif_cm_event(ep, ev->event, -ENODEV);
		scif_conn_lost(ep);
		scif_conn_teardown(ep);
		spin_lock_bh(&ep->slock);
		ret = ep->cm_id == id;
		if (ret)
			ep->cm_id = NULL;
		spin_unlock_bh(&ep->slock);
		return ret;
	default:
		break;
	}
	return 0;
}

/* Wait for @event on @ep's ID, or for an error. */
static int scif_cm_wait(struct scif_endpt *ep, int event)
{
	long left;

	left = wait_event_interruptible_timeout(ep->wq,
						READ_ONCE(ep->cm_event) == event ||
						READ_ONCE(ep->conn_err),
						SCIF_TIMEOUT);
	if (left < 0)
		return -EINTR;
	if (READ_ONCE(ep->conn_err))
		return ep->conn_err;
	return left ? 0 : -ETIMEDOUT;
}

static void scif_cm_param(struct scif_endpt *ep, struct rdma_conn_param *param,
			  struct scif_cm_priv *priv)
{
	struct ib_device *dev = ep->cm_id->device;
	u8 rd = min_t(u32, dev->attrs.max_qp_rd_atom, 16);

	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = sizeof(*priv);
	param->responder_resources = rd;
	param->initiator_depth = min_t(u32, dev->attrs.max_qp_init_rd_atom, rd);
	param->retry_count = 7;
	param->rnr_retry_count = 7;	/* infinite: see scif_main.h */
	priv->magic = cpu_to_be32(SCIF_CM_MAGIC);
	priv->version = SCIF_CM_VERSION;
}

/**
 * scif_cm_connect() - connect an endpoint to a port of a node
 * @ep: the endpoint, bound, state SCIFEP_CONNECTING, @ep->lock held
 * @dst: the node's address (cm_port is filled in here)
 * @src_node: this node's id
 * @dst_id: the node and port to connect to
 *
 * Resolves the address and route, sets the connection up (QP, buffers)
 * and connects; returns once the connection is established or failed.
 * On failure everything is undone.
 *
 * Context: process, may sleep (up to SCIF_TIMEOUT per step); interruptible.
 * Return: 0; -ECONNREFUSED (nobody listens on the port, or its backlog is
 * full); -ENODEV (no route to the node, or it does not answer); -ETIMEDOUT;
 * -EINTR; -ENOMEM or an errno of rdma_cm.
 */
int scif_cm_connect(struct scif_endpt *ep, const struct sockaddr_storage *dst,
		    u16 src_node, const struct scif_port_id *dst_id)
{
	struct sockaddr_storage addr = *dst, src;
	struct rdma_conn_param param;
	struct scif_cm_priv priv = {};
	struct rdma_cm_id *id;
	bool have_src;
	u16 self;
	int ret;

	/*
	 * Send from this node's own address, the one the peer's node table
	 * holds for it and checks the request against (scif_node_check_peer),
	 * not from whichever address the route would pick.
	 */
	have_src = !scif_node_self(ep->net, &self, &src) &&
		   src.ss_family == addr.ss_family;
	if (have_src && src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else if (have_src)
		((struct sockaddr_in6 *)&src)->sin6_port = 0;

	if (addr.ss_family == AF_INET)
		((struct sockaddr_in *)&addr)->sin_port = htons(scif_cm_port);
	else
		((struct sockaddr_in6 *)&addr)->sin6_port = htons(scif_cm_port);

	id = rdma_create_id(ep->net, scif_cm_ep_handler, ep, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ep->cm_id = id;
	ep->cm_event = -1;
	ep->conn_err = 0;

	ret = rdma_resolve_addr(id, have_src ? (struct sockaddr *)&src : NULL,
				(struct sockaddr *)&addr, SCIF_CM_TIMEOUT_MS);
	if (!ret)
		ret = scif_cm_wait(ep, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ret)
		ret = rdma_resolve_route(id, SCIF_CM_TIMEOUT_MS);
	if (!ret)
		ret = scif_cm_wait(ep, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ret)
		ret = scif_conn_setup(ep);
	if (!ret) {
		scif_cm_param(ep, &param, &priv);
		priv.src_node = cpu_to_be16(src_node);
		priv.src_port = cpu_to_be16(ep->port.port);
		priv.dst_node = cpu_to_be16(dst_id->node);
		priv.dst_port = cpu_to_be16(dst_id->port);
		ret = rdma_connect(id, &param);
	}
	if (!ret)
		ret = scif_cm_wait(ep, RDMA_CM_EVENT_ESTABLISHED);
	if (ret) {
		scif_conn_teardown(ep);
		scif_cm_destroy(ep);
	}
	return ret;
}

/**
 * scif_cm_accept() - accept a pending connection request
 * @ep: the endpoint of the request, state SCIFEP_CONNECTING, taken off its
 *	listener's pending list
 *
 * Context: process, may sleep up to SCIF_TIMEOUT; interruptible.
 * Return: 0 once established; else a negative errno, and the request is
 * gone (rejected or failed), its resources freed.
 */
int scif_cm_accept(struct scif_endpt *ep)
{
	struct rdma_conn_param param;
	struct scif_cm_priv priv = {};
	int ret;

	ret = READ_ONCE(ep->conn_err);
	if (!ret)
		ret = scif_conn_setup(ep);
	if (!ret) {
		scif_cm_param(ep, &param, &priv);
		priv.src_node = cpu_to_be16(ep->port.node);
		priv.src_port = cpu_to_be16(ep->port.port);
		priv.dst_node = cpu_to_be16(ep->peer.node);
		priv.dst_port = cpu_to_be16(ep->peer.port);
		rdma_lock_handler(ep->cm_id);
		ret = rdma_accept(ep->cm_id, &param);
		rdma_unlock_handler(ep->cm_id);
	}
	if (!ret)
		ret = scif_cm_wait(ep, RDMA_CM_EVENT_ESTABLISHED);
	if (ret) {
		scif_cm_reject(ep);
		scif_conn_teardown(ep);
		scif_cm_destroy(ep);
	}
	return ret;
}

/**
 * scif_cm_destroy() - destroy an endpoint's rdma_cm ID
 * @ep: the endpoint; its connection's verbs resources are gone already
 *	(scif_conn_teardown())
 *
 * Waits for the ID's event handler to finish; afterwards no handler runs
 * for @ep.
 *
 * Context: process; not from the ID's own event handler.
 */
void scif_cm_destroy(struct scif_endpt *ep)
{
	struct rdma_cm_id *id;

	spin_lock_bh(&ep->slock);
	id = ep->cm_id;
	ep->cm_id = NULL;
	spin_unlock_bh(&ep->slock);
	if (id)
		rdma_destroy_id(id);
}

/**
 * scif_cm_reject() - refuse a pending connection request
 * @ep: the endpoint of the request (not accepted)
 *
 * Context: process.
 */
void scif_cm_reject(struct scif_endpt *ep)
{
	if (ep->cm_id)
		rdma_reject(ep->cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
}

/**
 * scif_cm_disconnect() - tell the peer the connection ends
 * @ep: a connected (or disconnected) endpoint
 *
 * The peer learns of the close from the CM's DREQ alone. ib_cm sends a
 * DREQ the wire lost again only while the rdma_cm ID lives, so when this
 * side starts the disconnect it waits, up to SCIF_DISC_TIMEOUT, for
 * RDMA_CM_EVENT_DISCONNECTED (the DREP, or the CM giving up) before the
 * caller may destroy the ID. Without that wait a lost DREQ left the peer
 * connected to nobody, its poll() never seeing EPOLLHUP (seen over
 * rdma_rxe). When the peer disconnected first, or the ID was never
 * connected, there is nothing to wait for.
 *
 * Context: process; sleeps.
 */
void scif_cm_disconnect(struct scif_endpt *ep)
{
	if (!ep->cm_id || rdma_disconnect(ep->cm_id))
		return;
	wait_event_timeout(ep->wq,
			   READ_ONCE(ep->cm_event) == RDMA_CM_EVENT_DISCONNECTED ||
			   READ_ONCE(ep->cm_event) == RDMA_CM_EVENT_DEVICE_REMOVAL,
			   SCIF_DISC_TIMEOUT);
}

static struct rdma_cm_id *scif_cm_listen_one(struct scif_net *sn, int family)
{
	struct sockaddr_storage addr = {};
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(sn->net, scif_cm_listen_handler, sn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return id;
	addr.ss_family = family;
	if (family == AF_INET) {
		((struct sockaddr_in *)&addr)->sin_port = htons(scif_cm_port);
	} else {
		((struct sockaddr_in6 *)&addr)->sin6_port = htons(scif_cm_port);
		ret = rdma_set_afonly(id, 1);
		if (ret)
			goto err;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&addr);
	if (!ret)
		ret = rdma_listen(id, SCIF_MAX_BACKLOG);
	if (!ret)
		return id;
err:
	rdma_destroy_id(id);
	return ERR_PTR(ret);
}

/**
 * scif_cm_listen_get() - a node starts (or keeps) listening on cm_port
 * @sn: the node
 *
 * The first listening endpoint of a node creates its rdma_cm listeners
 * (IPv4, and IPv6 where the namespace has it); later ones count.
 *
 * Context: process; takes @sn->cm_lock.
 * Return: 0, or the errno of rdma_cm for the IPv4 listener (-EADDRINUSE
 * if something else holds cm_port).
 */
int scif_cm_listen_get(struct scif_net *sn)
{
	struct rdma_cm_id *id;
	int ret = 0;

	mutex_lock(&sn->cm_lock);
	if (!sn->nlisten) {
		id = scif_cm_listen_one(sn, AF_INET);
		if (IS_ERR(id)) {
			ret = PTR_ERR(id);
			goto out;
		}
		sn->cm_listen[0] = id;
		id = scif_cm_listen_one(sn, AF_INET6);
		sn->cm_listen[1] = IS_ERR(id) ? NULL : id;
	}
	sn->nlisten++;
out:
	mutex_unlock(&sn->cm_lock);
	return ret;
}

/**
 * scif_cm_listen_put() - a listening endpoint of the node is gone
 * @sn: the node
 *
 * The last one destroys the rdma_cm listeners, which waits for their
 * handlers to finish (they take @sn->lock, never @sn->cm_lock).
 *
 * Context: process; takes @sn->cm_lock.
 */
void scif_cm_listen_put(struct scif_net *sn)
{
	int i;

	mutex_lock(&sn->cm_lock);
	if (!--sn->nlisten) {
		for (i = 0; i < ARRAY_SIZE(sn->cm_listen); i++) {
			if (sn->cm_listen[i])
				rdma_destroy_id(sn->cm_listen[i]);
			sn->cm_listen[i] = NULL;
		}
	}
	mutex_unlock(&sn->cm_lock);
}
