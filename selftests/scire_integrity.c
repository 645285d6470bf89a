// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_integrity -d DEV [-g GIDIDX] [-D DEV2 [-G GIDIDX2] | -P PORT [-C ADDR]]
 *                 [-m MTU] [-n OPS] [-s SEED] [-a API] [-M MAXLEN] [-k KIND,...]
 *                 [-w] [-b | -o | -O] [-X] [-R] [-L] [-v]
 *
 * RC data integrity: two RC QPs of DEV, A and B, connected to each other
 * through DEV's RoCEv2 GID GIDIDX (default: the first IPv4-mapped one) with
 * path MTU MTU bytes (default: the port's active MTU), run OPS random
 * operations in either direction, in batches of up to NSLOT in flight:
 * SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ,
 * ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, IBA 1.5's ATOMIC_WRITE (8 bytes
 * to an aligned word; not with -R), and an RDMA_READ followed by an
 * IBV_SEND_FENCE'd SEND or RDMA_WRITE of the bytes just read (the fence is
 * what makes that data correct). With -w also type-2 memory windows: bind
 * with IBV_WR_BIND_MW, RDMA_WRITE and RDMA_READ through the window,
 * invalidate it with SEND_WITH_INV or LOCAL_INV, and check that an
 * RDMA_WRITE with the invalidated rkey fails with IBV_WC_REM_ACCESS_ERR
 * and changes nothing (the QPs are then reset and reconnected).
 *
 * With -D, QP B lives on DEV2 instead (GID index GIDIDX2, default again
 * the first IPv4-mapped RoCEv2 GID), with its own context, PD, CQs and
 * MRs, so the two QPs talk across the wire (e.g. rxe on one veth end and
 * scire on the other; one process can open both whatever its namespace).
 * Each QP's AV points at the other device's GID; the path MTU defaults to
 * the smaller active MTU of the two ports, and SGE and inline limits are
 * the smaller of the two devices'. A window is bound in the PD of the MR
 * it covers.
 *
 * With -P PORT the two QPs live in two processes, on two hosts if need be:
 * the one without -C is QP A and listens on TCP PORT, the one with -C ADDR
 * is QP B and connects to ADDR. B runs A's seed and options (-s, -n, -a,
 * -M, -k, -w, -m; -R and -L if either has them). Each process posts, polls
 * and checks its own QP, CQs and memory only, and both stop when either
 * finds a fault; the TCP connection carries the QP numbers, MR addresses
 * and rkeys, and the steps both must reach before either goes on.
 *
 * Sizes run from 0 to MAXLEN (default 1 MiB), biased to the edges (0, 1,
 * MTU-1, MTU, MTU+1, multiples of the MTU, the inline limit); local and
 * receive buffers are 1..16 SGEs at random offsets with random gaps; small
 * sends and writes are sometimes inline (their source is overwritten right
 * after posting: the data must be what it was at post time); WRs are
 * signalled or not, sometimes fenced, and posted with ibv_post_send or the
 * ibv_wr_* API (-a post|wr|mix; mix picks per WR, chaining consecutive
 * WRs of one API).
 *
 * Checked: every byte of every destination, that every byte of the
 * destination buffers outside the destinations still holds its guard
 * pattern, that sources were not written, and every CQE: status, opcode,
 * qp_num, wr_id order, and for receives byte_len, IMM/INV flags, imm_data
 * and invalidated_rkey; no CQE beyond those expected. Atomic results are
 * 64-bit values in host byte order, as rxe returns them.
 *
 * With -b every buffer is a dma-buf: the process's source and destination
 * buffers are one memfd that udmabuf exports (/dev/udmabuf), mapped where
 * the buffers would be and registered slot by slot with
 * ibv_reg_dmabuf_mr(3) at the iova of that mapping, so every address and
 * check is as without it. A process decides this for itself (with -P,
 * either or both may pass -b). Not with -w: the core gives dma-buf MRs
 * no MW_BIND right.
 *
 * With -o every MR is an on-demand paging MR (IBV_ACCESS_ON_DEMAND), which
 * starts with no page mapped: every first access faults; with -O each QP's
 * side has one implicit ODP MR (the whole address space) that every
 * buffer, SGE and rkey of that side uses.
 *
 * With -X the two sides talk XRC (IBA annex A19) instead of RC: each
 * side has an XRC domain of its own (a temporary file's), an XRC SRQ in
 * it that takes that side's receive WQEs and whose CQ is the side's
 * receive CQ, an XRC send QP that posts the side's requests, and an XRC
 * receive QP that the other side's send QP is connected to; every request
 * names the other side's SRQ (qp_type.xrc.remote_srqn, or
 * ibv_wr_set_xrc_srqn()), and a receive CQE carries the receive QP's
 * number. Everything else is checked as with RC. Not with -w, -P or -R.
 *
 * The seed is printed first; -s SEED replays a run exactly. -k limits the
 * ops to the kinds named (as printed, e.g. -k RDMA_READ,SEND). -v prints
 * every op as it is planned. Exit 0 only if everything matched.
 *
 * -L is for a lossy wire: an op that must fail with a remote error (a NAK)
 * may end with IBV_WC_RETRY_EXC_ERR instead, as it must when that NAK is
 * lost. Everything else is checked as without it. The local ACK timeout
 * is then 18 (1.07 s) instead of 14 (67 ms): on a netem wire between two
 * emulated VMs of a busy host, each side's queue of retransmissions (up
 * to netem's 1000 packets) held a probe and its answer for 0.6 s once,
 * longer than seven 67 ms retries; the test is of recovery, not of how
 * fast the link is.
 *
 * -R is for rdma_rxe with rdma-core 44's provider only, whose bugs it
 * steps around; scire must pass without it:
 *   - its wr_set_sge_list() sums the first SGE's length num_sge times, and
 *     its wr_set_inline_data_list() never adds up the length (fixed
 *     in rdma-core v64): ibv_wr_* WRs get one SGE (ibv_wr_set_sge,
 *     ibv_wr_set_inline_data);
 *   - its inline setters do not mark the WQE inline: IBV_SEND_INLINE is
 *     always put in wr_flags too (ibv_wr_post(3) does not ask for it;
 *     without -R it is there for half of the inline WRs);
 *   - its kernel writes IB_WC_WITH_INVALIDATE (1 << 2) into user CQEs,
 *     which libibverbs reads as IBV_WC_IP_CSUM_OK: taken as
 *     IBV_WC_WITH_INV.
 *   - its kernel (6.1) hangs a QP in RTS when it retries a fenced RDMA
 *     READ or atomic: after the rollback rxe_wqe_is_fenced() counts the
 *     WR's own rd_atomic credit as outstanding, and with req.psn equal to
 *     comp.psn the retransmit timer is not armed again. A READ or atomic
 *     is then never fenced (the second WR of a READ+fenced pair still
 *     is), and the local ACK timeout is 18 (1.07 s) instead of 14
 *     (67 ms), which a 1 MiB READ at MTU 1024 outlasted under emulation;
 *   - the same kernel also hangs when a retry starts at a fenced WR while
 *     a READ or atomic posted after it, already sent once, still holds
 *     its rd_atomic credit: the fence waits for that credit, the credit
 *     for the READ's response, and the READ cannot be sent again before
 *     the fenced WR. A fenced WR therefore ends its batch.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "scire_rc.h"

#define NSLOT		8	/* ops per batch; each has buffers of its own */
#define MAX_SGE		16
#define SGE_GAP		64	/* most bytes skipped before a scattered SGE */
#define LEAD		4096	/* placements start in [64, LEAD) of an area */
#define TAIL_CHECK	512	/* guard bytes checked beyond the last placement */
#define SQ_DEPTH	64
#define RQ_DEPTH	64
#define CQ_DEPTH	256
#define FIFO_LEN	256	/* power of two, > CQ_DEPTH */

enum api { API_POST, API_WR, API_MIX };

enum kind {
	K_SEND,
	K_SEND_IMM,
	K_WRITE,
	K_WRITE_IMM,
	K_READ,
	K_CMP_SWP,
	K_FETCH_ADD,
	K_READ_FENCE_SEND,
	K_READ_FENCE_WRITE,
	K_ATOMIC_WRITE,		/* IBA 1.5 RDMA ATOMIC WRITE (not with -R) */
	K_MW,			/* a whole memory-window sequence (-w) */
	K_NKINDS
};

static const char *const kind_name[K_NKINDS] = {
	[K_SEND] = "SEND",
	[K_SEND_IMM] = "SEND_WITH_IMM",
	[K_WRITE] = "RDMA_WRITE",
	[K_WRITE_IMM] = "RDMA_WRITE_WITH_IMM",
	[K_READ] = "RDMA_READ",
	[K_CMP_SWP] = "ATOMIC_CMP_AND_SWP",
	[K_FETCH_ADD] = "ATOMIC_FETCH_AND_ADD",
	[K_READ_FENCE_SEND] = "RDMA_READ+fenced SEND",
	[K_READ_FENCE_WRITE] = "RDMA_READ+fenced RDMA_WRITE",
	[K_ATOMIC_WRITE] = "ATOMIC_WRITE",
	[K_MW] = "memory window",
};

/* How often each kind is drawn (K_MW only with -w). */
static const int kind_weight[K_NKINDS] = {
	[K_SEND] = 4, [K_SEND_IMM] = 2, [K_WRITE] = 4, [K_WRITE_IMM] = 2,
	[K_READ] = 4, [K_CMP_SWP] = 2, [K_FETCH_ADD] = 2,
	[K_READ_FENCE_SEND] = 1, [K_READ_FENCE_WRITE] = 1, [K_ATOMIC_WRITE] = 2,
	[K_MW] = 1,
};

struct span {
	uint32_t off, len;	/* within an area */
};

/* Where an op's bytes lie in one area: nspan spans, total bytes. */
struct place {
	int nspan;
	uint32_t total;
	struct span span[MAX_SGE];
};

struct op;

/* One CQE a CQ must deliver, in order. */
struct exp_cqe {
	uint64_t wr_id;
	struct op *op;
	const char *what;		/* which WR of the op */
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	int recv;			/* a receive: byte_len and flags count */
	uint32_t byte_len;
	unsigned int wc_flags;		/* IBV_WC_WITH_IMM / IBV_WC_WITH_INV */
	uint32_t ex;			/* imm_data (as is) or invalidated_rkey */
};

struct fifo {
	const char *name;
	unsigned int head, tail;
	struct exp_cqe e[FIFO_LEN];
};

struct side {
	char name;
	const char *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;		/* sides of one device share ctx and pd */
	struct t_path path;		/* this side's own GID and its index */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_cq *scq, *rcq;
	uint8_t *src[NSLOT], *dst[NSLOT];
	struct ibv_mr *src_mr[NSLOT], *dst_mr[NSLOT];
	struct ibv_mr *imr;		/* -O: the side's implicit ODP MR */
	/* -X: qp is the XRC send QP; receives go to srq, served by tqp. */
	int xrcd_fd;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *tqp;
	uint32_t srqn;
	/* What the other QP aims at: its MRs as the owning process sees them. */
	uint64_t src_va[NSLOT], dst_va[NSLOT];
	uint32_t src_rkey[NSLOT], dst_rkey[NSLOT];
	uint32_t qpn;
	size_t dst_used[NSLOT];		/* dst bytes to guard-check, from 0 */
	struct fifo sexp, rexp;
	char sname[16], rname[16];
};

struct op {
	int id;
	enum kind kind;
	struct side *req, *resp;
	int slot;
	enum api api;
	uint32_t len;
	unsigned int flags;		/* IBV_SEND_* of the (last) WR */
	int inlined, bad_lkey;
	int inline_flag;		/* ibv_wr_*: IBV_SEND_INLINE in wr_flags too */
	struct place lplace;		/* requester's local SGEs */
	struct place rplace;		/* responder's receive SGEs */
	uint32_t roff;			/* remote range: READ source, WRITE/atomic target */
	uint32_t woff;			/* fenced pair: the WRITE's target */
	__be32 imm;
	uint64_t cmp_add, swap, init;
	uint64_t recv_wr_id;
	uint8_t *data;			/* the len bytes the op moves */
};

