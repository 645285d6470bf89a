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
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <rdma/ib_cm.h>

#include "scif_main.h"

#define SCIF_CM_TIMEOUT_MS	2000	/* address and route resolution */

/**
 * struct scif_cm_priv - private data of a CM request and reply
 * @magic: SCIF_CM_MAGIC
 * @version: SCIF_CM_VERSION
 * @flags: SCIF_CM_F_AUTH, else zero. Senders before the secret existed
 *	wrote zero here and ignore it, so a node without a secret and an
 *	older one interoperate unchanged.
 * @rsvd: zero
 * @src_node: the sender's node id
 * @src_port: the sender's port
 * @dst_node: the node asked for
 * @dst_port: the port asked for (request) or accepted on (reply)
 */
struct scif_cm_priv {
	__be32 magic;
	u8 version;
	u8 flags;
	u8 rsvd[2];
	__be16 src_node;
	__be16 src_port;
	__be16 dst_node;
	__be16 dst_port;
};

/* The sender has the node table's secret: a struct scif_cm_auth follows. */
#define SCIF_CM_F_AUTH	0x01

/**
 * struct scif_cm_auth - the private data with the secret's proof
 * @priv: as without, with SCIF_CM_F_AUTH set
 * @nonce: the sender's fresh random nonce
 * @mac: reply only: the server's proof (scif_auth_proof()); a request
 *	ends before it
 *
 * A request is 32 bytes (rdma_cm allows 56 over the IB CM for
 * RDMA_PS_TCP), a reply 64 (of 196).
 */
struct scif_cm_auth {
	struct scif_cm_priv priv;
	u8 nonce[SCIF_AUTH_NONCE_LEN];
	u8 mac[SCIF_AUTH_MAC_LEN];
};

#define SCIF_CM_AUTH_REQ_LEN	offsetof(struct scif_cm_auth, mac)

static int scif_cm_ep_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static void scif_cm_event(struct scif_endpt *ep, int event, int err)
{
	spin_lock_bh(&ep->slock);
	ep->cm_event = event;
	if (event >= 0 && event < 32)
		ep->cm_seen |= BIT(event);
	if (err && !ep->conn_err)
		ep->conn_err = err;
	spin_unlock_bh(&ep->slock);
	wake_up_all(&ep->wq);
}

unsigned int scif_max_pending_node = SCIF_MAX_BACKLOG;
module_param_named(max_pending_node, scif_max_pending_node, uint, 0644);
MODULE_PARM_DESC(max_pending_node,
		 "connection requests one remote node may have queued on a node's listeners, all ports together (default 1024)");

unsigned int scif_cm_rate = SCIF_CM_RATE;
unsigned int scif_cm_burst = SCIF_CM_BURST;

static int scif_cm_rate_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, SCIF_CM_RATE_MAX);
}

static int scif_cm_burst_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, SCIF_CM_RATE_MAX);
}

