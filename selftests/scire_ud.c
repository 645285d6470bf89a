// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_ud [-d DEV] [-g GIDIDX] [-n N] [-O post|error|drop] [-t PART,...] [-R] [-v]
 *
 * UD datagrams, address handles and multicast on one device DEV (default
 * scire0), through its RoCEv2 GID GIDIDX (default: port 1's first RoCE v2
 * GID with an IPv4-mapped address). In one process, UD QPs A and B:
 *
 *  1. A sends N messages of each of several sizes from 1 byte up to the
 *     port's active MTU, with and without immediate data, to B through an
 *     AH from ibv_create_ah() for DEV's own GID; alternately with
 *     ibv_post_send() and the ibv_wr_* API (ibv_wr_set_ud_addr), small ones
 *     sometimes inline (the source is overwritten right after posting).
 *     B receives into two SGEs, a 40-byte one for the GRH and one for the
 *     payload, and polls an extended CQ (ibv_start_poll, ibv_wc_read_*).
 *     Checked for every message: A's send CQE; B's CQE status, opcode,
 *     qp_num, byte_len (40 + size), IBV_WC_GRH, src_qp (A's QPN), the
 *     immediate data and its flag, sl the RoCE packet type as mlx5 and
 *     hns report it (2 for IPv4, 1 for IPv6), slid/dlid_path_bits 0 (and
 *     pkey_index 0 where a plain CQ reports it); every payload
 *     byte; the guard bytes after the payload (no overrun); the GRH: for
 *     IPv4, 20 zero bytes and then a valid IPv4 header (version, checksum,
 *     UDP, source and destination address, TTL = the AH's hop limit, total
 *     length of a RoCEv2 UD packet of that size).
 *  2. For one message of each size, B replies through an AH it builds with
 *     ibv_create_ah_from_wc() from that receive, to the src_qp it got; A
 *     (a plain CQ, one receive SGE) checks the reply the same way.
 *  3. A message with a wrong Q_Key is not delivered: B sees nothing for
 *     200 ms, and the next message, with the right Q_Key, is the next one
 *     B receives.
 *  4. Multicast: QPs M1 and M2 attach to a multicast GID (::ffff:239.1.2.3
 *     for an IPv4 GID, ff0e::5c1e otherwise); A sends to it (remote QPN
 *     0xffffff) and both receive it, B (not attached) does not; after M2
 *     detaches, M1 receives the next one and M2 does not. The program
 *     also joins the IP group on the GID's netdev, as rdma_cm does for
 *     RoCE: RoCEv2 multicast is IP multicast.
 *  5. A message of MTU + 1 bytes: -O says what must happen: "post"
 *     (ibv_post_send fails with EINVAL), "error" (the send completes with
 *     IBV_WC_LOC_LEN_ERR) or "drop" (IBA C10-93.1.1: no packet is sent and
 *     no error is reported: the send completes successfully and nothing
 *     arrives). Default: "error" on a scire device (what its kernel
 *     does), "drop" on any other (what rdma_rxe does). The outcome is
 *     printed; B must not receive the message in any case. After "post" or
 *     "drop" a good message must still get through.
 *
 * -t runs only the parts named (unicast, qkey, mcast, oversize). -R is for
 * rdma_rxe only, whose looped-back datagrams carry an IPv4 header with
 * checksum 0 in the GRH, and whose receive CQEs have sl 0: a 0 checksum
 * and sl 0 are then expected; scire must pass without -R.
 *
 * Exit 0 if everything matched, 1 with a line per difference, 77 if the
 * kernel has no RDMA device DEV.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "scire_rc.h"

#define QKEY		0x5ca1ab1eU	/* every QP's Q_Key (high-order bit clear) */
#define NSLOT		16		/* receive WQEs per QP */
#define GRH_LEN		40		/* what precedes a UD payload (IBA 11.4.1.2) */
#define GUARD		64		/* checked bytes past the MTU in receive buffers */
#define GUARD_BYTE	0xee
#define WANT_INLINE	64
#define HOP_LIMIT	64
#define MCAST_QPN	0xffffffU
#define QUIET_S		0.2		/* how long "nothing arrives" is watched */
#define WAIT_S		5.0		/* how long an expected completion may take */

/* RoCEv2 UD packet sizes, for the GRH's length fields. */
#define UDP_HDR_LEN	8
#define BTH_LEN		12
#define DETH_LEN	8
#define IMMDT_LEN	4
#define ICRC_LEN	4

enum api { API_POST, API_WR };
enum oversize { OV_POST, OV_ERROR, OV_DROP, OV_DELIVERED };

static const char *const ov_name[] = {
	[OV_POST] = "post", [OV_ERROR] = "error", [OV_DROP] = "drop",
	[OV_DELIVERED] = "delivered",
};

struct udqp {
	const char *name;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;		/* A: the ibv_wr_* API */
	struct ibv_cq *scq, *rcq;
	struct ibv_cq_ex *rcqx;		/* B: receives polled through ibv_cq_ex */
	int split_grh;			/* B: GRH and payload in two SGEs */
	uint8_t *area;			/* everything below, one MR */
	uint8_t *slots;			/* NSLOT receive buffers */
	uint8_t *grhs;			/* split_grh: NSLOT 40-byte GRH buffers */
	uint8_t *send;			/* the send buffer, MTU + GUARD bytes */
	size_t slot_len;
	struct ibv_mr *mr;
	uint32_t max_inline;
};

/* What a receive must look like. */
struct expect {
	uint32_t seq;			/* payload pattern; wr_id of the send */
	size_t len;
	int imm;
	uint32_t imm_val;
	uint32_t src_qp;
	const union ibv_gid *sgid, *dgid;
};

static struct {
	const char *dev;
	int gid_index;
	int nrep;
	int oversize;			/* enum oversize, -1: default */
	unsigned int tests;		/* -t: bit per enum part */
	int rxe_quirks;			/* -R */
	int verbose;
} opt = { .dev = "scire0", .gid_index = -1, .nrep = 2, .oversize = -1 };

enum part { P_UNICAST, P_QKEY, P_MCAST, P_OVERSIZE, P_N };

static const char *const part_name[P_N] = {
	[P_UNICAST] = "unicast", [P_QKEY] = "qkey", [P_MCAST] = "mcast",
	[P_OVERSIZE] = "oversize",
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct t_path path;
static int mtu;
static struct udqp qa = { .name = "A" }, qb = { .name = "B", .split_grh = 1 };
static struct udqp qm1 = { .name = "M1" }, qm2 = { .name = "M2" };
static uint32_t seq;

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-d DEV] [-g GIDIDX] [-n N] [-O post|error|drop] [-t PART,...] [-R] [-v]\n"
		"parts: unicast, qkey, mcast, oversize (default: all)\n",
		argv0);
	exit(T_EXIT_FAIL);
}

