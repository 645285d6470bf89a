/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire_scif internals: nodes, per-namespace state, endpoints, the
 * endpoint's RC connection and its messages. The RMA part (windows, RMA,
 * fences) keeps its own state in scif_rma.h.
 *
 * Layout: one RC QP per connected endpoint pair, set up with rdma_cm. A
 * node (a network namespace of a host) listens with one rdma_cm ID per
 * address family on port cm_port; the SCIF port an endpoint connects to
 * travels in the CM private data, and the listening node hands the request
 * to the endpoint listening on that port. Why a QP per endpoint and not a
 * node QP as SCIF over PCIe has: RMA ordering, fence marks and SYNC are the
 * endpoint's own send queue (marks are its sequence numbers), a peer's bad
 * access moves only that endpoint's QP to the error state (SCIF's
 * ECONNRESET for one connection, not the node), and there is no
 * multiplexing or per-node credit scheme to write. The price is a QP, a CQ
 * and a PD per endpoint, which a software RDMA device makes cheap.
 *
 * Messages on the QP: SENDs of at most SCIF_MSG_SIZE bytes, a struct
 * scif_msg_hdr and a payload. Stream data (scif_send/scif_recv) is flow
 * controlled in bytes: the receiver copies DATA payloads into its receive
 * ring as they arrive and reposts the buffer at once, and every message
 * carries the count of bytes the sender of the message has consumed from
 * its own ring, so a peer never sends more than the ring can hold. The
 * ring can be mapped into one process (scif_fd.c), whose libscif then
 * reads it without a system call and moves its consumed count itself
 * (struct scire_scif_rx_ring, the uapi header states the protocol); the
 * kernel takes that count in only where it is valid (scif_rx_sync()).
 * Receive buffers are always reposted immediately, so RNR retry (infinite)
 * covers the short moments a burst outruns them. Control requests carry a
 * cookie that the reply echoes; nothing on the wire is a kernel pointer.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIF_MAIN_H
#define SCIF_MAIN_H

#include <linux/configfs.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/socket.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <linux/scif.h>

#include "../scire_compat.h"

#include "scif_rma.h"

#define SCIF_CM_PORT		23583	/* default of module parameter cm_port */
#define SCIF_CM_MAGIC		0x53434946	/* "SCIF" */
#define SCIF_CM_VERSION		1

#define SCIF_MSG_SIZE		4096	/* bytes of one SEND, header included */
#define SCIF_RX_DEPTH		32	/* receive buffers per endpoint */
#define SCIF_TX_DEPTH		32	/* message send buffers per endpoint */
#define SCIF_SQ_DEPTH		256	/* send queue: messages and RMA WRs */
/* Stream bytes in flight, a power of 2; a mapped ring's size (uapi). */
#define SCIF_RX_RING		SCIRE_SCIF_RX_RING_SIZE
#define SCIF_TIMEOUT		(30 * HZ)	/* a live peer answers within this */
/* A close waits this long for the CM's DREP: one DREQ retry over RoCE. */
#define SCIF_DISC_TIMEOUT	(6 * HZ)
#define SCIF_MAX_NODE		0xfffe	/* node ids 0 .. SCIF_MAX_NODE */
#define SCIF_MAX_BACKLOG	1024
/* Connection requests per remote node (scif_node_cm_admit()) */
#define SCIF_CM_RATE		1000	/* default of cm_rate, a second */
#define SCIF_CM_BURST		1024	/* default of cm_burst */
#define SCIF_CM_RATE_MAX	1000000	/* bound of both */

/* The node table's shared secret (scif_auth.c) */
#define SCIF_AUTH_SECRET_MAX	64	/* bytes */
#define SCIF_AUTH_NONCE_LEN	16
#define SCIF_AUTH_MAC_LEN	32	/* HMAC-SHA256 */
/* How long scif_accept() waits for the client's proof after the RTU. */
#define SCIF_AUTH_TIMEOUT	(5 * HZ)

