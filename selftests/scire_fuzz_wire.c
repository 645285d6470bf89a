// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_fuzz_wire: malformed and adversarial RoCEv2 packets injected into
 * live QPs of a scire device from another network namespace.
 *
 * The victim (-d DEV, e.g. scireB) gets RC, UC and UD QPs and an XRC
 * receive QP (with an XRC SRQ of its domain) connected to QPs
 * of a peer device (-D DEV2, e.g. scireA, on the other end of a veth pair)
 * and MRs of every kind of access, each inside a larger mapping whose
 * unregistered bytes (guard pages before and after, and the parts of the
 * registered pages outside the MR) hold a known pattern. A raw IPv4 socket
 * opened in the peer's network namespace (-N NETNS) then sends UDP
 * datagrams to port 4791 of the victim with every IP and UDP field under
 * the program's control: every BTH opcode with random and boundary field
 * values, truncated and oversized payloads, correct and wrong ICRCs, PSN
 * replays and jumps, forged and stale rkeys, READ responses and ACKs nobody
 * asked for, duplicate atomics, ATOMIC WRITEs and FLUSHes (IBA 1.5), XRC
 * requests naming the victim's XRC SRQ, numbers near it and random ones,
 * aimed at the real QPNs and PSNs (which the program knows, having set
 * them up) and at random QPNs. Most packets carry
 * a correct ICRC and plausible headers, so that they get past the ICRC
 * check into the transport.
 *
 * Before fuzzing, deterministic cases show the injector is right and pin
 * down known answers: a WRITE with a correct ICRC lands, the same WRITE
 * with a wrong ICRC does not, a FETCH_ADD sent four times (three
 * duplicates) adds once, a duplicate WRITE older than an executed
 * FETCH_ADD is acknowledged up to its own PSN, never with an ACK naming
 * the atomic's (a raw UDP socket in the peer's namespace sees the
 * victim's answers), an ATOMIC WRITE is answered with a READ_RESPONSE_ONLY
 * and its duplicate answered again without writing the word again, and
 * the peer, whose send PSN was set past the
 * injected packets, still reaches the victim.
 *
 * Pass: every byte outside what was granted (the MRs with remote write
 * access, and the receive buffers) equals its pattern, before and after
 * teardown; every victim QP either still moves data or is in ERR; a fresh
 * QP pair moves data correctly. The kernel log is the runner's business.
 *
 * Seeded: -s SEED replays a run's packet stream (the seed is printed).
 * -t SECONDS and -n PACKETS bound it (whichever comes first); -m PACKETS
 * stretches a -t flood until the injectors sent that many in all, and
 * -H FILE until the caller removes FILE (created when the flood starts),
 * so that a count or a caller's honest traffic does not depend on how
 * fast the host is. -v prints every packet sent, otherwise counts by
 * opcode are printed.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "scire_rc.h"

#define FZ_PORT		4791
#define FZ_QKEY		0x11110000u
#define FZ_GSI_QKEY	0x80010000u
#define FZ_BATCH	32
#define FZ_PKT_MAX	9000
#define FZ_RECV_SLOT	(4096 + 64)
#define FZ_RECV_SLOTS	8
#define FZ_RECV_DEPTH	16
#define FZ_PAGE		4096

/* --- ICRC (IBA annex A17): CRC-32 over the masked headers ------------------- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* Reflected CRC-32 without pre- or post-inversion. */
static uint32_t crc_raw(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/*
 * The ICRC of a packet that starts with its 20-byte IPv4 header, ends with
 * room for the ICRC and is len bytes long with it. The LRH a RoCEv2 packet
 * lacks is hashed as eight 0xff bytes; IPv4 TOS, TTL and checksum, the UDP
 * checksum and BTH byte 4 (FECN, BECN, reserved) as all-ones.
 */
static uint32_t icrc_of(const uint8_t *pkt, size_t len)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t hdr[20 + 8 + 12];
	uint32_t crc;

	memcpy(hdr, pkt, sizeof(hdr));
	hdr[1] = 0xff;			/* TOS */
	hdr[8] = 0xff;			/* TTL */
	hdr[10] = hdr[11] = 0xff;	/* IP checksum */
	hdr[26] = hdr[27] = 0xff;	/* UDP checksum */
	hdr[32] = 0xff;			/* BTH FECN, BECN, resv6 */
	crc = crc_raw(0xffffffffu, lrh, sizeof(lrh));
	crc = crc_raw(crc, hdr, sizeof(hdr));
	crc = crc_raw(crc, pkt + sizeof(hdr), len - 4 - sizeof(hdr));
	return ~crc;
}

/* --- opcodes (IBA 9.2.1 table 38) and their extended headers ---------------- */

enum {
	H_RETH = 1 << 0,	/* 16: VA, rkey, DMA length */
	H_ATH = 1 << 1,		/* 28: VA, rkey, swap/add, compare */
	H_AETH = 1 << 2,	/* 4: syndrome, MSN */
	H_AACK = 1 << 3,	/* 8: original remote data */
	H_IMM = 1 << 4,		/* 4 */
	H_IETH = 1 << 5,	/* 4: rkey to invalidate */
	H_DETH = 1 << 6,	/* 8: Q_Key, source QP */
	H_PAY = 1 << 7,		/* carries a payload */
	H_REQ = 1 << 8,		/* a request (the victim responds) */
	H_RESP = 1 << 9,	/* a response (the victim completes) */
	H_VALID = 1 << 10,
	H_AW = 1 << 11,		/* ATOMIC WRITE: its payload is one 8-byte word */
	H_FETH = 1 << 12,	/* 4: FLUSH placement type and selectivity */
	H_XRC = 1 << 13,	/* 4: XRCETH, the XRC SRQ (annex A19) */
};

struct fz_opcode {
	const char *name;
	unsigned int hdrs;
};

static struct fz_opcode opcodes[256];

static void op_set(int op, const char *name, unsigned int hdrs)
{
	opcodes[op].name = name;
	opcodes[op].hdrs = hdrs | H_VALID;
}

static void opcodes_init(void)
{
	static const char *const tr[] = { "RC", "UC", "RD", "UD", "CNP", "XRC", "op6", "op7" };
	static char names[256][32];
	int base, i;

	for (i = 0; i < 256; i++) {
		snprintf(names[i], sizeof(names[i]), "op%#04x", i);
		opcodes[i].name = names[i];
	}
	for (i = 0; i < 2; i++) {
		base = i * 0x20;
		op_set(base + 0x00, "SEND_FIRST", H_PAY | H_REQ);
		op_set(base + 0x01, "SEND_MIDDLE", H_PAY | H_REQ);
		op_set(base + 0x02, "SEND_LAST", H_PAY | H_REQ);
		op_set(base + 0x03, "SEND_LAST_IMM", H_IMM | H_PAY | H_REQ);
		op_set(base + 0x04, "SEND_ONLY", H_PAY | H_REQ);
		op_set(base + 0x05, "SEND_ONLY_IMM", H_IMM | H_PAY | H_REQ);
		op_set(base + 0x06, "WRITE_FIRST", H_RETH | H_PAY | H_REQ);
		op_set(base + 0x07, "WRITE_MIDDLE", H_PAY | H_REQ);
		op_set(base + 0x08, "WRITE_LAST", H_PAY | H_REQ);
		op_set(base + 0x09, "WRITE_LAST_IMM", H_IMM | H_PAY | H_REQ);
		op_set(base + 0x0a, "WRITE_ONLY", H_RETH | H_PAY | H_REQ);
		op_set(base + 0x0b, "WRITE_ONLY_IMM", H_RETH | H_IMM | H_PAY | H_REQ);
	}
	op_set(0x0c, "READ_REQUEST", H_RETH | H_REQ);
	op_set(0x0d, "READ_RESP_FIRST", H_AETH | H_PAY | H_RESP);
	op_set(0x0e, "READ_RESP_MIDDLE", H_PAY | H_RESP);
	op_set(0x0f, "READ_RESP_LAST", H_AETH | H_PAY | H_RESP);
	op_set(0x10, "READ_RESP_ONLY", H_AETH | H_PAY | H_RESP);
	op_set(0x11, "ACK", H_AETH | H_RESP);
	op_set(0x12, "ATOMIC_ACK", H_AETH | H_AACK | H_RESP);
	op_set(0x13, "CMP_SWAP", H_ATH | H_REQ);
	op_set(0x14, "FETCH_ADD", H_ATH | H_REQ);
	op_set(0x16, "SEND_LAST_INV", H_IETH | H_PAY | H_REQ);
	op_set(0x17, "SEND_ONLY_INV", H_IETH | H_PAY | H_REQ);
	op_set(0x1c, "FLUSH", H_FETH | H_RETH | H_REQ);			/* IBA 1.5 */
	op_set(0x1d, "ATOMIC_WRITE", H_RETH | H_PAY | H_REQ | H_AW);	/* IBA 1.5 */
	op_set(0x64, "SEND_ONLY", H_DETH | H_PAY | H_REQ);
	op_set(0x65, "SEND_ONLY_IMM", H_DETH | H_IMM | H_PAY | H_REQ);
	/* XRC: RC's operations; a request carries an XRCETH after the BTH. */
	for (i = 0; i < 0x20; i++)
		if (opcodes[i].hdrs & H_VALID)
			op_set(0xa0 | i, opcodes[i].name, opcodes[i].hdrs |
			       (opcodes[i].hdrs & H_REQ ? H_XRC : 0));
	for (i = 0; i < 256; i++) {
		if (!(opcodes[i].hdrs & H_VALID))
			continue;
		snprintf(names[i], sizeof(names[i]), "%s_%s", tr[i >> 5], opcodes[i].name);
		opcodes[i].name = names[i];
	}
}