static uint8_t pattern(uint32_t s, size_t i)
{
	return (uint8_t)(s * 131 + i * 7 + (i >> 8) + 1);
}

static int gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, v4mapped, sizeof(v4mapped));
}

static const char *gid_str(const union ibv_gid *g)
{
	static char buf[2][INET6_ADDRSTRLEN];
	static int i;

	i ^= 1;
	if (!inet_ntop(AF_INET6, g->raw, buf[i], sizeof(buf[i])))
		snprintf(buf[i], sizeof(buf[i]), "(bad GID)");
	return buf[i];
}

/* --- QPs and buffers -------------------------------------------------------- */

static uint8_t *grh_of(struct udqp *q, unsigned int slot)
{
	return q->split_grh ? q->grhs + (size_t)slot * GRH_LEN :
			      q->slots + (size_t)slot * q->slot_len;
}

static uint8_t *payload_of(struct udqp *q, unsigned int slot)
{
	return q->split_grh ? q->slots + (size_t)slot * q->slot_len :
			      q->slots + (size_t)slot * q->slot_len + GRH_LEN;
}

/* Post receive slot i, its bytes set to GUARD_BYTE first. */
static void post_recv(struct udqp *q, unsigned int i)
{
	struct ibv_sge sge[2];
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = sge }, *bad;
	int ret;

	memset(grh_of(q, i), GUARD_BYTE, GRH_LEN);
	memset(payload_of(q, i), GUARD_BYTE, (size_t)mtu + GUARD);
	if (q->split_grh) {
		sge[0] = (struct ibv_sge){ (uintptr_t)grh_of(q, i), GRH_LEN, q->mr->lkey };
		sge[1] = (struct ibv_sge){ (uintptr_t)payload_of(q, i),
					   (uint32_t)mtu + GUARD, q->mr->lkey };
		wr.num_sge = 2;
	} else {
		sge[0] = (struct ibv_sge){ (uintptr_t)grh_of(q, i),
					   GRH_LEN + (uint32_t)mtu + GUARD, q->mr->lkey };
		wr.num_sge = 1;
	}
	ret = ibv_post_recv(q->qp, &wr, &bad);
	if (ret)
		t_fatal("%s: ibv_post_recv (slot %u): %s", q->name, i, t_errname(ret));
}

static void qp_to_rts(struct udqp *q)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = QKEY,
	};
	int ret;

	ret = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_QKEY);
	if (ret)
		t_fatal("%s: modify UD QP RESET->INIT: %s", q->name, t_errname(ret));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	ret = ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
	if (ret)
		t_fatal("%s: modify UD QP INIT->RTR: %s", q->name, t_errname(ret));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = q->qp->qp_num & 0xffffff };
	ret = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (ret)
		t_fatal("%s: modify UD QP RTR->RTS: %s", q->name, t_errname(ret));

	memset(&a, 0, sizeof(a));
	ret = ibv_query_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_QKEY, &init);
	if (ret)
		t_fatal("%s: ibv_query_qp: %s", q->name, t_errname(ret));
	if (a.qp_state != IBV_QPS_RTS)
		t_fail("%s: QP state %s after the move to RTS", q->name,
		       t_qp_state_str(a.qp_state));
	if (a.qkey != QKEY)
		t_fail("%s: ibv_query_qp says Q_Key %#x, it was set to %#x", q->name,
		       a.qkey, QKEY);
}