static const struct kernel_param_ops scif_cm_rate_ops = {
	.set = scif_cm_rate_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops scif_cm_burst_ops = {
	.set = scif_cm_burst_set,
	.get = param_get_uint,
};

module_param_cb(cm_rate, &scif_cm_rate_ops, &scif_cm_rate, 0644);
MODULE_PARM_DESC(cm_rate,
		 "connection requests a second one remote node may send this host, after a burst of cm_burst; more are refused at once (0: no limit; default 1000, at most 1000000)");
module_param_cb(cm_burst, &scif_cm_burst_ops, &scif_cm_burst, 0644);
MODULE_PARM_DESC(cm_burst,
		 "connection requests one remote node may send at once before cm_rate applies (1 to 1000000, default 1024)");

/*
 * Count one more request from @node queued on @sn's listeners. Called
 * under the listener's slock. Return: false if @node already has
 * scif_max_pending_node queued (or no memory to count it).
 */
static bool scif_pending_node_get(struct scif_net *sn, u16 node)
{
	unsigned long n;
	bool ok;

	xa_lock_bh(&sn->pending);
	n = xa_to_value(xa_load(&sn->pending, node) ?: xa_mk_value(0));
	ok = n < READ_ONCE(scif_max_pending_node) &&
	     !xa_is_err(__xa_store(&sn->pending, node, xa_mk_value(n + 1),
				   GFP_ATOMIC));
	xa_unlock_bh(&sn->pending);
	return ok;
}

/**
 * scif_pending_unlink() - take a queued connection request off its listener
 * @lep: the listening endpoint, its slock held by the caller
 * @nep: a request on @lep's pending list
 *
 * Also gives back the count of @nep's node in the node's per-node bound
 * (module parameter max_pending_node).
 *
 * Context: @lep->slock held (BH disabled).
 */
void scif_pending_unlink(struct scif_endpt *lep, struct scif_endpt *nep)
{
	struct scif_net *sn = scif_net(lep->net);
	unsigned long n;

	lockdep_assert_held(&lep->slock);
	list_del_init(&nep->pending_entry);
	lep->npending--;
	xa_lock_bh(&sn->pending);
	n = xa_to_value(xa_load(&sn->pending, nep->peer.node) ?: xa_mk_value(0));
	if (!WARN_ON_ONCE(!n)) {
		if (n == 1)
			__xa_erase(&sn->pending, nep->peer.node);
		else
			__xa_store(&sn->pending, nep->peer.node, xa_mk_value(n - 1),
				   GFP_ATOMIC);
	}
	xa_unlock_bh(&sn->pending);
}

/* A CM request for a port of this node: queue it on the listener. */
static int scif_cm_request(struct scif_net *sn, struct rdma_cm_id *id,
			   struct rdma_cm_event *ev)
{
	const struct scif_cm_priv *priv = ev->param.conn.private_data;
	struct scif_endpt *lep, *nep;
	bool auth;
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
	/*
	 * A node sending requests faster than cm_rate (or a host spoofing
	 * its address) is refused before anything is allocated for them;
	 * other nodes' requests are not held up by it. Loopback requests
	 * come from this node's own namespace and are not limited.
	 */
	if (be16_to_cpu(priv->src_node) != self &&
	    !scif_node_cm_admit(be16_to_cpu(priv->src_node))) {
		atomic64_inc(&scif_cm_rate_limited);
		net_warn_ratelimited("scire_scif: connection request from node %u (%pISc) refused: over cm_rate (%u a second, burst %u)\n",
				     be16_to_cpu(priv->src_node),
				     &id->route.addr.dst_addr,
				     READ_ONCE(scif_cm_rate),
				     READ_ONCE(scif_cm_burst));
		return -EBUSY;
	}
	/*
	 * With a secret, only a request that brings a nonce goes on (the
	 * proofs come at accept). Without one, a request that brings one is
	 * refused too, so that its sender fails at once (ECONNREFUSED)
	 * instead of after a reply without a proof.
	 */
	auth = priv->flags & SCIF_CM_F_AUTH &&
	       ev->param.conn.private_data_len >= SCIF_CM_AUTH_REQ_LEN;
	if (auth != scif_auth_enabled()) {
		atomic64_inc(&scif_auth_failed);
		net_warn_ratelimited("scire_scif: connection request from node %u (%pISc) refused: %s\n",
				     be16_to_cpu(priv->src_node),
				     &id->route.addr.dst_addr,
				     auth ? "this node has no secret" :
				     "no proof of the secret");
		return -EACCES;
	}

	nep = scif_ep_alloc(sn->net);
	if (!nep)
		return -ENOMEM;
	if (auth) {
		nep->auth.on = true;
		memcpy(nep->auth.nonce_c,
		       ((const struct scif_cm_auth *)priv)->nonce,
		       SCIF_AUTH_NONCE_LEN);
	}
	nep->state = SCIFEP_CONNECTING;
	nep->cm_id = id;
	nep->port.node = self;
	nep->port.port = be16_to_cpu(priv->dst_port);
	nep->peer.node = be16_to_cpu(priv->src_node);
	nep->peer.port = be16_to_cpu(priv->src_port);

	mutex_lock(&sn->lock);
	lep = xa_load(&sn->listeners, nep->port.port);
	if (lep) {
		bool queued = false, node_full = false;

		spin_lock_bh(&lep->slock);
		if (lep->state == SCIFEP_LISTENING && lep->npending < lep->backlog) {
			node_full = !scif_pending_node_get(sn, nep->peer.node);
			queued = !node_full;
		}
		if (queued) {
			/* From here on the events of this ID are the endpoint's. */
			id->context = nep;
			id->event_handler = scif_cm_ep_handler;
			scif_ep_get(lep);
			nep->listener = lep;
			list_add_tail(&nep->pending_entry, &lep->pending);
			lep->npending++;
		}
		spin_unlock_bh(&lep->slock);
		if (queued) {
			wake_up_all(&lep->wq);
		} else {
			lep = NULL;
			/*
			 * One remote node filling listener after listener
			 * would hold endpoints and CM IDs for all of them.
			 */
			if (node_full) {
				atomic64_inc(&scif_cm_rejected);
				net_warn_ratelimited("scire_scif: connection request from node %u refused: %u of its requests are queued here already\n",
						     nep->peer.node,
						     READ_ONCE(scif_max_pending_node));
			}
		}
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

/* The connecting side keeps the server's nonce and proof from the reply. */
static void scif_cm_rep_auth(struct scif_endpt *ep, const struct rdma_cm_event *ev)
{
	const struct scif_cm_auth *rep = ev->param.conn.private_data;

	if (!rep || ev->param.conn.private_data_len < sizeof(*rep) ||
	    be32_to_cpu(rep->priv.magic) != SCIF_CM_MAGIC ||
	    !(rep->priv.flags & SCIF_CM_F_AUTH))
		return;
	memcpy(ep->auth.nonce_s, rep->nonce, sizeof(ep->auth.nonce_s));
	memcpy(ep->auth.mac, rep->mac, sizeof(ep->auth.mac));
	ep->auth.rep_proof = true;
}

static int scif_cm_ep_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct scif_endpt *ep = id->context;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ep->auth.client)
			scif_cm_rep_auth(ep, ev);
		fallthrough;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
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
						READ_ONCE(ep->cm_seen) & BIT(event) ||
						READ_ONCE(ep->conn_err),
						SCIF_TIMEOUT);
	/*
	 * The event came, even if an error came after it: a peer that
	 * disconnects right after the connection is established leaves an
	 * accepted connection, closed by the peer, not a failed accept.
	 */
	if (READ_ONCE(ep->cm_seen) & BIT(event))
		return 0;
	if (left < 0)
		return -EINTR;
	if (READ_ONCE(ep->conn_err))
		return ep->conn_err;
	return -ETIMEDOUT;
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

/*
 * The connecting side, established: check the server's proof from the
 * reply, then send its own as the connection's first message. A server
 * without the secret, or with another one, is refused here.
 */
static int scif_cm_client_auth(struct scif_endpt *ep)
{
	u8 mac[SCIF_AUTH_MAC_LEN];
	int ret = -EACCES;

	if (ep->auth.rep_proof)
		ret = scif_auth_check(ep, true, ep->auth.mac);
	if (!ret)
		ret = scif_auth_proof(ep, false, mac);
	if (!ret) {
		ret = scif_msg_post_auth(ep, mac);
		memzero_explicit(mac, sizeof(mac));
		return ret;
	}
	atomic64_inc(&scif_auth_failed);
	net_warn_ratelimited("scire_scif: connection to node %u port %u refused: %s\n",
			     ep->peer.node, ep->peer.port,
			     ep->auth.rep_proof ? "wrong proof of the secret" :
			     "the node sent no proof of the secret");
	return -ECONNREFUSED;
}

/*
 * The accepting side, established: wait (SCIF_AUTH_TIMEOUT at most) for
 * the client's proof, which scif_auth_rx() checks as it arrives.
 */
static int scif_cm_server_auth(struct scif_endpt *ep)
{
	const char *why;
	long left;
	int state;

	left = wait_event_interruptible_timeout(ep->wq,
						READ_ONCE(ep->auth.state) != SCIF_AUTH_WAIT ||
						READ_ONCE(ep->conn_err),
						SCIF_AUTH_TIMEOUT);
	if (left < 0)
		return -EINTR;
	/* Pairs with the release in scif_auth_rx(). */
	state = smp_load_acquire(&ep->auth.state);
	if (state == SCIF_AUTH_OK)
		return 0;
	if (state == SCIF_AUTH_FAILED)
		why = "wrong proof of the secret";
	else if (READ_ONCE(ep->conn_err))
		why = "closed before its proof of the secret";
	else
		why = "no proof of the secret in time";
	atomic64_inc(&scif_auth_failed);
	net_warn_ratelimited("scire_scif: connection from node %u port %u refused: %s\n",
			     ep->peer.node, ep->peer.port, why);
	return -EACCES;
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
 * With the node table's secret set, the request carries a nonce, the
 * server's proof in the reply is checked and this side's proof sent
 * (scif_auth.c). On failure everything is undone.
 *
 * Context: process, may sleep (up to SCIF_TIMEOUT per step); interruptible.
 * Return: 0; -ECONNREFUSED (nobody listens on the port, or its backlog is
 * full); -ENODEV (no route to the node, or it does not answer); -ETIMEDOUT;
 * -ECONNREFUSED also when one side has the secret and the other not, or
 * another one (counted in scif_auth_failed by the side that finds out);
 * -EINTR; -ENOMEM or an errno of rdma_cm.
 */
int scif_cm_connect(struct scif_endpt *ep, const struct sockaddr_storage *dst,
		    u16 src_node, const struct scif_port_id *dst_id)
{
	struct sockaddr_storage addr = *dst, src;
	struct rdma_conn_param param;
	struct scif_cm_auth priv = {};
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
	ep->cm_seen = 0;
	ep->conn_err = 0;
	memset(&ep->auth, 0, sizeof(ep->auth));
	ep->auth.client = true;
	/* An earlier attempt that failed marked it gone from the table. */
	scif_local_rearm(ep);

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
		scif_cm_param(ep, &param, &priv.priv);
		priv.priv.src_node = cpu_to_be16(src_node);
		priv.priv.src_port = cpu_to_be16(ep->port.port);
		priv.priv.dst_node = cpu_to_be16(dst_id->node);
		priv.priv.dst_port = cpu_to_be16(dst_id->port);
		if (scif_auth_enabled()) {
			ep->auth.on = true;
			get_random_bytes(ep->auth.nonce_c, sizeof(ep->auth.nonce_c));
			memcpy(priv.nonce, ep->auth.nonce_c, sizeof(priv.nonce));
			priv.priv.flags = SCIF_CM_F_AUTH;
			param.private_data_len = SCIF_CM_AUTH_REQ_LEN;
		}
		ret = rdma_connect(id, &param);
	}
	if (!ret)
		ret = scif_cm_wait(ep, RDMA_CM_EVENT_ESTABLISHED);
	if (!ret && ep->auth.on)
		ret = scif_cm_client_auth(ep);
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
 * With the node table's secret (the request brought a nonce: only then
 * was it queued, scif_cm_request()), the reply carries this side's nonce
 * and proof, and the connection counts as accepted only once the client's
 * proof has come as its first message (scif_auth.c).
 *
 * Context: process, may sleep up to SCIF_TIMEOUT, and SCIF_AUTH_TIMEOUT
 * more for the proof; interruptible.
 * Return: 0 once established; else a negative errno (-EACCES: no right
 * proof of the secret, counted in scif_auth_failed), and the request is
 * gone (rejected, failed or disconnected), its resources freed.
 */
int scif_cm_accept(struct scif_endpt *ep)
{
	struct rdma_conn_param param;
	struct scif_cm_auth priv = {};
	int ret;

	ret = READ_ONCE(ep->conn_err);
	if (!ret)
		ret = scif_conn_setup(ep);
	if (!ret) {
		scif_cm_param(ep, &param, &priv.priv);
		priv.priv.src_node = cpu_to_be16(ep->port.node);
		priv.priv.src_port = cpu_to_be16(ep->port.port);
		priv.priv.dst_node = cpu_to_be16(ep->peer.node);
		priv.priv.dst_port = cpu_to_be16(ep->peer.port);
	}
	if (!ret && ep->auth.on) {
		get_random_bytes(ep->auth.nonce_s, sizeof(ep->auth.nonce_s));
		memcpy(priv.nonce, ep->auth.nonce_s, sizeof(priv.nonce));
		priv.priv.flags = SCIF_CM_F_AUTH;
		param.private_data_len = sizeof(priv);
		ret = scif_auth_proof(ep, true, priv.mac);
		if (!ret)
			ret = scif_auth_proof(ep, false, ep->auth.mac);
		if (ret) {
			/* The secret was cleared since the request came. */
			atomic64_inc(&scif_auth_failed);
			ret = -EACCES;
		} else {
			/* From here on scif_rx_msg() takes only the proof. */
			WRITE_ONCE(ep->auth.state, SCIF_AUTH_WAIT);
		}
	}
	if (!ret) {
		rdma_lock_handler(ep->cm_id);
		ret = rdma_accept(ep->cm_id, &param);
		rdma_unlock_handler(ep->cm_id);
	}
	if (!ret)
		ret = scif_cm_wait(ep, RDMA_CM_EVENT_ESTABLISHED);
	if (!ret && ep->auth.on)
		ret = scif_cm_server_auth(ep);
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