extern unsigned int scif_cm_port;

/* --- nodes (scif_nodes.c) --------------------------------------------------- */

int scif_nodes_init(void);
void scif_nodes_exit(void);
int scif_node_self(struct net *net, u16 *self, struct sockaddr_storage *addr);
int scif_node_addr(struct net *net, u16 node, struct sockaddr_storage *addr);
int scif_node_ids(struct net *net, u16 *nodes, int len, u16 *self);
int scif_node_exists(struct net *net, u16 node);
int scif_node_check_peer(struct net *net, u16 claimed,
			 const struct sockaddr_storage *src);
extern atomic64_t scif_cm_rejected;
extern unsigned int scif_max_pending_node;
extern atomic64_t scif_auth_failed;
bool scif_node_cm_admit(u16 id);
extern atomic64_t scif_cm_rate_limited;
extern unsigned int scif_cm_rate;
extern unsigned int scif_cm_burst;

/* --- per network namespace (scif_main.c) -------------------------------------- */

/**
 * struct scif_net - a node's state in one network namespace
 * @net: the namespace (no reference: this lives as long as it does)
 * @lock: guards everything below
 * @ports: port number -> number of endpoints bound to it (xa_mk_value)
 * @listeners: port number -> the listening struct scif_endpt
 * @cm_listen: rdma_cm IDs listening on cm_port, IPv4 and IPv6, while
 *	@listeners is not empty (an rdma_cm ID holds its namespace)
 * @next_port: where the search for a free port starts
 * @cm_lock: guards @cm_listen and @nlisten; never taken by rdma_cm handlers,
 *	so the listeners can be destroyed (which waits for their handlers)
 *	while it is held
 * @nlisten: listening endpoints of this node
 * @pending: node id -> connection requests from that node queued on this
 *	node's listeners (xa_mk_value), bounded by scif_max_pending_node;
 *	its own lock (BH), taken inside a listener's slock
 */
struct scif_net {
	struct net *net;
	struct mutex lock;	/* see above */
	struct xarray ports;
	struct xarray listeners;
	struct xarray pending;
	struct rdma_cm_id *cm_listen[2];
	u16 next_port;
	struct mutex cm_lock;	/* see above */
	int nlisten;
};

struct scif_net *scif_net(struct net *net);

/* --- the shared secret (scif_auth.c) ------------------------------------------ */

enum scif_auth_state {
	SCIF_AUTH_NONE,		/* no proof asked for on this connection */
	SCIF_AUTH_WAIT,		/* accepted: the client's proof has not come */
	SCIF_AUTH_OK,		/* it came and was right */
	SCIF_AUTH_FAILED,	/* a wrong proof, or another message first */
};

/**
 * struct scif_ep_auth - one connection's proofs of the secret
 * @on: this connection proves the secret (both sides had one)
 * @client: this side connected (else it accepts)
 * @rep_proof: client: the CM reply carried the server's nonce and proof
 * @state: server: enum scif_auth_state; written in the CQ's softirq
 * @nonce_c: the client's nonce
 * @nonce_s: the server's nonce
 * @mac: client: the server's proof from the reply; server: the client's
 *	proof it expects
 */
struct scif_ep_auth {
	bool on;
	bool client;
	bool rep_proof;
	int state;
	u8 nonce_c[SCIF_AUTH_NONCE_LEN];
	u8 nonce_s[SCIF_AUTH_NONCE_LEN];
	u8 mac[SCIF_AUTH_MAC_LEN];
};

/* --- endpoints --------------------------------------------------------------- */

enum scif_ep_state {
	SCIFEP_UNBOUND,
	SCIFEP_BOUND,
	SCIFEP_LISTENING,
	SCIFEP_CONNECTING,	/* connect in progress, or a request not yet accepted */
	SCIFEP_CONNECTED,
	SCIFEP_DISCONNECTED,	/* the peer closed or the link died: ECONNRESET */
	SCIFEP_CLOSED,		/* scif_close() ran; only references keep it */
};