/* One work request, API-neutral. */
struct wr {
	enum ibv_wr_opcode opcode;
	uint64_t wr_id;
	unsigned int flags;
	int inline_flag;
	int nsge;
	struct ibv_sge sge[MAX_SGE];
	uint64_t raddr;
	uint32_t rkey;
	__be32 imm;
	uint32_t inv;
	uint64_t cmp_add, swap;
	struct ibv_mw *mw;
	uint32_t new_rkey;
	struct ibv_mw_bind_info bind;
};

static struct {
	const char *dev;
	int gid_index;
	const char *dev2;		/* -D: QP B's device */
	int gid_index2;
	int mtu_bytes;
	long nops;
	uint32_t seed;
	int seed_given;
	enum api api;
	uint32_t max_len;
	int mw;
	int dmabuf;			/* -b */
	int odp;			/* -o: 1, -O: 2 (implicit) */
	int verbose;
	unsigned int kinds;		/* -k: bit per enum kind, 0 = all */
	int rxe_quirks;			/* -R */
	int lossy;			/* -L */
	const char *peer_port;		/* -P: one QP per process, over TCP */
	const char *peer_addr;		/* -C: this process is QP B */
	int xrc;			/* -X */
} opt = { .gid_index = -1, .gid_index2 = -1, .nops = 400, .api = API_MIX, .max_len = 1 << 20 };

static enum ibv_mtu path_mtu;
static struct side sides[2];
static int peer_fd = -1;	/* -P: the other process */
static int me;			/* -P: this process's side, 0 (A) or 1 (B) */
static uint8_t *guard;
static size_t area_len;
static int mtu, max_sge, max_rd_sge, max_inline;
static long op_count[K_NKINDS];
static uint64_t bytes_moved;
static int batch_no;

static const char *api_name(enum api api)
{
	return api == API_POST ? "ibv_post_send" : api == API_WR ? "ibv_wr_*" : "mix";
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -d DEV [-g GIDIDX] [-D DEV2 [-G GIDIDX2] | -P PORT [-C ADDR]] [-m MTU] [-n OPS] [-s SEED] [-a post|wr|mix] [-M MAXLEN] [-k KIND,...] [-R] [-L] [-w] [-b | -o | -O] [-X] [-v]\n",
		argv0);
	exit(T_EXIT_FAIL);
}

/* -k SEND,RDMA_READ,...: only these kinds (names as in kind_name). */
static unsigned int parse_kinds(char *list, const char *argv0)
{
	unsigned int mask = 0;
	char *tok, *save = NULL;
	int k;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < K_NKINDS; k++)
			if (!strcmp(tok, kind_name[k]))
				break;
		if (k == K_NKINDS) {
			fprintf(stderr, "unknown kind '%s'; kinds:", tok);
			for (k = 0; k < K_NKINDS; k++)
				fprintf(stderr, " %s%s", kind_name[k],
					k + 1 < K_NKINDS ? "," : "\n");
			usage(argv0);
		}
		mask |= 1U << k;
	}
	return mask;
}

static void parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "d:g:D:G:P:C:m:n:s:a:M:k:RLwboOXv")) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'g': opt.gid_index = atoi(optarg); break;
		case 'D': opt.dev2 = optarg; break;
		case 'G': opt.gid_index2 = atoi(optarg); break;
		case 'P': opt.peer_port = optarg; break;
		case 'C': opt.peer_addr = optarg; break;
		case 'm': opt.mtu_bytes = atoi(optarg); break;
		case 'n': opt.nops = atol(optarg); break;
		case 's':
			opt.seed = strtoul(optarg, NULL, 0);
			opt.seed_given = 1;
			break;
		case 'a':
			if (!strcmp(optarg, "post"))
				opt.api = API_POST;
			else if (!strcmp(optarg, "wr"))
				opt.api = API_WR;
			else if (!strcmp(optarg, "mix"))
				opt.api = API_MIX;
			else
				usage(argv[0]);
			break;
		case 'M': opt.max_len = strtoul(optarg, NULL, 0); break;
		case 'w': opt.mw = 1; break;
		case 'b': opt.dmabuf = 1; break;
		case 'o': opt.odp = 1; break;
		case 'O': opt.odp = 2; break;
		case 'R':
			opt.rxe_quirks = 1;
			t_qp_timeout = 18;
			break;
		case 'L':
			opt.lossy = 1;
			t_qp_timeout = 18;
			break;
		case 'v': opt.verbose = 1; break;
		case 'X': opt.xrc = 1; break;
		case 'k': opt.kinds = parse_kinds(optarg, argv[0]); break;
		default: usage(argv[0]);
		}
	}
	/* The core's REG_DMABUF_MR takes no IB_ACCESS_MW_BIND. */
	if (opt.dmabuf && opt.mw) {
		fprintf(stderr, "%s: -b and -w exclude each other: a dma-buf MR has no MW_BIND right\n",
			argv[0]);
		exit(T_EXIT_FAIL);
	}
	/* XRC: no windows (their recovery resets QPs an SRQ outlives), one process, scire. */
	if (opt.xrc && (opt.mw || opt.peer_port || opt.rxe_quirks)) {
		fprintf(stderr, "%s: -X excludes -w, -P and -R\n", argv[0]);
		exit(T_EXIT_FAIL);
	}
	if (opt.dmabuf && opt.odp) {
		fprintf(stderr, "%s: -b and -o/-O exclude each other: a dma-buf MR is not ODP\n",
			argv[0]);
		exit(T_EXIT_FAIL);
	}
	if (!opt.dev || optind != argc || (opt.gid_index2 >= 0 && !opt.dev2) ||
	    (opt.peer_port && opt.dev2) || (opt.peer_addr && !opt.peer_port) ||
	    opt.nops < 1 || opt.max_len < 8 ||
	    opt.max_len > (1U << 30))
		usage(argv[0]);
	if (!opt.seed_given)
		opt.seed = t_fresh_seed();
}

/* --- describing ops in failure messages ------------------------------------ */

static const char *op_str(const struct op *op)
{
	static char buf[2][320];
	static int which;
	char *b = buf[which ^= 1];

	if (!op)
		return "no op";
	snprintf(b, sizeof(buf[0]),
		 "op %d (batch %d, %s %c->%c, %u bytes, slot %d, %d local SGEs, %s%s%s%s%s)",
		 op->id, batch_no, kind_name[op->kind], op->req->name, op->resp->name,
		 op->len, op->slot, op->lplace.nspan, api_name(op->api),
		 op->flags & IBV_SEND_SIGNALED ? ", signalled" : "",
		 op->flags & IBV_SEND_FENCE ? ", fenced" : "",
		 !op->inlined ? "" : op->api == API_POST ? ", inline" :
		 op->inline_flag ? ", inline (setter and wr_flags)" : ", inline (setter only)",
		 op->bad_lkey ? " with a junk lkey" : "");
	return b;
}

/* --- the other process (-P) ------------------------------------------------- */

/*
 * With -P each process holds one QP: A listens on TCP PORT, B (-C ADDR)
 * connects, and B takes A's seed and options. Both plan the same ops from
 * the same random stream, and each keeps a copy of the other side's
 * buffers, filled exactly as the other fills its own, so it knows every
 * byte that must arrive. Each process posts, polls and checks only its own
 * QP, CQs and memory; the two meet over TCP wherever one must wait for
 * the other (receives posted before the SENDs, a batch checked by both
 * before its buffers are filled again).
 */
static int is_local(const struct side *sd)
{
	return peer_fd < 0 || sd == &sides[me];
}

static void peer_io(int out, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? send(peer_fd, p, len, MSG_NOSIGNAL) : recv(peer_fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			t_fatal("connection to QP %c's process %s: %s", 'A' + !me,
				out ? "lost" : "ended", n ? t_errname(errno) :
				"closed (that process stopped: its output says why)");
		p += n;
		len -= (size_t)n;
	}
}

/* Send len bytes of this process's, receive the other's len bytes. */
static void peer_xchg(const void *mine, void *theirs, size_t len)
{
	peer_io(1, (void *)mine, len);
	peer_io(0, theirs, len);
}

/*
 * Neither process goes past step `what` of the batch before both reached
 * it; failed checks in the other end this one too.
 */
static void peer_sync(const char *what)
{
	int32_t mine[2] = { batch_no, t_failures }, theirs[2];

	if (peer_fd < 0)
		return;
	peer_xchg(mine, theirs, sizeof(mine));
	if (theirs[1])
		t_fatal("QP %c's process failed %d checks by batch %d (%s): its output says which",
			'A' + !me, theirs[1], theirs[0], what);
	if (theirs[0] != batch_no)
		t_fatal("internal: out of step with QP %c's process at %s: batch %d here, %d there",
			'A' + !me, what, batch_no, theirs[0]);
}

/* A listens on -P PORT, B connects to -C ADDR (for up to 60 s). */
static void peer_connect(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	double deadline = t_now() + 60;
	int fd, lfd, one = 1, ret;

	me = opt.peer_addr ? 1 : 0;
	/* An IPv6 wildcard listener takes IPv4 connections as well. */
	hints.ai_family = me ? AF_UNSPEC : AF_INET6;
	hints.ai_flags = me ? 0 : AI_PASSIVE;
	ret = getaddrinfo(opt.peer_addr, opt.peer_port, &hints, &ai);
	if (ret)
		t_fatal("getaddrinfo(%s, %s): %s", opt.peer_addr ? opt.peer_addr : "any",
			opt.peer_port, gai_strerror(ret));
	if (!me) {
		lfd = socket(ai->ai_family, SOCK_STREAM, 0);
		if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 1))
			t_fatal("listen on TCP port %s: %s", opt.peer_port, t_errname(errno));
		printf("QP A: waiting for QP B's process on TCP port %s\n", opt.peer_port);
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			t_fatal("accept on TCP port %s: %s", opt.peer_port, t_errname(errno));
		close(lfd);
	} else {
		for (;;) {
			fd = socket(ai->ai_family, SOCK_STREAM, 0);
			if (fd < 0)
				t_fatal("socket: %s", t_errname(errno));
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
				break;
			if (errno != ECONNREFUSED || t_now() > deadline)
				t_fatal("connect to %s port %s: %s", opt.peer_addr, opt.peer_port,
					t_errname(errno));
			close(fd);
			usleep(200 * 1000);
		}
	}
	freeaddrinfo(ai);
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		t_fatal("TCP_NODELAY: %s", t_errname(errno));
	peer_fd = fd;
}

/* B runs what A runs: A's seed and options, and either's rxe quirks. */
static void peer_agree(void)
{
	uint32_t mine[9] = { opt.seed, (uint32_t)opt.nops, opt.api, opt.max_len, opt.mw,
			     opt.kinds, opt.lossy, opt.rxe_quirks, (uint32_t)opt.mtu_bytes };
	uint32_t theirs[9];

	peer_xchg(mine, theirs, sizeof(mine));
	if (me) {
		opt.seed = theirs[0];
		opt.nops = theirs[1];
		opt.api = (enum api)theirs[2];
		opt.max_len = theirs[3];
		opt.mw = (int)theirs[4];
		opt.kinds = theirs[5];
		opt.mtu_bytes = (int)theirs[8];
	}
	opt.lossy |= (int)theirs[6];
	if (opt.lossy)
		t_qp_timeout = 18;
	if (theirs[7] && !opt.rxe_quirks) {
		opt.rxe_quirks = 1;
		t_qp_timeout = 18;
	}
}

/* --- buffers ----------------------------------------------------------------- */