static void make_qp(struct udqp *q, int ex)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_UD,
		.cap = {
			.max_send_wr = NSLOT,
			.max_recv_wr = NSLOT,
			.max_send_sge = 1,
			.max_recv_sge = q->split_grh ? 2 : 1,
			.max_inline_data = WANT_INLINE,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	size_t area_len;
	unsigned int i;

	q->scq = ibv_create_cq(ctx, NSLOT, NULL, NULL, 0);
	if (!q->scq)
		t_fatal("%s: ibv_create_cq (send): %s", q->name, t_errname(errno));
	if (q->split_grh) {
		struct ibv_cq_init_attr_ex cqa = {
			.cqe = NSLOT,
			.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
				    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				    IBV_WC_EX_WITH_DLID_PATH_BITS,
		};

		q->rcqx = ibv_create_cq_ex(ctx, &cqa);
		if (!q->rcqx)
			t_fatal("%s: ibv_create_cq_ex (receive, UD fields): %s", q->name,
				t_errname(errno));
		q->rcq = ibv_cq_ex_to_cq(q->rcqx);
	} else {
		q->rcq = ibv_create_cq(ctx, NSLOT, NULL, NULL, 0);
		if (!q->rcq)
			t_fatal("%s: ibv_create_cq (receive): %s", q->name, t_errname(errno));
	}
	a.send_cq = q->scq;
	a.recv_cq = q->rcq;
	if (ex) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	}
	q->qp = ibv_create_qp_ex(ctx, &a);
	if (!q->qp)
		t_fatal("%s: ibv_create_qp_ex (UD%s): %s", q->name,
			ex ? ", send_ops_flags SEND|SEND_WITH_IMM" : "", t_errname(errno));
	if (ex) {
		q->qpx = ibv_qp_to_qp_ex(q->qp);
		if (!q->qpx)
			t_fatal("%s: ibv_qp_to_qp_ex: NULL for a QP created with send_ops_flags",
				q->name);
	}
	q->max_inline = a.cap.max_inline_data;

	q->slot_len = (size_t)mtu + GUARD + (q->split_grh ? 0 : GRH_LEN);
	area_len = NSLOT * q->slot_len + (q->split_grh ? NSLOT * GRH_LEN : 0) +
		   (size_t)mtu + GUARD;
	q->area = malloc(area_len);
	if (!q->area)
		t_fatal("%s: out of memory", q->name);
	q->slots = q->area;
	q->grhs = q->split_grh ? q->slots + NSLOT * q->slot_len : NULL;
	q->send = q->slots + NSLOT * q->slot_len + (q->split_grh ? NSLOT * GRH_LEN : 0);
	q->mr = ibv_reg_mr(pd, q->area, area_len, IBV_ACCESS_LOCAL_WRITE);
	if (!q->mr)
		t_fatal("%s: ibv_reg_mr(%zu bytes): %s", q->name, area_len, t_errname(errno));

	qp_to_rts(q);
	for (i = 0; i < NSLOT; i++)
		post_recv(q, i);
	if (opt.verbose)
		printf("%s: UD QP %#x, max_inline_data %u\n", q->name, q->qp->qp_num,
		       q->max_inline);
}

static void destroy_qp(struct udqp *q)
{
	int ret;

	ret = ibv_destroy_qp(q->qp);
	if (ret)
		t_fail("%s: ibv_destroy_qp: %s", q->name, t_errname(ret));
	ret = ibv_dereg_mr(q->mr);
	if (ret)
		t_fail("%s: ibv_dereg_mr: %s", q->name, t_errname(ret));
	ret = ibv_destroy_cq(q->rcq);
	if (ret)
		t_fail("%s: ibv_destroy_cq (receive): %s", q->name, t_errname(ret));
	ret = ibv_destroy_cq(q->scq);
	if (ret)
		t_fail("%s: ibv_destroy_cq (send): %s", q->name, t_errname(ret));
	free(q->area);
}

static struct ibv_ah *make_ah(const union ibv_gid *dgid, const char *what)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = {
			.dgid = *dgid,
			.sgid_index = (uint8_t)path.gid_index,
			.hop_limit = HOP_LIMIT,
		},
		.port_num = 1,
	};
	struct ibv_ah *ah = ibv_create_ah(pd, &a);

	if (!ah)
		t_fatal("ibv_create_ah (%s, dgid %s, sgid index %d): %s", what,
			gid_str(dgid), path.gid_index, t_errname(errno));
	return ah;
}

/* --- posting and polling ------------------------------------------------------ */

/*
 * Post one signalled UD send of len bytes from q->send with wr_id id.
 * Returns the errno of ibv_post_send()/ibv_wr_complete(), 0 if posted.
 */
static int send_ud(struct udqp *q, enum api api, int inl, uint64_t id, size_t len,
		   int imm, uint32_t imm_val, struct ibv_ah *ah, uint32_t qpn,
		   uint32_t qkey)
{
	struct ibv_sge sge = { (uintptr_t)q->send, (uint32_t)len, q->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
		.imm_data = htonl(imm_val),
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	}, *bad;
	struct ibv_qp_ex *x = q->qpx;

	if (api == API_POST)
		return ibv_post_send(q->qp, &wr, &bad);

	ibv_wr_start(x);
	x->wr_id = id;
	/* IBV_SEND_INLINE as well: rdma-core 44's rxe provider needs it. */
	x->wr_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
	if (imm)
		ibv_wr_send_imm(x, htonl(imm_val));
	else
		ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, qpn, qkey);
	if (inl)
		ibv_wr_set_inline_data(x, q->send, len);
	else
		ibv_wr_set_sge(x, q->mr->lkey, (uintptr_t)q->send, (uint32_t)len);
	return ibv_wr_complete(x);
}

/*
 * Wait for the send CQE of wr_id id on q. Returns its status, or -1 (after
 * a failure report) if none came or it was not the one expected.
 */
static int wait_send(struct udqp *q, uint64_t id, const char *what)
{
	struct ibv_wc wc;

	if (!t_poll_one(q->scq, &wc, t_now() + WAIT_S)) {
		t_fail("%s: no send completion on %s within %.0f s", what, q->name, WAIT_S);
		return -1;
	}
	if (wc.wr_id != id) {
		t_fail("%s: send CQE of %s has wr_id %#llx, expected %#llx (status %s)", what,
		       q->name, (unsigned long long)wc.wr_id, (unsigned long long)id,
		       ibv_wc_status_str(wc.status));
		return -1;
	}
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_SEND)
		t_fail("%s: send CQE of %s has opcode %s, expected SEND", what, q->name,
		       t_wc_opcode_str(wc.opcode));
	return wc.status;
}