static size_t hdrs_len(unsigned int h)
{
	return (h & H_DETH ? 8 : 0) + (h & H_RETH ? 16 : 0) + (h & H_ATH ? 28 : 0) +
	       (h & H_AETH ? 4 : 0) + (h & H_AACK ? 8 : 0) + (h & H_IMM ? 4 : 0) +
	       (h & H_IETH ? 4 : 0) + (h & H_FETH ? 4 : 0) + (h & H_XRC ? 4 : 0);
}

/* --- memory: MRs inside patterned guard mappings ---------------------------- */

enum fz_mr_kind { MR_RW, MR_W, MR_RO, MR_LOCAL, MR_STALE, MR_OTHER_PD, MR_RECV, MR_NKINDS };

struct fz_mr {
	const char *name;
	int access;
	int granted;		/* the registered bytes may change */
	uint8_t *map;
	size_t map_len;
	uint8_t *reg;
	size_t len;
	struct ibv_mr *mr;
	uint32_t rkey;		/* learnt while registered */
	uint64_t va;
	int id;
};

static struct fz_mr mrs[MR_NKINDS];

static uint8_t pattern_at(const struct fz_mr *m, size_t i)
{
	return (uint8_t)(i * 131 + (i >> 8) * 7 + m->id * 29 + 0x5a);
}

static void mr_map(struct fz_mr *m, int id, const char *name, int access, int granted,
		   size_t len)
{
	size_t i, head;

	m->id = id;
	m->name = name;
	m->access = access;
	m->granted = granted;
	/* Two guard pages each side; the MR starts off a page boundary. */
	m->map_len = ((len + FZ_PAGE - 1) / FZ_PAGE + 5) * FZ_PAGE;
	m->map = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m->map == MAP_FAILED)
		t_fatal("mmap %zu bytes: %s", m->map_len, t_errname(errno));
	/* Injector children (-j) must not share pinned pages copy-on-write. */
	if (madvise(m->map, m->map_len, MADV_DONTFORK))
		t_fatal("madvise(MADV_DONTFORK): %s", t_errname(errno));
	for (i = 0; i < m->map_len; i++)
		m->map[i] = pattern_at(m, i);
	head = 2 * FZ_PAGE + 8 * (1 + id % 7) + (id & 1) * 4;
	m->reg = m->map + head;
	m->len = len;
}

static void mr_reg(struct fz_mr *m, struct ibv_pd *pd)
{
	m->mr = ibv_reg_mr(pd, m->reg, m->len, m->access);
	if (!m->mr)
		t_fatal("ibv_reg_mr(%s, %zu bytes, access %#x): %s", m->name, m->len,
			m->access, t_errname(errno));
	m->rkey = m->mr->rkey;
	m->va = (uintptr_t)m->reg;
}

/* Compare every byte that must hold its pattern; report the first few. */
static int mr_check(const struct fz_mr *m, const char *when)
{
	size_t i, lo = m->reg - m->map, hi = lo + m->len, bad = 0, first = 0;

	for (i = 0; i < m->map_len; i++) {
		if (m->granted && i >= lo && i < hi)
			continue;
		if (m->map[i] == pattern_at(m, i))
			continue;
		if (!bad++)
			first = i;
	}
	if (!bad)
		return 0;
	t_fail("%s: MR %s (%s, access %#x, registered [%zu, %zu) of a %zu-byte mapping): %zu bytes differ from the pattern, first at offset %zu (%s the MR): %#04x, pattern %#04x",
	       when, m->name, m->granted ? "remote write granted" : "nothing granted",
	       m->access, lo, hi, m->map_len, bad, first,
	       first < lo ? "before" : first >= hi ? "after" : "inside",
	       m->map[first], pattern_at(m, first));
	return 1;
}

static int mrs_check(const char *when)
{
	int i, bad = 0;

	for (i = 0; i < MR_NKINDS; i++)
		bad += mr_check(&mrs[i], when);
	return bad;
}

/* --- devices, QPs ------------------------------------------------------------ */

struct fz_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint32_t ip;		/* network order */
	/* The victim's XRC domain (a temporary file's) and XRC SRQ. */
	int xrcd_fd;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *xsrq;
	uint32_t xsrqn;
};

static struct fz_side vic, peer;
static struct ibv_pd *vic_pd2;

struct fz_qp {
	const char *name;
	enum ibv_qp_type type;
	struct ibv_qp *qp;	/* victim */
	struct ibv_qp *pqp;	/* its peer on the other device */
	struct ibv_ah *pah;	/* UD: peer's AH to the victim */
	uint32_t epsn;		/* what the victim should expect next (a guess) */
	uint32_t sq_psn;	/* the victim's send PSN */
	int posted;		/* receives posted, not yet completed */
	uint64_t rearms;
};

enum { Q_RC0, Q_RC1, Q_PROBE, Q_UC, Q_UD, Q_XRC, Q_N };
static struct fz_qp qps[Q_N];

static const int rc_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

static void side_open(struct fz_side *s, const char *dev, int gid_index)
{
	struct t_path path;

	s->ctx = t_open_path(dev, gid_index, &path);
	s->gid_index = path.gid_index;
	s->gid = path.gid;
	s->mtu = path.mtu;
	memcpy(&s->ip, &s->gid.raw[12], 4);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		t_fatal("ibv_alloc_pd(%s): %s", dev, t_errname(errno));
	s->cq = ibv_create_cq(s->ctx, 4096, NULL, NULL, 0);
	if (!s->cq)
		t_fatal("ibv_create_cq(%s): %s", dev, t_errname(errno));
}

/*
 * The victim's XRC domain and its XRC SRQ (receives of the XRC receive QP
 * land in vic.cq), in a domain of a file unlinked at once.
 */
static void xrc_open(struct fz_side *s)
{
	s->xrcd = t_xrcd_tmp(s->ctx, &s->xrcd_fd);
	s->xsrq = t_xrc_srq(s->ctx, s->xrcd, s->pd, s->cq, 64, 1, &s->xsrqn);
}

static struct ibv_qp *qp_create(struct fz_side *s, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex x = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = s->xrcd,
	};
	struct ibv_qp_init_attr a = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
	};
	struct ibv_qp *qp;

	/* An XRC send QP has no RQ; an XRC receive QP no queue or PD. */
	if (type == IBV_QPT_XRC_SEND)
		a.cap.max_recv_wr = a.cap.max_recv_sge = 0;
	qp = type == IBV_QPT_XRC_RECV ? ibv_create_qp_ex(s->ctx, &x) :
					ibv_create_qp(s->pd, &a);
	if (!qp)
		t_fatal("create %s QP: %s", type == IBV_QPT_RC ? "RC" :
			type == IBV_QPT_UC ? "UC" : type == IBV_QPT_UD ? "UD" : "XRC",
			t_errname(errno));
	return qp;
}

static void qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		t_fatal("modify QP %#x to %s: %s", qp->qp_num, what, t_errname(ret));
}

/*
 * Move qp of side s (in any state) to RTS: connected (RC, UC) to QP dqpn of
 * side d, or (UD) with Q_Key FZ_QKEY. rnr_retry 3: a peer whose SEND finds
 * no receive (fuzzed SENDs may have used them up) gets an error, not a hang.
 */
static void qp_connect(struct ibv_qp *qp, const struct fz_side *s, const struct fz_side *d,
		       uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int ud = qp->qp_type == IBV_QPT_UD, ini = qp->qp_type == IBV_QPT_XRC_SEND;
	int tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	/* rc: has RC's RTR or RTS attributes (XRC: the side that uses them). */
	int rc = qp->qp_type == IBV_QPT_RC;

	qp_modify(qp, &a, IBV_QP_STATE, "RESET");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 };
	if (ud) {
		a.qkey = FZ_QKEY;
		qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY, "INIT");
	} else {
		a.qp_access_flags = rc || ini || tgt ?
				    rc_access & ~IBV_ACCESS_LOCAL_WRITE :
				    IBV_ACCESS_REMOTE_WRITE;
		qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS, "INIT");
	}
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ud) {
		qp_modify(qp, &a, IBV_QP_STATE, "RTR");
	} else {
		a.path_mtu = s->mtu < d->mtu ? s->mtu : d->mtu;
		a.dest_qp_num = dqpn;
		a.rq_psn = rq_psn & 0xffffff;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = d->gid;
		a.ah_attr.grh.sgid_index = s->gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		if (rc || tgt) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");
		} else {
			qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN, "RTR");
		}
	}
	/* An XRC receive QP only responds: RTR is as far as it goes. */
	if (tgt)
		return;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = sq_psn & 0xffffff };
	if (rc || ini) {
		a.timeout = 12;
		a.retry_cnt = 3;
		a.rnr_retry = 3;
		a.max_rd_atomic = 16;
		qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
	} else {
		qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
	}
}

static uint32_t rand_psn(void)
{
	return t_rand64() & 0xffffff;
}

/* The state of qp and its live PSNs: what it expects next, what it sends next. */
static int qp_psns(struct ibv_qp *qp, uint32_t *rq, uint32_t *sq)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN, &init))
		return -1;
	*rq = a.rq_psn;
	*sq = a.sq_psn;
	return a.qp_state;
}