static uint8_t guard_byte(size_t i)
{
	return (uint8_t)((i ^ (i >> 8) ^ (i >> 16)) * 0x9d + 0x3b);
}

/*
 * -b: len bytes of a memfd mapped shared and exported as a dma-buf by
 * udmabuf (*fd, its descriptor); MAP_FAILED with errno set if mapping
 * fails. Without /dev/udmabuf, or if udmabuf refuses: fatal, saying so.
 */
static uint8_t *dmabuf_map(size_t len, int *fd)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = len };
	uint8_t *mem;
	int dev, memfd;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		t_fatal("-b: open /dev/udmabuf: %s", t_errname(errno));
	memfd = memfd_create("scire_integrity", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)len) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		t_fatal("-b: a sealed memfd of %zu bytes: %s", len, t_errname(errno));
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	create.memfd = memfd;
	*fd = ioctl(dev, UDMABUF_CREATE, &create);
	if (*fd < 0)
		t_fatal("-b: UDMABUF_CREATE of %zu bytes: %s (udmabuf's size_limit_mb?)", len,
			t_errname(errno));
	close(memfd);
	close(dev);
	return mem;
}

static void setup_memory(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int access = IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS;
	size_t i;
	int s, k;

	/*
	 * Room for MAXLEN bytes in MAX_SGE spans with gaps, an extra receive
	 * capacity, a write-with-immediate's receive SGEs after its target,
	 * and the checked tail.
	 */
	area_len = LEAD + opt.max_len + (MAX_SGE + 2) * SGE_GAP + 4096 + TAIL_CHECK;
	area_len = (area_len + page - 1) / page * page;
	if (opt.mw)
		access |= IBV_ACCESS_MW_BIND;
	if (opt.odp)
		access |= IBV_ACCESS_ON_DEMAND;

	guard = malloc(area_len);
	if (!guard)
		t_fatal("malloc %zu: out of memory", area_len);
	for (i = 0; i < area_len; i++)
		guard[i] = guard_byte(i);

	for (s = 0; s < 2; s++) {
		struct side *sd = &sides[s];
		int fd = -1;
		uint8_t *mem;

		if (opt.dmabuf && is_local(sd))
			mem = dmabuf_map(area_len * 2 * NSLOT, &fd);
		else
			mem = mmap(NULL, area_len * 2 * NSLOT, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			t_fatal("mmap %zu bytes: %s", area_len * 2 * NSLOT, t_errname(errno));
		for (k = 0; k < NSLOT; k++) {
			sd->src[k] = mem + (2 * k) * area_len;
			sd->dst[k] = mem + (2 * k + 1) * area_len;
			t_rand_fill(sd->src[k], area_len);
			memcpy(sd->dst[k], guard, area_len);
			if (!is_local(sd))
				continue;
			if (opt.odp == 2) {
				if (!sd->imr)
					sd->imr = ibv_reg_mr(sd->pd, NULL, SIZE_MAX, access);
				sd->src_mr[k] = sd->imr;
				sd->dst_mr[k] = sd->imr;
			} else if (fd >= 0) {
				sd->src_mr[k] = ibv_reg_dmabuf_mr(sd->pd, (2 * k) * area_len,
								  area_len,
								  (uintptr_t)sd->src[k], fd,
								  access);
				sd->dst_mr[k] = ibv_reg_dmabuf_mr(sd->pd,
								  (2 * k + 1) * area_len,
								  area_len,
								  (uintptr_t)sd->dst[k], fd,
								  access);
			} else {
				sd->src_mr[k] = ibv_reg_mr(sd->pd, sd->src[k], area_len, access);
				sd->dst_mr[k] = ibv_reg_mr(sd->pd, sd->dst[k], area_len, access);
			}
			if (!sd->src_mr[k] || !sd->dst_mr[k])
				t_fatal("reg_mr on %s of %zu bytes, access %#x: %s%s", sd->dev,
					area_len, access, t_errname(errno),
					errno == ENOMEM ? " (RLIMIT_MEMLOCK?)" : "");
			sd->src_va[k] = (uintptr_t)sd->src[k];
			sd->dst_va[k] = (uintptr_t)sd->dst[k];
			sd->src_rkey[k] = sd->src_mr[k]->rkey;
			sd->dst_rkey[k] = sd->dst_mr[k]->rkey;
		}
		/* The MRs hold the dma-buf; the mapping holds the memfd. */
		if (fd >= 0)
			close(fd);
	}
	if (peer_fd >= 0) {
		struct side *mine = &sides[me], *theirs = &sides[!me];

		peer_xchg(mine->src_va, theirs->src_va, sizeof(mine->src_va));
		peer_xchg(mine->dst_va, theirs->dst_va, sizeof(mine->dst_va));
		peer_xchg(mine->src_rkey, theirs->src_rkey, sizeof(mine->src_rkey));
		peer_xchg(mine->dst_rkey, theirs->dst_rkey, sizeof(mine->dst_rkey));
	}
}

/* --- QPs ----------------------------------------------------------------------- */

static int inline_known;

static int kind_enabled(enum kind k);

static struct ibv_qp *create_qp(struct side *sd, int inline_want)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = sd->scq,
		.recv_cq = sd->rcq,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = max_sge,
			.max_recv_sge = max_sge,
			.max_inline_data = inline_want,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = sd->pd,
	};
	struct ibv_qp *qp;

	/* -X: the side's sends go out of an XRC send QP, which has no RQ. */
	if (opt.xrc) {
		a.qp_type = IBV_QPT_XRC_SEND;
		a.recv_cq = NULL;
		a.cap.max_recv_wr = 0;
		a.cap.max_recv_sge = 0;
	}
	if (opt.api != API_POST) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				   IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				   IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		if (kind_enabled(K_ATOMIC_WRITE))
			a.send_ops_flags |= IBV_QP_EX_WITH_ATOMIC_WRITE;
		if (opt.mw)
			a.send_ops_flags |= IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
					    IBV_QP_EX_WITH_SEND_WITH_INV;
	}
	qp = ibv_create_qp_ex(sd->ctx, &a);
	if (!qp)
		return NULL;
	if (a.cap.max_inline_data < (uint32_t)inline_want)
		t_fatal("create_qp on %s: asked for max_inline_data %d, got %u", sd->dev,
			inline_want, a.cap.max_inline_data);
	/* Both QPs must take what either sends inline: the smaller limit. */
	if (!inline_known || a.cap.max_inline_data < (uint32_t)max_inline)
		max_inline = a.cap.max_inline_data;
	inline_known = 1;
	if (opt.api != API_POST) {
		sd->qpx = ibv_qp_to_qp_ex(qp);
		if (!sd->qpx)
			t_fatal("ibv_qp_to_qp_ex: NULL for a QP created with send_ops_flags");
	}
	return qp;
}

static void xrc_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		t_fatal("modify XRC QP %#x to %s: %s", qp->qp_num, what, t_errname(ret));
}

/*
 * -X: side sd's receive QP to RTR, expecting PSN rq_psn from the other
 * side's send QP, and its send QP to RTS, sending from sq_psn to the
 * other side's receive QP; both aimed through path to.
 */
static void xrc_connect(struct side *sd, uint32_t rq_psn, uint32_t sq_psn,
			const struct t_path *to)
{
	struct side *other = &sides[sd == &sides[0]];
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.grh = { .dgid = to->gid, .sgid_index = to->gid_index, .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_qp_attr a;

	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET };
	xrc_modify(sd->tqp, &a, IBV_QP_STATE, "RESET");
	xrc_modify(sd->qp, &a, IBV_QP_STATE, "RESET");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = T_RC_ACCESS };
	xrc_modify(sd->tqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS, "INIT");
	xrc_modify(sd->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS, "INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = to->mtu,
				  .dest_qp_num = other->qpn, .rq_psn = rq_psn,
				  .max_dest_rd_atomic = T_RD_ATOMIC, .min_rnr_timer = 1,
				  .ah_attr = ah };
	xrc_modify(sd->tqp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		   IBV_QP_MIN_RNR_TIMER, "RTR");
	a.dest_qp_num = other->tqp->qp_num;
	a.rq_psn = 0;
	xrc_modify(sd->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN, "RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = t_qp_timeout,
				  .retry_cnt = 7, .rnr_retry = t_rnr_retry, .sq_psn = sq_psn,
				  .max_rd_atomic = T_RD_ATOMIC };
	xrc_modify(sd->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		   IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

/*
 * Connect the QPs with random initial PSNs, each QP's AV aimed at the
 * other side's GID from its own GID index (the same GID on one device).
 */
static void connect_qps(void)
{
	struct t_path to[2];
	uint32_t ab = t_rand64() & 0xffffff, ba = t_rand64() & 0xffffff;
	int s;

	for (s = 0; s < 2; s++) {
		to[s] = sides[s].path;
		to[s].gid = sides[!s].path.gid;
		to[s].mtu = path_mtu;
	}
	for (s = 0; s < 2; s++) {
		if (!is_local(&sides[s]))
			continue;
		if (opt.xrc)
			xrc_connect(&sides[s], s ? ab : ba, s ? ba : ab, &to[s]);
		else
			t_rc_connect(sides[s].qp, sides[!s].qpn, s ? ab : ba, s ? ba : ab,
				     &to[s]);
	}
}

/*
 * -X: side sd's XRC domain (of a file unlinked at once), its XRC SRQ of
 * RQ_DEPTH WQEs whose completions go to the side's receive CQ, and its XRC
 * receive QP.
 */
static void xrc_setup(struct side *sd)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};

	sd->xrcd = t_xrcd_tmp(sd->ctx, &sd->xrcd_fd);
	sd->srq = t_xrc_srq(sd->ctx, sd->xrcd, sd->pd, sd->rcq, RQ_DEPTH, max_sge, &sd->srqn);
	qa.xrcd = sd->xrcd;
	sd->tqp = ibv_create_qp_ex(sd->ctx, &qa);
	if (!sd->tqp)
		t_fatal("XRC receive QP on %s: %s", sd->dev, t_errname(errno));
}

/* Limits both devices honour: what either QP may be asked to do. */
static void query_limits(void)
{
	struct ibv_device_attr attr;
	int s, ret;

	max_sge = MAX_SGE;
	max_rd_sge = MAX_SGE;
	for (s = 0; s < 2; s++) {
		struct side *sd = &sides[s];

		if (!sd->ctx || (s && sd->ctx == sides[0].ctx))
			continue;
		ret = ibv_query_device(sd->ctx, &attr);
		if (ret)
			t_fatal("ibv_query_device(%s): %s", sd->dev, t_errname(ret));
		if (attr.max_sge < max_sge)
			max_sge = attr.max_sge;
		if (attr.max_sge_rd < max_rd_sge)
			max_rd_sge = attr.max_sge_rd;
		if (max_rd_sge > max_sge)
			max_rd_sge = max_sge;
		if (max_sge < 1 || max_rd_sge < 1)
			t_fatal("%s: max_sge %d, max_sge_rd %d: need at least 1", sd->dev,
				attr.max_sge, attr.max_sge_rd);
		if (attr.atomic_cap == IBV_ATOMIC_NONE)
			t_fatal("%s: atomic_cap is IBV_ATOMIC_NONE: atomics are part of this test",
				sd->dev);
	}
	if (peer_fd >= 0) {
		int32_t mine[2] = { max_sge, max_rd_sge }, theirs[2];

		peer_xchg(mine, theirs, sizeof(mine));
		if (theirs[0] < max_sge)
			max_sge = theirs[0];
		if (theirs[1] < max_rd_sge)
			max_rd_sge = theirs[1];
	}
}