/*
 * Next receive CQE of q within secs seconds, as an ibv_wc. The extended CQ
 * has no pkey_index reader: it is reported as 0 there.
 */
static int wait_recv(struct udqp *q, struct ibv_wc *wc, double secs)
{
	double deadline = t_now() + secs;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *x = q->rcqx;
	int ret;

	if (!x)
		return t_poll_one(q->rcq, wc, deadline);
	for (;;) {
		ret = ibv_start_poll(x, &pa);
		if (!ret)
			break;
		if (ret != ENOENT)
			t_fatal("%s: ibv_start_poll: %s", q->name, t_errname(ret));
		if (t_now() > deadline)
			return 0;
		sched_yield();
	}
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = x->wr_id;
	wc->status = x->status;
	wc->opcode = ibv_wc_read_opcode(x);
	wc->vendor_err = ibv_wc_read_vendor_err(x);
	wc->byte_len = ibv_wc_read_byte_len(x);
	wc->imm_data = ibv_wc_read_imm_data(x);
	wc->qp_num = ibv_wc_read_qp_num(x);
	wc->src_qp = ibv_wc_read_src_qp(x);
	wc->wc_flags = ibv_wc_read_wc_flags(x);
	wc->slid = (uint16_t)ibv_wc_read_slid(x);
	wc->sl = ibv_wc_read_sl(x);
	wc->dlid_path_bits = ibv_wc_read_dlid_path_bits(x);
	ibv_end_poll(x);
	return 1;
}

/* --- checks ------------------------------------------------------------------- */

static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Bytes of a RoCEv2 UD packet after the UDP header: BTH, DETH, ImmDt, payload, pad, ICRC. */
static size_t roce_ud_len(size_t len, int imm)
{
	return BTH_LEN + DETH_LEN + (imm ? IMMDT_LEN : 0) + len + (-len & 3) + ICRC_LEN;
}