/* (Re)connect victim QP q and its peer with fresh PSNs. */
static void fz_connect(struct fz_qp *q, uint32_t peer_sq_skew)
{
	uint32_t v_rq = rand_psn(), v_sq = rand_psn();

	q->epsn = v_rq;
	q->sq_psn = v_sq;
	qp_connect(q->qp, &vic, &peer, q->pqp->qp_num, v_rq, v_sq);
	qp_connect(q->pqp, &peer, &vic, q->qp->qp_num, v_sq, v_rq + peer_sq_skew);
	q->posted = 0;
}

static void post_recv(struct fz_qp *q, struct ibv_qp *qp, int slot)
{
	struct ibv_sge sge = {
		.addr = mrs[MR_RECV].va + (slot % FZ_RECV_SLOTS) * FZ_RECV_SLOT,
		.length = FZ_RECV_SLOT,
		.lkey = mrs[MR_RECV].mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = q - qps, .sg_list = &sge, .num_sge = 1 }, *bad;

	/* The XRC receive QP takes its receives from the XRC SRQ. */
	if (qp->qp_type == IBV_QPT_XRC_RECV ? !ibv_post_srq_recv(vic.xsrq, &wr, &bad) :
	    !ibv_post_recv(qp, &wr, &bad))
		q->posted++;
}

static void refill(struct fz_qp *q)
{
	while (q->posted < FZ_RECV_DEPTH && t_qp_state(q->qp) != IBV_QPS_ERR) {
		int before = q->posted;

		post_recv(q, q->qp, q->posted);
		if (q->posted == before)
			break;
	}
}

/* Drain the victim's CQ: what completed frees a receive slot. */
static uint64_t vic_wcs, vic_wc_errs;

static void drain_victim(void)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(vic.cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			vic_wcs++;
			if (wc[i].status != IBV_WC_SUCCESS)
				vic_wc_errs++;
			/* The victim posts no sends: wr_id < Q_N is a receive. */
			if (wc[i].wr_id < Q_N && qps[wc[i].wr_id].posted > 0)
				qps[wc[i].wr_id].posted--;
		}
	}
	while ((n = ibv_poll_cq(peer.cq, 32, wc)) > 0)
		;
}

/* --- packet building ----------------------------------------------------------- */

struct fz_pkt {
	uint8_t buf[FZ_PKT_MAX + 64];
	size_t len;
	char desc[200];
};

static struct fz_pkt batch[FZ_BATCH];
static uint64_t op_count[256], n_bad_icrc, n_trunc, n_big, n_randqpn, n_spoof;
static uint32_t path_mtu_bytes;