static void setup_qps(void)
{
	static const int inline_try[] = { 256, 64, 0 };
	int first = 0;
	int s, i;

	query_limits();
	for (s = 0; s < 2; s++) {
		struct side *sd = &sides[s];

		sd->name = 'A' + s;
		snprintf(sd->sname, sizeof(sd->sname), "%c send CQ", sd->name);
		snprintf(sd->rname, sizeof(sd->rname), "%c recv CQ", sd->name);
		sd->sexp.name = sd->sname;
		sd->rexp.name = sd->rname;
		if (!is_local(sd))
			continue;
		sd->scq = ibv_create_cq(sd->ctx, CQ_DEPTH, NULL, NULL, 0);
		sd->rcq = ibv_create_cq(sd->ctx, CQ_DEPTH, NULL, NULL, 0);
		if (!sd->scq || !sd->rcq)
			t_fatal("create_cq %d on %s: %s", CQ_DEPTH, sd->dev, t_errname(errno));
		if (opt.xrc)
			xrc_setup(sd);
		/*
		 * Inline support is optional: take the largest offered. QP B
		 * starts from what A got; only another device may offer less.
		 */
		for (i = first; i < 3; i++) {
			errno = 0;
			sd->qp = create_qp(sd, inline_try[i]);
			if (sd->qp || errno != EINVAL || (s && sd->ctx == sides[0].ctx))
				break;
		}
		if (!sd->qp)
			t_fatal("create RC QP on %s (%d send/recv WRs, %d SGEs, %s): %s", sd->dev,
				SQ_DEPTH, max_sge, opt.api == API_POST ? "ibv_create_qp_ex" :
				"ibv_create_qp_ex with send_ops_flags", t_errname(errno));
		first = i;
		sd->qpn = sd->qp->qp_num;
	}
	if (peer_fd >= 0) {
		int32_t in = max_inline;

		peer_xchg(&sides[me].qpn, &sides[!me].qpn, sizeof(sides[me].qpn));
		peer_xchg(&max_inline, &in, sizeof(in));
		if (in < max_inline)
			max_inline = in;
	}
	connect_qps();
}

/* --- planning ---------------------------------------------------------------- */

/* A length for an op of this path MTU, biased to where packets split. */
static uint32_t pick_len(void)
{
	uint32_t max = opt.max_len, len;

	switch (t_rand_below(20)) {
	case 0: len = 0; break;
	case 1: len = 1; break;
	case 2: len = mtu - 1; break;
	case 3: len = mtu; break;
	case 4: len = mtu + 1; break;
	case 5: len = t_rand_range(2, 9) * mtu + t_rand_range(0, 2) - 1; break;
	case 6: len = max_inline ? max_inline + t_rand_range(0, 1) : 8; break;
	case 7: len = t_rand_range(1, 64); break;
	case 8: case 9: len = t_rand_range(1, 4 * mtu); break;
	case 10: case 11: len = t_rand_range(1, 65536); break;
	case 12: len = t_rand_range(1, max); break;
	case 13: len = t_one_in(2) ? max : max - 1; break;
	case 14: len = t_rand_range(1, max / 16 ? max / 16 : 1); break;
	default: len = t_rand_range(2, 8 * mtu); break;
	}
	return len > max ? max : len;
}

/* SGE count for len bytes, at most limit. */
static int pick_nsge(uint32_t len, int limit)
{
	int n;

	if (!len) {
		n = t_rand_below(3);
		return n < limit ? n : limit;
	}
	if (t_one_in(3))
		return 1;
	return t_rand_range(1, limit);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Lay len bytes out as n spans from *cursor on, each after a random gap;
 * advance *cursor past the last.
 */
static void place(struct place *p, uint32_t *cursor, uint32_t len, int n)
{
	uint32_t cut[MAX_SGE + 1];
	int i;

	p->nspan = n;
	p->total = len;
	if (!n)
		return;
	cut[0] = 0;
	for (i = 1; i < n; i++)
		cut[i] = t_rand_range(0, len);
	qsort(cut + 1, n - 1, sizeof(cut[0]), cmp_u32);
	cut[n] = len;
	for (i = 0; i < n; i++) {
		*cursor += t_rand_range(0, SGE_GAP);
		p->span[i].off = *cursor;
		p->span[i].len = cut[i + 1] - cut[i];
		*cursor += p->span[i].len;
	}
	if (*cursor + TAIL_CHECK > area_len)
		t_fatal("internal: placement ends at %u, area is %zu", *cursor, area_len);
}

static uint32_t start_cursor(void)
{
	return t_rand_range(64, LEAD - 1);
}

static void note_dst(struct side *sd, int slot, uint32_t end)
{
	size_t used = end + TAIL_CHECK;

	if (used > area_len)
		used = area_len;
	if (used > sd->dst_used[slot])
		sd->dst_used[slot] = used;
}

static void note_place(struct side *sd, int slot, const struct place *p)
{
	if (p->nspan)
		note_dst(sd, slot, p->span[p->nspan - 1].off + p->span[p->nspan - 1].len);
}

static void gather(uint8_t *out, const uint8_t *area, const struct place *p)
{
	int i;

	for (i = 0; i < p->nspan; i++) {
		memcpy(out, area + p->span[i].off, p->span[i].len);
		out += p->span[i].len;
	}
}

/* An MR's lkey; -P: 0 for the other process's side, which has no MRs here. */
static uint32_t lkey_of(const struct ibv_mr *mr)
{
	return mr ? mr->lkey : 0;
}

static void to_sges(struct ibv_sge *sge, const uint8_t *area, const struct ibv_mr *mr,
		    const struct place *p)
{
	int i;

	for (i = 0; i < p->nspan; i++) {
		sge[i].addr = (uintptr_t)(area + p->span[i].off);
		sge[i].length = p->span[i].len;
		sge[i].lkey = lkey_of(mr);
	}
}

static void fifo_push(struct fifo *f, const struct exp_cqe *e)
{
	if (f->tail - f->head >= FIFO_LEN)
		t_fatal("internal: %s expectation FIFO full", f->name);
	f->e[f->tail++ % FIFO_LEN] = *e;
}

static int fifo_empty(const struct fifo *f)
{
	return f->head == f->tail;
}

static int kind_enabled(enum kind k)
{
	if (k == K_MW && !opt.mw)
		return 0;
	/* rdma_rxe has ATOMIC WRITE only from 6.2, rdma-core 44's provider
	 * posts it with no rkey: scire to scire only. */
	if (k == K_ATOMIC_WRITE && opt.rxe_quirks)
		return 0;
	return !opt.kinds || (opt.kinds & (1U << k));
}

static enum kind pick_kind(void)
{
	int total = 0, k, r;

	for (k = 0; k < K_NKINDS; k++)
		if (kind_enabled(k))
			total += kind_weight[k];
	r = t_rand_below(total);
	for (k = 0; k < K_NKINDS; k++) {
		if (!kind_enabled(k))
			continue;
		if (r < kind_weight[k])
			return k;
		r -= kind_weight[k];
	}
	return K_SEND;
}

static enum api pick_api(void)
{
	if (opt.api != API_MIX)
		return opt.api;
	return t_one_in(2) ? API_POST : API_WR;
}

static int consumes_recv(enum kind k)
{
	return k == K_SEND || k == K_SEND_IMM || k == K_WRITE_IMM || k == K_READ_FENCE_SEND;
}

/*
 * Decide everything about an op in slot `slot` and prepare its memory:
 * fill its sources with fresh random bytes, set atomic targets, record
 * the expected receive CQE. The send WRs and their CQEs come later.
 */
static void plan_op(struct op *op, int id, enum kind kind, int slot)
{
	struct side *req = &sides[t_rand_below(2)];
	struct side *resp = &sides[req == &sides[0]];
	uint32_t lc = start_cursor(), rc = start_cursor();
	int i, lim;

	memset(op, 0, sizeof(*op));
	op->id = id;
	op->kind = kind;
	op->req = req;
	op->resp = resp;
	op->slot = slot;
	op->api = pick_api();
	lim = opt.rxe_quirks && op->api == API_WR ? 1 : max_sge;
	op->len = kind == K_CMP_SWP || kind == K_FETCH_ADD || kind == K_ATOMIC_WRITE ? 8 :
		  pick_len();
	op->flags = t_one_in(2) ? IBV_SEND_SIGNALED : 0;
	/* -R: rxe must not have to retry a fenced READ or atomic. */
	if (t_one_in(8) && !(opt.rxe_quirks && (kind == K_READ || kind == K_CMP_SWP ||
						 kind == K_FETCH_ADD)))
		op->flags |= IBV_SEND_FENCE;
	op->imm = htonl((uint32_t)t_rand64());
	op->data = malloc(op->len ? op->len : 1);
	if (!op->data)
		t_fatal("malloc %u: out of memory", op->len);

	switch (kind) {
	case K_SEND:
	case K_SEND_IMM:
	case K_WRITE:
	case K_WRITE_IMM:
		place(&op->lplace, &lc, op->len, pick_nsge(op->len, lim));
		for (i = 0; i < op->lplace.nspan; i++)
			t_rand_fill(req->src[slot] + op->lplace.span[i].off,
				    op->lplace.span[i].len);
		gather(op->data, req->src[slot], &op->lplace);
		if (max_inline && op->len <= (uint32_t)max_inline && t_one_in(2)) {
			op->inlined = 1;
			op->flags |= IBV_SEND_INLINE;
			op->bad_lkey = op->api == API_POST && t_one_in(2);
			op->inline_flag = op->api == API_WR && (opt.rxe_quirks || t_one_in(2));
		}
		if (kind == K_WRITE || kind == K_WRITE_IMM) {
			op->roff = rc;
			rc += op->len;
			note_dst(resp, slot, rc);
		}
		break;
	case K_READ:
	case K_READ_FENCE_SEND:
	case K_READ_FENCE_WRITE:
		place(&op->lplace, &lc, op->len,
		      pick_nsge(op->len, lim < max_rd_sge ? lim : max_rd_sge));
		note_place(req, slot, &op->lplace);
		op->roff = start_cursor();
		t_rand_fill(resp->src[slot] + op->roff, op->len);
		memcpy(op->data, resp->src[slot] + op->roff, op->len);
		if (kind == K_READ_FENCE_WRITE) {
			op->woff = rc;
			rc += op->len;
			note_dst(resp, slot, rc);
		}
		/* The fence, not luck, must make the second WR see the data. */
		if (kind != K_READ)
			op->flags |= IBV_SEND_FENCE;
		break;
	case K_CMP_SWP:
	case K_FETCH_ADD:
		place(&op->lplace, &lc, 8, 1);
		note_place(req, slot, &op->lplace);
		op->roff = (rc + 7) & ~7U;
		rc = op->roff + 8;
		note_dst(resp, slot, rc);
		switch (t_rand_below(4)) {
		case 0: op->init = 0; break;
		case 1: op->init = ~0ULL; break;
		default: op->init = t_rand64(); break;
		}
		memcpy(resp->dst[slot] + op->roff, &op->init, 8);
		if (kind == K_CMP_SWP) {
			op->cmp_add = op->init;
			if (t_one_in(2))
				op->cmp_add ^= 1ULL << t_rand_below(64);
			op->swap = t_rand64();
		} else {
			op->cmp_add = t_one_in(4) ? 1 : t_rand64();
		}
		break;
	case K_ATOMIC_WRITE:
		/* 8 bytes from one SGE to an aligned target word. */
		place(&op->lplace, &lc, 8, 1);
		t_rand_fill(req->src[slot] + op->lplace.span[0].off, 8);
		gather(op->data, req->src[slot], &op->lplace);
		op->roff = (rc + 7) & ~7U;
		rc = op->roff + 8;
		note_dst(resp, slot, rc);
		break;
	default:
		t_fatal("internal: plan_op(%d)", kind);
	}

	if (consumes_recv(kind)) {
		struct exp_cqe e = {
			.op = op,
			.what = "receive",
			.status = IBV_WC_SUCCESS,
			.opcode = kind == K_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV,
			.recv = 1,
			.byte_len = op->len,
		};

		if (kind == K_WRITE_IMM) {
			/* Its receive SGEs must stay untouched: they are guard. */
			place(&op->rplace, &rc, t_rand_range(0, 4 * SGE_GAP),
			      t_rand_range(0, max_sge < 4 ? max_sge : 4));
		} else {
			uint32_t cap = op->len + (t_one_in(2) ? 0 : t_rand_range(1, SGE_GAP));
			int n = pick_nsge(cap, max_sge);

			place(&op->rplace, &rc, cap, n);
		}
		note_place(resp, slot, &op->rplace);
		if (kind == K_SEND_IMM || kind == K_WRITE_IMM) {
			e.wc_flags = IBV_WC_WITH_IMM;
			e.ex = (uint32_t)op->imm;
		}
		op->recv_wr_id = ((uint64_t)id << 8) | 0x80;
		e.wr_id = op->recv_wr_id;
		fifo_push(&resp->rexp, &e);
	}
	if (opt.verbose)
		printf("plan %s\n", op_str(op));
}

/* The send WRs of an op (1, or 2 for the fenced pairs). */
static int op_wrs(struct op *op, struct wr *w)
{
	struct side *req = op->req, *resp = op->resp;
	int k = op->slot, n = 1;

	memset(w, 0, 2 * sizeof(*w));
	w[0].wr_id = (uint64_t)op->id << 8;
	w[0].flags = op->flags;
	switch (op->kind) {
	case K_SEND:
	case K_SEND_IMM:
	case K_WRITE:
	case K_WRITE_IMM:
		w[0].opcode = op->kind == K_SEND ? IBV_WR_SEND :
			      op->kind == K_SEND_IMM ? IBV_WR_SEND_WITH_IMM :
			      op->kind == K_WRITE ? IBV_WR_RDMA_WRITE :
			      IBV_WR_RDMA_WRITE_WITH_IMM;
		w[0].imm = op->imm;
		w[0].inline_flag = op->inline_flag;
		w[0].nsge = op->lplace.nspan;
		to_sges(w[0].sge, req->src[k], req->src_mr[k], &op->lplace);
		if (op->bad_lkey) {
			int i;

			/* IBV_SEND_INLINE: the lkey is not looked at. */
			for (i = 0; i < w[0].nsge; i++)
				w[0].sge[i].lkey = 0xdeadbe00 | i;
		}
		w[0].raddr = resp->dst_va[k] + op->roff;
		w[0].rkey = resp->dst_rkey[k];
		break;
	case K_READ:
	case K_READ_FENCE_SEND:
	case K_READ_FENCE_WRITE:
		w[0].opcode = IBV_WR_RDMA_READ;
		w[0].nsge = op->lplace.nspan;
		to_sges(w[0].sge, req->dst[k], req->dst_mr[k], &op->lplace);
		w[0].raddr = resp->src_va[k] + op->roff;
		w[0].rkey = resp->src_rkey[k];
		if (op->kind == K_READ)
			break;
		/* The READ's own flags: random signalling, no fence. */
		w[0].flags = t_one_in(2) ? IBV_SEND_SIGNALED : 0;
		w[1] = w[0];
		w[1].wr_id |= 1;
		w[1].flags = op->flags;
		w[1].opcode = op->kind == K_READ_FENCE_SEND ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
		w[1].raddr = resp->dst_va[k] + op->woff;
		w[1].rkey = resp->dst_rkey[k];
		n = 2;
		break;
	case K_CMP_SWP:
	case K_FETCH_ADD:
		w[0].opcode = op->kind == K_CMP_SWP ? IBV_WR_ATOMIC_CMP_AND_SWP :
			      IBV_WR_ATOMIC_FETCH_AND_ADD;
		w[0].nsge = 1;
		to_sges(w[0].sge, req->dst[k], req->dst_mr[k], &op->lplace);
		w[0].raddr = resp->dst_va[k] + op->roff;
		w[0].rkey = resp->dst_rkey[k];
		w[0].cmp_add = op->cmp_add;
		w[0].swap = op->swap;
		break;
	case K_ATOMIC_WRITE:
		w[0].opcode = IBV_WR_ATOMIC_WRITE;
		w[0].nsge = 1;
		to_sges(w[0].sge, req->src[k], req->src_mr[k], &op->lplace);
		w[0].raddr = resp->dst_va[k] + op->roff;
		w[0].rkey = resp->dst_rkey[k];
		break;
	default:
		t_fatal("internal: op_wrs(%d)", op->kind);
	}
	return n;
}

static enum ibv_wc_opcode wc_opcode_of(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		return IBV_WC_SEND;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return IBV_WC_FETCH_ADD;
	case IBV_WR_ATOMIC_WRITE: return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_BIND_MW: return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV: return IBV_WC_LOCAL_INV;
	default: return (enum ibv_wc_opcode)-1;
	}
}

