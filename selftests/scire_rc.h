/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire selftests: helpers for the RC data-path test programs. Two RC QPs
 * of one device are connected to each other through the device's own
 * RoCEv2 GID, so every packet loops back through the device: nothing else
 * is needed on the network. Also: a small seeded PRNG (runs replay from
 * the printed seed), CQ polling with a deadline, and names for verbs enums.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RC_H
#define SCIRE_RC_H

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scire_test.h"

/* --- seeded PRNG (xorshift64*) ---------------------------------------------- */

static uint64_t t_rng_state = 1;

static inline void t_rng_seed(uint32_t seed)
{
	/* Never 0: xorshift would stay there. */
	t_rng_state = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)seed << 17) ^ seed;
	if (!t_rng_state)
		t_rng_state = 1;
}

static inline uint64_t t_rand64(void)
{
	uint64_t x = t_rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t_rng_state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t t_rand_below(uint64_t n)
{
	return t_rand64() % n;
}

/* Uniform in [lo, hi]. */
static inline uint64_t t_rand_range(uint64_t lo, uint64_t hi)
{
	return lo + t_rand_below(hi - lo + 1);
}

/* True with probability 1/n. */
static inline int t_one_in(unsigned int n)
{
	return t_rand_below(n) == 0;
}

static inline void t_rand_fill(void *p, size_t len)
{
	uint8_t *b = p;
	uint64_t v;

	while (len >= 8) {
		v = t_rand64();
		memcpy(b, &v, 8);
		b += 8;
		len -= 8;
	}
	v = t_rand64();
	memcpy(b, &v, len);
}

/* A seed for a run that was not given one: differs run to run. */
static inline uint32_t t_fresh_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)(ts.tv_nsec ^ ts.tv_sec ^ ((uint32_t)getpid() << 16));
}

/* --- names ---------------------------------------------------------------- */

static inline const char *t_wc_opcode_str(enum ibv_wc_opcode op)
{
	static char buf[24];

	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default:
		snprintf(buf, sizeof(buf), "opcode %d", op);
		return buf;
	}
}

static inline const char *t_qp_state_str(int state)
{
	static char buf[24];

	switch (state) {
	case IBV_QPS_RESET: return "RESET";
	case IBV_QPS_INIT: return "INIT";
	case IBV_QPS_RTR: return "RTR";
	case IBV_QPS_RTS: return "RTS";
	case IBV_QPS_SQD: return "SQD";
	case IBV_QPS_SQE: return "SQE";
	case IBV_QPS_ERR: return "ERR";
	default:
		snprintf(buf, sizeof(buf), "state %d", state);
		return buf;
	}
}

/* --- device, port, path ----------------------------------------------------- */

/* Where the QPs of a test meet: port 1, one GID of it, one path MTU. */
struct t_path {
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
};

static inline int t_mtu_bytes(enum ibv_mtu mtu)
{
	return 128 << mtu;
}

/* IBV_MTU_* for a byte count, or 0 if it is none of 256..4096. */
static inline enum ibv_mtu t_mtu_enum(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return 0;
	}
}

/* Index of port 1's first RoCE v2 GID holding an IPv4-mapped address, or -1. */
static inline int t_find_ipv4_roce_v2_gid(struct ibv_context *ctx)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_port_attr port;
	struct ibv_gid_entry entry;
	int i;

	if (ibv_query_port(ctx, 1, &port))
		return -1;
	for (i = 0; i < port.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &entry, 0))
			continue;
		if (entry.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(entry.gid.raw, v4mapped, sizeof(v4mapped)))
			return i;
	}
	return -1;
}

/*
 * Check that port 1 is active, that gid_index is a RoCE v2 GID of it, and
 * that the port can carry path MTU mtu_bytes (0: the port's active MTU).
 * A path MTU above the port's active MTU would not fit the netdev.
 */
static inline void t_path_init(struct ibv_context *ctx, int gid_index, int mtu_bytes,
			       struct t_path *path)
{
	struct ibv_gid_entry entry;
	struct ibv_port_attr port;
	int ret;

	ret = ibv_query_port(ctx, 1, &port);
	if (ret)
		t_fatal("ibv_query_port(1): %s", t_errname(ret));
	if (port.state != IBV_PORT_ACTIVE)
		t_fatal("port 1 is %s, expected PORT_ACTIVE", ibv_port_state_str(port.state));
	if (port.link_layer != IBV_LINK_LAYER_ETHERNET)
		t_fatal("port 1 link layer %u is not Ethernet: not a RoCE device", port.link_layer);