static void put16(uint8_t *p, uint16_t v) { v = htons(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htonl(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

/* Fill IPv4 and UDP headers for a packet of len bytes (ICRC included). */
static void put_ip_udp(uint8_t *p, size_t len, uint32_t saddr, uint32_t daddr)
{
	uint16_t id = (uint16_t)t_rand64();

	p[0] = 0x45;
	p[1] = (uint8_t)t_rand64();		/* TOS: not in the ICRC */
	put16(p + 2, len);
	/* IP_HDRINCL fills an ID of 0 in: the ICRC covers it, so never 0. */
	put16(p + 4, id ? id : 1);
	put16(p + 6, 0x4000);			/* DF */
	p[8] = 1 + t_rand_below(255);		/* TTL */
	p[9] = IPPROTO_UDP;
	put16(p + 10, 0);			/* the kernel computes it */
	memcpy(p + 12, &saddr, 4);
	memcpy(p + 16, &daddr, 4);
	put16(p + 20, 0xc000 | (t_rand64() & 0x3fff));
	put16(p + 22, FZ_PORT);
	put16(p + 24, len - 20);
	put16(p + 26, 0);			/* no UDP checksum, as RoCEv2 allows */
}

static void put_bth(uint8_t *p, uint8_t op, int pad, uint32_t qpn, uint32_t psn, int ackreq)
{
	p[0] = op;
	p[1] = (t_one_in(2) ? 0x80 : 0) | 0x40 | (pad << 4);
	put16(p + 2, 0xffff);
	put32(p + 4, (uint32_t)(t_rand64() & 0xff000000) | (qpn & 0xffffff));
	put32(p + 8, (ackreq ? 0x80000000u : 0) | (psn & 0xffffff));
}

/* Finish a packet of len bytes (ICRC included): ICRC and lengths. */
static void seal(uint8_t *p, size_t len, int bad_icrc)
{
	uint32_t icrc;

	put16(p + 2, len);
	put16(p + 24, len - 20);
	icrc = icrc_of(p, len);
	if (bad_icrc)
		icrc ^= 1u << t_rand_below(32);
	/* Little-endian on the wire, as rdma_rxe sends it. */
	p[len - 4] = icrc;
	p[len - 3] = icrc >> 8;
	p[len - 2] = icrc >> 16;
	p[len - 1] = icrc >> 24;
}

/*
 * A remote address and rkey: mostly aimed at the MRs (every kind, the
 * stale one and the one in another PD included) at their edges, with the
 * real rkey or one a bit off; sometimes anything.
 */
static void pick_remote(uint64_t *va, uint32_t *rkey, uint32_t *dlen, uint32_t paylen,
			int atomic)
{
	const struct fz_mr *m = &mrs[t_rand_below(MR_NKINDS)];
	uint64_t len = m->len;

	switch (t_rand_below(10)) {
	case 0: *rkey = (uint32_t)t_rand64(); break;
	case 1: *rkey = m->rkey ^ (1u << t_rand_below(32)); break;
	case 2: *rkey = m->rkey + (t_one_in(2) ? 0x100 : 1); break;
	default: *rkey = m->rkey; break;
	}
	switch (t_rand_below(14)) {
	case 0: *va = m->va - 1; break;
	case 1: *va = m->va - FZ_PAGE; break;
	case 2: *va = m->va + len - paylen + 1; break;
	case 3: *va = m->va + len; break;
	case 4: *va = m->va + len - paylen; break;
	case 5: *va = t_rand64(); break;
	case 6: *va = UINT64_MAX - t_rand_below(64); break;
	case 7: *va = m->va - 8; break;
	case 8: *va = m->va + len - 8; break;
	default:
		*va = m->va + t_rand_below(len > paylen ? len - paylen + 1 : 1);
		break;
	}
	if (atomic && !t_one_in(8))
		*va &= ~7ull;
	switch (t_rand_below(12)) {
	case 0: *dlen = 0; break;
	case 1: *dlen = 0x80000000u; break;
	case 2: *dlen = UINT32_MAX - t_rand_below(8); break;
	case 3: *dlen = len; break;
	case 4: *dlen = len + 1; break;
	case 5: *dlen = (uint32_t)t_rand64(); break;
	case 6: *dlen = paylen + 1 + t_rand_below(path_mtu_bytes); break;
	case 7: *dlen = t_rand_below(4 * path_mtu_bytes); break;
	default: *dlen = paylen; break;
	}
	if (atomic && !t_one_in(8))
		*dlen = 8;
}

static uint8_t pick_opcode(const struct fz_qp *q)
{
	static const uint8_t rc[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
				      0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
				      0x12, 0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d };
	int r = t_rand_below(100), op;

	if (r < 75) {
		if (!q || q->type == IBV_QPT_UD)
			return 0x64 + t_rand_below(2);
		if (q->type == IBV_QPT_UC)
			return 0x20 + t_rand_below(12);
		if (q->type == IBV_QPT_XRC_RECV)
			return 0xa0 | rc[t_rand_below(sizeof(rc))];
		return rc[t_rand_below(sizeof(rc))];
	}
	if (r < 92) {
		do
			op = t_rand_below(0xc0);
		while (!(opcodes[op].hdrs & H_VALID));
		return op;
	}
	return t_rand64();
}

static uint32_t pick_psn(struct fz_qp *q, unsigned int hdrs, int *exact)
{
	uint32_t base = hdrs & H_RESP ? q->sq_psn : q->epsn;

	*exact = 0;
	switch (t_rand_below(16)) {
	case 0: return rand_psn();
	case 1: return base + 0x800000;				/* half the space away */
	case 2: return base - 1 - t_rand_below(8);		/* replay */
	case 3: return base + 1 + t_rand_below(64);		/* jump ahead */
	case 4: return base + 0x7fffff + t_rand_below(3);	/* the window's edge */
	case 5: return base - t_rand_below(1024);
	case 6: return 0xffffff - t_rand_below(2);
	default:
		*exact = 1;
		return base;
	}
}

static uint32_t pick_paylen(unsigned int hdrs)
{
	int r = t_rand_below(100);

	if (!(hdrs & H_PAY))
		return r < 92 ? 0 : t_rand_below(64);
	if ((hdrs & H_AW) && r < 80)
		return 8;
	if (r < 55)
		return t_rand_below(65);
	if (r < 80)
		return t_rand_below(path_mtu_bytes + 1);
	if (r < 90)
		return path_mtu_bytes;
	n_big++;
	if (r < 96)
		return path_mtu_bytes + 1 + t_rand_below(64);
	return path_mtu_bytes + t_rand_below(FZ_PKT_MAX - 100 - path_mtu_bytes);
}

/* Build one random packet into p. */
static void build_random(struct fz_pkt *p)
{
	struct fz_qp *q = NULL;
	uint32_t qpn, psn, paylen, dlen = 0, rkey = 0, saddr = peer.ip;
	uint64_t va = 0;
	unsigned int hdrs;
	int exact = 0, pad, bad_icrc, r, trunc = 0;
	uint8_t *h, op = 0;
	size_t len;

	r = t_rand_below(100);
	if (r < 86) {
		q = &qps[t_rand_below(Q_N)];
		qpn = q->qp->qp_num;
	} else if (r < 90) {
		qpn = 1;				/* GSI: MADs */
		op = 0x64 + t_rand_below(2);
	} else if (r < 93) {
		qpn = qps[t_rand_below(Q_N)].qp->qp_num + 1 + t_rand_below(4);
		n_randqpn++;
	} else if (r < 94) {
		qpn = 0xffffff;				/* multicast QPN, unicast GID */
		n_randqpn++;
	} else {
		qpn = t_rand64() & 0xffffff;
		n_randqpn++;
	}
	if (qpn != 1 || t_one_in(8))
		op = pick_opcode(q);
	hdrs = opcodes[op].hdrs;
	psn = q ? pick_psn(q, hdrs, &exact) : rand_psn();
	paylen = pick_paylen(hdrs);
	pad = (4 - (paylen & 3)) & 3;
	if (t_one_in(25))
		pad = t_rand_below(4);
	if (t_one_in(40)) {
		/* Another sender: a connected QP must not hear it. */
		saddr = htonl(ntohl(peer.ip) + 1 + t_rand_below(3));
		n_spoof++;
	}

	len = 20 + 8 + 12 + hdrs_len(hdrs) + paylen + pad + 4;
	h = p->buf;
	put_ip_udp(h, len, saddr, vic.ip);
	put_bth(h + 28, op, pad, qpn, psn, t_rand_below(4) != 0);
	if (t_one_in(40))
		h[28 + 1] |= 1 + t_rand_below(15);	/* TVer */
	if (t_one_in(40))
		put16(h + 28 + 2, t_one_in(2) ? 0x7fff : (uint16_t)t_rand64());
	if (t_one_in(30))
		h[28 + 8] |= t_rand64() & 0x7f;		/* reserved bits by the PSN */
	h += 40;
	if (hdrs & H_XRC) {
		/* The victim's XRC SRQ mostly; its neighbours, and anything. */
		switch (t_rand_below(8)) {
		case 0: put32(h, (uint32_t)t_rand64()); break;
		case 1: put32(h, vic.xsrqn + 1 + t_rand_below(4)); break;
		case 2: put32(h, vic.xsrqn - 1); break;
		default: put32(h, vic.xsrqn); break;
		}
		h += 4;
	}
	if (hdrs & H_DETH) {
		uint32_t qkey = qpn == 1 ? FZ_GSI_QKEY : FZ_QKEY;

		put32(h, t_one_in(4) ? (t_one_in(2) ? qkey ^ 1 : (uint32_t)t_rand64()) : qkey);
		put32(h + 4, t_one_in(8) ? (uint32_t)t_rand64() : qps[Q_UD].pqp->qp_num);
		h += 8;
	}
	if (hdrs & (H_RETH | H_ATH))
		pick_remote(&va, &rkey, &dlen, paylen, !!(hdrs & (H_ATH | H_AW)));
	if (hdrs & H_FETH) {
		/* Placement type in bits 3:0, selectivity level in 5:4. */
		put32(h, t_one_in(6) ? (uint32_t)t_rand64() :
			 (uint32_t)(t_rand_below(4) << 4 | t_rand_below(4)));
		h += 4;
	}
	if (hdrs & H_RETH) {
		put64(h, va);
		put32(h + 8, rkey);
		put32(h + 12, dlen);
		h += 16;
	}
	if (hdrs & H_ATH) {
		put64(h, va);
		put32(h + 8, rkey);
		put64(h + 12, t_one_in(2) ? 1 : t_rand64());
		put64(h + 20, t_rand64());
		h += 28;
	}
	if (hdrs & H_AETH) {
		static const uint8_t syn[] = { 0x1f, 0x00, 0x0a, 0x20, 0x21, 0x3f, 0x60,
					       0x61, 0x62, 0x63, 0x64, 0x65, 0x7f, 0x80,
					       0xff };

		h[0] = syn[t_rand_below(sizeof(syn))];
		h[1] = t_rand64();
		put16(h + 2, (uint16_t)t_rand64());
		if (t_one_in(2))
			h[1] = h[2] = h[3] = 0;
		h += 4;
	}
	if (hdrs & H_AACK) {
		put64(h, t_rand64());
		h += 8;
	}
	if (hdrs & (H_IMM | H_IETH)) {
		put32(h, hdrs & H_IETH && !t_one_in(4) ? mrs[t_rand_below(MR_NKINDS)].rkey :
			 (uint32_t)t_rand64());
		h += 4;
	}
	if (t_one_in(2))
		t_rand_fill(h, paylen + pad);
	else
		memset(h, 0xa5, paylen + pad);
	if (qpn == 1 && paylen >= 4 && !t_one_in(10)) {
		static const uint8_t cls[] = { 0x01, 0x03, 0x04, 0x06, 0x07, 0x09, 0x0a, 0x81 };

		/* A MAD header the MAD layer parses further: base version 1. */
		h[0] = 1;
		h[1] = cls[t_rand_below(sizeof(cls))];
		h[2] = t_one_in(4) ? t_rand64() : 2;
	}

	bad_icrc = t_one_in(12);
	r = t_rand_below(50);
	if (r == 0) {
		/* Cut short, then sealed: a valid ICRC on a short packet. */
		len = 40 + 4 + t_rand_below(len - 40 - 4 + 1);
		trunc = 1;
	}
	seal(p->buf, len, bad_icrc);
	if (r == 1 && len > 41) {
		/* Cut short after sealing: the ICRC is gone too. */
		len = 20 + 8 + t_rand_below(len - 28);
		put16(p->buf + 2, len);
		put16(p->buf + 24, len - 20);
		trunc = 1;
	}
	p->len = len;

	if (q && exact && !bad_icrc && !trunc && (hdrs & H_REQ) && q->type != IBV_QPT_UD &&
	    (op >> 5) == (q->type == IBV_QPT_RC ? 0 : q->type == IBV_QPT_UC ? 1 : 5))
		q->epsn = (q->epsn + 1) & 0xffffff;	/* it may have been accepted */
	op_count[op]++;
	n_bad_icrc += bad_icrc;
	n_trunc += trunc;
	snprintf(p->desc, sizeof(p->desc),
		 "%s qpn %#x psn %#x len %zu pay %u pad %d%s%s%s va %#llx rkey %#x dlen %#x",
		 opcodes[op].name, qpn, psn & 0xffffff, len, paylen, pad,
		 bad_icrc ? " BAD-ICRC" : "", trunc ? " TRUNC" : "",
		 saddr != peer.ip ? " SPOOF" : "", (unsigned long long)va, rkey, dlen);
}

/* --- injection ------------------------------------------------------------------- */

static int raw_fd = -1;
static int sniff_fd = -1;	/* copies of the UDP the peer's side receives */
static struct sockaddr_in vic_sa;
static uint64_t n_sent, n_send_errs;
static int verbose;

/* Open the raw IPv4 socket in network namespace ns (empty: this one). */
static void raw_open(const char *ns)
{
	char path[256];
	int self = -1, fd;

	if (ns && *ns) {
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			t_fatal("open %s: %s", path, t_errname(errno));
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0)
			t_fatal("open /proc/self/ns/net: %s", t_errname(errno));
		if (setns(fd, CLONE_NEWNET))
			t_fatal("setns(%s): %s", path, t_errname(errno));
		close(fd);
	}
	/* IPPROTO_RAW implies IP_HDRINCL: the IP header is ours. */
	raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (raw_fd < 0)
		t_fatal("socket(AF_INET, SOCK_RAW, IPPROTO_RAW): %s", t_errname(errno));
	/* What the victim answers the injected packets: closed after the probes. */
	sniff_fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (sniff_fd < 0)
		t_fatal("socket(AF_INET, SOCK_RAW, IPPROTO_UDP): %s", t_errname(errno));
	if (self >= 0) {
		if (setns(self, CLONE_NEWNET))
			t_fatal("setns back: %s", t_errname(errno));
		close(self);
	}
	vic_sa.sin_family = AF_INET;
	vic_sa.sin_addr.s_addr = vic.ip;
}

static void send_batch(int n)
{
	struct mmsghdr msgs[FZ_BATCH];
	struct iovec iov[FZ_BATCH];
	int i, done = 0, ret;

	for (i = 0; i < n; i++) {
		iov[i].iov_base = batch[i].buf;
		iov[i].iov_len = batch[i].len;
		msgs[i] = (struct mmsghdr){ .msg_hdr = {
			.msg_name = &vic_sa, .msg_namelen = sizeof(vic_sa),
			.msg_iov = &iov[i], .msg_iovlen = 1 } };
		if (verbose)
			printf("pkt %llu: %s\n", (unsigned long long)(n_sent + i), batch[i].desc);
	}
	while (done < n) {
		ret = sendmmsg(raw_fd, msgs + done, n - done, 0);
		if (ret < 0) {
			/* A short or odd packet the stack refuses: skip it. */
			if (errno != EINTR) {
				n_send_errs++;
				done++;
			}
			continue;
		}
		done += ret;
	}
	n_sent += n;
}

static void send_one(struct fz_pkt *p)
{
	batch[0] = *p;
	send_batch(1);
}

/* --- deterministic cases ---------------------------------------------------------- */

/*
 * A WRITE_ONLY, ATOMIC_WRITE (laid out as a WRITE_ONLY of 8 bytes) or
 * FETCH_ADD to the probe QP at psn, built by hand.
 */
static void build_probe(struct fz_pkt *p, uint8_t op, uint32_t psn, uint64_t va,
			const void *data, uint32_t n, uint64_t add, int bad_icrc)
{
	uint8_t *h = p->buf;
	size_t len;
	int pad = (4 - (n & 3)) & 3;

	len = 40 + (op == 0x14 ? 28 : 16 + n + pad) + 4;
	put_ip_udp(h, len, peer.ip, vic.ip);
	put_bth(h + 28, op, op == 0x14 ? 0 : pad, qps[Q_PROBE].qp->qp_num, psn, 1);
	h += 40;
	put64(h, va);
	put32(h + 8, mrs[MR_RW].rkey);
	if (op == 0x14) {
		put64(h + 12, add);
		put64(h + 20, 0);
	} else {
		put32(h + 12, n);
		memcpy(h + 16, data, n);
		memset(h + 16 + n, 0, pad);
	}
	seal(p->buf, len, bad_icrc);
	p->len = len;
	snprintf(p->desc, sizeof(p->desc), "probe %s psn %#x va %#llx%s", opcodes[op].name,
		 psn, (unsigned long long)va, bad_icrc ? " BAD-ICRC" : "");
}

/* A response of the victim to the probe QP's peer, seen by the sniffer. */
struct fz_resp {
	uint8_t op;
	uint32_t psn;
	uint64_t orig;		/* ATOMIC_ACKNOWLEDGE */
};

/*
 * Collect for secs the packets the victim sent to the probe QP's peer
 * (RoCEv2 to port 4791, destination QP the peer's): up to max into r.
 * Return: how many were seen (more than max are counted, not kept).
 */
static int sniff(double secs, struct fz_resp *r, int max)
{
	uint32_t pqpn = qps[Q_PROBE].pqp->qp_num;
	double end = t_now() + secs;
	uint8_t b[2048], *bth;
	size_t ihl;
	ssize_t len;
	int n = 0;

	for (;;) {
		len = recv(sniff_fd, b, sizeof(b), 0);
		if (len < 0) {
			if (errno != EAGAIN && errno != EINTR)
				t_fatal("recv on the sniffer: %s", t_errname(errno));
			if (t_now() > end)
				return n;
			usleep(1000);
			continue;
		}
		ihl = (b[0] & 15) * 4;
		if ((size_t)len < ihl + 8 + 12 || ((b[ihl + 2] << 8) | b[ihl + 3]) != FZ_PORT)
			continue;
		bth = b + ihl + 8;
		if ((uint32_t)((bth[5] << 16) | (bth[6] << 8) | bth[7]) != pqpn)
			continue;
		if (n < max) {
			r[n].op = bth[0];
			r[n].psn = (bth[9] << 16) | (bth[10] << 8) | bth[11];
			r[n].orig = 0;
			if (bth[0] == 0x12 && (size_t)len >= ihl + 8 + 12 + 4 + 8) {
				uint32_t hi, lo;

				memcpy(&hi, bth + 16, 4);
				memcpy(&lo, bth + 20, 4);
				r[n].orig = (uint64_t)ntohl(hi) << 32 | ntohl(lo);
			}
		}
		n++;
	}
}

/* Did the sniffer see op for psn (and, for an ATOMIC_ACKNOWLEDGE, orig) among r[0..n)? */
static int sniffed(const struct fz_resp *r, int n, uint8_t op, uint32_t psn, uint64_t orig)
{
	int i;

	for (i = 0; i < n && i < 32; i++)
		if (r[i].op == op && r[i].psn == (psn & 0xffffff) && r[i].orig == orig)
			return 1;
	return 0;
}

/* Wait up to secs for n bytes at p to equal want. */
static int wait_bytes(const volatile uint8_t *p, const uint8_t *want, size_t n, double secs)
{
	double end = t_now() + secs;
	size_t i;

	for (;;) {
		for (i = 0; i < n && p[i] == want[i]; i++)
			;
		if (i == n)
			return 1;
		if (t_now() > end)
			return 0;
		usleep(1000);
	}
}

/*
 * 6 (PSNs psn and psn + 1): a WRITE, then a FETCH_ADD; then the WRITE
 * again, as a requester's retry sends it. The duplicate WRITE must be
 * acknowledged up to its own PSN, the request before the FETCH_ADD, and
 * never by an ACKNOWLEDGE naming the FETCH_ADD's PSN, which a requester
 * may take for the atomic's response (rdma_rxe completes the atomic's
 * WQE with no original value then). The duplicate FETCH_ADD is answered
 * with the first answer's original value.
 */
static int probe_dup_write(uint32_t psn)
{
	uint8_t *rw = mrs[MR_RW].reg, good[32];
	struct fz_resp r[32];
	struct fz_pkt w, a;
	uint64_t v0 = 0x2000, v;
	int i, n, fails = 0;

	for (i = 0; i < 32; i++)
		good[i] = 0x90 + i;
	memcpy(rw + 320, &v0, 8);
	sniff(0.05, r, 0);
	build_probe(&w, 0x0a, psn, mrs[MR_RW].va + 256, good, 32, 0, 0);
	build_probe(&a, 0x14, psn + 1, mrs[MR_RW].va + 320, NULL, 0, 7, 0);
	send_one(&w);
	send_one(&a);
	if (!wait_bytes(rw + 256, good, 32, 10)) {
		t_fail("probe: the WRITE_ONLY at PSN %#x did not land", psn & 0xffffff);
		return 1;
	}
	n = sniff(0.3, r, 32);
	if (!sniffed(r, n, 0x12, psn + 1, v0)) {
		t_fail("probe: the sniffer saw no ATOMIC_ACKNOWLEDGE for PSN %#x with original value %#llx (%d packets to the peer QP): the victim did not answer, or the sniffer does not work",
		       (psn + 1) & 0xffffff, (unsigned long long)v0, n);
		return 1;
	}
	send_one(&w);
	n = sniff(0.3, r, 32);
	if (sniffed(r, n, 0x11, psn + 1, 0)) {
		t_fail("probe: a duplicate WRITE_ONLY (PSN %#x) older than an executed FETCH_ADD was answered with an ACKNOWLEDGE naming the FETCH_ADD's PSN %#x",
		       psn & 0xffffff, (psn + 1) & 0xffffff);
		fails++;
	} else if (!sniffed(r, n, 0x11, psn, 0)) {
		t_fail("probe: a duplicate WRITE_ONLY (PSN %#x) older than an executed FETCH_ADD got no ACKNOWLEDGE naming its own PSN (%d packets to the peer QP): a requester that resends one packet at a time would wait for ever",
		       psn & 0xffffff, n);
		fails++;
	}
	send_one(&a);
	n = sniff(0.3, r, 32);
	if (!sniffed(r, n, 0x12, psn + 1, v0)) {
		t_fail("probe: the duplicate FETCH_ADD (PSN %#x) after the duplicate WRITE got no ATOMIC_ACKNOWLEDGE with original value %#llx",
		       (psn + 1) & 0xffffff, (unsigned long long)v0);
		fails++;
	}
	memcpy(&v, rw + 320, 8);
	if (v != v0 + 7) {
		t_fail("probe: FETCH_ADD +7 sent twice left %#llx, expected %#llx",
		       (unsigned long long)v, (unsigned long long)(v0 + 7));
		fails++;
	}
	if (!fails)
		printf("probe: a duplicate WRITE older than a FETCH_ADD was acknowledged up to its own PSN, not the atomic's\n");
	return fails;
}

/*
 * 7 (PSNs psn and psn + 1): an ATOMIC WRITE (IBA 1.5) of word a, answered
 * by a READ_RESPONSE_ONLY without payload at its PSN (as rdma_rxe answers
 * it); then a WRITE_ONLY puts word b there; then the ATOMIC WRITE again,
 * as a requester's retry sends it. The duplicate must be answered again
 * and not executed again: the word stays b.
 */
static int probe_dup_atomic_write(uint32_t psn)
{
	static const uint8_t a[8] = { 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8 };
	static const uint8_t b[8] = { 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8 };
	uint8_t *rw = mrs[MR_RW].reg;
	struct fz_resp r[32];
	struct fz_pkt aw, w;
	int n, fails = 0;

	memset(rw + 384, 0, 8);
	sniff(0.05, r, 0);
	build_probe(&aw, 0x1d, psn, mrs[MR_RW].va + 384, a, 8, 0, 0);
	build_probe(&w, 0x0a, psn + 1, mrs[MR_RW].va + 384, b, 8, 0, 0);
	send_one(&aw);
	if (!wait_bytes(rw + 384, a, 8, 10)) {
		t_fail("probe: the ATOMIC_WRITE at PSN %#x did not land its 8 bytes",
		       psn & 0xffffff);
		return 1;
	}
	n = sniff(0.3, r, 32);
	if (!sniffed(r, n, 0x10, psn, 0)) {
		t_fail("probe: the ATOMIC_WRITE at PSN %#x got no READ_RESPONSE_ONLY (%d packets to the peer QP)",
		       psn & 0xffffff, n);
		fails++;
	}
	send_one(&w);
	if (!wait_bytes(rw + 384, b, 8, 10)) {
		t_fail("probe: the WRITE_ONLY at PSN %#x after the ATOMIC_WRITE did not land",
		       (psn + 1) & 0xffffff);
		return fails + 1;
	}
	sniff(0.3, r, 0);
	send_one(&aw);
	n = sniff(0.3, r, 32);
	if (!sniffed(r, n, 0x10, psn, 0)) {
		t_fail("probe: the duplicate ATOMIC_WRITE (PSN %#x) got no READ_RESPONSE_ONLY (%d packets to the peer QP)",
		       psn & 0xffffff, n);
		fails++;
	}
	if (memcmp(rw + 384, b, 8)) {
		t_fail("probe: the duplicate ATOMIC_WRITE (PSN %#x) was executed again: the word the WRITE after it left was overwritten",
		       psn & 0xffffff);
		fails++;
	}
	if (!fails)
		printf("probe: a duplicate ATOMIC_WRITE was answered again, not executed again\n");
	return fails;
}

static int run_probes(void)
{
	struct fz_qp *q = &qps[Q_PROBE];
	uint8_t *rw = mrs[MR_RW].reg, good[32], bad[32];
	struct fz_pkt p;
	uint64_t v0, v;
	uint32_t psn = q->epsn;
	int i, fails = 0;

	for (i = 0; i < 32; i++) {
		good[i] = 0xc0 + i;
		bad[i] = 0x30 + i;
	}
	memset(rw, 0, 512);
	/* 1: a well-formed WRITE lands: the ICRC and the headers are right. */
	build_probe(&p, 0x0a, psn, mrs[MR_RW].va + 16, good, 32, 0, 0);
	send_one(&p);
	if (!wait_bytes(rw + 16, good, 32, 10)) {
		t_fail("probe: a WRITE_ONLY with a correct ICRC (%s) did not land in MR %s within 10 s: the injector's ICRC or headers are wrong, or the victim drops it",
		       p.desc, mrs[MR_RW].name);
		return 1;
	}
	printf("probe: a WRITE_ONLY with a correct ICRC landed\n");
	/* 2: the same with a wrong ICRC at the next PSN must not. */
	build_probe(&p, 0x0a, psn + 1, mrs[MR_RW].va + 64, bad, 32, 0, 1);
	send_one(&p);
	/* 3: FETCH_ADD at psn + 1, then three duplicates: adds once. */
	v0 = 0x1000;
	memcpy(rw + 128, &v0, 8);
	build_probe(&p, 0x14, psn + 1, mrs[MR_RW].va + 128, NULL, 0, 5, 0);
	for (i = 0; i < 4; i++) {
		send_one(&p);
		usleep(20000);
	}
	/* 4: a WRITE at psn + 2 lands after all of them (in order). */
	build_probe(&p, 0x0a, psn + 2, mrs[MR_RW].va + 192, good, 32, 0, 0);
	send_one(&p);
	if (!wait_bytes(rw + 192, good, 32, 10)) {
		t_fail("probe: the WRITE_ONLY at PSN %#x after a FETCH_ADD and its duplicates did not land",
		       (psn + 2) & 0xffffff);
		fails++;
	}
	for (i = 0; i < 32 && rw[64 + i] == 0; i++)
		;
	if (i < 32) {
		t_fail("probe: a WRITE_ONLY with a wrong ICRC changed the MR (byte %d is %#04x)",
		       i, rw[64 + i]);
		fails++;
	}
	memcpy(&v, rw + 128, 8);
	if (v != v0 + 5) {
		t_fail("probe: FETCH_ADD +5 sent once and duplicated three times left %#llx, expected %#llx (a duplicate atomic must be answered from the replay state, not run again)",
		       (unsigned long long)v, (unsigned long long)(v0 + 5));
		fails++;
	} else {
		printf("probe: a FETCH_ADD and 3 duplicates added once; a wrong ICRC was dropped\n");
	}
	fails += probe_dup_write(psn + 3);
	fails += probe_dup_atomic_write(psn + 5);
	q->epsn = (psn + 7) & 0xffffff;
	/* 5: the peer, its send PSN set past the injected seven, still gets through. */
	{
		struct ibv_sge sge;
		struct ibv_send_wr wr = { 0 }, *badwr;
		struct ibv_wc wc;
		static uint8_t src[32] __attribute__((aligned(8)));
		struct ibv_mr *smr = ibv_reg_mr(peer.pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);

		if (!smr)
			t_fatal("ibv_reg_mr on the peer: %s", t_errname(errno));
		for (i = 0; i < 32; i++)
			src[i] = 0x77 ^ i;
		sge = (struct ibv_sge){ .addr = (uintptr_t)src, .length = 32, .lkey = smr->lkey };
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = mrs[MR_RW].va + 224;
		wr.wr.rdma.rkey = mrs[MR_RW].rkey;
		if (ibv_post_send(q->pqp, &wr, &badwr))
			t_fatal("peer post_send: %s", t_errname(errno));
		if (!t_poll_one(peer.cq, &wc, t_now() + 20) || wc.status != IBV_WC_SUCCESS ||
		    !wait_bytes(rw + 224, src, 32, 1)) {
			t_fail("probe: the peer's WRITE after the injected packets did not complete or land (%s)",
			       wc.status ? ibv_wc_status_str(wc.status) : "no completion");
			fails++;
		}
		ibv_dereg_mr(smr);
	}
	return fails;
}

/* --- liveness after the run ----------------------------------------------------- */

static struct ibv_mr *peer_mr;
static uint8_t *peer_buf;

/*
 * One signalled WR on qp (of side s, CQ cq); 1 if it completed successfully,
 * 0 if with an error, -1 if not at all within secs.
 */
static int one_wr(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr, double secs,
		  enum ibv_wc_status *st)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	double end = t_now() + secs;
	int ret;

	ret = ibv_post_send(qp, wr, &bad);
	if (ret) {
		*st = IBV_WC_GENERAL_ERR;
		return 0;
	}
	for (;;) {
		if (!t_poll_one(cq, &wc, end))
			return -1;
		if (wc.wr_id == wr->wr_id) {
			*st = wc.status;
			return wc.status == IBV_WC_SUCCESS;
		}
	}
}

static int check_live(struct fz_qp *q, int idx)
{
	struct ibv_sge sge = { .length = 64, .lkey = peer_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1000 + idx, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	uint8_t *dst = mrs[MR_RW].reg + 1024 + idx * 128;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	int state = t_qp_state(q->qp), r, i;
	uint32_t rq, sq;

	if (state == IBV_QPS_ERR) {
		/*
		 * As the protocol may demand. The QP object must still be
		 * sound: taken through RESET to RTS again, it has to work.
		 */
		printf("live: %s QP %#x is in ERR: reset and reconnected, it must work again\n",
		       q->name, q->qp->qp_num);
		drain_victim();
		fz_connect(q, 0);
		refill(q);
		state = t_qp_state(q->qp);
	}
	if (state != (q->type == IBV_QPT_XRC_RECV ? IBV_QPS_RTR : IBV_QPS_RTS)) {
		t_fail("live: %s QP %#x is in %s after the run: only RTS (an XRC receive QP: RTR) or ERR are right",
		       q->name, q->qp->qp_num, t_qp_state_str(state));
		return 1;
	}
	for (i = 0; i < 64; i++)
		peer_buf[idx * 64 + i] = 0x40 + idx + i;
	sge.addr = (uintptr_t)peer_buf + idx * 64;
	if (q->type == IBV_QPT_UD) {
		refill(q);
		drain_victim();
		refill(q);
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = q->pah;
		wr.wr.ud.remote_qpn = q->qp->qp_num;
		wr.wr.ud.remote_qkey = FZ_QKEY;
		r = one_wr(q->pqp, peer.cq, &wr, 20, &st);
		if (r != 1) {
			t_fail("live: the peer's UD SEND to %s QP %#x: %s", q->name, q->qp->qp_num,
			       r < 0 ? "no completion in 20 s" : ibv_wc_status_str(st));
			return 1;
		}
		{
			struct ibv_wc wc;
			double end = t_now() + 10;

			for (;;) {
				if (!t_poll_one(vic.cq, &wc, end)) {
					t_fail("live: %s QP %#x received nothing of the peer's UD SEND in 10 s",
					       q->name, q->qp->qp_num);
					return 1;
				}
				if (wc.wr_id == (uint64_t)(q - qps) && wc.opcode == IBV_WC_RECV)
					break;
			}
			/* byte_len counts the 40-byte GRH. */
			if (wc.status != IBV_WC_SUCCESS || wc.byte_len != 64 + 40) {
				t_fail("live: %s QP %#x: receive completed with %s, %u bytes (expected 104 with the GRH)",
				       q->name, q->qp->qp_num, ibv_wc_status_str(wc.status),
				       wc.byte_len);
				return 1;
			}
		}
		printf("live: %s QP %#x received a UD SEND\n", q->name, q->qp->qp_num);
		return 0;
	}
	/*
	 * Forged packets the victim took for its peer's moved its PSNs on
	 * (nothing can tell them apart): reconnect the peer to where the
	 * victim is now, so that what follows tests the victim QP itself.
	 */
	state = qp_psns(q->qp, &rq, &sq);
	if (state < 0) {
		t_fail("live: ibv_query_qp(%s QP %#x): %s", q->name, q->qp->qp_num,
		       t_errname(errno));
		return 1;
	}
	printf("live: %s QP %#x expects PSN %#x (the fuzzer guessed %#x), sends from %#x\n",
	       q->name, q->qp->qp_num, rq, q->epsn, sq);
	qp_connect(q->pqp, &peer, &vic, q->qp->qp_num, sq, rq);
	memset(dst, 0, 64);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = mrs[MR_RW].rkey;
	wr.qp_type.xrc.remote_srqn = vic.xsrqn;	/* only XRC reads it */
	r = one_wr(q->pqp, peer.cq, &wr, 30, &st);
	if (r < 0) {
		t_fail("live: the peer's WRITE to %s QP %#x did not complete in 30 s (retries are finite: success or an error was due)",
		       q->name, q->qp->qp_num);
		return 1;
	}
	if (r == 0 || !wait_bytes(dst, peer_buf + idx * 64, 64, 5)) {
		/* A responder in the middle of a forged message may NAK it. */
		state = t_qp_state(q->qp);
		if (state == IBV_QPS_ERR) {
			printf("live: %s QP %#x: the peer's WRITE completed with %s; the victim is in ERR\n",
			       q->name, q->qp->qp_num, ibv_wc_status_str(st));
			return 0;
		}
		t_fail("live: the peer's WRITE to %s QP %#x (resynchronised to its PSNs) %s, and the victim is in %s, not ERR",
		       q->name, q->qp->qp_num,
		       r == 1 ? "completed successfully but its data did not land" :
		       q->type == IBV_QPT_UC ? "was sent but did not land" :
		       ibv_wc_status_str(st), t_qp_state_str(state));
		return 1;
	}
	if (q->type == IBV_QPT_UC || q->type == IBV_QPT_XRC_RECV) {
		printf("live: %s QP %#x took a WRITE from its peer\n", q->name, q->qp->qp_num);
		return 0;
	}
	/* And as a requester: the same 64 bytes back to the peer. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)dst, .length = 64,
				.lkey = mrs[MR_RW].mr->lkey };
	memset(peer_buf + 2048 + idx * 64, 0, 64);
	wr.wr.rdma.remote_addr = (uintptr_t)peer_buf + 2048 + idx * 64;
	wr.wr.rdma.rkey = peer_mr->rkey;
	r = one_wr(q->qp, vic.cq, &wr, 30, &st);
	if (r != 1 || !wait_bytes(peer_buf + 2048 + idx * 64, peer_buf + idx * 64, 64, 5)) {
		t_fail("live: %s QP %#x's own WRITE to its peer %s", q->name, q->qp->qp_num,
		       r < 0 ? "did not complete in 30 s" : r == 0 ? ibv_wc_status_str(st) :
		       "completed but the data did not land");
		return 1;
	}
	printf("live: %s QP %#x took a WRITE from its peer and sent one back\n", q->name,
	       q->qp->qp_num);
	return 0;
}

/* A fresh RC pair between the devices: WRITE, then READ back, bytes checked. */
static int check_fresh(void)
{
	struct ibv_qp *a = qp_create(&vic, IBV_QPT_RC), *b = qp_create(&peer, IBV_QPT_RC);
	uint32_t pa = rand_psn(), pb = rand_psn();
	uint8_t *rw = mrs[MR_RW].reg;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	enum ibv_wc_status st;
	int i, fails = 0, r;

	qp_connect(a, &vic, &peer, b->qp_num, pa, pb);
	qp_connect(b, &peer, &vic, a->qp_num, pb, pa);
	drain_victim();
	for (i = 0; i < 4096; i++)
		peer_buf[i] = (uint8_t)(i * 7 + 3);
	memset(rw + 4096, 0, 4096);
	sge = (struct ibv_sge){ .addr = (uintptr_t)peer_buf, .length = 4096,
				.lkey = peer_mr->lkey };
	wr.wr_id = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = mrs[MR_RW].va + 4096;
	wr.wr.rdma.rkey = mrs[MR_RW].rkey;
	r = one_wr(b, peer.cq, &wr, 30, &st);
	if (r != 1 || memcmp(rw + 4096, peer_buf, 4096)) {
		t_fail("fresh QP pair: a 4 KiB WRITE %s", r < 0 ? "did not complete" :
		       r == 0 ? ibv_wc_status_str(st) : "completed but the data differs");
		fails++;
	}
	memset(peer_buf + 4096, 0, 4096);
	sge.addr = (uintptr_t)peer_buf + 4096;
	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_READ;
	r = one_wr(b, peer.cq, &wr, 30, &st);
	if (r != 1 || memcmp(peer_buf + 4096, peer_buf, 4096)) {
		t_fail("fresh QP pair: a 4 KiB READ %s", r < 0 ? "did not complete" :
		       r == 0 ? ibv_wc_status_str(st) : "completed but the data differs");
		fails++;
	}
	if (!fails)
		printf("fresh QP pair %#x <-> %#x: 4 KiB WRITE and READ back correct\n",
		       a->qp_num, b->qp_num);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	return fails;
}

/* --- main ---------------------------------------------------------------------- */

/* How long -m and -H may stretch the flood past its -t budget, in seconds. */
#define FZ_GRACE_S 300

/*
 * What the injectors share: each one's count of packets sent, published
 * after every batch, and the parent's word that the flood is over.
 */
struct fz_shared {
	volatile uint64_t sent[17];
	volatile int stop;
};

/*
 * Whether the parent ends the flood at time now: its -t budget has passed,
 * the injectors together sent min_pkts, and hold (a file, may be NULL) is
 * gone; or the grace past the budget is spent.
 */
static int flood_over(double now, double end, uint64_t min_pkts, const char *hold,
		      const struct fz_shared *sh, int jobs)
{
	uint64_t total = n_sent;
	int i;

	if (now < end)
		return 0;
	if (now >= end + FZ_GRACE_S)
		return 1;
	for (i = 1; i < jobs; i++)
		total += sh->sent[i];
	if (total < min_pkts)
		return 0;
	return !hold || access(hold, F_OK);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -d VICTIM_DEV -D PEER_DEV [-g GIDIDX] [-G GIDIDX2] [-N NETNS]\n"
		"          [-s SEED] [-t SECONDS] [-n PACKETS] [-m PACKETS] [-H FILE]\n"
		"          [-j INJECTORS] [-v]\n"
		"  -N NETNS  network namespace the packets are sent from (PEER_DEV's)\n"
		"  -t, -n    stop after SECONDS or PACKETS, whichever is first (default -t 10)\n"
		"  -m N      past -t, go on until the injectors sent N packets in all\n"
		"  -H FILE   create FILE when the flood starts; past -t, go on until it is\n"
		"            removed (a caller's honest traffic runs beside the flood)\n"
		"            -m and -H give up %d s after -t\n"
		"  -j N      N injecting processes (default 1; 1 replays a seed exactly)\n"
		"  -v        print every packet sent\n", argv0, FZ_GRACE_S);
	exit(T_EXIT_FAIL);
}

int main(int argc, char **argv)
{
	const char *vdev = NULL, *pdev = NULL, *ns = NULL;
	int vgid = -1, pgid = -1, c, i, fails = 0, have_seed = 0;
	double secs = -1, start, end, elapsed;
	uint64_t max_pkts = 0, min_pkts = 0, next_check;
	const char *hold = NULL;
	struct fz_shared *sh;
	uint32_t seed = 0;
	int jobs = 1, child = 0;
	pid_t pids[16];

	t_name = "scire_fuzz_wire";
	while ((c = getopt(argc, argv, "d:D:g:G:N:s:t:n:m:H:j:v")) != -1) {
		switch (c) {
		case 'd': vdev = optarg; break;
		case 'D': pdev = optarg; break;
		case 'g': vgid = atoi(optarg); break;
		case 'G': pgid = atoi(optarg); break;
		case 'N': ns = optarg; break;
		case 's': seed = strtoul(optarg, NULL, 0); have_seed = 1; break;
		case 't': secs = atof(optarg); break;
		case 'n': max_pkts = strtoull(optarg, NULL, 0); break;
		case 'm': min_pkts = strtoull(optarg, NULL, 0); break;
		case 'H': hold = optarg; break;
		case 'j': jobs = atoi(optarg); break;
		case 'v': verbose = 1; break;
		default: usage(argv[0]);
		}
	}
	if (!vdev || !pdev)
		usage(argv[0]);
	if (secs < 0 && !max_pkts)
		secs = 10;
	if (!have_seed)
		seed = t_fresh_seed();
	printf("seed %u (-s %u replays this run's packets)\n", seed, seed);
	t_rng_seed(seed);
	setvbuf(stdout, NULL, _IOLBF, 0);
	crc_init();
	opcodes_init();

	side_open(&vic, vdev, vgid);
	side_open(&peer, pdev, pgid);
	if (vic.gid.raw[10] != 0xff || peer.gid.raw[10] != 0xff)
		t_fatal("both GIDs must hold IPv4 addresses");
	path_mtu_bytes = t_mtu_bytes(vic.mtu < peer.mtu ? vic.mtu : peer.mtu);
	vic_pd2 = ibv_alloc_pd(vic.ctx);
	if (!vic_pd2)
		t_fatal("ibv_alloc_pd: %s", t_errname(errno));

	mr_map(&mrs[MR_RW], 0, "rw", rc_access, 1, 3 * FZ_PAGE + 200);
	mr_map(&mrs[MR_W], 1, "write-only", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 1,
	       FZ_PAGE + 1000);
	mr_map(&mrs[MR_RO], 2, "read-only", IBV_ACCESS_REMOTE_READ, 0, 2 * FZ_PAGE + 300);
	mr_map(&mrs[MR_LOCAL], 3, "local", IBV_ACCESS_LOCAL_WRITE, 0, FZ_PAGE + 500);
	mr_map(&mrs[MR_STALE], 4, "stale", rc_access, 0, 2 * FZ_PAGE + 100);
	mr_map(&mrs[MR_OTHER_PD], 5, "other-pd", rc_access, 0, FZ_PAGE + 700);
	mr_map(&mrs[MR_RECV], 6, "recv", IBV_ACCESS_LOCAL_WRITE, 1,
	       FZ_RECV_SLOTS * FZ_RECV_SLOT);
	for (i = 0; i < MR_NKINDS; i++)
		mr_reg(&mrs[i], i == MR_OTHER_PD ? vic_pd2 : vic.pd);
	/* Learnt, then gone: its rkey must open nothing. */
	if (ibv_dereg_mr(mrs[MR_STALE].mr))
		t_fatal("ibv_dereg_mr(stale)");
	mrs[MR_STALE].mr = NULL;

	peer_buf = mmap(NULL, 2 * FZ_PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (peer_buf == MAP_FAILED || madvise(peer_buf, 2 * FZ_PAGE, MADV_DONTFORK))
		t_fatal("peer buffer: %s", t_errname(errno));
	peer_mr = ibv_reg_mr(peer.pd, peer_buf, 2 * FZ_PAGE, rc_access);
	if (!peer_mr)
		t_fatal("peer buffer: %s", t_errname(errno));

	qps[Q_RC0] = (struct fz_qp){ .name = "RC", .type = IBV_QPT_RC };
	qps[Q_RC1] = (struct fz_qp){ .name = "RC", .type = IBV_QPT_RC };
	qps[Q_PROBE] = (struct fz_qp){ .name = "RC probe", .type = IBV_QPT_RC };
	qps[Q_UC] = (struct fz_qp){ .name = "UC", .type = IBV_QPT_UC };
	qps[Q_UD] = (struct fz_qp){ .name = "UD", .type = IBV_QPT_UD };
	qps[Q_XRC] = (struct fz_qp){ .name = "XRC", .type = IBV_QPT_XRC_RECV };
	xrc_open(&vic);
	for (i = 0; i < Q_N; i++) {
		struct fz_qp *q = &qps[i];

		q->qp = qp_create(&vic, q->type);
		q->pqp = qp_create(&peer, q->type == IBV_QPT_XRC_RECV ? IBV_QPT_XRC_SEND :
				   q->type);
		fz_connect(q, i == Q_PROBE ? 7 : 0);
		refill(q);
		printf("victim %s QP %#x (peer %#x): expects PSN %#x, sends from %#x\n",
		       q->name, q->qp->qp_num, q->pqp->qp_num, q->epsn, q->sq_psn);
	}
	{
		struct ibv_ah_attr ah = {
			.is_global = 1,
			.grh = { .dgid = vic.gid, .sgid_index = peer.gid_index, .hop_limit = 64 },
			.port_num = 1,
		};

		qps[Q_UD].pah = ibv_create_ah(peer.pd, &ah);
		if (!qps[Q_UD].pah)
			t_fatal("ibv_create_ah on the peer: %s", t_errname(errno));
	}
	for (i = 0; i < MR_NKINDS; i++)
		printf("MR %-9s access %#04x rkey %#010x va %#llx len %zu%s\n", mrs[i].name,
		       mrs[i].access, mrs[i].rkey, (unsigned long long)mrs[i].va, mrs[i].len,
		       i == MR_STALE ? " (deregistered)" : i == MR_OTHER_PD ? " (another PD)" : "");
	raw_open(ns);
	{
		char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &peer.ip, src, sizeof(src));
		inet_ntop(AF_INET, &vic.ip, dst, sizeof(dst));
		printf("injecting from %s: %s -> %s port %d, path MTU %u\n",
		       ns && *ns ? ns : "here", src, dst, FZ_PORT, path_mtu_bytes);
	}

	fails += run_probes();
	close(sniff_fd);
	sniff_fd = -1;
	if (fails)
		goto out;

	/*
	 * More injectors keep more CPUs busy (the victim's receive path runs
	 * mostly on the sender's CPU, in its softirq). Children only build
	 * and send packets, each from its own PRNG stream; the parent also
	 * keeps the victim QPs alive. None of them touches verbs objects.
	 */
	if (jobs < 1 || jobs > 16)
		t_fatal("-j %d: 1 to 16 injectors", jobs);
	sh = mmap(NULL, FZ_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		t_fatal("mmap shared: %s", t_errname(errno));
	if (max_pkts)
		max_pkts = (max_pkts + jobs - 1) / jobs;
	fflush(stdout);
	for (i = 1; i < jobs; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			t_fatal("fork: %s", t_errname(errno));
		if (!pids[i]) {
			child = i;
			t_rng_seed(seed + 0x9e3779b9u * i);
			break;
		}
	}
	start = t_now();
	end = secs >= 0 ? start + secs : 1e300;
	next_check = 0;
	if (!child && hold) {
		int fd = open(hold, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			t_fatal("-H %s: %s", hold, t_errname(errno));
		close(fd);
	}
	while (!max_pkts || n_sent < max_pkts) {
		int n = FZ_BATCH;

		if (child ? sh->stop : flood_over(t_now(), end, min_pkts, hold, sh, jobs))
			break;
		if (max_pkts && max_pkts - n_sent < (uint64_t)n)
			n = max_pkts - n_sent;
		for (i = 0; i < n; i++)
			build_random(&batch[i]);
		send_batch(n);
		if (child) {
			sh->sent[child] = n_sent;
			continue;
		}
		drain_victim();
		if (n_sent >= next_check) {
			/* Keep the victims alive: receives, and QPs out of ERR. */
			next_check = n_sent + 4 * FZ_BATCH;
			for (i = 0; i < Q_N; i++) {
				struct fz_qp *q = &qps[i];
				uint32_t rq = 0, sq = 0;

				if (qp_psns(q->qp, &rq, &sq) == IBV_QPS_ERR) {
					fz_connect(q, 0);
					q->rearms++;
				} else if (!(t_rand64() & 1)) {
					/* Aim at the live PSNs again half the time. */
					q->epsn = rq;
					q->sq_psn = sq;
				}
				refill(q);
			}
		}
	}
	if (child)
		_exit(0);
	/* Not at its own -n share: the flood is over for every injector. */
	if (!max_pkts || n_sent < max_pkts)
		sh->stop = 1;
	for (i = 1; i < jobs; i++) {
		int st;

		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			t_fail("injector %d (pid %d) failed", i, pids[i]);
		printf("injector %d sent %llu packets\n", i,
		       (unsigned long long)sh->sent[i]);
		n_sent += sh->sent[i];
	}
	elapsed = t_now() - start;
	printf("sent %llu packets in %.1f s: %.0f packets/s (%llu refused by the sender's stack)\n",
	       (unsigned long long)n_sent, elapsed, n_sent / (elapsed > 0 ? elapsed : 1),
	       (unsigned long long)n_send_errs);
	printf("of the first injector's: %llu with a wrong ICRC, %llu truncated, %llu oversized, %llu to other QPNs, %llu from another address\n",
	       (unsigned long long)n_bad_icrc, (unsigned long long)n_trunc,
	       (unsigned long long)n_big, (unsigned long long)n_randqpn,
	       (unsigned long long)n_spoof);
	for (i = 0; i < 256; i++)
		if (op_count[i] && (opcodes[i].hdrs & H_VALID))
			printf("  %-22s %llu\n", opcodes[i].name, (unsigned long long)op_count[i]);
	{
		uint64_t other = 0;

		for (i = 0; i < 256; i++)
			if (!(opcodes[i].hdrs & H_VALID))
				other += op_count[i];
		printf("  %-22s %llu\n", "undefined opcodes", (unsigned long long)other);
	}
	printf("victim completions %llu (%llu with errors); QPs reconnected after ERR:",
	       (unsigned long long)vic_wcs, (unsigned long long)vic_wc_errs);
	for (i = 0; i < Q_N; i++)
		printf(" %s %#x %llu", qps[i].name, qps[i].qp->qp_num,
		       (unsigned long long)qps[i].rearms);
	printf("\n");

	/* Let what is in flight settle before looking. */
	usleep(500000);
	drain_victim();
	fails += mrs_check("after fuzzing");
	for (i = 0; i < Q_N; i++)
		fails += check_live(&qps[i], i);
	fails += check_fresh();

out:
	for (i = 0; i < Q_N; i++) {
		if (qps[i].pah)
			ibv_destroy_ah(qps[i].pah);
		if (qps[i].qp && ibv_destroy_qp(qps[i].qp))
			t_fail("destroy victim QP: %s", t_errname(errno));
		if (qps[i].pqp && ibv_destroy_qp(qps[i].pqp))
			t_fail("destroy peer QP: %s", t_errname(errno));
	}
	if (vic.xsrq && ibv_destroy_srq(vic.xsrq))
		t_fail("destroy the XRC SRQ: %s", t_errname(errno));
	if (vic.xrcd && ibv_close_xrcd(vic.xrcd))
		t_fail("close the XRC domain: %s", t_errname(errno));
	for (i = 0; i < MR_NKINDS; i++)
		if (mrs[i].mr && ibv_dereg_mr(mrs[i].mr))
			t_fail("ibv_dereg_mr(%s): %s", mrs[i].name, t_errname(errno));
	ibv_dereg_mr(peer_mr);
	ibv_destroy_cq(vic.cq);
	ibv_destroy_cq(peer.cq);
	ibv_dealloc_pd(vic_pd2);
	ibv_dealloc_pd(vic.pd);
	ibv_dealloc_pd(peer.pd);
	ibv_close_device(vic.ctx);
	ibv_close_device(peer.ctx);
	/* Deregistered now: nothing may write the memory any more. */
	mrs_check("after teardown");
	if (fails || t_failures) {
		printf("FAIL (seed %u)\n", seed);
		return T_EXIT_FAIL;
	}
	printf("pass (seed %u)\n", seed);
	return T_EXIT_PASS;
}