static const char *wr_opcode_str(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_SEND_WITH_INV: return "SEND_WITH_INV";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	case IBV_WR_ATOMIC_WRITE: return "ATOMIC_WRITE";
	case IBV_WR_BIND_MW: return "BIND_MW";
	case IBV_WR_LOCAL_INV: return "LOCAL_INV";
	default: return "?";
	}
}

/* Expect the CQE of w on its requester's send CQ if it is signalled. */
static void expect_send(struct side *req, struct op *op, const struct wr *w,
			enum ibv_wc_status status)
{
	struct exp_cqe e = {
		.wr_id = w->wr_id,
		.op = op,
		.what = wr_opcode_str(w->opcode),
		.status = status,
		.opcode = wc_opcode_of(w->opcode),
	};

	if ((w->flags & IBV_SEND_SIGNALED) || status != IBV_WC_SUCCESS)
		fifo_push(&req->sexp, &e);
}

/* --- posting ----------------------------------------------------------------- */

/* -X: the XRC SRQ at the other side that sd's requests go to. */
static uint32_t xrc_remote_srqn(const struct side *sd)
{
	return sides[sd == &sides[0]].srqn;
}

static void post_with_post_send(struct side *sd, struct wr *w, int n, struct op **owner)
{
	struct ibv_send_wr wr[2 * NSLOT + 4], *bad = NULL;
	int i, ret;

	for (i = 0; i < n; i++) {
		struct ibv_send_wr *x = &wr[i];

		memset(x, 0, sizeof(*x));
		if (opt.xrc)
			x->qp_type.xrc.remote_srqn = xrc_remote_srqn(sd);
		x->wr_id = w[i].wr_id;
		x->next = i + 1 < n ? &wr[i + 1] : NULL;
		x->sg_list = w[i].sge;
		x->num_sge = w[i].nsge;
		x->opcode = w[i].opcode;
		x->send_flags = w[i].flags;
		switch (w[i].opcode) {
		case IBV_WR_SEND_WITH_IMM:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			x->imm_data = w[i].imm;
			break;
		case IBV_WR_SEND_WITH_INV:
		case IBV_WR_LOCAL_INV:
			x->invalidate_rkey = w[i].inv;
			break;
		default:
			break;
		}
		switch (w[i].opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ:
		case IBV_WR_ATOMIC_WRITE:
			x->wr.rdma.remote_addr = w[i].raddr;
			x->wr.rdma.rkey = w[i].rkey;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			x->wr.atomic.remote_addr = w[i].raddr;
			x->wr.atomic.rkey = w[i].rkey;
			x->wr.atomic.compare_add = w[i].cmp_add;
			x->wr.atomic.swap = w[i].swap;
			break;
		case IBV_WR_BIND_MW:
			x->bind_mw.mw = w[i].mw;
			x->bind_mw.rkey = w[i].new_rkey;
			x->bind_mw.bind_info = w[i].bind;
			break;
		default:
			break;
		}
	}
	ret = ibv_post_send(sd->qp, wr, &bad);
	if (ret)
		t_fatal("ibv_post_send of %d WRs on QP %c: %s; bad_wr is WR %ld, of %s", n,
			sd->name, t_errname(ret), bad ? (long)(bad - wr) : -1L,
			bad ? op_str(owner[bad - wr]) : "none");
}

static void post_with_wr_api(struct side *sd, struct wr *w, int n, struct op **owner)
{
	struct ibv_qp_ex *qpx = sd->qpx;
	struct ibv_data_buf buf[MAX_SGE];
	int i, j, ret;

	ibv_wr_start(qpx);
	for (i = 0; i < n; i++) {
		qpx->wr_id = w[i].wr_id;
		/*
		 * The inline setters alone make a WR inline (ibv_wr_post(3));
		 * IBV_SEND_INLINE in wr_flags as well is accepted too.
		 */
		qpx->wr_flags = w[i].flags;
		if (!w[i].inline_flag)
			qpx->wr_flags &= ~IBV_SEND_INLINE;
		switch (w[i].opcode) {
		case IBV_WR_SEND: ibv_wr_send(qpx); break;
		case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(qpx, w[i].imm); break;
		case IBV_WR_SEND_WITH_INV: ibv_wr_send_inv(qpx, w[i].inv); break;
		case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(qpx, w[i].rkey, w[i].raddr); break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(qpx, w[i].rkey, w[i].raddr, w[i].imm);
			break;
		case IBV_WR_RDMA_READ: ibv_wr_rdma_read(qpx, w[i].rkey, w[i].raddr); break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			ibv_wr_atomic_cmp_swp(qpx, w[i].rkey, w[i].raddr, w[i].cmp_add, w[i].swap);
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			ibv_wr_atomic_fetch_add(qpx, w[i].rkey, w[i].raddr, w[i].cmp_add);
			break;
		case IBV_WR_ATOMIC_WRITE:
			/* The 8 bytes are taken now, from the source buffer. */
			ibv_wr_atomic_write(qpx, w[i].rkey, w[i].raddr,
					    (void *)(uintptr_t)w[i].sge[0].addr);
			if (opt.xrc)
				ibv_wr_set_xrc_srqn(qpx, xrc_remote_srqn(sd));
			continue;
		case IBV_WR_BIND_MW:
			ibv_wr_bind_mw(qpx, w[i].mw, w[i].new_rkey, &w[i].bind);
			continue;
		case IBV_WR_LOCAL_INV:
			ibv_wr_local_inv(qpx, w[i].inv);
			continue;
		default:
			t_fatal("internal: wr API opcode %d", w[i].opcode);
		}
		if (opt.xrc)
			ibv_wr_set_xrc_srqn(qpx, xrc_remote_srqn(sd));
		/* One buffer takes the single-buffer setters: both get used. */
		if ((w[i].flags & IBV_SEND_INLINE) && w[i].nsge == 1) {
			ibv_wr_set_inline_data(qpx, (void *)(uintptr_t)w[i].sge[0].addr,
					       w[i].sge[0].length);
		} else if (w[i].flags & IBV_SEND_INLINE) {
			for (j = 0; j < w[i].nsge; j++) {
				buf[j].addr = (void *)(uintptr_t)w[i].sge[j].addr;
				buf[j].length = w[i].sge[j].length;
			}
			ibv_wr_set_inline_data_list(qpx, w[i].nsge, buf);
		} else if (w[i].nsge == 1) {
			ibv_wr_set_sge(qpx, w[i].sge[0].lkey, w[i].sge[0].addr,
				       w[i].sge[0].length);
		} else {
			ibv_wr_set_sge_list(qpx, w[i].nsge, w[i].sge);
		}
	}
	ret = ibv_wr_complete(qpx);
	if (ret)
		t_fatal("ibv_wr_complete of %d WRs on QP %c (first: %s): %s", n, sd->name,
			op_str(owner[0]), t_errname(ret));
}

static void post_wrs(struct side *sd, enum api api, struct wr *w, int n, struct op **owner)
{
	if (api == API_POST)
		post_with_post_send(sd, w, n, owner);
	else
		post_with_wr_api(sd, w, n, owner);
}