	ret = ibv_query_gid_ex(ctx, 1, gid_index, &entry, 0);
	if (ret)
		t_fatal("ibv_query_gid_ex(port 1, index %d): %s", gid_index, t_errname(ret));
	if (entry.gid_type != IBV_GID_TYPE_ROCE_V2)
		t_fatal("GID index %d has type %u, expected RoCE v2 (%u)", gid_index,
			entry.gid_type, IBV_GID_TYPE_ROCE_V2);
	path->gid = entry.gid;
	path->gid_index = gid_index;

	if (!mtu_bytes) {
		path->mtu = port.active_mtu;
		return;
	}
	path->mtu = t_mtu_enum(mtu_bytes);
	if (!path->mtu)
		t_fatal("path MTU %d: must be 256, 512, 1024, 2048 or 4096", mtu_bytes);
	if (path->mtu > port.active_mtu)
		t_fatal("path MTU %d exceeds port 1's active MTU %d: raise the netdev's MTU",
			mtu_bytes, t_mtu_bytes(port.active_mtu));
}

/*
 * Open device name for a test whose QPs meet on port 1: through GID
 * gid_index, or if it is negative the port's first RoCE v2 GID with an
 * IPv4 address, at the port's active MTU (t_path_init()).
 */
static inline struct ibv_context *t_open_path(const char *name, int gid_index,
					      struct t_path *path)
{
	struct ibv_context *ctx = t_open_device(name);

	if (gid_index < 0 && (gid_index = t_find_ipv4_roce_v2_gid(ctx)) < 0)
		t_fatal("%s port 1 has no RoCE v2 GID with an IPv4 address: give -g", name);
	t_path_init(ctx, gid_index, 0, path);
	return ctx;
}

/* --- QPs -------------------------------------------------------------------- */

static inline int t_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int ret;

	ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	if (ret)
		t_fatal("ibv_query_qp(QP %#x, IBV_QP_STATE): %s", qp->qp_num, t_errname(ret));
	return attr.qp_state;
}

#define T_RC_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define T_RD_ATOMIC	16

/* The rnr_retry t_rc_connect() sets (7: retry for ever). */
static int t_rnr_retry = 7;
/* Local ACK timeout (IBA 9.7.6.1.3: 4.096 us * 2^timeout), 14 is 67 ms. */
static int t_qp_timeout = 14;

/*
 * Move qp (in any state) through RESET, INIT, RTR to RTS, connected to QP
 * dest_qpn on the same device through path. rq_psn is the first PSN qp
 * expects, sq_psn the first it sends (24 bits each). An RC QP gets
 * T_RC_ACCESS; a UC QP remote write only, and none of the attributes
 * only RC has (IBA 11.2.5: no read/atomic depths, RNR or ACK timers).
 */
static inline void t_rc_connect(struct ibv_qp *qp, uint32_t dest_qpn, uint32_t rq_psn,
				uint32_t sq_psn, const struct t_path *path)
{
	int uc = qp->qp_type == IBV_QPT_UC;
	struct ibv_qp_attr a;
	int ret;

	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET };
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (ret)
		t_fatal("modify QP %#x to RESET: %s", qp->qp_num, t_errname(ret));

	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = uc ? IBV_ACCESS_REMOTE_WRITE : T_RC_ACCESS,
	};
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		t_fatal("modify QP %#x RESET->INIT: %s", qp->qp_num, t_errname(ret));

	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = path->mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = rq_psn & 0xffffff,
		.max_dest_rd_atomic = T_RD_ATOMIC,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = path->gid,
				.sgid_index = path->gid_index,
				.hop_limit = 64,
			},
			.port_num = 1,
		},
	};
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	if (ret)
		t_fatal("modify QP %#x INIT->RTR (dest QP %#x, path MTU %d): %s", qp->qp_num,
			dest_qpn, t_mtu_bytes(path->mtu), t_errname(ret));

	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS,
		.timeout = t_qp_timeout,
		.retry_cnt = 7,
		.rnr_retry = t_rnr_retry,
		.sq_psn = sq_psn & 0xffffff,
		.max_rd_atomic = T_RD_ATOMIC,
	};
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    (uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC));
	if (ret)
		t_fatal("modify QP %#x RTR->RTS: %s", qp->qp_num, t_errname(ret));
}

/* An RC QP of pd with cq for both queues and one SGE per WQE. */
static inline struct ibv_qp *t_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				     uint32_t max_send_wr, uint32_t max_recv_wr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = max_send_wr,
			.max_recv_wr = max_recv_wr,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp)
		t_fatal("create RC QP: %s", t_errname(errno));
	return qp;
}

/* Connect a and b to each other with random initial PSNs. */
static inline void t_rc_connect_pair(struct ibv_qp *a, struct ibv_qp *b,
				     const struct t_path *path)
{
	uint32_t ab = t_rand64() & 0xffffff, ba = t_rand64() & 0xffffff;

	t_rc_connect(a, b->qp_num, ba, ab, path);
	t_rc_connect(b, a->qp_num, ab, ba, path);
}