static void check_grh(const uint8_t *g, const struct expect *e, const char *what)
{
	size_t want_len = UDP_HDR_LEN + roce_ud_len(e->len, e->imm);
	int i;

	if (gid_is_v4(e->sgid)) {
		const uint8_t *ip = g + 20;
		uint32_t sum = 0;

		for (i = 0; i < 20; i++) {
			if (g[i]) {
				t_fail("%s: GRH byte %d is %#x: the 20 bytes before an IPv4 header must be 0",
				       what, i, g[i]);
				return;
			}
		}
		if (ip[0] != 0x45) {
			t_fail("%s: GRH bytes 20..39 do not start an IPv4 header (version/IHL byte %#x, expected 0x45)",
			       what, ip[0]);
			return;
		}
		for (i = 0; i < 20; i += 2)
			sum += be16_at(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		/* rxe leaves the checksum of looped-back packets 0 (-R). */
		if (sum != 0xffff && !(opt.rxe_quirks && !be16_at(ip + 10)))
			t_fail("%s: IPv4 header checksum %#06x is wrong", what, be16_at(ip + 10));
		if (be16_at(ip + 2) != 20 + want_len)
			t_fail("%s: IPv4 total length %u, a UD packet of %zu bytes%s has %zu",
			       what, be16_at(ip + 2), e->len, e->imm ? " with ImmDt" : "",
			       20 + want_len);
		if (ip[9] != IPPROTO_UDP)
			t_fail("%s: IPv4 protocol %u, expected UDP (17)", what, ip[9]);
		if (ip[8] != HOP_LIMIT)
			t_fail("%s: IPv4 TTL %u, the AH's hop limit is %u", what, ip[8], HOP_LIMIT);
		if (memcmp(ip + 12, e->sgid->raw + 12, 4))
			t_fail("%s: IPv4 source %u.%u.%u.%u, expected %s", what, ip[12], ip[13],
			       ip[14], ip[15], gid_str(e->sgid));
		if (memcmp(ip + 16, e->dgid->raw + 12, 4))
			t_fail("%s: IPv4 destination %u.%u.%u.%u, expected %s", what, ip[16],
			       ip[17], ip[18], ip[19], gid_str(e->dgid));
		return;
	}

	if (g[0] >> 4 != 6) {
		t_fail("%s: GRH version %u, expected an IPv6 header (6)", what, g[0] >> 4);
		return;
	}
	if (be16_at(g + 4) != want_len)
		t_fail("%s: IPv6 payload length %u, expected %zu", what, be16_at(g + 4),
		       want_len);
	if (g[6] != IPPROTO_UDP)
		t_fail("%s: IPv6 next header %u, expected UDP (17)", what, g[6]);
	if (g[7] != HOP_LIMIT)
		t_fail("%s: IPv6 hop limit %u, the AH's is %u", what, g[7], HOP_LIMIT);
	if (memcmp(g + 8, e->sgid->raw, 16))
		t_fail("%s: GRH SGID %s, expected %s", what,
		       gid_str((const union ibv_gid *)(g + 8)), gid_str(e->sgid));
	if (memcmp(g + 24, e->dgid->raw, 16))
		t_fail("%s: GRH DGID %s, expected %s", what,
		       gid_str((const union ibv_gid *)(g + 24)), gid_str(e->dgid));
}

/*
 * Check a receive CQE of q and the bytes it delivered against e. Returns
 * the receive slot to repost, or -1 if the CQE names none.
 */
static int check_recv(struct udqp *q, const struct ibv_wc *wc, const struct expect *e,
		      const char *what)
{
	unsigned int want_flags = IBV_WC_GRH | (e->imm ? IBV_WC_WITH_IMM : 0);
	/* The RoCE packet type (UCX's UD transport reads it); rxe reports 0. */
	unsigned int want_sl = opt.rxe_quirks ? 0 : gid_is_v4(e->sgid) ? 2 : 1;
	const uint8_t *p;
	size_t i, bad = 0, first = 0;

	if (wc->wr_id >= NSLOT) {
		t_fail("%s: %s's receive CQE has wr_id %#llx, no receive WQE had it (status %s)",
		       what, q->name, (unsigned long long)wc->wr_id,
		       ibv_wc_status_str(wc->status));
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		t_fail("%s: %s's receive completed with %s (vendor_err %#x)", what, q->name,
		       ibv_wc_status_str(wc->status), wc->vendor_err);
		return (int)wc->wr_id;
	}
	if (wc->opcode != IBV_WC_RECV)
		t_fail("%s: %s's receive CQE opcode %s, expected RECV", what, q->name,
		       t_wc_opcode_str(wc->opcode));
	if (wc->qp_num != q->qp->qp_num)
		t_fail("%s: %s's receive CQE qp_num %#x, expected %#x", what, q->name,
		       wc->qp_num, q->qp->qp_num);
	if ((wc->wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM)) != want_flags)
		t_fail("%s: %s's receive CQE wc_flags %#x, expected IBV_WC_GRH%s", what,
		       q->name, wc->wc_flags, e->imm ? " | IBV_WC_WITH_IMM" : " only");
	if (e->imm && ntohl(wc->imm_data) != e->imm_val)
		t_fail("%s: %s received immediate data %#x, sent %#x", what, q->name,
		       ntohl(wc->imm_data), e->imm_val);
	if (wc->src_qp != e->src_qp)
		t_fail("%s: %s's receive CQE src_qp %#x, the sender is QP %#x", what, q->name,
		       wc->src_qp, e->src_qp);
	if (wc->sl != want_sl)
		t_fail("%s: %s's receive CQE sl %u, expected %u (%s)", what, q->name, wc->sl,
		       want_sl, opt.rxe_quirks ? "rdma_rxe reports SL 0" :
		       gid_is_v4(e->sgid) ? "RoCEv2 over IPv4, as mlx5 and hns report it" :
		       "RoCEv2 over IPv6, as mlx5 and hns report it");
	if (wc->slid || wc->dlid_path_bits || wc->pkey_index)
		t_fail("%s: %s's receive CQE slid %u dlid_path_bits %u pkey_index %u, expected all 0 (RoCE, P_Key index 0)",
		       what, q->name, wc->slid, wc->dlid_path_bits, wc->pkey_index);
	if (wc->byte_len != GRH_LEN + e->len) {
		t_fail("%s: %s's receive CQE byte_len %u, expected %zu (40-byte GRH + %zu)",
		       what, q->name, wc->byte_len, GRH_LEN + e->len, e->len);
		return (int)wc->wr_id;
	}

	p = payload_of(q, (unsigned int)wc->wr_id);
	for (i = 0; i < e->len; i++) {
		if (p[i] != pattern(e->seq, i) && !bad++)
			first = i;
	}
	if (bad)
		t_fail("%s: %zu of %zu payload bytes at %s differ, the first at offset %zu (%#x, sent %#x)",
		       what, bad, e->len, q->name, first, p[first], pattern(e->seq, first));
	for (i = e->len; i < e->len + GUARD; i++) {
		if (p[i] != GUARD_BYTE) {
			t_fail("%s: %s's receive buffer changed at offset %zu, past the %zu-byte payload",
			       what, q->name, i, e->len);
			break;
		}
	}
	check_grh(grh_of(q, (unsigned int)wc->wr_id), e, what);
	return (int)wc->wr_id;
}

/* Nothing may arrive at q for QUIET_S; else report what did. */
static void expect_quiet(struct udqp *q, const char *what)
{
	struct ibv_wc wc;

	if (!wait_recv(q, &wc, QUIET_S))
		return;
	t_fail("%s: %s received a message (status %s, byte_len %u, imm %#x, src_qp %#x)",
	       what, q->name, ibv_wc_status_str(wc.status), wc.byte_len,
	       ntohl(wc.imm_data), wc.src_qp);
	if (wc.wr_id < NSLOT)
		post_recv(q, (unsigned int)wc.wr_id);
}

static void fill_send(struct udqp *q, uint32_t s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		q->send[i] = pattern(s, i);
}

/*
 * Send seq's message from "from" to "to" and check it arrives intact.
 * Returns the receive slot of "to" (not yet reposted) or -1.
 */