static void post_recv(struct side *sd, uint64_t wr_id, int slot, const struct place *p)
{
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge[MAX_SGE];
	int ret;

	to_sges(sge, sd->dst[slot], sd->dst_mr[slot], p);
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = p->nspan;
	if (opt.xrc)
		ret = ibv_post_srq_recv(sd->srq, &wr, &bad);
	else
		ret = ibv_post_recv(sd->qp, &wr, &bad);
	if (ret)
		t_fatal("ibv_post_recv on QP %c (%d SGEs, %u bytes): %s", sd->name, p->nspan,
			p->total, t_errname(ret));
}

/* --- completions -------------------------------------------------------------- */

static struct op *batch_ops[NSLOT];
static int batch_nops;

/*
 * -L: the NAK that carries a remote error can be lost like any packet. The
 * responder's QP is then in ERR and answers no retransmission, so the
 * requester ends with retries exhausted instead (IBA 9.9.3.1, 9.7.6.1.3).
 */
static int lost_nak(enum ibv_wc_status want, enum ibv_wc_status got)
{
	return opt.lossy && got == IBV_WC_RETRY_EXC_ERR &&
	       (want == IBV_WC_REM_ACCESS_ERR || want == IBV_WC_REM_INV_REQ_ERR ||
		want == IBV_WC_REM_OP_ERR);
}