/**
 * struct scif_buf - a message buffer, DMA mapped for the endpoint's device
 * @cqe: completion of the SEND or RECV that uses it
 * @ep: owner
 * @msg: the bytes (SCIF_MSG_SIZE)
 * @dma: their DMA address
 * @idx: index in the owner's array
 * @rma_seq: a send buffer's message stands for RMA batch @rma_seq (its
 *	completion is that batch's, scif_msg_post_rma_done()); 0 if not
 * @rma_nwr: unsignaled RMA WRs before it whose send queue slots its
 *	completion gives back
 */
struct scif_buf {
	struct ib_cqe cqe;
	struct scif_endpt *ep;
	void *msg;
	u64 dma;
	int idx;
	u64 rma_seq;
	int rma_nwr;
};

/**
 * struct scif_endpt - a SCIF endpoint
 * @ref: references: the owner (until scif_close), the rdma_cm ID's context,
 *	callers of the API while they run
 * @lock: serializes the API calls that change state or the connection
 * @res_sem: read by calls that use the QP, PD or CQ; written by teardown
 * @conn_mutex: one teardown of the connection at a time (scif_close() and a
 *	device removal can meet)
 * @send_mutex: one scif_send() at a time moves the stream
 * @recv_mutex: one scif_recv() at a time
 * @slock: guards @state, the pending list, the stream counters and the
 *	control waits; taken in the CQ handlers (softirq: take it with BHs
 *	off elsewhere) and the rdma_cm handlers
 * @state: enum scif_ep_state
 * @net: the namespace the endpoint was opened in (a reference)
 * @sn: its node state
 * @port: the endpoint's own port id (node, port)
 * @peer: the connected peer's port id
 * @wq: state changes, stream data in, send window, pending connections
 * @conn_err: why a connect or accept failed (negative errno), set by the
 *	rdma_cm handler; -ECONNRESET also when the connection is lost
 *	before the connect or accept returns (scif_conn_lost())
 * @cm_event: the last rdma_cm event seen, for scif_connect()'s steps
 * @cm_seen: every rdma_cm event seen on the current ID (BIT(event)): an
 *	ESTABLISHED followed at once by the peer's DISCONNECTED is still
 *	an accepted connection, however late its waiter runs
 * @backlog: maximum pending connection requests of a listener
 * @npending: connection requests on @pending
 * @pending: endpoints (SCIFEP_CONNECTING) waiting for scif_accept()
 * @pending_entry: on a listener's @pending
 * @listener: the listening endpoint, while on its @pending
 * @cm_id: the connection's rdma_cm ID
 * @pd: protection domain of the connection; windows are MRs of it
 * @cq: send and receive completions
 * @qp: the RC QP
 * @qp_dead: set (under @res_sem written) when teardown starts: nothing is
 *	posted any more
 * @tx: message send buffers
 * @tx_free: bitmap of free @tx entries
 * @sq_avail: send queue slots not in use
 * @rx: receive buffers
 * @rx_ctl: the receive ring's shared state, which /dev/scif maps for
 *	libscif (struct scire_scif_rx_ring, uapi); the ring follows it at
 *	SCIRE_SCIF_RX_DATA_OFFSET. Allocated with the first connection.
 * @rx_ring: the stream's receive ring, SCIF_RX_RING bytes
 * @rx_maps: user mappings of @rx_ctl (vmas); under @slock
 * @rx_mm: the address space they are in, while @rx_maps; under @slock
 * @rx_head: stream bytes ever written into @rx_ring
 * @rx_tail: stream bytes ever consumed: @rx_ctl->tail as last found valid
 *	(scif_rx_sync())
 * @rx_reported: @rx_tail as last told to the peer
 * @tx_sent: stream bytes ever sent
 * @tx_acked: stream bytes the peer has consumed (from any message header)
 * @win_work: sends a window update when the peer may be waiting for one
 * @ctl_list: control requests received, for @ctl_work
 * @ctl_work: handles them in process context
 * @calls: outstanding control requests of this side, cookie -> struct
 *	scif_call
 * @next_cookie: the next request's cookie
 * @local: in the table of connected endpoints of this kernel
 *	(scif_mmap.c), from scif_conn_established() to scif_conn_teardown()
 * @local_gone: teardown has started: never into that table again (under
 *	its lock) until a new connection attempt starts (scif_local_rearm())
 * @peer_qpn: the QP number the endpoint's QP sends to, from when it is
 *	connected (scif_local_qpn())
 * @rma: windows, RMA and fences (scif_rma.h)
 * @auth: the proofs of the node table's secret (scif_auth.c)
 */