static int deliver(struct udqp *from, struct udqp *to, enum api api, int inl,
		   size_t len, int imm, struct ibv_ah *ah, uint32_t qpn,
		   const union ibv_gid *dgid, struct ibv_wc *wc, const char *what)
{
	struct expect e = {
		.seq = seq, .len = len, .imm = imm, .imm_val = seq ^ 0x5a000000,
		.src_qp = from->qp->qp_num, .sgid = &path.gid, .dgid = dgid,
	};
	int ret;

	fill_send(from, seq, len);
	ret = send_ud(from, api, inl, seq, len, imm, e.imm_val, ah, qpn, QKEY);
	if (ret) {
		t_fail("%s: %s failed: %s", what,
		       api == API_POST ? "ibv_post_send" : "ibv_wr_complete", t_errname(ret));
		return -1;
	}
	/* Inline data is copied at post time: what follows must not matter. */
	if (inl)
		memset(from->send, 0x3c, len);
	ret = wait_send(from, seq, what);
	if (ret < 0)
		return -1;
	if (ret != IBV_WC_SUCCESS) {
		t_fail("%s: send completed with %s", what, ibv_wc_status_str(ret));
		return -1;
	}
	if (!wait_recv(to, wc, WAIT_S)) {
		t_fail("%s: %s received nothing within %.0f s", what, to->name, WAIT_S);
		return -1;
	}
	return check_recv(to, wc, &e, what);
}

/* --- the tests ------------------------------------------------------------------ */

/* B answers the message it received in slot through ibv_create_ah_from_wc(). */
static void reply(struct ibv_wc *wc, int slot, size_t len, uint32_t orig)
{
	struct ibv_wc rwc;
	struct ibv_ah *ah;
	char what[96];
	int ret, rslot;

	snprintf(what, sizeof(what), "reply %u to message %u (%zu bytes) B->A", seq + 1,
		 orig, len);
	ah = ibv_create_ah_from_wc(pd, wc, (struct ibv_grh *)grh_of(&qb, (unsigned int)slot),
				   1);
	if (!ah) {
		t_fail("%s: ibv_create_ah_from_wc on B's receive: %s", what, t_errname(errno));
		return;
	}
	seq++;
	rslot = deliver(&qb, &qa, API_POST, 0, len, 1, ah, wc->src_qp, &path.gid, &rwc, what);
	if (rslot >= 0)
		post_recv(&qa, (unsigned int)rslot);
	ret = ibv_destroy_ah(ah);
	if (ret)
		t_fail("%s: ibv_destroy_ah: %s", what, t_errname(ret));
}

static void test_unicast(struct ibv_ah *ah)
{
	static const int want_sizes[] = { 1, 3, 4, 64, 65, 255, 1024, -1, 0 };
	int sizes[16], nsizes = 0, i, j, imm, rep, slot, n = 0;
	struct ibv_wc wc;
	char what[128];

	/* 1 byte up to the MTU: -1 stands for MTU - 1, 0 for the MTU. */
	for (i = 0; i < (int)(sizeof(want_sizes) / sizeof(want_sizes[0])); i++) {
		int s = want_sizes[i] <= 0 ? mtu + want_sizes[i] : want_sizes[i];

		if (s > mtu || (nsizes && s <= sizes[nsizes - 1]))
			continue;
		sizes[nsizes++] = s;
	}

	for (i = 0; i < nsizes; i++) {
		for (imm = 0; imm < 2; imm++) {
			for (rep = 0; rep < opt.nrep; rep++) {
				size_t len = (size_t)sizes[i];
				enum api api = (++seq & 1) ? API_WR : API_POST;
				int inl = (seq & 2) && len <= qa.max_inline;

				snprintf(what, sizeof(what),
					 "message %u (%zu bytes%s, %s%s) A->B", seq, len,
					 imm ? ", immediate data" : "",
					 api == API_POST ? "ibv_post_send" : "ibv_wr_*",
					 inl ? ", inline" : "");
				if (opt.verbose)
					printf("%s\n", what);
				slot = deliver(&qa, &qb, api, inl, len, imm, ah,
					       qb.qp->qp_num, &path.gid, &wc, what);
				n++;
				if (slot < 0)
					continue;
				if (imm && !rep)
					reply(&wc, slot, len, seq);
				post_recv(&qb, (unsigned int)slot);
			}
		}
	}
	printf("unicast: %d messages A->B of", n);
	for (j = 0; j < nsizes; j++)
		printf(" %d", sizes[j]);
	printf(" bytes, %d replies B->A\n", nsizes);
}

static void test_wrong_qkey(struct ibv_ah *ah)
{
	uint32_t bad_seq = ++seq, bad_qkey = QKEY ^ 0x100;
	char what[128];
	struct ibv_wc wc;
	int ret, slot;

	snprintf(what, sizeof(what), "message %u with Q_Key %#x to B (Q_Key %#x)", bad_seq,
		 bad_qkey, QKEY);
	fill_send(&qa, bad_seq, 32);
	ret = send_ud(&qa, API_POST, 0, bad_seq, 32, 1, bad_seq, ah, qb.qp->qp_num, bad_qkey);
	if (ret) {
		t_fail("%s: ibv_post_send: %s", what, t_errname(ret));
		return;
	}
	/* The requester cannot know: a UD send completes once sent. */
	ret = wait_send(&qa, bad_seq, what);
	if (ret > 0)
		t_fail("%s: send completed with %s, expected success", what,
		       ibv_wc_status_str(ret));
	expect_quiet(&qb, what);

	++seq;
	snprintf(what, sizeof(what), "message %u (right Q_Key) after the wrong-Q_Key one", seq);
	slot = deliver(&qa, &qb, API_POST, 0, 32, 1, ah, qb.qp->qp_num, &path.gid, &wc, what);
	if (slot >= 0)
		post_recv(&qb, (unsigned int)slot);
}

/*
 * RoCEv2 multicast travels as IP multicast, which a host takes in only for
 * groups its netdev joined. ibv_attach_mcast() tells the RDMA device
 * alone; the IP join (IGMP/MLD) is what rdma_join_multicast() adds for
 * RoCE, so a plain verbs program joins on the GID's netdev itself. Returns
 * the socket holding the membership.
 */