static void check_cqe(struct side *sd, struct fifo *f, const struct ibv_wc *wc)
{
	const struct exp_cqe *e;
	unsigned int flags;
	uint32_t qpn;

	if (fifo_empty(f)) {
		t_fail("%s: unexpected CQE wr_id %#llx status %s opcode %s byte_len %u (no more expected in batch %d)",
		       f->name, (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		       t_wc_opcode_str(wc->opcode), wc->byte_len, batch_no);
		return;
	}
	e = &f->e[f->head++ % FIFO_LEN];
	if (wc->wr_id != e->wr_id) {
		t_fail("%s: CQE wr_id %#llx (status %s), expected wr_id %#llx: the %s of %s (CQEs out of order or lost)",
		       f->name, (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		       (unsigned long long)e->wr_id, e->what, op_str(e->op));
		return;
	}
	if (wc->status != e->status && !lost_nak(e->status, wc->status)) {
		t_fail("%s: %s of %s: status %s (vendor_err %#x), expected %s", f->name, e->what,
		       op_str(e->op), ibv_wc_status_str(wc->status), wc->vendor_err,
		       ibv_wc_status_str(e->status));
		return;
	}
	/* -X: a receive is the receive QP's, which served the SRQ. */
	qpn = opt.xrc && f == &sd->rexp ? sd->tqp->qp_num : sd->qp->qp_num;
	if (wc->qp_num != qpn)
		t_fail("%s: %s of %s: qp_num %#x, expected %#x", f->name, e->what, op_str(e->op),
		       wc->qp_num, qpn);
	/* An error CQE carries only wr_id, status, qp_num and vendor_err. */
	if (e->status != IBV_WC_SUCCESS)
		return;
	if (wc->opcode != e->opcode)
		t_fail("%s: %s of %s: opcode %s, expected %s", f->name, e->what, op_str(e->op),
		       t_wc_opcode_str(wc->opcode), t_wc_opcode_str(e->opcode));
	if (!e->recv)
		return;
	if (wc->byte_len != e->byte_len)
		t_fail("%s: %s of %s: byte_len %u, expected %u", f->name, e->what, op_str(e->op),
		       wc->byte_len, e->byte_len);
	flags = wc->wc_flags;
	/*
	 * rxe writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2) into user
	 * CQEs, where 1 << 2 means IBV_WC_IP_CSUM_OK; libibverbs'
	 * IBV_WC_WITH_INV is 1 << 3.
	 */
	if (opt.rxe_quirks && (flags & IBV_WC_IP_CSUM_OK))
		flags = (flags & ~IBV_WC_IP_CSUM_OK) | IBV_WC_WITH_INV;
	if ((flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) != e->wc_flags)
		t_fail("%s: %s of %s: wc_flags %#x, expected IBV_WC_WITH_IMM (%#x) %s, IBV_WC_WITH_INV (%#x) %s",
		       f->name, e->what, op_str(e->op), wc->wc_flags, IBV_WC_WITH_IMM,
		       e->wc_flags & IBV_WC_WITH_IMM ? "set" : "clear", IBV_WC_WITH_INV,
		       e->wc_flags & IBV_WC_WITH_INV ? "set" : "clear");
	else if ((e->wc_flags & IBV_WC_WITH_IMM) && wc->imm_data != e->ex)
		t_fail("%s: %s of %s: imm_data %#x, expected %#x (network order)", f->name,
		       e->what, op_str(e->op), ntohl(wc->imm_data), ntohl(e->ex));
	else if ((e->wc_flags & IBV_WC_WITH_INV) && wc->invalidated_rkey != e->ex)
		t_fail("%s: %s of %s: invalidated_rkey %#x, expected %#x", f->name, e->what,
		       op_str(e->op), wc->invalidated_rkey, e->ex);
}

/*
 * A batch that stopped moving: print what each QP says of its PSNs (scire
 * and rdma_rxe report the live ones: the next PSN to send and the
 * expected PSN; other providers may report those configured) and the
 * driver's own view of the QP (`rdma res show qp -dd`), so a hang that
 * does not replay can still be explained from the log.
 */
static void report_stuck_qps(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	char cmd[160];
	int s;

	for (s = 0; s < 2; s++) {
		struct side *sd = &sides[s];

		if (!is_local(sd))
			continue;
		if (ibv_query_qp(sd->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN,
				 &init)) {
			printf("QP %c (%s, QPN %#x): ibv_query_qp failed\n", sd->name, sd->dev,
			       sd->qp->qp_num);
			continue;
		}
		printf("QP %c (%s, QPN %#x): %s, sq_psn %#x, rq_psn %#x\n", sd->name, sd->dev,
		       sd->qp->qp_num, t_qp_state_str(attr.qp_state), attr.sq_psn, attr.rq_psn);
		snprintf(cmd, sizeof(cmd), "rdma res show qp link %s/1 lqpn %u -dd 2>&1",
			 sd->dev, sd->qp->qp_num);
		fflush(stdout);
		if (system(cmd) == -1)
			printf("could not run: %s\n", cmd);
	}
}

/*
 * Take CQEs until every expected one has come, or timeout seconds passed;
 * then check that no CQ holds more.
 */
static void collect(double timeout)
{
	double deadline = t_now() + timeout;
	struct ibv_wc wc[16];
	int s, q, i, n = 0, pending;

	/* The other process expects and checks its own CQEs. */
	for (s = 0; s < 2; s++) {
		if (!is_local(&sides[s])) {
			sides[s].sexp.head = sides[s].sexp.tail;
			sides[s].rexp.head = sides[s].rexp.tail;
		}
	}
	for (;;) {
		pending = 0;
		for (s = 0; s < 2; s++) {
			for (q = 0; q < 2; q++) {
				struct side *sd = &sides[s];
				struct fifo *f = q ? &sd->rexp : &sd->sexp;

				if (!is_local(sd))
					continue;
				n = ibv_poll_cq(q ? sd->rcq : sd->scq, 16, wc);
				if (n < 0)
					t_fatal("ibv_poll_cq(%s): %d", f->name, n);
				for (i = 0; i < n; i++)
					check_cqe(sd, f, &wc[i]);
				pending += !fifo_empty(f);
			}
		}
		if (!pending)
			break;
		if (t_now() > deadline) {
			for (s = 0; s < 2; s++) {
				for (q = 0; q < 2; q++) {
					struct fifo *f = q ? &sides[s].rexp : &sides[s].sexp;

					for (; !fifo_empty(f); f->head++) {
						const struct exp_cqe *e = &f->e[f->head % FIFO_LEN];

						t_fail("%s: no CQE after %.0f s for the %s of %s (wr_id %#llx)",
						       f->name, timeout, e->what, op_str(e->op),
						       (unsigned long long)e->wr_id);
					}
				}
			}
			report_stuck_qps();
			t_fatal("batch %d timed out: QP A %s, QP B %s; replay: -s %u", batch_no,
				is_local(&sides[0]) ? t_qp_state_str(t_qp_state(sides[0].qp)) :
				"in the other process",
				is_local(&sides[1]) ? t_qp_state_str(t_qp_state(sides[1].qp)) :
				"in the other process", opt.seed);
		}
		if (!n) {
			char c;

			/* A peer that died leaves CQEs missing: say so at once. */
			if (peer_fd >= 0 && !recv(peer_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT))
				t_fatal("QP %c's process ended while this one waited for CQEs of batch %d (its output says why)",
					'A' + !me, batch_no);
			sched_yield();
		}
	}
	for (s = 0; s < 2; s++) {
		for (q = 0; q < 2; q++) {
			struct side *sd = &sides[s];
			struct fifo *f = q ? &sd->rexp : &sd->sexp;

			if (!is_local(sd))
				continue;
			n = ibv_poll_cq(q ? sd->rcq : sd->scq, 16, wc);
			for (i = 0; i < n; i++)
				check_cqe(sd, f, &wc[i]);
		}
	}
}

/* --- verification -------------------------------------------------------------- */

/* Compare len bytes; on a difference say where, what and how many. */
static void check_bytes(const struct op *op, const char *what, const uint8_t *got,
			const uint8_t *want, size_t len)
{
	size_t i, first = 0, bad = 0;

	if (!memcmp(got, want, len))
		return;
	for (i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			if (!bad)
				first = i;
			bad++;
		}
	}
	t_fail("%s: %s: byte %zu of %zu is 0x%02x, expected 0x%02x (%zu bytes differ)",
	       op_str(op), what, first, len, got[first], want[first], bad);
}

/*
 * Check that the first len bytes scattered over p in area equal want, and
 * give the spans back their guard pattern. Bytes of p past len are left
 * alone: the guard check sees them.
 */
static void check_scatter(const struct op *op, const char *what, uint8_t *area,
			  const struct place *p, const uint8_t *want, uint32_t len)
{
	char buf[128];
	int i;

	for (i = 0; i < p->nspan && len; i++) {
		uint32_t n = p->span[i].len < len ? p->span[i].len : len;

		if (memcmp(area + p->span[i].off, want, n)) {
			/* Never written at all, or written with the wrong bytes? */
			int untouched = !memcmp(area + p->span[i].off,
						 guard + p->span[i].off, n);

			snprintf(buf, sizeof(buf), "%s, SGE %d of %d (area offset %u, %u bytes, %s)",
				 what, i, p->nspan, p->span[i].off, n,
				 untouched ? "still the guard pattern" : "overwritten");
			check_bytes(op, buf, area + p->span[i].off, want, n);
		}
		memcpy(area + p->span[i].off, guard + p->span[i].off, n);
		want += n;
		len -= n;
	}
}

/* Sources must not be written: the gather list still holds the data. */
static void check_gather(const struct op *op, const char *what, const uint8_t *area,
			 const struct place *p, const uint8_t *want)
{
	char buf[128];
	int i;

	for (i = 0; i < p->nspan; i++) {
		if (memcmp(area + p->span[i].off, want, p->span[i].len)) {
			snprintf(buf, sizeof(buf), "%s, SGE %d of %d (area offset %u, %u bytes)",
				 what, i, p->nspan, p->span[i].off, p->span[i].len);
			check_bytes(op, buf, area + p->span[i].off, want, p->span[i].len);
		}
		want += p->span[i].len;
	}
}

static void check_u64(const struct op *op, const char *what, const uint8_t *at,
		      uint64_t want)
{
	uint64_t got;

	memcpy(&got, at, 8);
	if (got != want)
		t_fail("%s: %s is %#llx, expected %#llx", op_str(op), what,
		       (unsigned long long)got, (unsigned long long)want);
}

static void verify_op(struct op *op)
{
	struct side *req = op->req, *resp = op->resp;
	uint8_t *rdst = resp->dst[op->slot];
	int k = op->slot, ql = is_local(req), rl = is_local(resp);
	uint64_t want;

	bytes_moved += op->len;
	/* -P: the other process checks the other side's memory. */
	if (!rl)
		goto requester;
	switch (op->kind) {
	case K_SEND:
	case K_SEND_IMM:
		check_scatter(op, "receive buffer", rdst, &op->rplace, op->data, op->len);
		break;
	case K_WRITE:
	case K_WRITE_IMM:
		check_bytes(op, "RDMA WRITE target", rdst + op->roff, op->data, op->len);
		memcpy(rdst + op->roff, guard + op->roff, op->len);
		break;
	case K_READ:
	case K_READ_FENCE_SEND:
	case K_READ_FENCE_WRITE:
		check_bytes(op, "RDMA READ source (must not change)", resp->src[k] + op->roff,
			    op->data, op->len);
		if (op->kind == K_READ_FENCE_SEND)
			check_scatter(op, "receive buffer of the fenced SEND", rdst, &op->rplace,
				      op->data, op->len);
		if (op->kind == K_READ_FENCE_WRITE) {
			check_bytes(op, "target of the fenced RDMA WRITE", rdst + op->woff,
				    op->data, op->len);
			memcpy(rdst + op->woff, guard + op->woff, op->len);
		}
		break;
	case K_CMP_SWP:
	case K_FETCH_ADD:
		if (op->kind == K_CMP_SWP)
			want = op->init == op->cmp_add ? op->swap : op->init;
		else
			want = op->init + op->cmp_add;
		check_u64(op, "atomic target after the operation", rdst + op->roff, want);
		memcpy(rdst + op->roff, guard + op->roff, 8);
		break;
	case K_ATOMIC_WRITE:
		check_bytes(op, "ATOMIC WRITE target", rdst + op->roff, op->data, 8);
		memcpy(rdst + op->roff, guard + op->roff, 8);
		break;
	default:
		break;
	}
requester:
	if (!ql)
		return;
	switch (op->kind) {
	case K_READ:
	case K_READ_FENCE_SEND:
	case K_READ_FENCE_WRITE:
		check_scatter(op, "RDMA READ destination", req->dst[k], &op->lplace, op->data,
			      op->len);
		break;
	case K_CMP_SWP:
	case K_FETCH_ADD:
		check_u64(op, "returned original value (host order)",
			  req->dst[k] + op->lplace.span[0].off, op->init);
		memcpy(req->dst[k] + op->lplace.span[0].off, guard + op->lplace.span[0].off, 8);
		break;
	case K_SEND:
	case K_SEND_IMM:
	case K_WRITE:
	case K_WRITE_IMM:
	case K_ATOMIC_WRITE:
		if (!op->inlined)
			check_gather(op, "source (must not change)", req->src[k], &op->lplace,
				     op->data);
		break;
	default:
		break;
	}
}

/*
 * After the ops' destinations got their guard back: every checked byte of
 * every destination area must be guard again. A difference is a byte
 * written outside what the ops granted.
 */
static void check_guards(void)
{
	size_t i, first, bad;
	int s, k;

	for (s = 0; s < 2; s++) {
		for (k = 0; k < NSLOT; k++) {
			struct side *sd = &sides[s];
			size_t used = sd->dst_used[k];
			const uint8_t *a = sd->dst[k];

			if (!used || !is_local(sd) || !memcmp(a, guard, used)) {
				sd->dst_used[k] = 0;
				continue;
			}
			for (i = 0, bad = 0, first = 0; i < used; i++) {
				if (a[i] != guard[i]) {
					if (!bad)
						first = i;
					bad++;
				}
			}
			t_fail("batch %d: QP %c's buffer for slot %d: byte %zu (outside every destination) is 0x%02x, expected guard 0x%02x; %zu bytes in [0, %zu) written where no op was allowed to%s",
			       batch_no, sd->name, k, first, a[first], guard[first], bad, used,
			       batch_nops > k ? "" : " (no op in this slot)");
			memcpy(sd->dst[k], guard, used);
			sd->dst_used[k] = 0;
		}
	}
}

/* --- one batch of ordinary ops -------------------------------------------------- */

/* Plan, post and check up to nops ops; returns how many it ran (-R may cut). */
static int run_batch(int first_id, int nops)
{
	struct wr wrs[NSLOT][2];
	int nwr[NSLOT], last[2] = { -1, -1 };
	struct op ops[NSLOT];
	int i, j;

	for (i = 0; i < nops; i++) {
		enum kind k;

		do
			k = pick_kind();
		while (k == K_MW);
		plan_op(&ops[i], first_id + i, k, i);
		batch_ops[i] = &ops[i];
		op_count[k]++;
		/* -R: nothing may follow a fenced WR in its batch (see the top). */
		if (opt.rxe_quirks && (ops[i].flags & IBV_SEND_FENCE))
			nops = i + 1;
	}
	batch_nops = nops;
	for (i = 0; i < nops; i++) {
		nwr[i] = op_wrs(&ops[i], wrs[i]);
		last[ops[i].req == &sides[1]] = i;
	}
	/* Each QP's last WR of the batch is signalled: its CQE ends the batch. */
	for (j = 0; j < 2; j++) {
		if (last[j] < 0)
			continue;
		i = last[j];
		wrs[i][nwr[i] - 1].flags |= IBV_SEND_SIGNALED;
		ops[i].flags |= IBV_SEND_SIGNALED;
	}
	for (i = 0; i < nops; i++)
		for (j = 0; j < nwr[i]; j++)
			expect_send(ops[i].req, &ops[i], &wrs[i][j], IBV_WC_SUCCESS);

	for (i = 0; i < nops; i++)
		if (consumes_recv(ops[i].kind) && is_local(ops[i].resp))
			post_recv(ops[i].resp, ops[i].recv_wr_id, ops[i].slot, &ops[i].rplace);
	peer_sync("receives posted");

	/* Consecutive ops of one QP and one API go in one post. */
	for (i = 0; i < nops;) {
		struct wr chain[2 * NSLOT];
		struct op *owner[2 * NSLOT];
		int n = 0;

		for (j = i; j < nops && ops[j].req == ops[i].req && ops[j].api == ops[i].api; j++) {
			int w;

			for (w = 0; w < nwr[j]; w++) {
				chain[n] = wrs[j][w];
				owner[n++] = &ops[j];
			}
		}
		if (is_local(ops[i].req))
			post_wrs(ops[i].req, ops[i].api, chain, n, owner);
		/* Inline data was copied at post time: later changes must not show. */
		for (; i < j; i++) {
			struct op *op = &ops[i];
			int s;

			if (!op->inlined || !is_local(op->req))
				continue;
			for (s = 0; s < op->lplace.nspan; s++) {
				uint8_t *p = op->req->src[op->slot] + op->lplace.span[s].off;
				uint32_t b;

				for (b = 0; b < op->lplace.span[s].len; b++)
					p[b] = ~p[b];
			}
		}
	}

	{
		uint64_t total = 0;

		for (i = 0; i < nops; i++)
			total += ops[i].len;
		collect(30 + total / (256 * 1024));
	}
	/* The other process's CQEs say when this one's memory is final. */
	peer_sync("CQEs in");
	for (i = 0; i < nops; i++)
		verify_op(&ops[i]);
	check_guards();
	peer_sync("batch checked");
	for (i = 0; i < nops; i++)
		free(ops[i].data);
	return nops;
}

/* --- memory windows ---------------------------------------------------------------- */

/* Post one WR on sd, expecting status; wait for it and every other CQE. */
static void post_one(struct side *sd, struct op *op, struct wr *w, enum ibv_wc_status status)
{
	struct op *owner[1] = { op };

	expect_send(sd, op, w, status);
	if (is_local(sd))
		post_wrs(sd, op->api, w, 1, owner);
}

/* Leave the error state: both QPs back to RTS, any flushed CQE drained. */
static void recover_qps(void)
{
	struct ibv_wc wc;
	int s, q;

	connect_qps();
	for (s = 0; s < 2; s++) {
		if (!is_local(&sides[s]))
			continue;
		for (q = 0; q < 2; q++) {
			struct ibv_cq *cq = q ? sides[s].rcq : sides[s].scq;

			while (ibv_poll_cq(cq, 1, &wc) > 0)
				if (wc.status != IBV_WC_WR_FLUSH_ERR)
					t_fail("after the refused access: QP %c %s CQE wr_id %#llx status %s, expected none or IBV_WC_WR_FLUSH_ERR",
					       sides[s].name, q ? "recv" : "send",
					       (unsigned long long)wc.wr_id,
					       ibv_wc_status_str(wc.status));
		}
	}
}

/*
 * A type-2 window in T's memory, used by R: bind (on T's QP), RDMA WRITE
 * then RDMA READ through it (the READ sees the WRITE: RC executes in
 * order), invalidate (SEND_WITH_INV from R or LOCAL_INV on T), then an
 * RDMA WRITE with the dead rkey must fail with IBV_WC_REM_ACCESS_ERR,
 * write nothing, and leave R's QP in ERR.
 */
static void run_mw(int id)
{
	struct side *r = &sides[t_rand_below(2)];
	struct side *t = &sides[r == &sides[0]];
	uint8_t *tdst = t->dst[0], *want;
	uint32_t woff, wlen, aoff, alen, boff, blen, rkey, cur;
	struct op op = {}, *opp = &op;
	struct ibv_mw *mw;
	struct wr w;
	int inval_remote, i, state;

	batch_nops = 1;
	batch_ops[0] = opp;
	op.id = id;
	op.kind = K_MW;
	op.req = r;
	op.resp = t;
	op.slot = 0;
	op.api = pick_api();
	op_count[K_MW]++;

	/* T's QP binds it to T's MR: the window belongs to that MR's PD. */
	mw = NULL;
	rkey = 0;
	if (is_local(t)) {
		mw = ibv_alloc_mw(t->pd, IBV_MW_TYPE_2);
		if (!mw)
			t_fatal("ibv_alloc_mw(IBV_MW_TYPE_2) on %s: %s", t->dev, t_errname(errno));
		rkey = ibv_inc_rkey(mw->rkey);
	}
	if (peer_fd >= 0) {
		uint32_t theirs;

		peer_xchg(&rkey, &theirs, sizeof(rkey));
		if (!mw)
			rkey = theirs;
	}

	/* The window, and what R writes and reads inside it. */
	wlen = t_rand_range(1, opt.max_len < 65536 ? opt.max_len : 65536);
	woff = start_cursor();
	aoff = woff + t_rand_below(wlen);
	alen = t_rand_range(1, woff + wlen - aoff);
	boff = woff + t_rand_below(wlen);
	blen = t_rand_range(1, woff + wlen - boff);
	op.len = alen;
	note_dst(t, 0, woff + wlen);
	if (opt.verbose)
		printf("plan %s: window [%u, +%u) in %c, write [%u, +%u), read [%u, +%u)\n",
		       op_str(opp), woff, wlen, t->name, aoff, alen, boff, blen);

	/* Bind, on T's own QP. */
	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_BIND_MW;
	w.wr_id = (uint64_t)id << 8;
	w.flags = IBV_SEND_SIGNALED;
	w.mw = mw;
	w.new_rkey = rkey;
	w.bind = (struct ibv_mw_bind_info){
		.mr = t->dst_mr[0],
		.addr = t->dst_va[0] + woff,
		.length = wlen,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	post_one(t, opp, &w, IBV_WC_SUCCESS);
	collect(30);
	if (t_failures)
		t_fatal("binding a type-2 window failed; replay: -s %u", opt.seed);
	peer_sync("window bound");

	/* WRITE then READ through the window. */
	op.data = malloc(alen + blen);
	if (!op.data)
		t_fatal("malloc: out of memory");
	t_rand_fill(r->src[0] + LEAD, alen);
	memcpy(op.data, r->src[0] + LEAD, alen);
	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr_id = ((uint64_t)id << 8) | 1;
	w.flags = IBV_SEND_SIGNALED;
	w.nsge = 1;
	w.sge[0] = (struct ibv_sge){ (uintptr_t)(r->src[0] + LEAD), alen,
				     lkey_of(r->src_mr[0]) };
	w.raddr = t->dst_va[0] + aoff;
	w.rkey = rkey;
	post_one(r, opp, &w, IBV_WC_SUCCESS);
	w.opcode = IBV_WR_RDMA_READ;
	w.wr_id = ((uint64_t)id << 8) | 2;
	w.sge[0] = (struct ibv_sge){ (uintptr_t)(r->dst[0] + LEAD), blen,
				     lkey_of(r->dst_mr[0]) };
	w.raddr = t->dst_va[0] + boff;
	note_dst(r, 0, LEAD + blen);
	post_one(r, opp, &w, IBV_WC_SUCCESS);
	collect(30);
	peer_sync("WRITE and READ through the window done");

	want = op.data + alen;
	for (i = 0; i < (int)blen; i++) {
		uint32_t at = boff + i;

		want[i] = at >= aoff && at < aoff + alen ? op.data[at - aoff] : guard[at];
	}
	if (is_local(t))
		check_bytes(opp, "RDMA WRITE target through the window", tdst + aoff, op.data,
			    alen);
	if (is_local(r))
		check_bytes(opp, "RDMA READ through the window (after the WRITE)",
			    r->dst[0] + LEAD, want, blen);
	memcpy(r->dst[0] + LEAD, guard + LEAD, blen);

	/* Invalidate. */
	inval_remote = t_one_in(2);
	memset(&w, 0, sizeof(w));
	w.wr_id = ((uint64_t)id << 8) | 3;
	w.flags = IBV_SEND_SIGNALED;
	w.inv = rkey;
	if (inval_remote) {
		struct exp_cqe e = {
			.op = opp,
			.what = "receive of SEND_WITH_INV",
			.status = IBV_WC_SUCCESS,
			.opcode = IBV_WC_RECV,
			.recv = 1,
			.wc_flags = IBV_WC_WITH_INV,
			.ex = rkey,
		};
		struct place p;
		uint32_t c = woff + wlen + SGE_GAP, len = t_rand_range(0, 64);

		place(&p, &c, len + 8, 1);
		note_place(t, 0, &p);
		e.wr_id = ((uint64_t)id << 8) | 0x80;
		e.byte_len = len;
		fifo_push(&t->rexp, &e);
		if (is_local(t))
			post_recv(t, e.wr_id, 0, &p);
		peer_sync("receive for SEND_WITH_INV posted");
		w.opcode = IBV_WR_SEND_WITH_INV;
		w.nsge = 1;
		w.sge[0] = (struct ibv_sge){ (uintptr_t)(r->src[0] + LEAD), len,
					     lkey_of(r->src_mr[0]) };
		post_one(r, opp, &w, IBV_WC_SUCCESS);
		collect(30);
		if (is_local(t))
			check_scatter(opp, "receive buffer of SEND_WITH_INV", tdst, &p,
				      r->src[0] + LEAD, len);
	} else {
		w.opcode = IBV_WR_LOCAL_INV;
		post_one(t, opp, &w, IBV_WC_SUCCESS);
		collect(30);
	}
	peer_sync("window invalidated");
	if (t_failures)
		t_fatal("%s failed; replay: -s %u", inval_remote ? "SEND_WITH_INV" : "LOCAL_INV",
			opt.seed);

	/* The dead rkey is refused, and nothing is written. */
	memset(&w, 0, sizeof(w));
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr_id = ((uint64_t)id << 8) | 4;
	w.flags = IBV_SEND_SIGNALED;
	w.nsge = 1;
	cur = t_rand_range(1, wlen);
	w.sge[0] = (struct ibv_sge){ (uintptr_t)(r->src[0] + LEAD), cur,
				     lkey_of(r->src_mr[0]) };
	w.raddr = t->dst_va[0] + woff;
	w.rkey = rkey;
	op.len = cur;
	post_one(r, opp, &w, IBV_WC_REM_ACCESS_ERR);
	collect(30);
	peer_sync("RDMA WRITE with the dead rkey done");
	if (is_local(r)) {
		state = t_qp_state(r->qp);
		if (state != IBV_QPS_ERR)
			t_fail("%s: after the refused RDMA WRITE with invalidated rkey %#x, QP %c is %s, expected ERR",
			       op_str(opp), rkey, r->name, t_qp_state_str(state));
	}
	if (is_local(t))
		check_bytes(opp, "window's RDMA WRITE target after the refused WRITE",
			    tdst + aoff, op.data, alen);
	memcpy(tdst + aoff, guard + aoff, alen);
	check_guards();
	recover_qps();
	peer_sync("QPs reconnected");
	i = mw ? ibv_dealloc_mw(mw) : 0;
	if (i)
		t_fail("ibv_dealloc_mw after invalidation: %s", t_errname(i));
	bytes_moved += alen + blen;
	free(op.data);
}

/* --- main ------------------------------------------------------------------------- */

static void teardown(void)
{
	int s, k, ret;

	for (s = 0; s < 2; s++) {
		struct side *sd = &sides[s];

		if (!is_local(sd))
			continue;
		if ((ret = ibv_destroy_qp(sd->qp)))
			t_fail("destroy_qp %c: %s", sd->name, t_errname(ret));
		if (opt.xrc && ((ret = ibv_destroy_qp(sd->tqp)) ||
				(ret = ibv_destroy_srq(sd->srq))))
			t_fail("destroy the XRC receive QP or SRQ of %c: %s", sd->name,
			       t_errname(ret));
		if ((ret = ibv_destroy_cq(sd->scq)) || (ret = ibv_destroy_cq(sd->rcq)))
			t_fail("destroy_cq of QP %c: %s", sd->name, t_errname(ret));
		for (k = 0; k < NSLOT && !sd->imr; k++) {
			if ((ret = ibv_dereg_mr(sd->src_mr[k])) ||
			    (ret = ibv_dereg_mr(sd->dst_mr[k])))
				t_fail("dereg_mr: %s", t_errname(ret));
		}
		if (sd->imr && (ret = ibv_dereg_mr(sd->imr)))
			t_fail("dereg_mr of the implicit ODP MR: %s", t_errname(ret));
		if (opt.xrc) {
			if ((ret = ibv_close_xrcd(sd->xrcd)))
				t_fail("close the XRC domain of %c: %s", sd->name, t_errname(ret));
			close(sd->xrcd_fd);
		}
	}
	for (s = 0; s < 2; s++) {
		struct side *sd = &sides[s];

		if (!sd->ctx || (s && sd->ctx == sides[0].ctx))
			continue;
		if ((ret = ibv_dealloc_pd(sd->pd)))
			t_fail("dealloc_pd on %s: %s", sd->dev, t_errname(ret));
		if ((ret = ibv_close_device(sd->ctx)))
			t_fail("close_device %s: %s", sd->dev, t_errname(ret));
	}
}

/*
 * Open each side's device (QP B shares A's unless -D), find its GID, check
 * its port, and give it a PD. The path MTU is -m, or the smaller active
 * MTU of the ports: a packet must fit both netdevs.
 */
static void open_one(struct side *sd, const char *dev, int *gid_index, const char *gopt)
{
	sd->dev = dev;
	sd->ctx = t_open_device(dev);
	if (*gid_index < 0) {
		*gid_index = t_find_ipv4_roce_v2_gid(sd->ctx);
		if (*gid_index < 0)
			t_fatal("%s port 1 has no RoCE v2 GID with an IPv4 address: give %s", dev,
				gopt);
	}
	t_path_init(sd->ctx, *gid_index, opt.mtu_bytes, &sd->path);
	sd->pd = ibv_alloc_pd(sd->ctx);
	if (!sd->pd)
		t_fatal("alloc_pd on %s: %s", dev, t_errname(errno));
}

static void open_sides(void)
{
	static char peer_dev[64];
	int s;

	if (peer_fd >= 0) {
		struct {
			char dev[64];
			struct t_path path;
		} mine = {}, theirs;

		open_one(&sides[me], opt.dev, &opt.gid_index, "-g");
		snprintf(mine.dev, sizeof(mine.dev), "%s", opt.dev);
		mine.path = sides[me].path;
		peer_xchg(&mine, &theirs, sizeof(mine));
		memcpy(peer_dev, theirs.dev, sizeof(peer_dev) - 1);
		sides[!me].dev = peer_dev;
		sides[!me].path = theirs.path;
		path_mtu = mine.path.mtu < theirs.path.mtu ? mine.path.mtu : theirs.path.mtu;
		mtu = t_mtu_bytes(path_mtu);
		return;
	}
	for (s = 0; s < 2; s++) {
		struct side *sd = &sides[s];

		if (s && !opt.dev2) {
			sd->dev = sides[0].dev;
			sd->ctx = sides[0].ctx;
			sd->pd = sides[0].pd;
			sd->path = sides[0].path;
			break;
		}
		open_one(sd, s ? opt.dev2 : opt.dev, s ? &opt.gid_index2 : &opt.gid_index,
			 s ? "-G" : "-g");
		if (!s || sd->path.mtu < path_mtu)
			path_mtu = sd->path.mtu;
	}
	mtu = t_mtu_bytes(path_mtu);
}

int main(int argc, char **argv)
{
	const char *sep;
	double start;
	long done = 0;
	int k;

	t_name = "scire_integrity";
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	if (opt.peer_port) {
		peer_connect();
		peer_agree();
	}
	printf("seed %u (replay: -s %u%s)\n", opt.seed, opt.seed,
	       peer_fd < 0 ? "" : " on QP A's side");
	t_rng_seed(opt.seed);

	open_sides();
	setup_qps();
	setup_memory();
	if (opt.dev2)
		printf("QP A on %s GID index %d, QP B on %s GID index %d\n", opt.dev,
		       opt.gid_index, opt.dev2, opt.gid_index2);
	if (peer_fd >= 0)
		printf("QP %c here on %s GID index %d, QP %c in the other process on %s\n",
		       'A' + me, opt.dev, opt.gid_index, 'A' + !me, sides[!me].dev);
	printf("%s: GID index %d, path MTU %d, %ld ops, API %s, sizes 0..%u, max SGEs %d (READ %d), max inline %d%s\n",
	       opt.dev, opt.gid_index, mtu, opt.nops, api_name(opt.api), opt.max_len, max_sge,
	       max_rd_sge, max_inline, opt.mw ? ", memory windows" : "");

	start = t_now();
	while (done < opt.nops) {
		batch_no++;
		if (kind_enabled(K_MW) && (opt.kinds == 1U << K_MW || t_one_in(12))) {
			run_mw(done);
			done++;
		} else {
			int n = t_rand_range(1, NSLOT);

			if (n > opt.nops - done)
				n = opt.nops - done;
			done += run_batch(done, n);
		}
		if (t_failures)
			t_fatal("stopping after batch %d with %d failed checks; replay: -s %u",
				batch_no, t_failures, opt.seed);
	}

	printf("%ld ops in %d batches, %.1f MiB moved, %.1f s:", done, batch_no,
	       bytes_moved / 1048576.0, t_now() - start);
	for (k = 0, sep = " "; k < K_NKINDS; k++) {
		if (op_count[k]) {
			printf("%s%s %ld", sep, kind_name[k], op_count[k]);
			sep = ", ";
		}
	}
	printf("\n");
	teardown();
	if (t_failures)
		return T_EXIT_FAIL;
	printf("PASS: %s on %s%s%s, MTU %d, API %s, seed %u\n", t_name, opt.dev,
	       opt.dev2 || peer_fd >= 0 ? " and " : "",
	       opt.dev2 ? opt.dev2 : peer_fd >= 0 ? sides[!me].dev : "", mtu,
	       api_name(opt.api), opt.seed);
	return T_EXIT_PASS;
}