/* --- a loopback pair with a local buffer -------------------------------------- */

/*
 * Two connected RC QPs of one PD on one CQ, and a page of local memory
 * registered LOCAL_WRITE for the requester's SGEs: what the checks of
 * scire_access, scire_mw and scire_rereg each take fresh, so that a
 * check that moves a QP to the error state leaves nothing behind.
 */
struct t_rc_pair {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;	/* a is the requester, b its peer */
	uint8_t *lbuf;		/* one page */
	struct ibv_mr *lmr;	/* lbuf, LOCAL_WRITE */
};

static inline void t_rc_pair_new(struct t_rc_pair *p, struct ibv_pd *pd,
				 const struct t_path *path)
{
	long page = sysconf(_SC_PAGESIZE);

	p->cq = ibv_create_cq(pd->context, 32, NULL, NULL, 0);
	if (!p->cq)
		t_fatal("create_cq: %s", t_errname(errno));
	p->a = t_rc_qp(pd, p->cq, 8, 4);
	p->b = t_rc_qp(pd, p->cq, 8, 4);
	t_rc_connect_pair(p->a, p->b, path);
	p->lbuf = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->lbuf == MAP_FAILED)
		t_fatal("mmap: %s", t_errname(errno));
	p->lmr = ibv_reg_mr(pd, p->lbuf, page, IBV_ACCESS_LOCAL_WRITE);
	if (!p->lmr)
		t_fatal("reg_mr (local buffer): %s", t_errname(errno));
}

static inline void t_rc_pair_free(struct t_rc_pair *p)
{
	int ret;

	if ((ret = ibv_destroy_qp(p->a)) || (ret = ibv_destroy_qp(p->b)))
		t_fatal("destroy_qp: %s", t_errname(ret));
	if ((ret = ibv_destroy_cq(p->cq)))
		t_fatal("destroy_cq: %s", t_errname(ret));
	if ((ret = ibv_dereg_mr(p->lmr)))
		t_fatal("dereg_mr (local buffer): %s", t_errname(ret));
	munmap(p->lbuf, sysconf(_SC_PAGESIZE));
}

/* --- the command line -------------------------------------------------------- */

/*
 * -d DEV [-g GIDIDX], and with checks also [-c CHECK] [-v] (run only the
 * checks whose name contains CHECK; say each check's name): the options
 * of the RC test programs. Exits with T_EXIT_FAIL and a usage line on
 * anything else.
 */
struct t_rc_opts {
	const char *dev;
	int gid_index;		/* -1: the first RoCEv2 IPv4 GID */
	const char *only;
	int verbose;
};

static inline void t_rc_args(int argc, char **argv, int checks, struct t_rc_opts *o)
{
	int c;

	*o = (struct t_rc_opts){ .gid_index = -1 };
	while ((c = getopt(argc, argv, checks ? "d:g:c:v" : "d:g:")) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'g': o->gid_index = atoi(optarg); break;
		case 'c': o->only = optarg; break;
		case 'v': o->verbose = 1; break;
		default: o->dev = NULL; optind = argc + 1; break;
		}
	}
	if (!o->dev || optind != argc) {
		fprintf(stderr, "usage: %s -d DEV [-g GIDIDX]%s\n", argv[0],
			checks ? " [-c CHECK] [-v]" : "");
		exit(T_EXIT_FAIL);
	}
}

/* --- named checks (-c CHECK, -v) ---------------------------------------------- */

static const char *t_only;	/* -c: run the checks whose name has this */
static int t_verbose;		/* -v: say each check's name */
static int t_checks;		/* checks run */

/* Is check wanted (-c)? If so, count it and, under -v, name it. */
static inline int t_check_want(const char *check)
{
	if (t_only && !strstr(check, t_only))
		return 0;
	if (t_verbose)
		printf("check %s\n", check);
	t_checks++;
	return 1;
}

/* "ok   CHECK", or "FAIL CHECK" if t_fail() was called since fails was read. */
static inline void t_check_pass(const char *check, int fails)
{
	if (t_failures == fails)
		printf("ok   %s\n", check);
	else
		printf("FAIL %s (see above)\n", check);
}

/* CHECK("name") { ... }: the block runs as check "name", if wanted. */
#define CHECK(name) for (int _f = t_failures, _once = t_check_want(name); _once; \
			 _once = 0, t_check_pass(name, _f))

/*
 * The end of a program of named checks: fails if -c matched none, then
 * the exit status, with a "PASS: ..." line when nothing failed.
 */