static int join_ip_group(const union ibv_gid *mgid)
{
	struct ibv_gid_entry entry;
	int fd, ret;

	ret = ibv_query_gid_ex(ctx, 1, path.gid_index, &entry, 0);
	if (ret)
		t_fatal("ibv_query_gid_ex(port 1, index %d): %s", path.gid_index,
			t_errname(ret));
	if (gid_is_v4(mgid)) {
		struct ip_mreqn m = { .imr_ifindex = (int)entry.ndev_ifindex };

		memcpy(&m.imr_multiaddr, mgid->raw + 12, 4);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)))
			t_fatal("join IPv4 group %s on ifindex %u: %s", gid_str(mgid),
				entry.ndev_ifindex, t_errname(errno));
	} else {
		struct ipv6_mreq m = { .ipv6mr_interface = entry.ndev_ifindex };

		memcpy(&m.ipv6mr_multiaddr, mgid->raw, 16);
		fd = socket(AF_INET6, SOCK_DGRAM, 0);
		if (fd < 0 || setsockopt(fd, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m, sizeof(m)))
			t_fatal("join IPv6 group %s on ifindex %u: %s", gid_str(mgid),
				entry.ndev_ifindex, t_errname(errno));
	}
	return fd;
}

static void test_multicast(void)
{
	union ibv_gid mgid = {};
	struct ibv_ah *ah;
	struct ibv_wc wc;
	char what[128];
	size_t len = (size_t)mtu / 2 + 3;
	uint32_t s;
	int ret, slot;
	struct udqp *m[2] = { &qm1, &qm2 };
	int i, ipfd;

	if (gid_is_v4(&path.gid)) {
		mgid.raw[10] = 0xff;
		mgid.raw[11] = 0xff;
		mgid.raw[12] = 239;
		mgid.raw[13] = 1;
		mgid.raw[14] = 2;
		mgid.raw[15] = 3;
	} else {
		mgid.raw[0] = 0xff;
		mgid.raw[1] = 0x0e;
		mgid.raw[14] = 0x5c;
		mgid.raw[15] = 0x1e;
	}
	for (i = 0; i < 2; i++) {
		ret = ibv_attach_mcast(m[i]->qp, &mgid, 0);
		if (ret)
			t_fatal("%s: ibv_attach_mcast(%s): %s", m[i]->name, gid_str(&mgid),
				t_errname(ret));
	}
	ah = make_ah(&mgid, "multicast");
	ipfd = join_ip_group(&mgid);

	s = ++seq;
	snprintf(what, sizeof(what), "multicast message %u (%zu bytes) to %s", s, len,
		 gid_str(&mgid));
	slot = deliver(&qa, &qm1, API_POST, 0, len, 1, ah, MCAST_QPN, &mgid, &wc, what);
	if (slot >= 0)
		post_recv(&qm1, (unsigned int)slot);
	if (wait_recv(&qm2, &wc, WAIT_S)) {
		struct expect e = {
			.seq = s, .len = len, .imm = 1, .imm_val = s ^ 0x5a000000,
			.src_qp = qa.qp->qp_num, .sgid = &path.gid, .dgid = &mgid,
		};

		slot = check_recv(&qm2, &wc, &e, what);
		if (slot >= 0)
			post_recv(&qm2, (unsigned int)slot);
	} else {
		t_fail("%s: M2 (attached too) received nothing within %.0f s", what, WAIT_S);
	}
	expect_quiet(&qb, "multicast to a group B did not join");

	ret = ibv_detach_mcast(qm2.qp, &mgid, 0);
	if (ret)
		t_fail("M2: ibv_detach_mcast(%s): %s", gid_str(&mgid), t_errname(ret));
	s = ++seq;
	snprintf(what, sizeof(what), "multicast message %u after M2 detached", s);
	slot = deliver(&qa, &qm1, API_WR, 0, len, 0, ah, MCAST_QPN, &mgid, &wc, what);
	if (slot >= 0)
		post_recv(&qm1, (unsigned int)slot);
	expect_quiet(&qm2, what);

	ret = ibv_detach_mcast(qm1.qp, &mgid, 0);
	if (ret)
		t_fail("M1: ibv_detach_mcast(%s): %s", gid_str(&mgid), t_errname(ret));
	ret = ibv_destroy_ah(ah);
	if (ret)
		t_fail("ibv_destroy_ah (multicast): %s", t_errname(ret));
	close(ipfd);
}