struct scif_endpt {
	struct kref ref;
	struct mutex lock;	/* see above */
	struct rw_semaphore res_sem;
	struct mutex conn_mutex;	/* see above */
	struct mutex send_mutex;	/* see above */
	struct mutex recv_mutex;	/* see above */
	spinlock_t slock;		/* see above */
	enum scif_ep_state state;
	struct net *net;
	struct scif_net *sn;
	struct scif_port_id port;
	struct scif_port_id peer;
	wait_queue_head_t wq;
	int conn_err;
	int cm_event;
	u32 cm_seen;

	int backlog;
	int npending;
	struct list_head pending;
	struct list_head pending_entry;
	struct scif_endpt *listener;

	struct rdma_cm_id *cm_id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	bool qp_dead;
	struct scif_buf tx[SCIF_TX_DEPTH];
	unsigned long tx_free[BITS_TO_LONGS(SCIF_TX_DEPTH)];
	int sq_avail;
	struct scif_buf rx[SCIF_RX_DEPTH];

	struct scire_scif_rx_ring *rx_ctl;
	u8 *rx_ring;
	int rx_maps;
	struct mm_struct *rx_mm;
	u64 rx_head;
	u64 rx_tail;
	u64 rx_reported;
	u64 tx_sent;
	u64 tx_acked;
	struct work_struct win_work;

	struct list_head ctl_list;
	struct work_struct ctl_work;
	struct xarray calls;
	u32 next_cookie;

	struct hlist_node local;
	bool local_gone;
	u32 peer_qpn;
	struct scif_rma_info rma;
	struct scif_ep_auth auth;
};

/* --- messages (scif_msg.c) ---------------------------------------------------- */

enum scif_msg_type {
	SCIF_MSG_DATA		= 1,	/* stream bytes */
	SCIF_MSG_WINDOW		= 2,	/* only the consumed count */
	SCIF_MSG_REPLY		= 3,	/* answers the request with the same cookie */
	SCIF_MSG_AUTH		= 4,	/* the client's proof of the secret, first */
	/* scif_rma.c and scif_fence.c: requests, each answered by a REPLY */
	SCIF_MSG_REGISTER	= 16,	/* a window's offset range and MRs */
	SCIF_MSG_UNREGISTER	= 17,
	SCIF_MSG_FENCE_MARK	= 18,
	SCIF_MSG_FENCE_WAIT	= 19,
	SCIF_MSG_FENCE_SIGNAL	= 20,
	SCIF_MSG_RMA_FIRST	= 16,
	SCIF_MSG_RMA_LAST	= 31,
};

/**
 * struct scif_msg_hdr - the header of every SEND between two endpoints
 * @type: enum scif_msg_type
 * @flags: zero
 * @len: payload bytes after the header
 * @consumed: stream bytes the sender of this message has consumed so far
 * @cookie: of a request, echoed by its reply; 0 for one-way messages
 * @status: of a reply: 0 or a negative errno
 * @rsvd: zero
 */