static inline int t_checks_done(const char *dev)
{
	if (!t_checks)
		t_fatal("no check matches '%s'", t_only);
	if (t_failures)
		return T_EXIT_FAIL;
	printf("PASS: %s on %s: %d checks\n", t_name, dev, t_checks);
	return T_EXIT_PASS;
}

/*
 * The start of every RC test program: its name for messages, stdout line
 * buffered, the options parsed (-c and -v into t_only and t_verbose), the
 * PRNG seeded afresh, and the device opened with its path. Returns the
 * device's context.
 */
static inline struct ibv_context *t_rc_start(const char *name, int argc, char **argv,
					     int checks, struct t_rc_opts *o,
					     struct t_path *path)
{
	t_name = name;
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_rc_args(argc, argv, checks, o);
	t_only = o->only;
	t_verbose = o->verbose;
	t_rng_seed(t_fresh_seed());
	return t_open_path(o->dev, o->gid_index, path);
}

/* --- CQs -------------------------------------------------------------------- */

/*
 * Poll one CQE from cq, waiting until deadline (t_now() seconds). Return 1
 * with *wc filled, 0 if none came in time.
 */
static inline int t_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double deadline)
{
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			t_fatal("ibv_poll_cq: returned %d", n);
		if (n)
			return 1;
		if (t_now() > deadline)
			return 0;
		sched_yield();
	}
}

/*
 * One signaled RDMA WRITE (write) or READ on p's requester: local SGE
 * (addr, len, lkey), remote (raddr, rkey); a failed check (named check)
 * unless its CQE comes within 20 s with status expect. Then a 20 ms pause,
 * so that an ACK in flight does not meet the next test's QPs. Returns 1 if
 * the CQE came with status expect, 0 otherwise.
 */
static inline int t_rc_rdma(struct t_rc_pair *p, const char *check, int write,
			     uint64_t addr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
			     uint32_t len, enum ibv_wc_status expect)
{
	struct ibv_sge sge = { addr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.wr = { .rdma = { .remote_addr = raddr, .rkey = rkey } },
	}, *bad;
	struct ibv_wc wc;
	int ret;

	ret = ibv_post_send(p->a, &wr, &bad);
	if (ret)
		t_fatal("%s: post: %s", check, t_errname(ret));
	ret = 0;
	if (!t_poll_one(p->cq, &wc, t_now() + 20))
		t_fail("%s: no CQE for the %s within 20 s", check, write ? "WRITE" : "READ");
	else if (wc.status != expect)
		t_fail("%s: %s of %u bytes at %#llx rkey %#x: %s, expected %s", check,
		       write ? "WRITE" : "READ", len, (unsigned long long)raddr, rkey,
		       ibv_wc_status_str(wc.status), ibv_wc_status_str(expect));
	else
		ret = 1;
	usleep(20 * 1000);
	return ret;
}

/*
 * t_reg_mr: ibv_reg_mr() of [addr, addr + len) with access, or a fatal
 * error naming check and the errno.
 */
static inline struct ibv_mr *t_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				      int access, const char *check)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (!mr)
		t_fatal("%s: reg_mr of %zu bytes at %p (access %#x): %s", check, len,
			addr, access, t_errname(errno));
	return mr;
}

/* --- XRC (IBA annex A19) ------------------------------------------------------ */

/*
 * An XRC domain of its own: of a new temporary file, unlinked at once
 * (the open fd, returned in *fd, keeps the domain's inode). Fatal if it
 * cannot be made.
 */
static inline struct ibv_xrcd *t_xrcd_tmp(struct ibv_context *ctx, int *fd)
{
	char file[] = "/tmp/scire_xrcd.XXXXXX";
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd;

	*fd = mkstemp(file);
	if (*fd < 0)
		t_fatal("mkstemp for an XRC domain: %s", t_errname(errno));
	unlink(file);
	a.fd = *fd;
	xrcd = ibv_open_xrcd(ctx, &a);
	if (!xrcd)
		t_fatal("ibv_open_xrcd: %s", t_errname(errno));
	return xrcd;
}

/*
 * An XRC SRQ of xrcd and pd, completing on cq, of max_wr WQEs of max_sge
 * SGEs; its number in *srqn. Fatal if it cannot be made.
 */
static inline struct ibv_srq *t_xrc_srq(struct ibv_context *ctx, struct ibv_xrcd *xrcd,
					struct ibv_pd *pd, struct ibv_cq *cq,
					uint32_t max_wr, uint32_t max_sge, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &a);
	int ret;

	if (!srq)
		t_fatal("create an XRC SRQ of %u WQEs, %u SGEs: %s", max_wr, max_sge,
			t_errname(errno));
	ret = ibv_get_srq_num(srq, srqn);
	if (ret)
		t_fatal("ibv_get_srq_num: %s", t_errname(ret));
	return srq;
}

#endif /* SCIRE_RC_H */