static void test_oversize(struct ibv_ah *ah, enum oversize want)
{
	size_t len = (size_t)mtu + 1;
	enum oversize got;
	char what[128], detail[96] = "";
	struct ibv_wc wc;
	int ret, slot;

	snprintf(what, sizeof(what), "message %u of %zu bytes (active MTU + 1) to B", ++seq, len);
	fill_send(&qa, seq, len);
	ret = send_ud(&qa, API_POST, 0, seq, len, 0, 0, ah, qb.qp->qp_num, QKEY);
	if (ret) {
		got = OV_POST;
		snprintf(detail, sizeof(detail), "ibv_post_send: %s", t_errname(ret));
		if (ret != EINVAL)
			t_fail("%s: ibv_post_send failed with %s; a WR the QP cannot take is EINVAL",
			       what, t_errname(ret));
	} else {
		ret = wait_send(&qa, seq, what);
		if (ret < 0)
			return;
		got = ret == IBV_WC_SUCCESS ? OV_DROP : OV_ERROR;
		snprintf(detail, sizeof(detail), "send completion %s", ibv_wc_status_str(ret));
		if (got == OV_ERROR && ret != IBV_WC_LOC_LEN_ERR)
			t_fail("%s: send completed with %s; a message too long for the port is IBV_WC_LOC_LEN_ERR",
			       what, ibv_wc_status_str(ret));
	}
	if (wait_recv(&qb, &wc, QUIET_S)) {
		got = OV_DELIVERED;
		t_fail("%s: B received it (status %s, byte_len %u)", what,
		       ibv_wc_status_str(wc.status), wc.byte_len);
		if (wc.wr_id < NSLOT)
			post_recv(&qb, (unsigned int)wc.wr_id);
	}
	printf("MTU + 1: %s (%s), expected %s\n", ov_name[got], detail, ov_name[want]);
	if (got != want && got != OV_DELIVERED)
		t_fail("%s: outcome \"%s\" (%s), expected \"%s\"", what, ov_name[got], detail,
		       ov_name[want]);
	if (got == OV_ERROR)
		return;		/* the send queue is in error now */

	++seq;
	snprintf(what, sizeof(what), "message %u (MTU bytes) after the oversized one", seq);
	slot = deliver(&qa, &qb, API_POST, 0, (size_t)mtu, 0, ah, qb.qp->qp_num, &path.gid,
		       &wc, what);
	if (slot >= 0)
		post_recv(&qb, (unsigned int)slot);
}

/* -t unicast,mcast,...: a bit per part. */
static unsigned int parse_parts(char *list, const char *argv0)
{
	unsigned int mask = 0;
	char *tok, *save = NULL;
	int i;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < P_N; i++)
			if (!strcmp(tok, part_name[i]))
				break;
		if (i == P_N)
			usage(argv0);
		mask |= 1U << i;
	}
	return mask;
}

static int parse_oversize(const char *s)
{
	int i;

	for (i = OV_POST; i <= OV_DROP; i++)
		if (!strcmp(s, ov_name[i]))
			return i;
	return -1;
}

int main(int argc, char **argv)
{
	char sysdir[256];
	struct ibv_ah *ah;
	int c, i, ret;

	t_name = "scire_ud";
	while ((c = getopt(argc, argv, "d:g:n:O:t:Rv")) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'g':
			opt.gid_index = atoi(optarg);
			break;
		case 'n':
			opt.nrep = atoi(optarg);
			if (opt.nrep < 1)
				usage(argv[0]);
			break;
		case 'O':
			opt.oversize = parse_oversize(optarg);
			if (opt.oversize < 0)
				usage(argv[0]);
			break;
		case 't':
			opt.tests = parse_parts(optarg, argv[0]);
			break;
		case 'R':
			opt.rxe_quirks = 1;
			break;
		case 'v':
			opt.verbose = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	snprintf(sysdir, sizeof(sysdir), "/sys/class/infiniband/%s/scire_abi_version", opt.dev);
	if (opt.oversize < 0)
		opt.oversize = access(sysdir, F_OK) ? OV_DROP : OV_ERROR;
	if (!opt.tests)
		opt.tests = (1U << P_N) - 1;

	/* Skip only when the kernel has no such device; a provider problem is a failure. */
	snprintf(sysdir, sizeof(sysdir), "/sys/class/infiniband/%s", opt.dev);
	if (access(sysdir, F_OK))
		t_skip("no RDMA device %s", opt.dev);
	ctx = t_open_device(opt.dev);

	if (opt.gid_index < 0) {
		opt.gid_index = t_find_ipv4_roce_v2_gid(ctx);
		if (opt.gid_index < 0)
			t_fatal("%s port 1 has no RoCE v2 GID with an IPv4-mapped address; give one with -g",
				opt.dev);
	}
	t_path_init(ctx, opt.gid_index, 0, &path);
	mtu = t_mtu_bytes(path.mtu);
	printf("%s: GID index %d (%s), active MTU %d\n", opt.dev, path.gid_index,
	       gid_str(&path.gid), mtu);

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("ibv_alloc_pd: %s", t_errname(errno));
	make_qp(&qa, 1);
	make_qp(&qb, 0);
	make_qp(&qm1, 0);
	make_qp(&qm2, 0);
	ah = make_ah(&path.gid, "to the device's own GID");

	for (i = 0; i < P_N; i++) {
		int before = t_failures;

		if (!(opt.tests & 1U << i))
			continue;
		switch (i) {
		case P_UNICAST:
			test_unicast(ah);
			break;
		case P_QKEY:
			test_wrong_qkey(ah);
			break;
		case P_MCAST:
			test_multicast();
			break;
		case P_OVERSIZE:
			test_oversize(ah, (enum oversize)opt.oversize);
			break;
		}
		if (t_failures == before)
			printf("%s: ok\n", part_name[i]);
		else
			printf("%s: %d check(s) failed\n", part_name[i], t_failures - before);
	}

	ret = ibv_destroy_ah(ah);
	if (ret)
		t_fail("ibv_destroy_ah: %s", t_errname(ret));
	destroy_qp(&qm2);
	destroy_qp(&qm1);
	destroy_qp(&qb);
	destroy_qp(&qa);
	ret = ibv_dealloc_pd(pd);
	if (ret)
		t_fail("ibv_dealloc_pd: %s", t_errname(ret));
	ibv_close_device(ctx);

	if (t_failures) {
		fprintf(stderr, "FAIL: %s: %d check(s) failed\n", t_name, t_failures);
		return T_EXIT_FAIL;
	}
	printf("PASS\n");
	return T_EXIT_PASS;
}