struct scif_msg_hdr {
	__le16 type;
	__le16 flags;
	__le32 len;
	__le64 consumed;
	__le64 cookie;
	__le32 status;
	__le32 rsvd;
};

#define SCIF_MSG_PAYLOAD	(SCIF_MSG_SIZE - sizeof(struct scif_msg_hdr))

void scif_msg_ep_init(struct scif_endpt *ep);
int scif_msg_post(struct scif_endpt *ep, u16 type, u64 cookie, int status,
		  const void *payload, u32 len);
int scif_msg_post_rma_done(struct scif_endpt *ep, u64 seq, int nwr);
int scif_msg_call(struct scif_endpt *ep, u16 type, const void *req, u32 req_len,
		  void *resp, u32 resp_len, long timeout);
int scif_msg_reply(struct scif_endpt *ep, u64 cookie, int status,
		   const void *data, u32 len);
int scif_sq_get(struct scif_endpt *ep, int n);
void scif_sq_put(struct scif_endpt *ep, int n);
int scif_conn_setup(struct scif_endpt *ep);
void scif_conn_teardown(struct scif_endpt *ep);
void scif_conn_lost(struct scif_endpt *ep);
void scif_conn_established(struct scif_endpt *ep);
int scif_stream_send(struct scif_endpt *ep, const void *buf, int len, bool block);
int scif_stream_recv(struct scif_endpt *ep, void *buf, int len, bool block);
int scif_stream_release(struct scif_endpt *ep);
void scif_rx_sync(struct scif_endpt *ep);
int scif_msg_post_auth(struct scif_endpt *ep, const u8 *mac);

/* --- the secret's proofs (scif_auth.c) ---------------------------------------- */

int scif_auth_set_secret(const u8 *key, size_t len);
bool scif_auth_enabled(void);
int scif_auth_proof(struct scif_endpt *ep, bool server, u8 *mac);
int scif_auth_check(struct scif_endpt *ep, bool server, const u8 *mac);
int scif_auth_rx(struct scif_endpt *ep, u16 type, const void *data, u32 len);
void scif_auth_exit(void);

/* --- connections (scif_cm.c) -------------------------------------------------- */

int scif_cm_listen_get(struct scif_net *sn);
void scif_cm_listen_put(struct scif_net *sn);
int scif_cm_connect(struct scif_endpt *ep, const struct sockaddr_storage *dst,
		    u16 src_node, const struct scif_port_id *dst_id);
int scif_cm_accept(struct scif_endpt *ep);
void scif_cm_reject(struct scif_endpt *ep);
void scif_pending_unlink(struct scif_endpt *lep, struct scif_endpt *nep);
void scif_cm_disconnect(struct scif_endpt *ep);
void scif_cm_destroy(struct scif_endpt *ep);

/* --- endpoints (scif_api.c) --------------------------------------------------- */

struct scif_endpt *scif_ep_alloc(struct net *net);
void scif_ep_get(struct scif_endpt *ep);
void scif_ep_put(struct scif_endpt *ep);
int scif_ep_verify(struct scif_endpt *ep);
__poll_t scif_ep_poll(struct scif_endpt *ep, struct file *file, poll_table *wait);
void scif_ep_set_state(struct scif_endpt *ep, enum scif_ep_state state);

/* --- mappings of windows of this kernel (scif_mmap.c) ------------------------- */

int scif_mmap_init(void);
void scif_mmap_exit(void);
void scif_local_qpn(struct scif_endpt *ep);
void scif_local_add(struct scif_endpt *ep);
void scif_local_del(struct scif_endpt *ep);
void scif_local_rearm(struct scif_endpt *ep);
int scif_mmap_peer(struct scif_endpt *ep, struct vm_area_struct *vma);

/* --- the character device (scif_fd.c) ----------------------------------------- */

int scif_fd_init(void);
void scif_fd_exit(void);

#endif /* SCIF_MAIN_H */
