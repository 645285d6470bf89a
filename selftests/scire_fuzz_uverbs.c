// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_fuzz_uverbs -d DEV [-g GIDIDX] [-s SEED] [-t SECONDS] [-p PROCS]
 *                   [-k KILLS_PER_S] [-H HANG_SECS] [-m MIN_IOCTLS] [-w WORKER_SEED]
 *
 * The uverbs interface of a scire device against random input. PROCS
 * worker processes (default 4) each open DEV and, until the budget
 * (-t, default 30 s) is spent, take random actions:
 *
 *   - libibverbs: create, modify and destroy PDs, CQs (with and without a
 *     completion channel, resized, armed), MRs (on-demand paging ones, and
 *     dma-buf MRs over a udmabuf of the worker's where the kernel has
 *     /dev/udmabuf), MWs (bound by type 1 and
 *     type 2 binds), SRQs (XRC SRQs too), RC/UC/UD and raw packet QPs,
 *     XRC send and receive QPs in the worker's XRC domain, AHs, flows
 *     (ibv_create_flow, on any QP, with random types, priorities, flags
 *     and ETH/IPv4/IPv6/TCP/UDP specs), receive WQs (random sizes and
 *     state moves, receives posted), indirection tables of them and RSS
 *     QPs over those (random hash fields, functions and key lengths), all
 *     with random attributes;
 *     modify_qp along the valid path to RTS between the worker's own QPs
 *     and with random states, masks and attribute values; post sends and
 *     receives with random opcodes and SGEs and poll the CQs;
 *   - raw RDMA_VERBS_IOCTL calls on the uverbs file: the core's methods
 *     (CQ/QP/SRQ create, XRC SRQs and QPs included, the destroys, QUERY_MR, the device queries,
 *     INVOKE_WRITE carrying the write commands: REG_MR, MODIFY_QP,
 *     CREATE_AH, POST_SEND, ...) and scire's QP doorbell, with random UHW
 *     bytes, and with the bundle malformed at random: attributes dropped,
 *     duplicated or renumbered, wrong lengths, reserved bits and flags
 *     set, bogus, destroyed, wrong-type and foreign (another context's)
 *     handles, bad pointers, a wrong header length or driver id;
 *   - QPs created by raw ioctls get their SQ and RQ rings mapped by hand:
 *     random and plausible WQEs and random producer indices, then a
 *     doorbell on them;
 *   - scribbling: random and boundary values written over the producer,
 *     consumer, arm and flags words and the slots of every ring mapped
 *     into the process, followed by a doorbell.
 *
 * Meanwhile the parent SIGKILLs workers at random times (-k, default 2 per
 * second across all of them; 0: never) and starts new ones in their place,
 * so objects die with their process in every state; the others end after a
 * random number of actions and tear down what they hold. A worker that
 * makes no progress for HANG_SECS (default 120) is reported with its last
 * step and its kernel stack.
 *
 * Every RDMA_VERBS_IOCTL and every write(2) on a uverbs file the process
 * makes, its own and libibverbs', is counted: the program defines ioctl()
 * and write(), which take precedence over libc's for libibverbs too, count
 * and make the system call. The totals are printed at the end.
 *
 * Pass (exit 0): every worker ended normally or by a SIGKILL its parent
 * sent (any other signal, an exit status other than 0, or a hang fails the
 * run), and at least MIN_IOCTLS ioctls were made (-m, default 0; the run
 * goes on past SECONDS, up to three times that, until they are). What the
 * kernel log shows and what is left on the device after the run is the
 * caller's to check (96-fuzz-uverbs.sh).
 *
 * Seeded: the seed is printed, and -s SEED starts the same workers with the
 * same seeds (when the kills land depends on timing). A failing worker's
 * own seed is printed too: -w WORKER_SEED runs just that worker, without
 * kills, through the same actions (kernel answers that depend on timing
 * aside). A worker that crashes prints its step and a backtrace.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <execinfo.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/udmabuf.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/scire-abi.h>

#include "scire_rc.h"

#define MAX_PROCS	32
#define NOBJ		6	/* per kind and worker: keeps the IDR small */
#define NRAW		24
#define NDEAD		16
#define MAX_ATTRS	20
#define MAX_MAPS	64
#define MR_BUF		(64 * 1024)

/* --- shared with the parent ------------------------------------------------ */

struct slot {
	pid_t pid;
	int killed;		/* the parent sent SIGKILL */
	int killable;		/* its contexts are open: the parent may kill it */
	uint32_t seed;		/* of this incarnation */
	uint32_t incarnation;
	uint64_t beat;		/* actions taken, for hang detection */
	uint64_t ioctls, raw_ioctls, writes, verbs, ok;
	char step[56];
};

struct shared {
	int stop;
	struct slot slot[MAX_PROCS];
};

static struct shared *sh;
static struct slot *me;		/* NULL in the parent */

/* --- counting every uverbs system call --------------------------------------- */

static int nprocs = 4;

/* Uverbs ioctls made by all workers so far (the parent reads their slots). */
static uint64_t ioctls_so_far(void)
{
	uint64_t n = 0;

	for (int s = 0; s < nprocs; s++)
		n += __atomic_load_n(&sh->slot[s].ioctls, __ATOMIC_RELAXED);
	return n;
}

/* The uverbs command fds of this worker, for write(). */
static int cmd_fds[2] = { -1, -1 };

/*
 * Defined here, these take precedence over libc's for every caller in the
 * process, libibverbs included, so the counts are exact.
 */
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (me && req == RDMA_VERBS_IOCTL)
		me->ioctls++;
	return syscall(SYS_ioctl, fd, req, arg);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	if (me && (fd == cmd_fds[0] || fd == cmd_fds[1]))
		me->writes++;
	return syscall(SYS_write, fd, buf, len);
}

static void step(const char *s)
{
	snprintf(me->step, sizeof(me->step), "%s", s);
}

/* Count a libibverbs call; 1 if it reports success (ret 0). */
static int verb(int ret)
{
	me->verbs++;
	if (!ret)
		me->ok++;
	return !ret;
}

static void *verbp(void *p)
{
	me->verbs++;
	if (p)
		me->ok++;
	return p;
}

/* --- random values ------------------------------------------------------------ */

static uint32_t nasty32(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 255, 256, 4095, 4096,
		0x7fff, 0x8000, 0xffff, 0x10000, 0x4000, 0x4001, 0xffffff,
		0x1000000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	};

	switch (t_rand_below(4)) {
	case 0: return (uint32_t)t_rand64();
	case 1: return t_rand_below(64);
	default: return v[t_rand_below(sizeof(v) / sizeof(v[0]))] +
			(t_one_in(4) ? (uint32_t)t_rand_range(0, 2) - 1 : 0);
	}
}

static uint64_t nasty64(void)
{
	switch (t_rand_below(5)) {
	case 0: return t_rand64();
	case 1: return ~0ULL - t_rand_below(4096);
	case 2: return 1ULL << t_rand_below(64);
	case 3: return 0x7fffffffffffffffULL - t_rand_below(2);
	default: return nasty32();
	}
}

/* --- the worker's objects ------------------------------------------------------ */

struct fz_cq {
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
};

struct fz_mr {
	struct ibv_mr *mr;
	uint8_t *buf;
};

struct fz_qp {
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	struct ibv_flow *flow[2];
};

/* An object created by a raw call: libibverbs knows nothing of it. */
struct fz_raw {
	uint32_t handle;
	uint16_t obj;		/* UVERBS_OBJECT_* */
	/* QPs and CQs from the ioctl create methods: their rings, mapped. */
	void *map[2];
	size_t len[2];
	uint32_t entries[2], wqe_size[2], prod[2];
};

static struct ibv_context *ctx, *ctx2;
static struct ibv_pd *pd2;		/* of ctx2: its handles are foreign here */
static struct ibv_cq *cq2;
static struct ibv_comp_channel *chans[2];
static struct ibv_comp_channel *raw_chan;	/* only raw CQs use it */
static struct ibv_pd *pds[NOBJ];
static struct fz_cq cqs[NOBJ];
static struct fz_mr mrs[NOBJ];
/*
 * A worker's dma-buf (udmabuf over a memfd of NOBJ * MR_BUF bytes), where
 * the kernel has udmabuf: MR slot i's buffer is its part i, mapped, so a
 * slot's MR is an ordinary or a dma-buf MR over the same bytes. -1: none.
 */
static int dmabuf_fd = -1, dmabuf_memfd = -1;
static struct ibv_mw *mws[NOBJ];
static struct ibv_srq *srqs[NOBJ];
static struct fz_qp qps[NOBJ];
static struct ibv_ah *ahs[NOBJ];
static struct ibv_wq *wqs[NOBJ];
static struct ibv_rwq_ind_table *tbls[2];
/* The worker's XRC domain (of a file unlinked at once), if the device has XRC. */
static struct ibv_xrcd *xrcd;
static int xrcd_fd = -1;
static struct fz_raw raws[NRAW];
static uint32_t dead[NDEAD];
static int ndead;
static int gid_index;
static union ibv_gid own_gid;
static int maps_dirty = 1;

/* Pick a random index of a used (want_used) or free slot of an array. */
#define PICK(arr, used)							\
	({								\
		int _n = sizeof(arr) / sizeof((arr)[0]), _s = t_rand_below(_n), _i, _r = -1; \
		for (_i = 0; _i < _n; _i++) {				\
			int _k = (_s + _i) % _n;			\
			if (!!(used) == !!(*(void **)&(arr)[_k])) { _r = _k; break; } \
		}							\
		_r;							\
	})

static void remember_dead(uint32_t h)
{
	dead[ndead++ % NDEAD] = h;
}

/*
 * The kernel's handle of the XRC domain: libibverbs keeps it in struct
 * verbs_xrcd, which the provider allocated (rdma-core's driver.h: the
 * ibv_xrcd, then comp_mask, then handle).
 */
static uint32_t xrcd_handle(void)
{
	const struct { struct ibv_xrcd x; uint32_t comp_mask, handle; } *v = (const void *)xrcd;

	return v->handle;
}

/* Is h the handle of an object libibverbs holds? Raw destroys leave those alone. */
static int is_verbs_handle(uint32_t h)
{
	int i;

	for (i = 0; i < NOBJ; i++) {
		if ((pds[i] && pds[i]->handle == h) || (cqs[i].cq && cqs[i].cq->handle == h) ||
		    (mrs[i].mr && mrs[i].mr->handle == h) || (mws[i] && mws[i]->handle == h) ||
		    (srqs[i] && srqs[i]->handle == h) || (qps[i].qp && qps[i].qp->handle == h) ||
		    (ahs[i] && ahs[i]->handle == h))
			return 1;
	}
	return xrcd && xrcd_handle() == h;
}

static int raw_pick(uint16_t obj)
{
	int s = t_rand_below(NRAW), i;

	for (i = 0; i < NRAW; i++) {
		int k = (s + i) % NRAW;

		if (raws[k].obj == obj && raws[k].handle != ~0u)
			return k;
	}
	return -1;
}

static void raw_forget(int k)
{
	int i;

	remember_dead(raws[k].handle);
	for (i = 0; i < 2; i++)
		if (raws[k].map[i])
			munmap(raws[k].map[i], raws[k].len[i]);
	memset(&raws[k], 0, sizeof(raws[k]));
	raws[k].handle = ~0u;
	maps_dirty = 1;
}

static int raw_add(uint16_t obj, uint32_t handle)
{
	int i;

	for (i = 0; i < NRAW; i++) {
		if (raws[i].handle == ~0u) {
			memset(&raws[i], 0, sizeof(raws[i]));
			raws[i].obj = obj;
			raws[i].handle = handle;
			return i;
		}
	}
	return -1;	/* full: the context's close will take it */
}

/* The handle of a live object of kind obj, libibverbs' or raw; ~0 if none. */
static uint32_t live_handle(uint16_t obj)
{
	int i = -1, k;

	if (t_one_in(3) && (k = raw_pick(obj)) >= 0)
		return raws[k].handle;
	switch (obj) {
	case UVERBS_OBJECT_PD:
		i = PICK(pds, 1);
		return i < 0 ? ~0u : pds[i]->handle;
	case UVERBS_OBJECT_CQ:
		i = PICK(cqs, 1);
		return i < 0 ? ~0u : cqs[i].cq->handle;
	case UVERBS_OBJECT_MR:
		i = PICK(mrs, 1);
		return i < 0 ? ~0u : mrs[i].mr->handle;
	case UVERBS_OBJECT_MW:
		i = PICK(mws, 1);
		return i < 0 ? ~0u : mws[i]->handle;
	case UVERBS_OBJECT_SRQ:
		i = PICK(srqs, 1);
		return i < 0 ? ~0u : srqs[i]->handle;
	case UVERBS_OBJECT_QP:
		i = PICK(qps, 1);
		return i < 0 ? ~0u : qps[i].qp->handle;
	case UVERBS_OBJECT_AH:
		i = PICK(ahs, 1);
		return i < 0 ? ~0u : ahs[i]->handle;
	case UVERBS_OBJECT_XRCD:
		return xrcd ? xrcd_handle() : ~0u;
	}
	return ~0u;
}

/*
 * A handle for an attribute that wants an object of kind obj: mostly a live
 * one, else one of another kind, a destroyed one, one of the other context
 * (foreign: here it names something else or nothing) or a random number.
 * With destroying set, never one libibverbs holds: a raw destroy behind its
 * back could make it wait for ever for events of an unrelated CQ whose
 * handle number it later reuses.
 */
static uint32_t pick_handle(uint16_t obj, int destroying)
{
	static const uint16_t kinds[] = {
		UVERBS_OBJECT_PD, UVERBS_OBJECT_CQ, UVERBS_OBJECT_MR, UVERBS_OBJECT_MW,
		UVERBS_OBJECT_SRQ, UVERBS_OBJECT_QP, UVERBS_OBJECT_AH,
	};
	uint32_t h;
	int k;

	switch (t_rand_below(10)) {
	case 0: h = live_handle(kinds[t_rand_below(7)]); break;
	case 1: h = ndead ? dead[t_rand_below(ndead < NDEAD ? ndead : NDEAD)] : 0; break;
	case 2: h = t_one_in(2) ? (pd2 ? pd2->handle : 1) : (cq2 ? cq2->handle : 2); break;
	case 3: h = t_one_in(2) ? t_rand_below(64) : nasty32(); break;
	default:
		if (destroying) {
			k = raw_pick(obj);
			h = k >= 0 ? raws[k].handle : t_rand_below(64);
		} else {
			h = live_handle(obj);
		}
	}
	if (destroying && is_verbs_handle(h))
		h = ~0u - t_rand_below(16);
	return h;
}

/* --- raw ioctls ------------------------------------------------------------------ */

enum akind {
	A_IDR,		/* an existing object (obj), data = handle */
	A_NEW,		/* a new object: the kernel writes its handle */
	A_U32,		/* inline u32 */
	A_U64,		/* inline u64 */
	A_CONST,	/* inline constant (value: a plausible one) */
	A_IN,		/* pointer to len bytes in */
	A_OUT,		/* pointer to len bytes out */
	A_FD,		/* an fd in */
	A_FD_NEW,	/* the kernel writes a new fd */
	A_UHW_IN,
	A_UHW_OUT,
};

struct atmpl {
	uint16_t id;
	uint8_t kind;
	uint8_t obj;		/* A_IDR: UVERBS_OBJECT_*; A_CONST: value */
	uint16_t len;
};

struct mtmpl {
	const char *name;
	uint16_t obj, method;
	/*
	 * 1: the A_IDR attribute 0 is destroyed; 2: it lives on but changes
	 * under its holder (a resized ring). Either keeps off libibverbs'
	 * objects.
	 */
	uint8_t destroys;
	struct atmpl a[14];
};

#define UHW	{ UVERBS_ATTR_UHW_IN, A_UHW_IN, 0, 0 }

static const struct mtmpl methods[] = {
	{ "QP doorbell", UVERBS_OBJECT_QP, SCIRE_METHOD_QP_DOORBELL, 0, {
		{ SCIRE_ATTR_DOORBELL_QP_HANDLE, A_IDR, UVERBS_OBJECT_QP, 0 },
		{ SCIRE_ATTR_DOORBELL_FLAGS, A_U32, 0, 4 } } },
	{ "QP_CREATE", UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_QP_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_CREATE_QP_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 },
		{ UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, A_IDR, UVERBS_OBJECT_CQ, 0 },
		{ UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, A_IDR, UVERBS_OBJECT_CQ, 0 },
		{ UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, A_IDR, UVERBS_OBJECT_SRQ, 0 },
		{ UVERBS_ATTR_CREATE_QP_USER_HANDLE, A_U64, 0, 8 },
		{ UVERBS_ATTR_CREATE_QP_CAP, A_IN, 0, sizeof(struct ib_uverbs_qp_cap) },
		{ UVERBS_ATTR_CREATE_QP_TYPE, A_CONST, IB_UVERBS_QPT_RC, 4 },
		{ UVERBS_ATTR_CREATE_QP_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_QP_RESP_CAP, A_OUT, 0, sizeof(struct ib_uverbs_qp_cap) },
		{ UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, A_OUT, 0, 4 },
		{ UVERBS_ATTR_CREATE_QP_EVENT_FD, A_FD, 0, 0 },
		UHW,
		{ UVERBS_ATTR_UHW_OUT, A_UHW_OUT, 0, sizeof(struct scire_create_qp_resp) } } },
	{ "QP_CREATE XRC_TGT", UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_QP_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, A_IDR, UVERBS_OBJECT_XRCD, 0 },
		{ UVERBS_ATTR_CREATE_QP_USER_HANDLE, A_U64, 0, 8 },
		{ UVERBS_ATTR_CREATE_QP_CAP, A_IN, 0, sizeof(struct ib_uverbs_qp_cap) },
		{ UVERBS_ATTR_CREATE_QP_TYPE, A_CONST, IB_UVERBS_QPT_XRC_TGT, 4 },
		{ UVERBS_ATTR_CREATE_QP_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_QP_RESP_CAP, A_OUT, 0, sizeof(struct ib_uverbs_qp_cap) },
		{ UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, A_OUT, 0, 4 },
		UHW,
		{ UVERBS_ATTR_UHW_OUT, A_UHW_OUT, 0, sizeof(struct scire_create_qp_resp) } } },
	{ "QP_CREATE XRC_INI", UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_QP_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_CREATE_QP_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 },
		{ UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, A_IDR, UVERBS_OBJECT_CQ, 0 },
		{ UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, A_IDR, UVERBS_OBJECT_CQ, 0 },
		{ UVERBS_ATTR_CREATE_QP_USER_HANDLE, A_U64, 0, 8 },
		{ UVERBS_ATTR_CREATE_QP_CAP, A_IN, 0, sizeof(struct ib_uverbs_qp_cap) },
		{ UVERBS_ATTR_CREATE_QP_TYPE, A_CONST, IB_UVERBS_QPT_XRC_INI, 4 },
		{ UVERBS_ATTR_CREATE_QP_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_QP_RESP_CAP, A_OUT, 0, sizeof(struct ib_uverbs_qp_cap) },
		{ UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, A_OUT, 0, 4 },
		UHW,
		{ UVERBS_ATTR_UHW_OUT, A_UHW_OUT, 0, sizeof(struct scire_create_qp_resp) } } },
	{ "QP_DESTROY", UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY, 1, {
		{ UVERBS_ATTR_DESTROY_QP_HANDLE, A_IDR, UVERBS_OBJECT_QP, 0 },
		{ UVERBS_ATTR_DESTROY_QP_RESP, A_OUT, 0, sizeof(struct ib_uverbs_destroy_qp_resp) } } },
	{ "CQ_CREATE", UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_CQ_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_CREATE_CQ_CQE, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_CQ_USER_HANDLE, A_U64, 0, 8 },
		{ UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, A_FD, 0, 0 },
		{ UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_CQ_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_CQ_RESP_CQE, A_OUT, 0, 4 },
		UHW,
		{ UVERBS_ATTR_UHW_OUT, A_UHW_OUT, 0, sizeof(struct scire_create_cq_resp) } } },
	{ "CQ_DESTROY", UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, 1, {
		{ UVERBS_ATTR_DESTROY_CQ_HANDLE, A_IDR, UVERBS_OBJECT_CQ, 0 },
		{ UVERBS_ATTR_DESTROY_CQ_RESP, A_OUT, 0, sizeof(struct ib_uverbs_destroy_cq_resp) } } },
	{ "SRQ_CREATE", UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_SRQ_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 },
		{ UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, A_U64, 0, 8 },
		{ UVERBS_ATTR_CREATE_SRQ_MAX_WR, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_MAX_SGE, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_LIMIT, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_TYPE, A_CONST, IB_UVERBS_SRQT_BASIC, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, A_OUT, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, A_OUT, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, A_OUT, 0, 4 },
		UHW,
		{ UVERBS_ATTR_UHW_OUT, A_UHW_OUT, 0, sizeof(struct scire_create_srq_resp) } } },
	{ "SRQ_CREATE XRC", UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_SRQ_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 },
		{ UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE, A_IDR, UVERBS_OBJECT_XRCD, 0 },
		{ UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE, A_IDR, UVERBS_OBJECT_CQ, 0 },
		{ UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, A_U64, 0, 8 },
		{ UVERBS_ATTR_CREATE_SRQ_MAX_WR, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_MAX_SGE, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_LIMIT, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_TYPE, A_CONST, IB_UVERBS_SRQT_XRC, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, A_OUT, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, A_OUT, 0, 4 },
		{ UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, A_OUT, 0, 4 },
		UHW,
		{ UVERBS_ATTR_UHW_OUT, A_UHW_OUT, 0, sizeof(struct scire_create_srq_resp) } } },
	{ "SRQ resize", UVERBS_OBJECT_SRQ, SCIRE_METHOD_SRQ_RESIZE, 2, {
		{ SCIRE_ATTR_SRQ_RESIZE_HANDLE, A_IDR, UVERBS_OBJECT_SRQ, 0 },
		{ SCIRE_ATTR_SRQ_RESIZE_MAX_WR, A_U32, 0, 4 },
		{ SCIRE_ATTR_SRQ_RESIZE_RESP, A_OUT, 0, sizeof(struct scire_create_srq_resp) } } },
	{ "SRQ_DESTROY", UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY, 1, {
		{ UVERBS_ATTR_DESTROY_SRQ_HANDLE, A_IDR, UVERBS_OBJECT_SRQ, 0 },
		{ UVERBS_ATTR_DESTROY_SRQ_RESP, A_OUT, 0, 4 } } },
	{ "PD_DESTROY", UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, 1, {
		{ UVERBS_ATTR_DESTROY_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 } } },
	{ "MR_DESTROY", UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, 1, {
		{ UVERBS_ATTR_DESTROY_MR_HANDLE, A_IDR, UVERBS_OBJECT_MR, 0 } } },
	{ "MW_DESTROY", UVERBS_OBJECT_MW, UVERBS_METHOD_MW_DESTROY, 1, {
		{ UVERBS_ATTR_DESTROY_MW_HANDLE, A_IDR, UVERBS_OBJECT_MW, 0 } } },
	{ "AH_DESTROY", UVERBS_OBJECT_AH, UVERBS_METHOD_AH_DESTROY, 1, {
		{ UVERBS_ATTR_DESTROY_AH_HANDLE, A_IDR, UVERBS_OBJECT_AH, 0 } } },
	{ "QUERY_MR", UVERBS_OBJECT_MR, UVERBS_METHOD_QUERY_MR, 0, {
		{ UVERBS_ATTR_QUERY_MR_HANDLE, A_IDR, UVERBS_OBJECT_MR, 0 },
		{ UVERBS_ATTR_QUERY_MR_RESP_LKEY, A_OUT, 0, 4 },
		{ UVERBS_ATTR_QUERY_MR_RESP_RKEY, A_OUT, 0, 4 },
		{ UVERBS_ATTR_QUERY_MR_RESP_LENGTH, A_OUT, 0, 8 },
		{ UVERBS_ATTR_QUERY_MR_RESP_IOVA, A_OUT, 0, 8 } } },
	{ "ADVISE_MR", UVERBS_OBJECT_MR, UVERBS_METHOD_ADVISE_MR, 0, {
		{ UVERBS_ATTR_ADVISE_MR_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 },
		{ UVERBS_ATTR_ADVISE_MR_ADVICE, A_CONST, 0, 4 },
		{ UVERBS_ATTR_ADVISE_MR_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_ADVISE_MR_SGE_LIST, A_IN, 0, 32 } } },
	{ "REG_DMABUF_MR", UVERBS_OBJECT_MR, UVERBS_METHOD_REG_DMABUF_MR, 0, {
		{ UVERBS_ATTR_REG_DMABUF_MR_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 },
		{ UVERBS_ATTR_REG_DMABUF_MR_OFFSET, A_U64, 0, 8 },
		{ UVERBS_ATTR_REG_DMABUF_MR_LENGTH, A_U64, 0, 8 },
		{ UVERBS_ATTR_REG_DMABUF_MR_IOVA, A_U64, 0, 8 },
		{ UVERBS_ATTR_REG_DMABUF_MR_FD, A_FD, 0, 0 },
		{ UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, A_OUT, 0, 4 },
		{ UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, A_OUT, 0, 4 } } },
	{ "QUERY_PORT", UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, 0, {
		{ UVERBS_ATTR_QUERY_PORT_PORT_NUM, A_CONST, 1, 1 },
		{ UVERBS_ATTR_QUERY_PORT_RESP, A_OUT, 0, sizeof(struct ib_uverbs_query_port_resp_ex) } } },
	{ "QUERY_CONTEXT", UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, 0, {
		{ UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, A_OUT, 0, 4 },
		{ UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, A_OUT, 0, 8 } } },
	/*
	 * Not UVERBS_METHOD_GET_CONTEXT: on a file that has a context it
	 * fails in the core before scire sees it, and 6.1's failure path
	 * (uverbs_std_types_device.c) frees the new ucontext without
	 * rdma_restrack_put(), leaking a reference to the calling task
	 * (kmemleak: its task_struct, cred and signal_struct). The write()
	 * path puts it; libibverbs opens every context the workers use.
	 */
	{ "INFO_HANDLES", UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INFO_HANDLES, 0, {
		{ UVERBS_ATTR_INFO_OBJECT_ID, A_CONST, UVERBS_OBJECT_QP, 2 },
		{ UVERBS_ATTR_INFO_TOTAL_HANDLES, A_OUT, 0, 4 },
		{ UVERBS_ATTR_INFO_HANDLES_LIST, A_OUT, 0, 64 } } },
	{ "QUERY_GID_TABLE", UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE, 0, {
		{ UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, A_CONST, sizeof(struct ib_uverbs_gid_entry), 8 },
		{ UVERBS_ATTR_QUERY_GID_TABLE_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, A_OUT, 0, 4 * sizeof(struct ib_uverbs_gid_entry) },
		{ UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, A_OUT, 0, 8 } } },
	{ "QUERY_GID_ENTRY", UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY, 0, {
		{ UVERBS_ATTR_QUERY_GID_ENTRY_PORT, A_CONST, 1, 4 },
		{ UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, A_CONST, 0, 4 },
		{ UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, A_U32, 0, 4 },
		{ UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, A_OUT, 0, sizeof(struct ib_uverbs_gid_entry) } } },
	{ "ASYNC_EVENT_ALLOC", UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC, 0, {
		{ UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, A_FD_NEW, 0, 0 } } },
	/* Not implemented by scire: the core must say so. */
	{ "DM_ALLOC", UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, 0, {
		{ UVERBS_ATTR_ALLOC_DM_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_ALLOC_DM_LENGTH, A_U64, 0, 8 },
		{ UVERBS_ATTR_ALLOC_DM_ALIGNMENT, A_U32, 0, 4 } } },
	{ "COUNTERS_CREATE", UVERBS_OBJECT_COUNTERS, UVERBS_METHOD_COUNTERS_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_COUNTERS_HANDLE, A_NEW, 0, 0 } } },
	{ "WQ_CREATE", UVERBS_OBJECT_WQ, UVERBS_METHOD_WQ_CREATE, 0, {
		{ UVERBS_ATTR_CREATE_WQ_HANDLE, A_NEW, 0, 0 },
		{ UVERBS_ATTR_CREATE_WQ_PD_HANDLE, A_IDR, UVERBS_OBJECT_PD, 0 },
		{ UVERBS_ATTR_CREATE_WQ_CQ_HANDLE, A_IDR, UVERBS_OBJECT_CQ, 0 },
		{ UVERBS_ATTR_CREATE_WQ_TYPE, A_CONST, 0, 4 },
		{ UVERBS_ATTR_CREATE_WQ_MAX_WR, A_U32, 0, 4 },
		{ UVERBS_ATTR_CREATE_WQ_MAX_SGE, A_U32, 0, 4 } } },
};

#define NMETHODS	(sizeof(methods) / sizeof(methods[0]))

/* The call being built, and memory its pointers point into. */
struct rawcall {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[MAX_ATTRS];
};

/*
 * Every buffer an attribute may point into is as large as the largest
 * length an attribute can claim (its len is a u16): mutate() changes
 * lengths after the pointers are chosen, renumbering can turn an input
 * into an output, and the kernel then writes, or zero-fills, that many
 * bytes there. Smaller buffers let the kernel do, correctly, what the
 * fuzzer asked for: overwrite the fuzzer's own data. (CI saw exactly
 * that: a worker's SIGSEGV after a 'w QUERY_SRQ' whose CORE_OUT length
 * had grown past its 1 KiB buffer.)
 */
#define ABUF_LEN	(UINT16_MAX + 1)

static uint8_t inbuf[MAX_ATTRS][ABUF_LEN];
static uint8_t outbuf[MAX_ATTRS][ABUF_LEN];
static void *scratch;		/* guard_page's writable neighbour below */
static void *guard_page;	/* PROT_NONE */
static void *ro_page;		/* PROT_READ */

/* A pointer for a buffer of len bytes at buf, now and then a bad one. */
static uint64_t fz_ptr(void *buf, size_t len)
{
	switch (t_rand_below(40)) {
	case 0: return 0;
	case 1: return (uintptr_t)guard_page;
	case 2: return (uintptr_t)ro_page;
	case 3: return 0xffff880000000000ULL + t_rand_below(1 << 20) * 8;
	case 4: return (uintptr_t)guard_page - len / 2;	/* runs into the guard */
	default: return (uintptr_t)buf;
	}
}

static int pick_fd(void)
{
	switch (t_rand_below(8)) {
	case 0: return -1;
	case 1: return t_rand_below(64);
	case 2: return ctx->cmd_fd;
	case 3: return ctx->async_fd;
	case 4: return chans[0] ? chans[0]->fd : 0;
	case 5: return dmabuf_fd;
	default: return raw_chan ? raw_chan->fd : -1;
	}
}

/* Fill attribute i (template t) in c: what a well-behaved caller would send. */
static void fill_attr(struct rawcall *c, int i, const struct atmpl *t, int destroying)
{
	struct ib_uverbs_attr *a = &c->attrs[i];
	uint32_t v32;
	uint64_t v64;
	size_t len;

	memset(a, 0, sizeof(*a));
	a->attr_id = t->id;
	switch (t->kind) {
	case A_IDR:
		a->data = pick_handle(t->obj, destroying && i == 0);
		a->flags = UVERBS_ATTR_F_MANDATORY;
		break;
	case A_NEW:
		a->data = nasty32();
		break;
	case A_U32:
		v32 = t_one_in(3) ? 0 : nasty32();
		a->len = 4;
		memcpy(&a->data, &v32, 4);
		break;
	case A_U64:
		v64 = t_one_in(3) ? 0 : nasty64();
		a->len = 8;
		a->data = v64;
		break;
	case A_CONST:
		v64 = t_one_in(3) ? nasty32() : t->obj;
		a->len = t->len;
		memcpy(&a->data, &v64, t->len);
		break;
	case A_IN:
		len = t->len;
		/* Mostly plausible numbers: a capability struct of small counts. */
		if (t_one_in(2)) {
			uint32_t *w = (uint32_t *)inbuf[i];
			size_t k;

			for (k = 0; k < len / 4; k++)
				w[k] = t_one_in(3) ? nasty32() : t_rand_below(65);
		} else {
			t_rand_fill(inbuf[i], len);
		}
		a->len = len;
		if (len <= 8)
			memcpy(&a->data, inbuf[i], len);
		else
			a->data = fz_ptr(inbuf[i], len);
		break;
	case A_OUT:
	case A_UHW_OUT:
		a->len = t->len;
		a->data = fz_ptr(outbuf[i], t->len);
		break;
	case A_UHW_IN:
		/* scire takes no UHW request: zeroes are accepted, anything else not. */
		len = t_rand_below(5) * 8;
		if (t_one_in(2))
			memset(inbuf[i], 0, len);
		else
			t_rand_fill(inbuf[i], len);
		a->len = len;
		if (len <= 8)
			memcpy(&a->data, inbuf[i], len);
		else
			a->data = fz_ptr(inbuf[i], len);
		break;
	case A_FD:
		a->data_s64 = pick_fd();
		break;
	case A_FD_NEW:
		break;
	}
}

/* Break the call in one of many ways. */
static void mutate(struct rawcall *c, int *n)
{
	struct ib_uverbs_attr *a;
	int i;

	if (!*n)
		return;
	i = t_rand_below(*n);
	a = &c->attrs[i];
	switch (t_rand_below(16)) {
	case 0: /* drop it (maybe a mandatory one) */
		memmove(a, a + 1, (*n - i - 1) * sizeof(*a));
		(*n)--;
		break;
	case 1: /* twice */
		if (*n < MAX_ATTRS)
			c->attrs[(*n)++] = *a;
		break;
	case 2: /* an id nobody declared, in the core's or the driver's namespace */
		a->attr_id = t_one_in(2) ? t_rand_below(32) :
			     (SCIRE_UVERBS_ID_DRIVER_NS | t_rand_below(16));
		break;
	case 3:
		a->attr_id = (uint16_t)t_rand64();
		break;
	case 4: /* wrong length */
		a->len = t_one_in(2) ? (uint16_t)nasty32() : a->len + t_rand_range(0, 16) - 8;
		break;
	case 5:
		a->flags = (uint16_t)t_rand64();
		break;
	case 6:
		a->flags |= UVERBS_ATTR_F_MANDATORY;
		break;
	case 7:
		a->attr_data.reserved = (uint16_t)t_rand64();
		break;
	case 8:
		a->data = nasty64();
		break;
	case 9:
		a->data = fz_ptr(inbuf[i], 512);
		break;
	case 10:
		c->hdr.reserved1 = nasty64();
		break;
	case 11:
		c->hdr.driver_id = nasty32();
		break;
	case 12:
		c->hdr.method_id = t_one_in(2) ? t_rand_below(16) : (uint16_t)t_rand64();
		break;
	case 13:
		c->hdr.object_id = t_one_in(2) ? t_rand_below(20) : (uint16_t)t_rand64();
		break;
	case 14:
		c->hdr.reserved2 = nasty32();
		break;
	default: /* an object of the wrong kind, or none */
		a->data = pick_handle(t_rand_range(1, 8), 1);
		break;
	}
}

/*
 * A broken call may have become a destroy: mutate() can change the method
 * or object of the header, renumber an attribute into a destroy's handle
 * or set a handle attribute to a small number, which is a handle of ours
 * as often as not. None of it may name an object libibverbs holds: a
 * destroy behind its back leaves libibverbs and the provider with a freed
 * kernel object whose handle number the kernel gives to the next object,
 * and the worker then crashes in its own libraries, not in anything under
 * test (seen: a mutated QP_DESTROY took a QP of ours, its CQ could then be
 * destroyed, and a RESET of the stale QP, now naming a new one, had the
 * provider clean the freed CQ). Such values become handles nobody has.
 */
static void scrub_verbs_handles(struct rawcall *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (c->attrs[i].data <= UINT32_MAX &&
		    is_verbs_handle((uint32_t)c->attrs[i].data))
			c->attrs[i].data = ~0u - t_rand_below(16);
}

/* Write commands that destroy the object their input names. */
static int write_cmd_destroys(uint64_t cmd)
{
	switch (cmd) {
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DEREG_MR:
	case IB_USER_VERBS_CMD_DEALLOC_MW:
	case IB_USER_VERBS_CMD_DESTROY_CQ:
	case IB_USER_VERBS_CMD_DESTROY_QP:
	case IB_USER_VERBS_CMD_DESTROY_SRQ:
	case IB_USER_VERBS_CMD_DESTROY_AH:
	case IB_USER_VERBS_CMD_CLOSE_XRCD:
		return 1;
	}
	return 0;
}

/* Issue the call; the header's length and count as built unless broken. */
static int raw_ioctl(int fd, struct rawcall *c, int n, int break_hdr)
{
	int ret;

	c->hdr.num_attrs = n;
	c->hdr.length = sizeof(c->hdr) + n * sizeof(c->attrs[0]);
	if (break_hdr) {
		if (t_one_in(2))
			c->hdr.length = (uint16_t)nasty32();
		else
			c->hdr.num_attrs = (uint16_t)nasty32();
	}
	/*
	 * A mutated header can name DEVICE/GET_CONTEXT (see the method
	 * table: a core bug leaks a task reference when it fails, as it does
	 * on every file the workers use). Ask QUERY_CONTEXT instead.
	 */
	if (c->hdr.object_id == UVERBS_OBJECT_DEVICE &&
	    c->hdr.method_id == UVERBS_METHOD_GET_CONTEXT)
		c->hdr.method_id = UVERBS_METHOD_QUERY_CONTEXT;
	me->raw_ioctls++;
	ret = ioctl(fd, RDMA_VERBS_IOCTL, c);
	if (!ret)
		me->ok++;
	return ret;
}

/* Map a ring of a raw object from the create response. */
static void *map_ring(uint64_t off, uint64_t len)
{
	void *p;

	if (!len || len > (64u << 20))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, off);
	maps_dirty = 1;
	return p == MAP_FAILED ? NULL : p;
}

/* After a successful create: remember the object, map its rings. */
static void raw_created(const struct mtmpl *m, struct rawcall *c, int n)
{
	int i, k, uhw_out = -1, handle = -1;

	for (i = 0; i < n; i++) {
		if (c->attrs[i].attr_id == m->a[0].id && m->a[0].kind == A_NEW)
			handle = i;
		if (c->attrs[i].attr_id == UVERBS_ATTR_UHW_OUT)
			uhw_out = i;
	}
	if (handle < 0)
		return;
	k = raw_add(m->obj, (uint32_t)c->attrs[handle].data);
	if (k < 0 || uhw_out < 0 || c->attrs[uhw_out].data != (uintptr_t)outbuf[uhw_out])
		return;
	if (m->obj == UVERBS_OBJECT_QP &&
	    c->attrs[uhw_out].len >= sizeof(struct scire_create_qp_resp)) {
		struct scire_create_qp_resp r;

		memcpy(&r, outbuf[uhw_out], sizeof(r));
		raws[k].map[0] = map_ring(r.sq_mmap_offset, r.sq_mmap_size);
		raws[k].len[0] = r.sq_mmap_size;
		raws[k].entries[0] = r.sq_entries;
		raws[k].wqe_size[0] = r.sq_wqe_size;
		raws[k].map[1] = map_ring(r.rq_mmap_offset, r.rq_mmap_size);
		raws[k].len[1] = r.rq_mmap_size;
		raws[k].entries[1] = r.rq_entries;
		raws[k].wqe_size[1] = r.rq_wqe_size;
	} else if (m->obj == UVERBS_OBJECT_CQ &&
		   c->attrs[uhw_out].len >= sizeof(struct scire_create_cq_resp)) {
		struct scire_create_cq_resp r;

		memcpy(&r, outbuf[uhw_out], sizeof(r));
		raws[k].map[0] = map_ring(r.mmap_offset, r.mmap_size);
		raws[k].len[0] = r.mmap_size;
		raws[k].entries[0] = r.num_entries;
	}
}

/* One core or scire method, well-formed or broken. */
static void act_raw_method(void)
{
	const struct mtmpl *m;
	struct rawcall c;
	int i, n = 0, broken, ret;

	/* The doorbell and the creates more often: they reach scire's code. */
	i = t_rand_below(NMETHODS + 6);
	m = &methods[i < (int)NMETHODS ? i : (i - (int)NMETHODS) % 4];
	step(m->name);
	memset(&c, 0, sizeof(c));
	c.hdr.object_id = m->obj;
	c.hdr.method_id = m->method;
	for (i = 0; i < 14 && (m->a[i].kind || m->a[i].id || m->a[i].len); i++) {
		/* Optional attributes come and go. */
		if (i && t_one_in(6) && m->a[i].kind != A_NEW)
			continue;
		fill_attr(&c, n++, &m->a[i], m->destroys);
	}
	broken = t_one_in(2);
	if (broken) {
		int times = t_rand_range(1, 3);

		while (times--)
			mutate(&c, &n);
		if (m->destroys || c.hdr.object_id != m->obj || c.hdr.method_id != m->method)
			scrub_verbs_handles(&c, n);
	}
	ret = raw_ioctl(ctx->cmd_fd, &c, n, broken && t_one_in(8));
	if (ret)
		return;
	if (m->destroys == 1 && !broken) {
		int k;

		for (k = 0; k < NRAW; k++)
			if (raws[k].handle == (uint32_t)c.attrs[0].data)
				raw_forget(k);
		return;
	}
	if (m->method == UVERBS_METHOD_ASYNC_EVENT_ALLOC && m->obj == UVERBS_OBJECT_ASYNC_EVENT) {
		for (i = 0; i < n; i++)
			if (c.attrs[i].attr_id == UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE &&
			    c.attrs[i].data_s64 > 2 && c.attrs[i].data_s64 != ctx->cmd_fd)
				close(c.attrs[i].data_s64);
		return;
	}
	if (!broken && m->a[0].kind == A_NEW)
		raw_created(m, &c, n);
}

/* scire's doorbell on a random QP handle with random flags. */
static void act_doorbell(int fd, uint32_t handle)
{
	struct rawcall c;
	uint32_t flags;

	step("doorbell");
	memset(&c, 0, sizeof(c));
	c.hdr.object_id = UVERBS_OBJECT_QP;
	c.hdr.method_id = SCIRE_METHOD_QP_DOORBELL;
	c.attrs[0].attr_id = SCIRE_ATTR_DOORBELL_QP_HANDLE;
	c.attrs[0].flags = UVERBS_ATTR_F_MANDATORY;
	c.attrs[0].data = handle;
	flags = t_one_in(4) ? nasty32() : t_rand_range(1, 3);
	c.attrs[1].attr_id = SCIRE_ATTR_DOORBELL_FLAGS;
	c.attrs[1].flags = UVERBS_ATTR_F_MANDATORY;
	c.attrs[1].len = 4;
	memcpy(&c.attrs[1].data, &flags, 4);
	raw_ioctl(fd, &c, 2, 0);
}

/* --- write commands through UVERBS_METHOD_INVOKE_WRITE ---------------------------- */

struct wtmpl {
	const char *name;
	uint32_t cmd;
	uint16_t in, out;
	uint8_t creates;		/* UVERBS_OBJECT_* whose handle is at out offset 0 */
	uint8_t destroys;		/* the handle at hoff[0] is destroyed */
	struct { uint16_t off; uint8_t obj; } h[4];
};

#define WH(s, f, o)	{ offsetof(struct s, f), o }

static const struct wtmpl wcmds[] = {
	{ "w QUERY_DEVICE", IB_USER_VERBS_CMD_QUERY_DEVICE, sizeof(struct ib_uverbs_query_device),
	  sizeof(struct ib_uverbs_query_device_resp), 0, 0, { { 0, 0 } } },
	{ "w QUERY_PORT", IB_USER_VERBS_CMD_QUERY_PORT, sizeof(struct ib_uverbs_query_port),
	  sizeof(struct ib_uverbs_query_port_resp), 0, 0, { { 0, 0 } } },
	{ "w ALLOC_PD", IB_USER_VERBS_CMD_ALLOC_PD, sizeof(struct ib_uverbs_alloc_pd),
	  sizeof(struct ib_uverbs_alloc_pd_resp), UVERBS_OBJECT_PD, 0, { { 0, 0 } } },
	{ "w DEALLOC_PD", IB_USER_VERBS_CMD_DEALLOC_PD, sizeof(struct ib_uverbs_dealloc_pd), 0, 0, 1,
	  { WH(ib_uverbs_dealloc_pd, pd_handle, UVERBS_OBJECT_PD) } },
	{ "w CREATE_AH", IB_USER_VERBS_CMD_CREATE_AH, sizeof(struct ib_uverbs_create_ah),
	  sizeof(struct ib_uverbs_create_ah_resp), UVERBS_OBJECT_AH, 0,
	  { WH(ib_uverbs_create_ah, pd_handle, UVERBS_OBJECT_PD) } },
	{ "w REG_MR", IB_USER_VERBS_CMD_REG_MR, sizeof(struct ib_uverbs_reg_mr),
	  sizeof(struct ib_uverbs_reg_mr_resp), UVERBS_OBJECT_MR, 0,
	  { WH(ib_uverbs_reg_mr, pd_handle, UVERBS_OBJECT_PD) } },
	{ "w REREG_MR", IB_USER_VERBS_CMD_REREG_MR, sizeof(struct ib_uverbs_rereg_mr),
	  sizeof(struct ib_uverbs_rereg_mr_resp), 0, 0,
	  { WH(ib_uverbs_rereg_mr, mr_handle, UVERBS_OBJECT_MR),
	    WH(ib_uverbs_rereg_mr, pd_handle, UVERBS_OBJECT_PD) } },
	{ "w DEREG_MR", IB_USER_VERBS_CMD_DEREG_MR, sizeof(struct ib_uverbs_dereg_mr), 0, 0, 1,
	  { WH(ib_uverbs_dereg_mr, mr_handle, UVERBS_OBJECT_MR) } },
	{ "w ALLOC_MW", IB_USER_VERBS_CMD_ALLOC_MW, sizeof(struct ib_uverbs_alloc_mw),
	  sizeof(struct ib_uverbs_alloc_mw_resp), UVERBS_OBJECT_MW, 0,
	  { WH(ib_uverbs_alloc_mw, pd_handle, UVERBS_OBJECT_PD) } },
	{ "w DEALLOC_MW", IB_USER_VERBS_CMD_DEALLOC_MW, sizeof(struct ib_uverbs_dealloc_mw), 0, 0, 1,
	  { WH(ib_uverbs_dealloc_mw, mw_handle, UVERBS_OBJECT_MW) } },
	{ "w CREATE_CQ", IB_USER_VERBS_CMD_CREATE_CQ, sizeof(struct ib_uverbs_create_cq),
	  sizeof(struct ib_uverbs_create_cq_resp), UVERBS_OBJECT_CQ, 0, { { 0, 0 } } },
	{ "w RESIZE_CQ", IB_USER_VERBS_CMD_RESIZE_CQ, sizeof(struct ib_uverbs_resize_cq),
	  sizeof(struct ib_uverbs_resize_cq_resp), 0, 0,
	  { WH(ib_uverbs_resize_cq, cq_handle, UVERBS_OBJECT_CQ) } },
	{ "w POLL_CQ", IB_USER_VERBS_CMD_POLL_CQ, sizeof(struct ib_uverbs_poll_cq),
	  sizeof(struct ib_uverbs_poll_cq_resp) + 4 * sizeof(struct ib_uverbs_wc), 0, 0,
	  { WH(ib_uverbs_poll_cq, cq_handle, UVERBS_OBJECT_CQ) } },
	{ "w REQ_NOTIFY_CQ", IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, sizeof(struct ib_uverbs_req_notify_cq),
	  0, 0, 0, { WH(ib_uverbs_req_notify_cq, cq_handle, UVERBS_OBJECT_CQ) } },
	{ "w CREATE_QP", IB_USER_VERBS_CMD_CREATE_QP, sizeof(struct ib_uverbs_create_qp),
	  sizeof(struct ib_uverbs_create_qp_resp), UVERBS_OBJECT_QP, 0,
	  { WH(ib_uverbs_create_qp, pd_handle, UVERBS_OBJECT_PD),
	    WH(ib_uverbs_create_qp, send_cq_handle, UVERBS_OBJECT_CQ),
	    WH(ib_uverbs_create_qp, recv_cq_handle, UVERBS_OBJECT_CQ),
	    WH(ib_uverbs_create_qp, srq_handle, UVERBS_OBJECT_SRQ) } },
	{ "w QUERY_QP", IB_USER_VERBS_CMD_QUERY_QP, sizeof(struct ib_uverbs_query_qp),
	  sizeof(struct ib_uverbs_query_qp_resp), 0, 0,
	  { WH(ib_uverbs_query_qp, qp_handle, UVERBS_OBJECT_QP) } },
	{ "w MODIFY_QP", IB_USER_VERBS_CMD_MODIFY_QP, sizeof(struct ib_uverbs_modify_qp), 0, 0, 0,
	  { WH(ib_uverbs_modify_qp, qp_handle, UVERBS_OBJECT_QP) } },
	{ "w POST_SEND", IB_USER_VERBS_CMD_POST_SEND,
	  sizeof(struct ib_uverbs_post_send) + 2 * sizeof(struct ib_uverbs_send_wr) +
	  2 * sizeof(struct ib_uverbs_sge), sizeof(struct ib_uverbs_post_send_resp), 0, 0,
	  { WH(ib_uverbs_post_send, qp_handle, UVERBS_OBJECT_QP) } },
	{ "w POST_RECV", IB_USER_VERBS_CMD_POST_RECV,
	  sizeof(struct ib_uverbs_post_recv) + 2 * sizeof(struct ib_uverbs_recv_wr) +
	  2 * sizeof(struct ib_uverbs_sge), sizeof(struct ib_uverbs_post_recv_resp), 0, 0,
	  { WH(ib_uverbs_post_recv, qp_handle, UVERBS_OBJECT_QP) } },
	{ "w ATTACH_MCAST", IB_USER_VERBS_CMD_ATTACH_MCAST, sizeof(struct ib_uverbs_attach_mcast), 0,
	  0, 0, { WH(ib_uverbs_attach_mcast, qp_handle, UVERBS_OBJECT_QP) } },
	{ "w DETACH_MCAST", IB_USER_VERBS_CMD_DETACH_MCAST, sizeof(struct ib_uverbs_detach_mcast), 0,
	  0, 0, { WH(ib_uverbs_detach_mcast, qp_handle, UVERBS_OBJECT_QP) } },
	{ "w CREATE_SRQ", IB_USER_VERBS_CMD_CREATE_SRQ, sizeof(struct ib_uverbs_create_srq),
	  sizeof(struct ib_uverbs_create_srq_resp), UVERBS_OBJECT_SRQ, 0,
	  { WH(ib_uverbs_create_srq, pd_handle, UVERBS_OBJECT_PD) } },
	{ "w MODIFY_SRQ", IB_USER_VERBS_CMD_MODIFY_SRQ, sizeof(struct ib_uverbs_modify_srq), 0, 0, 0,
	  { WH(ib_uverbs_modify_srq, srq_handle, UVERBS_OBJECT_SRQ) } },
	{ "w QUERY_SRQ", IB_USER_VERBS_CMD_QUERY_SRQ, sizeof(struct ib_uverbs_query_srq),
	  sizeof(struct ib_uverbs_query_srq_resp), 0, 0,
	  { WH(ib_uverbs_query_srq, srq_handle, UVERBS_OBJECT_SRQ) } },
	{ "w POST_SRQ_RECV", IB_USER_VERBS_CMD_POST_SRQ_RECV,
	  sizeof(struct ib_uverbs_post_srq_recv) + 2 * sizeof(struct ib_uverbs_recv_wr) +
	  2 * sizeof(struct ib_uverbs_sge), sizeof(struct ib_uverbs_post_srq_recv_resp), 0, 0,
	  { WH(ib_uverbs_post_srq_recv, srq_handle, UVERBS_OBJECT_SRQ) } },
	{ "w DESTROY_QP", IB_USER_VERBS_CMD_DESTROY_QP, sizeof(struct ib_uverbs_destroy_qp),
	  sizeof(struct ib_uverbs_destroy_qp_resp), 0, 1,
	  { WH(ib_uverbs_destroy_qp, qp_handle, UVERBS_OBJECT_QP) } },
	{ "w unknown", 0, 64, 64, 0, 0, { { 0, 0 } } },
};

#define NWCMDS	(sizeof(wcmds) / sizeof(wcmds[0]))

/* Random contents for a modify_qp request, its state and mask not too far off. */
static void random_modify_qp(struct ib_uverbs_modify_qp *m)
{
	t_rand_fill(m, sizeof(*m));
	m->qp_state = t_rand_below(8);
	m->cur_qp_state = t_rand_below(8);
	m->attr_mask = t_one_in(4) ? nasty32() : (uint32_t)t_rand64() & ((1u << 21) - 1);
	m->dest.port_num = t_one_in(4) ? t_rand_below(4) : 1;
	m->dest.sgid_index = t_one_in(4) ? (int)t_rand_below(256) : gid_index;
	m->dest.is_global = !t_one_in(8);
	if (t_one_in(2))
		memcpy(m->dest.dgid, own_gid.raw, 16);
	m->port_num = t_one_in(4) ? t_rand_below(4) : 1;
	m->path_mtu = t_rand_below(8);
	m->pkey_index = t_one_in(4) ? (uint16_t)t_rand64() : 0;
}

static void act_invoke_write(void)
{
	const struct wtmpl *w = &wcmds[t_rand_below(NWCMDS)];
	static uint8_t in[ABUF_LEN], out[ABUF_LEN];
	struct rawcall c;
	uint64_t cmd = w->cmd;
	size_t inlen = w->in;
	int i, n = 0, broken, ret;

	step(w->name);
	if (!strcmp(w->name, "w unknown"))
		cmd = t_one_in(2) ? t_rand_range(IB_USER_VERBS_CMD_OPEN_QP, 64) : nasty32();
	/* Random input to a destroy could name one of libibverbs' objects. */
	if (!w->destroys && write_cmd_destroys(cmd))
		return;
	if (w->cmd == IB_USER_VERBS_CMD_MODIFY_QP)
		random_modify_qp((struct ib_uverbs_modify_qp *)in);
	else if (t_one_in(2))
		memset(in, 0, inlen);
	else
		t_rand_fill(in, inlen);
	if (w->cmd == IB_USER_VERBS_CMD_REG_MR && t_one_in(2)) {
		struct ib_uverbs_reg_mr *r = (struct ib_uverbs_reg_mr *)in;
		int k = PICK(mrs, 1);

		/* Within memory that exists, so the registration gets far. */
		r->start = k >= 0 ? (uintptr_t)mrs[k].buf + t_rand_below(4096) : (uintptr_t)in;
		r->length = t_rand_range(1, 8192);
		r->hca_va = t_one_in(2) ? r->start : nasty64();
		r->access_flags = t_rand_below(1 << 8);
	}
	if (w->cmd == IB_USER_VERBS_CMD_CREATE_CQ || w->cmd == IB_USER_VERBS_CMD_RESIZE_CQ ||
	    w->cmd == IB_USER_VERBS_CMD_CREATE_SRQ || w->cmd == IB_USER_VERBS_CMD_CREATE_QP) {
		uint32_t *v = (uint32_t *)(in + 8);

		/* Sizes: small numbers most of the time, so objects get created. */
		for (i = 2; i < (int)inlen / 4 - 2; i++)
			if (!t_one_in(4))
				v[i] = t_rand_below(64);
		if (w->cmd == IB_USER_VERBS_CMD_CREATE_CQ)
			((struct ib_uverbs_create_cq *)in)->comp_channel = -1;
		if (w->cmd == IB_USER_VERBS_CMD_CREATE_QP)
			((struct ib_uverbs_create_qp *)in)->qp_type = t_rand_range(2, 4);
	}
	for (i = 0; i < 4 && w->h[i].obj; i++) {
		uint32_t h = pick_handle(w->h[i].obj, w->destroys && !i);

		memcpy(in + w->h[i].off, &h, 4);
	}

	memset(&c, 0, sizeof(c));
	c.hdr.object_id = UVERBS_OBJECT_DEVICE;
	c.hdr.method_id = UVERBS_METHOD_INVOKE_WRITE;
	c.attrs[n].attr_id = UVERBS_ATTR_WRITE_CMD;
	c.attrs[n].len = sizeof(cmd);
	c.attrs[n++].data = cmd;
	c.attrs[n].attr_id = UVERBS_ATTR_CORE_IN;
	c.attrs[n].len = inlen;
	c.attrs[n].data = fz_ptr(in, inlen);
	/*
	 * A destroy takes its handle from in, where pick_handle() put one
	 * that is not libibverbs'. The read-only page holds zeros, and handle
	 * 0 is often libibverbs' (seen: its QP taken, then the provider
	 * cleaning the freed CQ of that ibv_qp when the handle named a new QP).
	 */
	if (w->destroys && c.attrs[n].data == (uintptr_t)ro_page)
		c.attrs[n].data = (uintptr_t)in;
	n++;
	if (w->out) {
		c.attrs[n].attr_id = UVERBS_ATTR_CORE_OUT;
		c.attrs[n].len = w->out;
		c.attrs[n++].data = fz_ptr(out, w->out);
	}
	if (t_one_in(2)) {
		static const struct atmpl uhw[2] = {
			{ UVERBS_ATTR_UHW_IN, A_UHW_IN, 0, 0 },
			{ UVERBS_ATTR_UHW_OUT, A_UHW_OUT, 0, 64 },
		};

		fill_attr(&c, n, &uhw[0], 0);
		n++;
		fill_attr(&c, n, &uhw[1], 0);
		n++;
	}
	broken = t_one_in(4);
	if (broken) {
		uint64_t core_in = c.attrs[1].data;

		mutate(&c, &n);
		/*
		 * As for the methods (scrub_verbs_handles()): another method
		 * in the header, a command turned into a destroy of whatever
		 * the input holds, or a destroy reading its handle from other
		 * bytes could take an object of libibverbs'. Not made.
		 */
		if (c.hdr.object_id != UVERBS_OBJECT_DEVICE ||
		    c.hdr.method_id != UVERBS_METHOD_INVOKE_WRITE)
			return;
		for (i = 0; i < n; i++) {
			if (c.attrs[i].attr_id == UVERBS_ATTR_WRITE_CMD &&
			    c.attrs[i].data != cmd && write_cmd_destroys(c.attrs[i].data))
				return;
			if (c.attrs[i].attr_id == UVERBS_ATTR_CORE_IN && w->destroys &&
			    c.attrs[i].data != core_in)
				return;
		}
	}
	ret = raw_ioctl(ctx->cmd_fd, &c, n, broken && t_one_in(8));
	if (ret || broken)
		return;
	if (w->creates && c.attrs[2].data == (uintptr_t)out) {
		uint32_t h;

		memcpy(&h, out, 4);
		raw_add(w->creates, h);
	}
	if (w->destroys) {
		uint32_t h;

		memcpy(&h, in + w->h[0].off, 4);
		for (i = 0; i < NRAW; i++)
			if (raws[i].handle == h)
				raw_forget(i);
	}
}

/* --- the rings of raw QPs and CQs ----------------------------------------------- */

static void release_u32(void *p, uint32_t v)
{
	__atomic_store_n((uint32_t *)p, v, __ATOMIC_RELEASE);
}

/* Write WQEs into a raw QP's SQ or RQ, move its producer, ring the doorbell. */
static void act_raw_ring(void)
{
	struct scire_wq_ring *ring;
	struct fz_raw *r;
	uint32_t prod, i, n, q;
	int k = raw_pick(UVERBS_OBJECT_QP);
	uint8_t *slot;

	if (k < 0)
		return;
	r = &raws[k];
	q = t_one_in(3);
	if (!r->map[q] || !r->entries[q] || r->len[q] < SCIRE_WQ_RING_HDR_SIZE)
		return;
	step("raw ring");
	ring = r->map[q];
	prod = t_one_in(8) ? nasty32() : ring->producer;
	n = t_rand_range(1, 4);
	for (i = 0; i < n; i++, prod++) {
		uint64_t off = SCIRE_WQ_RING_HDR_SIZE +
			       (uint64_t)(prod & (r->entries[q] - 1)) * r->wqe_size[q];

		if (off + r->wqe_size[q] > r->len[q])
			break;
		slot = (uint8_t *)r->map[q] + off;
		t_rand_fill(slot, r->wqe_size[q]);
		if (!q) {
			struct scire_send_wqe *w = (struct scire_send_wqe *)slot;
			struct scire_sge *sge = (struct scire_sge *)w->data;
			int m = PICK(mrs, 1), s;

			/* Plausible enough to get past the first checks. */
			w->opcode = t_rand_below(SCIRE_WQE_OP_MAX + 2);
			w->flags = t_rand_below(32);
			w->num_sge = t_rand_below(4);
			w->inline_len = t_one_in(4) ? nasty32() : t_rand_below(128);
			if (m >= 0)
				w->rdma.rkey = mrs[m].mr->rkey;
			for (s = 0; s < w->num_sge && m >= 0 &&
			     (uint8_t *)(sge + s + 1) <= slot + r->wqe_size[q]; s++) {
				sge[s].addr = (uintptr_t)mrs[m].buf + t_rand_below(MR_BUF);
				sge[s].length = t_rand_below(MR_BUF);
				sge[s].lkey = t_one_in(4) ? nasty32() : mrs[m].mr->lkey;
			}
		} else {
			((struct scire_recv_wqe *)slot)->num_sge = t_rand_below(6);
		}
	}
	release_u32(&ring->producer, t_one_in(8) ? nasty32() : prod);
	act_doorbell(ctx->cmd_fd, r->handle);
}

/* --- scribbling every uverbs mapping ----------------------------------------------- */

struct mapping {
	uint8_t *start;
	size_t len;
};

static struct mapping maps[MAX_MAPS];
static int nmaps;

static void scan_maps(void)
{
	char line[512], path[256], perms[8];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");

	nmaps = 0;
	maps_dirty = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nmaps < MAX_MAPS) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms, path) < 3)
			continue;
		if (strncmp(path, "/dev/infiniband/uverbs", 22))
			continue;
		if (perms[1] != 'w' && mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE))
			continue;
		maps[nmaps].start = (uint8_t *)lo;
		maps[nmaps++].len = hi - lo;
	}
	fclose(f);
}

static void act_scribble(void)
{
	struct mapping *m;
	size_t off;
	int k;

	step("scribble");
	if (maps_dirty)
		scan_maps();
	if (!nmaps)
		return;
	m = &maps[t_rand_below(nmaps)];
	for (k = t_rand_range(1, 6); k; k--) {
		uint32_t v = nasty32();

		switch (t_rand_below(5)) {
		case 0: off = 0; break;				/* producer */
		case 1: off = SCIRE_RING_LINE; break;		/* consumer */
		case 2: off = 2 * SCIRE_RING_LINE + 4 * t_rand_below(2); break; /* arm, flags */
		default: off = t_rand_below(m->len) & ~3UL; break;
		}
		if (off + 4 <= m->len)
			release_u32(m->start + off, v);
	}
	if (t_one_in(50))
		t_rand_fill(m->start + 3 * SCIRE_RING_LINE,
			    m->len > 3 * SCIRE_RING_LINE ? t_rand_below(m->len - 3 * SCIRE_RING_LINE) : 0);
	act_doorbell(ctx->cmd_fd, pick_handle(UVERBS_OBJECT_QP, 0));
}

/* --- libibverbs ---------------------------------------------------------------------- */

static unsigned int rand_access(void)
{
	if (t_one_in(8))
		return nasty32();
	return t_rand64() & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			     IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED);
}

static struct ibv_pd *any_pd(void)
{
	int i = PICK(pds, 1);

	return i < 0 ? NULL : pds[i];
}

static struct ibv_cq *any_cq(void)
{
	int i = PICK(cqs, 1);

	return i < 0 ? NULL : cqs[i].cq;
}

/* Read and acknowledge every pending completion event: a CQ's destroy waits for that. */
static void drain_channel(struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	while (ch && !ibv_get_cq_event(ch, &cq, &cq_ctx))
		ibv_ack_cq_events(cq, 1);
}

static void v_pd(void)
{
	int i = PICK(pds, !t_one_in(2));

	if (i < 0)
		return;
	if (!pds[i]) {
		step("alloc_pd");
		pds[i] = verbp(ibv_alloc_pd(ctx));
	} else {
		step("dealloc_pd");
		if (verb(ibv_dealloc_pd(pds[i])))
			pds[i] = NULL;
	}
}

static void v_cq(void)
{
	int i = PICK(cqs, !t_one_in(2)), cqe;
	struct fz_cq *c;

	if (i < 0)
		return;
	c = &cqs[i];
	if (!c->cq) {
		step("create_cq");
		cqe = t_one_in(8) ? (int)nasty32() : (int)t_rand_range(1, 300);
		c->ch = t_one_in(2) ? chans[t_rand_below(2)] : NULL;
		c->cq = verbp(ibv_create_cq(ctx, cqe, NULL, c->ch,
					    t_one_in(8) ? (int)nasty32() : 0));
		maps_dirty = 1;
		return;
	}
	switch (t_rand_below(4)) {
	case 0:
		step("resize_cq");
		verb(ibv_resize_cq(c->cq, t_one_in(6) ? (int)nasty32() : (int)t_rand_range(1, 600)));
		maps_dirty = 1;
		break;
	case 1:
	case 2:
		step("req_notify_cq");
		verb(ibv_req_notify_cq(c->cq, t_rand_below(2)));
		break;
	default:
		step("destroy_cq");
		drain_channel(c->ch);
		if (verb(ibv_destroy_cq(c->cq))) {
			c->cq = NULL;
			maps_dirty = 1;
		}
	}
}

static void v_mr(void)
{
	int i = PICK(mrs, !t_one_in(2));
	struct fz_mr *m;
	struct ibv_pd *pd;

	if (i < 0)
		return;
	m = &mrs[i];
	if (m->mr) {
		step("dereg_mr");
		if (verb(ibv_dereg_mr(m->mr)))
			m->mr = NULL;
		return;
	}
	pd = any_pd();
	if (!pd)
		return;
	if (!m->buf && dmabuf_fd >= 0)
		m->buf = mmap(NULL, MR_BUF, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf_memfd,
			      (off_t)i * MR_BUF);
	else if (!m->buf)
		m->buf = mmap(NULL, MR_BUF, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->buf == MAP_FAILED) {
		m->buf = NULL;
		return;
	}
	if (dmabuf_fd >= 0 && t_one_in(3)) {
		uint64_t off = t_rand_below(MR_BUF / 2);
		struct ibv_mr *bad;

		step("reg_dmabuf_mr");
		if (t_one_in(6)) {
			/* Odd ranges and iovas: refused, or not kept. */
			bad = verbp(ibv_reg_dmabuf_mr(pd, t_one_in(2) ? nasty64() : off,
						      t_one_in(2) ? nasty64() : MR_BUF * NOBJ,
						      nasty64(), pick_fd(), rand_access()));
			if (bad)
				verb(ibv_dereg_mr(bad));
			return;
		}
		m->mr = verbp(ibv_reg_dmabuf_mr(pd, (uint64_t)i * MR_BUF + off,
						t_rand_range(1, MR_BUF / 2),
						(uintptr_t)m->buf + off, dmabuf_fd,
						rand_access() |
						(t_one_in(4) ? 0 : IBV_ACCESS_LOCAL_WRITE)));
		return;
	}
	step("reg_mr");
	if (t_one_in(6)) {
		/* Odd ranges: the kernel says no; they are not kept. */
		struct ibv_mr *bad = verbp(ibv_reg_mr(pd, t_one_in(2) ? guard_page : m->buf,
						       t_one_in(2) ? nasty64() : MR_BUF * 2,
						       rand_access()));

		if (bad)
			verb(ibv_dereg_mr(bad));
		return;
	}
	/* One in four on demand (ODP): its pages are faulted in as used. */
	m->mr = verbp(ibv_reg_mr(pd, m->buf + t_rand_below(MR_BUF / 2),
				 t_rand_range(1, MR_BUF / 2), rand_access() |
				 (t_one_in(4) ? 0 : IBV_ACCESS_LOCAL_WRITE) |
				 (t_one_in(4) ? IBV_ACCESS_ON_DEMAND : 0)));
}

static void v_mw(void)
{
	int i = PICK(mws, !t_one_in(2));
	struct ibv_pd *pd = any_pd();

	if (i < 0)
		return;
	if (mws[i]) {
		step("dealloc_mw");
		if (verb(ibv_dealloc_mw(mws[i])))
			mws[i] = NULL;
	} else if (pd) {
		step("alloc_mw");
		mws[i] = verbp(ibv_alloc_mw(pd, t_one_in(2) ? IBV_MW_TYPE_1 :
					    t_one_in(8) ? (enum ibv_mw_type)nasty32() : IBV_MW_TYPE_2));
	}
}

static void v_srq(void)
{
	int i = PICK(srqs, !t_one_in(2));
	struct ibv_srq_init_attr a = { 0 };
	struct ibv_srq_attr sa;
	struct ibv_pd *pd = any_pd();

	if (i < 0)
		return;
	if (!srqs[i]) {
		if (!pd)
			return;
		step("create_srq");
		a.attr.max_wr = t_one_in(6) ? nasty32() : t_rand_range(1, 128);
		a.attr.max_sge = t_one_in(6) ? nasty32() : t_rand_range(1, 4);
		a.attr.srq_limit = t_one_in(3) ? t_rand_below(64) : 0;
		if (xrcd && t_one_in(4)) {
			struct ibv_srq_init_attr_ex x = {
				.attr = a.attr,
				.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
					     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
				.srq_type = IBV_SRQT_XRC,
				.pd = pd,
				.xrcd = xrcd,
				.cq = any_cq(),
			};

			if (!x.cq)
				return;
			step("create XRC SRQ");
			srqs[i] = verbp(ibv_create_srq_ex(ctx, &x));
		} else {
			srqs[i] = verbp(ibv_create_srq(pd, &a));
		}
		maps_dirty = 1;
		return;
	}
	switch (t_rand_below(3)) {
	case 0:
		step("modify_srq");
		sa.max_wr = t_one_in(3) ? nasty32() : t_rand_below(200);
		sa.srq_limit = t_one_in(3) ? nasty32() : t_rand_below(200);
		verb(ibv_modify_srq(srqs[i], &sa, t_one_in(4) ? nasty32() : t_rand_range(0, 3)));
		/* IBV_SRQ_MAX_WR maps a new ring and unmaps the old one. */
		maps_dirty = 1;
		break;
	case 1:
		step("query_srq");
		verb(ibv_query_srq(srqs[i], &sa));
		break;
	default:
		step("destroy_srq");
		if (verb(ibv_destroy_srq(srqs[i]))) {
			srqs[i] = NULL;
			maps_dirty = 1;
		}
	}
}

static void v_create_qp(int i)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
						  IBV_QPT_RAW_PACKET };
	struct ibv_qp_init_attr a = { 0 };
	struct ibv_pd *pd = any_pd();
	int s = PICK(srqs, 1);

	a.send_cq = any_cq();
	a.recv_cq = t_one_in(2) ? a.send_cq : any_cq();
	if (!pd || !a.send_cq || !a.recv_cq)
		return;
	step("create_qp");
	a.qp_type = types[t_rand_below(4)];
	if (s >= 0 && t_one_in(3))
		a.srq = srqs[s];
	a.cap.max_send_wr = t_one_in(8) ? nasty32() : t_rand_range(1, 64);
	a.cap.max_recv_wr = t_one_in(8) ? nasty32() : t_rand_range(1, 64);
	a.cap.max_send_sge = t_one_in(8) ? nasty32() : t_rand_range(1, 4);
	a.cap.max_recv_sge = t_one_in(8) ? nasty32() : t_rand_range(1, 4);
	a.cap.max_inline_data = t_one_in(4) ? nasty32() & 0x3ff : 0;
	a.sq_sig_all = t_rand_below(2);
	/* XRC: a send QP (no RQ, no SRQ) or a receive QP of the domain. */
	if (xrcd && t_one_in(5)) {
		if (t_one_in(2)) {
			struct ibv_qp_init_attr_ex x = {
				.qp_type = IBV_QPT_XRC_RECV,
				.comp_mask = IBV_QP_INIT_ATTR_XRCD,
				.xrcd = xrcd,
			};

			step("create XRC receive QP");
			qps[i].qp = verbp(ibv_create_qp_ex(ctx, &x));
			qps[i].type = x.qp_type;
			maps_dirty = 1;
			return;
		}
		a.qp_type = IBV_QPT_XRC_SEND;
		a.srq = NULL;
		if (!t_one_in(8))
			a.recv_cq = NULL;
		step("create XRC send QP");
	}
	qps[i].qp = verbp(ibv_create_qp(pd, &a));
	qps[i].type = a.qp_type;
	maps_dirty = 1;
}

/* Along the valid path: RESET, INIT, RTR, RTS, towards another QP of ours. */
static void v_connect_qp(struct fz_qp *q)
{
	struct ibv_qp_attr a;
	int j = PICK(qps, 1);
	uint32_t dest = j >= 0 ? qps[j].qp->qp_num : t_rand_below(1 << 24);

	step("modify_qp to RTS");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	verb(ibv_modify_qp(q->qp, &a, IBV_QP_STATE));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = T_RC_ACCESS | IBV_ACCESS_LOCAL_WRITE;
	a.qkey = 0x11110000;
	/* A raw packet QP takes a port on the way to INIT, nothing after. */
	if (q->type == IBV_QPT_RAW_PACKET) {
		if (!verb(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PORT)))
			return;
		a.qp_state = IBV_QPS_RTR;
		if (!verb(ibv_modify_qp(q->qp, &a, IBV_QP_STATE)))
			return;
		a.qp_state = IBV_QPS_RTS;
		verb(ibv_modify_qp(q->qp, &a, IBV_QP_STATE));
		return;
	}
	if (!verb(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				(q->type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS))))
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = t_rand_range(IBV_MTU_256, IBV_MTU_1024);
	a.dest_qp_num = dest;
	a.rq_psn = t_rand64() & 0xffffff;
	a.max_dest_rd_atomic = t_rand_range(1, 16);
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = own_gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	/* An XRC send QP takes UC's RTR attributes, a receive QP stops at RTR. */
	if (!verb(ibv_modify_qp(q->qp, &a, q->type == IBV_QPT_UD ? IBV_QP_STATE :
				q->type == IBV_QPT_UC || q->type == IBV_QPT_XRC_SEND ?
				IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN :
				IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = t_rand_range(1, 14);
	a.retry_cnt = t_rand_below(8);
	a.rnr_retry = t_rand_below(7);
	a.sq_psn = t_rand64() & 0xffffff;
	a.max_rd_atomic = t_rand_range(1, 16);
	if (q->type == IBV_QPT_XRC_RECV)
		return;
	verb(ibv_modify_qp(q->qp, &a, q->type == IBV_QPT_RC || q->type == IBV_QPT_XRC_SEND ?
			   IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC :
			   IBV_QP_STATE | IBV_QP_SQ_PSN));
}

/* Any state, any mask, values at their boundaries. */
static void v_random_modify(struct fz_qp *q)
{
	struct ibv_qp_attr a;
	int mask;

	step("modify_qp random");
	t_rand_fill(&a, sizeof(a));
	a.qp_state = t_rand_below(8);
	a.cur_qp_state = t_rand_below(8);
	a.path_mtu = t_rand_below(7);
	a.port_num = t_one_in(4) ? t_rand_below(256) : 1;
	a.ah_attr.port_num = t_one_in(4) ? t_rand_below(256) : 1;
	a.ah_attr.grh.sgid_index = t_one_in(4) ? (int)t_rand_below(256) : gid_index;
	a.ah_attr.is_global = !t_one_in(8);
	a.pkey_index = t_one_in(4) ? t_rand_below(65536) : 0;
	a.alt_pkey_index = t_rand_below(4);
	a.max_rd_atomic = t_one_in(2) ? t_rand_below(256) : t_rand_range(0, 16);
	a.max_dest_rd_atomic = t_one_in(2) ? t_rand_below(256) : t_rand_range(0, 16);
	if (t_one_in(2))
		a.ah_attr.grh.dgid = own_gid;
	mask = t_one_in(4) ? (int)nasty32() : (int)(t_rand64() & ((1u << 21) - 1));
	if (t_one_in(2))
		mask |= IBV_QP_STATE;
	verb(ibv_modify_qp(q->qp, &a, mask));
}

static void v_qp(void)
{
	int i = PICK(qps, !t_one_in(3));
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (i < 0)
		return;
	if (!qps[i].qp) {
		v_create_qp(i);
		return;
	}
	switch (t_rand_below(6)) {
	case 0:
	case 1:
		v_connect_qp(&qps[i]);
		break;
	case 2:
	case 3:
		v_random_modify(&qps[i]);
		break;
	case 4:
		step("query_qp");
		verb(ibv_query_qp(qps[i].qp, &a, t_one_in(4) ? (int)nasty32() : IBV_QP_STATE, &init));
		break;
	default:
		step("destroy_qp");
		if (verb(ibv_destroy_qp(qps[i].qp))) {
			qps[i].qp = NULL;
			maps_dirty = 1;
		}
	}
}

/*
 * A flow of random type, priority and flags with up to four specs of the
 * kinds scire steers by, values and masks random or all-ones, on any QP
 * (only raw packet QPs take one); or a flow of the QP destroyed.
 */
static void v_flow(void)
{
	static const enum ibv_flow_spec_type kinds[] = {
		IBV_FLOW_SPEC_ETH, IBV_FLOW_SPEC_IPV4, IBV_FLOW_SPEC_IPV4_EXT,
		IBV_FLOW_SPEC_IPV6, IBV_FLOW_SPEC_TCP, IBV_FLOW_SPEC_UDP,
	};
	union {
		struct ibv_flow_attr attr;
		uint8_t b[sizeof(struct ibv_flow_attr) + 4 * sizeof(struct ibv_flow_spec_ipv6)];
	} u;
	int i = PICK(qps, 1), k = t_rand_below(2), n, j;
	uint8_t *p = u.b + sizeof(u.attr);

	if (i < 0)
		return;
	if (qps[i].flow[k]) {
		step("destroy_flow");
		if (verb(ibv_destroy_flow(qps[i].flow[k])))
			qps[i].flow[k] = NULL;
		return;
	}
	memset(&u, 0, sizeof(u));
	u.attr.type = t_one_in(8) ? t_rand_below(8) : t_rand_below(4);
	u.attr.priority = t_one_in(4) ? nasty32() : t_rand_below(4);
	u.attr.flags = t_one_in(4) ? t_rand_below(8) : 0;
	u.attr.port = t_one_in(8) ? t_rand_below(4) : 1;
	n = u.attr.type == IBV_FLOW_ATTR_NORMAL || t_one_in(8) ? t_rand_below(5) : 0;
	for (j = 0; j < n; j++) {
		enum ibv_flow_spec_type kind = kinds[t_rand_below(6)];
		/* Every ibv_flow_spec_* starts so. */
		struct { enum ibv_flow_spec_type type; uint16_t size; } *h = (void *)p;
		size_t size;

		switch (kind) {
		case IBV_FLOW_SPEC_ETH: size = sizeof(struct ibv_flow_spec_eth); break;
		case IBV_FLOW_SPEC_IPV4: size = sizeof(struct ibv_flow_spec_ipv4); break;
		case IBV_FLOW_SPEC_IPV4_EXT: size = sizeof(struct ibv_flow_spec_ipv4_ext); break;
		case IBV_FLOW_SPEC_IPV6: size = sizeof(struct ibv_flow_spec_ipv6); break;
		default: size = sizeof(struct ibv_flow_spec_tcp_udp); break;
		}
		t_rand_fill(p, size);
		/* Half the time the masks are all ones: exact matches. */
		if (t_one_in(2))
			memset(p + sizeof(*h) + (size - sizeof(*h)) / 2, 0xff,
			       (size - sizeof(*h)) / 2);
		h->type = kind;
		h->size = size;
		p += size;
	}
	u.attr.num_of_specs = n;
	u.attr.size = p - u.b;
	step("create_flow");
	qps[i].flow[k] = verbp(ibv_create_flow(qps[i].qp, &u.attr));
}

/*
 * Receive WQs, indirection tables and RSS QPs: create, move, post to and
 * destroy them at random (a destroy of one in use is refused: EBUSY).
 */
static void v_wq(void)
{
	static const uint8_t key[40] = { 0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7 };
	int i = PICK(wqs, !t_one_in(3)), t = PICK(tbls, !t_one_in(3)), q, n, k;
	struct ibv_wq *list[8];

	switch (t_rand_below(5)) {
	case 0:
		if (i < 0)
			return;
		if (!wqs[i]) {
			struct ibv_wq_init_attr a = {
				.wq_type = t_one_in(16) ? t_rand_below(4) : IBV_WQT_RQ,
				.max_wr = t_one_in(8) ? nasty32() : t_rand_range(1, 64),
				.max_sge = t_one_in(8) ? nasty32() : t_rand_range(0, 4),
				.pd = any_pd(),
				.cq = any_cq(),
			};

			if (!a.pd || !a.cq)
				return;
			step("create_wq");
			wqs[i] = verbp(ibv_create_wq(ctx, &a));
			maps_dirty = 1;
		} else {
			step("destroy_wq");
			if (verb(ibv_destroy_wq(wqs[i]))) {
				wqs[i] = NULL;
				maps_dirty = 1;
			}
		}
		return;
	case 1: {
		/*
		 * States past IBV_WQS_ERR are left out: 6.1's MODIFY_WQ returns
		 * EINVAL for them with the WQ's read lock still taken (a core
		 * bug, ib_uverbs_ex_modify_wq()), and closing the file WARNs.
		 */
		struct ibv_wq_attr a = {
			.attr_mask = t_one_in(4) ? t_rand_below(8) : IBV_WQ_ATTR_STATE,
			.wq_state = t_rand_below(3),
			.curr_wq_state = t_rand_below(3),
		};

		if (i < 0 || !wqs[i])
			return;
		step("modify_wq");
		verb(ibv_modify_wq(wqs[i], &a));
		return;
	}
	case 2: {
		struct ibv_sge sge = { 0 };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
		int m = PICK(mrs, 1);

		if (i < 0 || !wqs[i])
			return;
		if (m >= 0) {
			sge.addr = (uintptr_t)mrs[m].mr->addr + t_rand_below(64);
			sge.length = t_rand_below(4096);
			sge.lkey = t_one_in(8) ? (uint32_t)t_rand64() : mrs[m].mr->lkey;
		}
		wr.num_sge = t_one_in(8) ? (int)t_rand_below(64) : 1;
		step("post_wq_recv");
		verb(ibv_post_wq_recv(wqs[i], &wr, &bad));
		return;
	}
	case 3:
		if (t < 0)
			return;
		if (tbls[t]) {
			step("destroy_rwq_ind_table");
			if (verb(ibv_destroy_rwq_ind_table(tbls[t])))
				tbls[t] = NULL;
			return;
		}
		for (n = 0, k = 0; k < NOBJ && n < 8; k++)
			if (wqs[k])
				list[n++] = wqs[k];
		if (!n)
			return;
		{
			struct ibv_rwq_ind_table_init_attr a = {
				.log_ind_tbl_size = t_one_in(8) ? t_rand_below(32) :
						    t_rand_below(4),
				.ind_tbl = list,
			};

			/* The table names 2^log entries: repeat what there is. */
			if (a.log_ind_tbl_size > 3)
				return;
			for (k = n; k < (1 << a.log_ind_tbl_size); k++)
				list[k] = list[k % n];
			step("create_rwq_ind_table");
			tbls[t] = verbp(ibv_create_rwq_ind_table(ctx, &a));
		}
		return;
	default:
		q = PICK(qps, 0);
		if (t < 0 || !tbls[t] || q < 0 || !any_pd())
			return;
		{
			struct ibv_qp_init_attr_ex a = {
				.qp_type = IBV_QPT_RAW_PACKET,
				.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
					     IBV_QP_INIT_ATTR_IND_TABLE,
				.pd = any_pd(),
				.rwq_ind_tbl = tbls[t],
				.rx_hash_conf = {
					.rx_hash_function = t_one_in(8) ? t_rand_below(4) :
							    IBV_RX_HASH_FUNC_TOEPLITZ,
					.rx_hash_key_len = t_one_in(8) ? t_rand_below(64) : 40,
					.rx_hash_key = (uint8_t *)key,
					.rx_hash_fields_mask = t_one_in(8) ? t_rand64() :
							       t_rand_below(256),
				},
			};

			if (a.rx_hash_conf.rx_hash_key_len > sizeof(key))
				a.rx_hash_conf.rx_hash_key_len = sizeof(key);
			step("create RSS QP");
			qps[q].qp = verbp(ibv_create_qp_ex(ctx, &a));
			qps[q].type = IBV_QPT_RAW_PACKET;
			maps_dirty = 1;
		}
	}
}

static void v_ah(void)
{
	int i = PICK(ahs, !t_one_in(2));
	struct ibv_ah_attr a;
	struct ibv_pd *pd = any_pd();

	if (i < 0)
		return;
	if (ahs[i]) {
		step("destroy_ah");
		if (verb(ibv_destroy_ah(ahs[i])))
			ahs[i] = NULL;
		return;
	}
	if (!pd)
		return;
	step("create_ah");
	memset(&a, 0, sizeof(a));
	a.is_global = !t_one_in(8);
	a.port_num = t_one_in(8) ? t_rand_below(256) : 1;
	a.grh.sgid_index = t_one_in(8) ? (int)t_rand_below(256) : gid_index;
	a.grh.hop_limit = t_rand_below(256);
	a.grh.traffic_class = t_rand_below(256);
	a.grh.flow_label = nasty32();
	a.sl = t_rand_below(256);
	a.static_rate = t_rand_below(32);
	a.grh.dgid = own_gid;
	/*
	 * A random IPv6 GID most often has no route and fails at once; an
	 * IPv4 one on the link would wait for ARP: only now and then.
	 */
	if (t_one_in(4))
		t_rand_fill(a.grh.dgid.raw, 16);
	else if (t_one_in(40))
		a.grh.dgid.raw[15] ^= t_rand_range(1, 255);
	ahs[i] = verbp(ibv_create_ah(pd, &a));
}

static void v_post_send(void)
{
	int i = PICK(qps, 1), m = PICK(mrs, 1), w = PICK(mws, 1), h = PICK(ahs, 1), k;
	struct ibv_sge sge[4];
	struct ibv_send_wr wr, *bad;
	struct fz_qp *q;

	if (i < 0)
		return;
	q = &qps[i];
	step("post_send");
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = t_rand64();
	wr.sg_list = sge;
	wr.num_sge = t_rand_below(5);
	for (k = 0; k < wr.num_sge; k++) {
		sge[k].addr = m >= 0 ? (uintptr_t)mrs[m].buf + t_rand_below(MR_BUF) : nasty64();
		sge[k].length = t_one_in(4) ? nasty32() : t_rand_below(4096);
		sge[k].lkey = m >= 0 && !t_one_in(4) ? mrs[m].mr->lkey : nasty32();
	}
	wr.opcode = t_one_in(10) ? (enum ibv_wr_opcode)t_rand_below(32) :
		    (enum ibv_wr_opcode)t_rand_below(IBV_WR_BIND_MW + 1);
	wr.send_flags = t_rand_below(1 << 5);
	if (wr.send_flags & IBV_SEND_INLINE)
		for (k = 0; k < wr.num_sge; k++)
			sge[k].addr = m >= 0 ? (uintptr_t)mrs[m].buf : (uintptr_t)inbuf[0];
	wr.imm_data = nasty32();
	wr.wr.rdma.remote_addr = m >= 0 ? (uintptr_t)mrs[m].buf + t_rand_below(MR_BUF) : nasty64();
	wr.wr.rdma.rkey = m >= 0 && !t_one_in(4) ? mrs[m].mr->rkey : nasty32();
	if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = wr.wr.rdma.remote_addr & ~(t_one_in(4) ? 0ULL : 7ULL);
		wr.wr.atomic.rkey = wr.wr.rdma.rkey;
		wr.wr.atomic.compare_add = t_rand64();
		wr.wr.atomic.swap = t_rand64();
	}
	if (wr.opcode == IBV_WR_BIND_MW) {
		/* The provider reads these objects: only live ones. */
		if (w < 0 || m < 0)
			return;
		wr.bind_mw.mw = mws[w];
		wr.bind_mw.rkey = ibv_inc_rkey(mws[w]->rkey);
		wr.bind_mw.bind_info.mr = mrs[m].mr;
		wr.bind_mw.bind_info.addr = (uintptr_t)mrs[m].mr->addr + t_rand_below(64);
		wr.bind_mw.bind_info.length = t_one_in(4) ? nasty64() : t_rand_below(4096);
		wr.bind_mw.bind_info.mw_access_flags = rand_access();
	}
	if (q->type == IBV_QPT_UD) {
		if (h < 0)
			return;
		wr.wr.ud.ah = ahs[h];
		wr.wr.ud.remote_qpn = t_one_in(2) ? qps[PICK(qps, 1)].qp->qp_num : nasty32();
		wr.wr.ud.remote_qkey = t_one_in(2) ? 0x11110000 : nasty32();
	}
	if (q->type == IBV_QPT_XRC_SEND) {
		int sk = PICK(srqs, 1);
		uint32_t n = nasty32();

		if (sk >= 0 && !t_one_in(4))
			ibv_get_srq_num(srqs[sk], &n);
		wr.qp_type.xrc.remote_srqn = n;
	}
	verb(ibv_post_send(q->qp, &wr, &bad));
}

static void v_bind_mw_type1(void)
{
	int i = PICK(qps, 1), m = PICK(mrs, 1), w = PICK(mws, 1);
	struct ibv_mw_bind b;

	if (i < 0 || m < 0 || w < 0)
		return;
	step("bind_mw");
	memset(&b, 0, sizeof(b));
	b.wr_id = t_rand64();
	b.send_flags = t_rand_below(2) ? IBV_SEND_SIGNALED : 0;
	b.bind_info.mr = mrs[m].mr;
	b.bind_info.addr = (uintptr_t)mrs[m].mr->addr + t_rand_below(128);
	b.bind_info.length = t_one_in(4) ? nasty64() : t_rand_below(8192);
	b.bind_info.mw_access_flags = rand_access();
	verb(ibv_bind_mw(qps[i].qp, mws[w], &b));
}

static void v_post_recv(void)
{
	int i = PICK(qps, 1), s = PICK(srqs, 1), m = PICK(mrs, 1), k;
	struct ibv_sge sge[4];
	struct ibv_recv_wr wr, *bad;

	step("post_recv");
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = t_rand64();
	wr.sg_list = sge;
	wr.num_sge = t_rand_below(5);
	for (k = 0; k < wr.num_sge; k++) {
		sge[k].addr = m >= 0 ? (uintptr_t)mrs[m].buf + t_rand_below(MR_BUF) : nasty64();
		sge[k].length = t_one_in(4) ? nasty32() : t_rand_below(8192);
		sge[k].lkey = m >= 0 && !t_one_in(4) ? mrs[m].mr->lkey : nasty32();
	}
	if (s >= 0 && t_one_in(2))
		verb(ibv_post_srq_recv(srqs[s], &wr, &bad));
	else if (i >= 0)
		verb(ibv_post_recv(qps[i].qp, &wr, &bad));
}

static void v_poll(void)
{
	struct ibv_wc wc[16];
	int i = PICK(cqs, 1), k;

	step("poll_cq");
	if (i >= 0)
		ibv_poll_cq(cqs[i].cq, 1 + t_rand_below(16), wc);
	for (k = 0; k < 2; k++)
		drain_channel(chans[k]);
	if (raw_chan) {
		/* Events of raw CQs: their user handles are random, so no libibverbs. */
		struct ib_uverbs_comp_event_desc ev;

		while (read(raw_chan->fd, &ev, sizeof(ev)) > 0)
			;
	}
}

static void v_query(void)
{
	struct ibv_device_attr_ex da;
	struct ibv_port_attr pa;
	union ibv_gid g;

	switch (t_rand_below(3)) {
	case 0:
		step("query_device_ex");
		verb(ibv_query_device_ex(ctx, NULL, &da));
		break;
	case 1:
		step("query_port");
		verb(ibv_query_port(ctx, t_one_in(4) ? t_rand_below(256) : 1, &pa));
		break;
	default:
		step("query_gid");
		verb(ibv_query_gid(ctx, 1, t_one_in(2) ? (int)t_rand_below(300) : gid_index, &g));
	}
}

/* --- the worker ------------------------------------------------------------------------- */

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* The worker's dma-buf, if /dev/udmabuf is there (see dmabuf_fd). */
static void dmabuf_setup(void)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC,
					 .size = (uint64_t)NOBJ * MR_BUF };
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);

	if (dev < 0)
		return;
	dmabuf_memfd = memfd_create("scire_fuzz_uverbs", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (dmabuf_memfd < 0 || ftruncate(dmabuf_memfd, (off_t)create.size) ||
	    fcntl(dmabuf_memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		t_fatal("a sealed memfd for udmabuf: %s", t_errname(errno));
	create.memfd = dmabuf_memfd;
	dmabuf_fd = ioctl(dev, UDMABUF_CREATE, &create);
	if (dmabuf_fd < 0)
		t_fatal("UDMABUF_CREATE of %llu bytes: %s", (unsigned long long)create.size,
			t_errname(errno));
	close(dev);
}

static void worker_setup(const char *dev)
{
	int i;

	for (i = 0; i < NRAW; i++)
		raws[i].handle = ~0u;
	ctx = t_open_device(dev);
	cmd_fds[0] = ctx->cmd_fd;
	if (gid_index < 0 && (gid_index = t_find_ipv4_roce_v2_gid(ctx)) < 0)
		t_fatal("%s has no RoCE v2 GID with an IPv4 address", dev);
	if (ibv_query_gid(ctx, 1, gid_index, &own_gid))
		t_fatal("query GID %d of %s: %s", gid_index, dev, t_errname(errno));
	for (i = 0; i < 2; i++) {
		chans[i] = ibv_create_comp_channel(ctx);
		if (chans[i])
			nonblock(chans[i]->fd);
	}
	raw_chan = ibv_create_comp_channel(ctx);
	if (raw_chan)
		nonblock(raw_chan->fd);
	nonblock(ctx->async_fd);
	dmabuf_setup();
	{
		struct ibv_device_attr da;
		char file[] = "/tmp/scire_fuzz_uverbs_xrc.XXXXXX";
		struct ibv_xrcd_init_attr xa = {
			.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
			.oflags = O_CREAT,
		};

		if (!ibv_query_device(ctx, &da) && (da.device_cap_flags & IBV_DEVICE_XRC) &&
		    (xrcd_fd = mkstemp(file)) >= 0) {
			unlink(file);
			xa.fd = xrcd_fd;
			xrcd = ibv_open_xrcd(ctx, &xa);
		}
	}
	/* A second context: the source of foreign handles. */
	if (t_one_in(2)) {
		ctx2 = t_open_device(dev);
		cmd_fds[1] = ctx2->cmd_fd;
		pd2 = ibv_alloc_pd(ctx2);
		cq2 = ibv_create_cq(ctx2, 16, NULL, NULL, 0);
	}
}

/* Tear down what the worker holds, in the order libibverbs needs. */
static void worker_teardown(void)
{
	static const uint16_t meth[] = {
		[UVERBS_OBJECT_PD] = UVERBS_METHOD_PD_DESTROY,
		[UVERBS_OBJECT_CQ] = UVERBS_METHOD_CQ_DESTROY,
		[UVERBS_OBJECT_QP] = UVERBS_METHOD_QP_DESTROY,
		[UVERBS_OBJECT_SRQ] = UVERBS_METHOD_SRQ_DESTROY,
		[UVERBS_OBJECT_AH] = UVERBS_METHOD_AH_DESTROY,
		[UVERBS_OBJECT_MR] = UVERBS_METHOD_MR_DESTROY,
		[UVERBS_OBJECT_MW] = UVERBS_METHOD_MW_DESTROY,
	};
	struct rawcall c;
	int i, pass;

	step("teardown");
	/* Raw objects first, QPs before what they use, PDs last. */
	for (pass = 0; pass < 4; pass++) {
		for (i = 0; i < NRAW; i++) {
			struct fz_raw *r = &raws[i];
			int order = r->obj == UVERBS_OBJECT_QP ? 0 :
				    r->obj == UVERBS_OBJECT_PD ? 3 :
				    r->obj == UVERBS_OBJECT_CQ ? 2 : 1;

			if (r->handle == ~0u || order != pass ||
			    r->obj >= sizeof(meth) / sizeof(meth[0]))
				continue;
			memset(&c, 0, sizeof(c));
			c.hdr.object_id = r->obj;
			c.hdr.method_id = meth[r->obj];
			c.attrs[0].attr_id = 0;
			c.attrs[0].flags = UVERBS_ATTR_F_MANDATORY;
			c.attrs[0].data = r->handle;
			raw_ioctl(ctx->cmd_fd, &c, 1, 0);
			raw_forget(i);
		}
	}
	/* A flow holds its QP. */
	for (i = 0; i < NOBJ; i++)
		for (pass = 0; pass < 2; pass++)
			if (qps[i].flow[pass] && verb(ibv_destroy_flow(qps[i].flow[pass])))
				qps[i].flow[pass] = NULL;
	for (i = 0; i < NOBJ; i++)
		if (qps[i].qp && verb(ibv_destroy_qp(qps[i].qp)))
			qps[i].qp = NULL;
	/* QPs hold tables, tables hold WQs. */
	for (i = 0; i < 2; i++)
		if (tbls[i] && verb(ibv_destroy_rwq_ind_table(tbls[i])))
			tbls[i] = NULL;
	for (i = 0; i < NOBJ; i++)
		if (wqs[i] && verb(ibv_destroy_wq(wqs[i])))
			wqs[i] = NULL;
	for (i = 0; i < NOBJ; i++) {
		if (mws[i] && verb(ibv_dealloc_mw(mws[i])))
			mws[i] = NULL;
		if (ahs[i] && verb(ibv_destroy_ah(ahs[i])))
			ahs[i] = NULL;
		if (srqs[i] && verb(ibv_destroy_srq(srqs[i])))
			srqs[i] = NULL;
	}
	for (i = 0; i < 2; i++)
		drain_channel(chans[i]);
	for (i = 0; i < NOBJ; i++) {
		if (cqs[i].cq && verb(ibv_destroy_cq(cqs[i].cq)))
			cqs[i].cq = NULL;
		if (mrs[i].mr && verb(ibv_dereg_mr(mrs[i].mr)))
			mrs[i].mr = NULL;
	}
	for (i = 0; i < NOBJ; i++)
		if (pds[i] && verb(ibv_dealloc_pd(pds[i])))
			pds[i] = NULL;
	/* Raw XRC objects may still hold it: then the context's close takes it. */
	if (xrcd && verb(ibv_close_xrcd(xrcd)))
		xrcd = NULL;
	for (i = 0; i < 2; i++)
		if (chans[i])
			ibv_destroy_comp_channel(chans[i]);
	/* Whatever is left (created by broken calls, or busy) goes with the context. */
	step("close_device");
	ibv_close_device(ctx);
	if (ctx2)
		ibv_close_device(ctx2);
}

/* A worker's own crash: say where, then die of it as before. */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	char msg[160];
	void *bt[32];
	int n;

	n = snprintf(msg, sizeof(msg), "%s: worker seed %u: %s at address %p in '%s'; backtrace:\n",
		     t_name, me->seed, strsignal(sig), si->si_addr, me->step);
	if (write(2, msg, n) < 0)
		_exit(4);
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 2);
	raise(sig);
}

static int worker(const char *dev, long life)
{
	struct sigaction sa = { .sa_sigaction = on_crash, .sa_flags = SA_SIGINFO | SA_RESETHAND };
	long n;

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
	t_rng_seed(me->seed);
	worker_setup(dev);
	/*
	 * Only now may the parent kill us. A SIGKILL while libibverbs
	 * creates a context can fail it (a page fault on the response
	 * buffer gives up when a fatal signal is pending: EFAULT), and
	 * 6.1's ioctl GET_CONTEXT then leaks a reference to this task (see
	 * the method table): a core bug that kmemleak would pin on the run.
	 */
	__atomic_store_n(&me->killable, 1, __ATOMIC_RELEASE);
	for (n = 0; n < life && !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED); n++) {
		me->beat++;
		switch (t_rand_below(53)) {
		case 0 ... 11: act_raw_method(); break;
		case 12 ... 15: act_invoke_write(); break;
		case 40 ... 47: act_raw_method(); break;
		case 48 ... 49: act_invoke_write(); break;
		case 16 ... 18: case 50 ... 51: act_doorbell(t_one_in(8) && ctx2 ? ctx2->cmd_fd : ctx->cmd_fd,
					     pick_handle(UVERBS_OBJECT_QP, 0)); break;
		case 19 ... 20: act_raw_ring(); break;
		case 21 ... 22: act_scribble(); break;
		case 23: v_pd(); break;
		case 24: v_cq(); break;
		case 25: v_mr(); break;
		case 26: v_mw(); break;
		case 27: v_srq(); break;
		case 28 ... 29: v_qp(); break;
		case 30: v_ah(); break;
		case 31 ... 33: v_post_send(); break;
		case 34: v_bind_mw_type1(); break;
		case 35: v_post_recv(); break;
		case 36 ... 37: v_poll(); break;
		case 38: v_flow(); break;
		case 52: v_wq(); break;
		default: v_query(); break;	/* 39 */
		}
	}
	worker_teardown();
	return T_EXIT_PASS;
}

/* --- the parent -------------------------------------------------------------------------- */

static const char *dev;
static uint32_t seed;
static uint32_t worker_seed;	/* -w: one worker, this seed */

static uint32_t incarnation_seed(int s, uint32_t inc)
{
	uint64_t x = ((uint64_t)seed << 32) ^ ((uint64_t)s << 20) ^ inc;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

static void spawn(int s)
{
	struct slot *sl = &sh->slot[s];
	pid_t pid;

	sl->seed = worker_seed ? worker_seed : incarnation_seed(s, sl->incarnation);
	sl->killed = 0;
	sl->killable = 0;
	snprintf(sl->step, sizeof(sl->step), "starting");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		t_fatal("fork: %s", t_errname(errno));
	if (!pid) {
		me = sl;
		/* Mostly short lives: setup and teardown are worth fuzzing too. */
		t_rng_seed(sl->seed ^ 0x5bd1e995);
		_exit(worker(dev, t_one_in(4) ? 200000 : (long)t_rand_range(500, 10000)));
	}
	sl->pid = pid;
}

static void print_stack(pid_t pid)
{
	char path[64], buf[2048];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		fprintf(stderr, "  kernel stack of %d:\n%s", pid, buf);
	}
}

/* Account for a worker that ended; 1 if that was not all right. */
static int reaped(int s, int status)
{
	struct slot *sl = &sh->slot[s];
	int bad = 0;

	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) != SIGKILL || !sl->killed) {
			fprintf(stderr, "FAIL: %s: worker %d (pid %d, incarnation %u, seed %u) killed by %s in '%s' (replay this worker: -w %u)\n",
				t_name, s, sl->pid, sl->incarnation, sl->seed,
				strsignal(WTERMSIG(status)), sl->step, sl->seed);
			bad = 1;
		}
	} else if (WIFEXITED(status) && WEXITSTATUS(status)) {
		fprintf(stderr, "FAIL: %s: worker %d (pid %d, incarnation %u, seed %u) exited with status %d in '%s'\n",
			t_name, s, sl->pid, sl->incarnation, sl->seed, WEXITSTATUS(status), sl->step);
		bad = 1;
	}
	sl->pid = 0;
	sl->incarnation++;
	return bad;
}

int main(int argc, char **argv)
{
	double budget = 30, kill_rate = 2, hang = 120, start, end, next_kill, now;
	uint64_t last_beat[MAX_PROCS] = { 0 }, ioctls = 0, raw = 0, writes = 0, verbs = 0, ok = 0;
	double beat_at[MAX_PROCS];
	uint64_t min_ioctls = 0;
	int c, s, status, failures = 0, seed_given = 0, kills = 0, spawned = 0, left;
	pid_t pid;

	t_name = "scire_fuzz_uverbs";
	setvbuf(stdout, NULL, _IOLBF, 0);
	gid_index = -1;
	while ((c = getopt(argc, argv, "d:g:s:t:p:k:H:m:w:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 's': seed = strtoul(optarg, NULL, 0); seed_given = 1; break;
		case 't': budget = atof(optarg); break;
		case 'p': nprocs = atoi(optarg); break;
		case 'k': kill_rate = atof(optarg); break;
		case 'H': hang = atof(optarg); break;
		case 'm': min_ioctls = strtoull(optarg, NULL, 0); break;
		case 'w': worker_seed = strtoul(optarg, NULL, 0); nprocs = 1; kill_rate = 0; break;
		default: dev = NULL; optind = argc + 1; break;
		}
	}
	if (!dev || optind != argc || nprocs < 1 || nprocs > MAX_PROCS || budget <= 0) {
		fprintf(stderr, "usage: %s -d DEV [-g GIDIDX] [-s SEED] [-t SECONDS] [-p PROCS (1..%d)] [-k KILLS_PER_S] [-H HANG_SECS] [-m MIN_IOCTLS] [-w WORKER_SEED]\n",
			argv[0], MAX_PROCS);
		return T_EXIT_FAIL;
	}
	if (!seed_given)
		seed = t_fresh_seed();
	t_rng_seed(seed);
	if (worker_seed)
		printf("one worker, seed %u, %.0f s\n", worker_seed, budget);
	else
		printf("seed %u (replay: -s %u), %d workers, %.0f s, %.1f SIGKILLs/s\n", seed, seed,
		       nprocs, budget, kill_rate);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	/*
	 * A scratch page, the guard page, a read-only page: a buffer that runs
	 * into the guard starts in the scratch page, so whatever the kernel
	 * writes before it faults lands in memory nothing else uses.
	 */
	scratch = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || scratch == MAP_FAILED ||
	    mprotect((uint8_t *)scratch + 4096, 4096, PROT_NONE) ||
	    mprotect((uint8_t *)scratch + 8192, 4096, PROT_READ))
		t_fatal("mmap: %s", t_errname(errno));
	guard_page = (uint8_t *)scratch + 4096;
	ro_page = (uint8_t *)scratch + 8192;

	start = t_now();
	end = start + budget;
	next_kill = kill_rate > 0 ? start + (double)t_rand_below(2000) / 1000 / kill_rate : end;
	for (s = 0; s < nprocs; s++) {
		spawn(s);
		spawned++;
		beat_at[s] = start;
	}
	/*
	 * The run lasts BUDGET seconds, longer (up to three times that) while
	 * MIN_IOCTLS have not been made: a slow or busy machine gets the
	 * same amount of work done, not the same wall time.
	 */
	while ((now = t_now()) < end ||
	       (now < start + 3 * budget && ioctls_so_far() < min_ioctls)) {
		usleep(20000);
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (s = 0; s < nprocs && sh->slot[s].pid != pid; s++)
				;
			if (s == nprocs)
				continue;
			failures += reaped(s, status);
			if (worker_seed)
				goto done;
			spawn(s);
			spawned++;
			beat_at[s] = now;
		}
		if (now >= next_kill) {
			s = t_rand_below(nprocs);
			if (sh->slot[s].pid &&
			    __atomic_load_n(&sh->slot[s].killable, __ATOMIC_ACQUIRE)) {
				sh->slot[s].killed = 1;
				kill(sh->slot[s].pid, SIGKILL);
				kills++;
			}
			next_kill = now + (double)t_rand_below(2000) / 1000 / kill_rate;
		}
		for (s = 0; s < nprocs; s++) {
			if (sh->slot[s].beat != last_beat[s]) {
				last_beat[s] = sh->slot[s].beat;
				beat_at[s] = now;
			} else if (sh->slot[s].pid && now - beat_at[s] > hang && !sh->slot[s].killed) {
				fprintf(stderr, "FAIL: %s: worker %d (pid %d, seed %u) made no progress for %.0f s in '%s'\n",
					t_name, s, sh->slot[s].pid, sh->slot[s].seed, hang,
					sh->slot[s].step);
				print_stack(sh->slot[s].pid);
				failures++;
				sh->slot[s].killed = 1;
				kill(sh->slot[s].pid, SIGKILL);
			}
		}
	}

done:
	/* The rest tear down on their own; a worker that cannot is hung. */
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (left = 0, s = 0; s < nprocs; s++)
		left += !!sh->slot[s].pid;
	end = t_now() + hang;
	while (left && t_now() < end) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0) {
			usleep(20000);
			continue;
		}
		for (s = 0; s < nprocs && sh->slot[s].pid != pid; s++)
			;
		if (s == nprocs)
			continue;
		failures += reaped(s, status);
		left--;
	}
	for (s = 0; s < nprocs; s++) {
		if (!sh->slot[s].pid)
			continue;
		fprintf(stderr, "FAIL: %s: worker %d (pid %d, seed %u) did not finish its teardown within %.0f s; last step '%s'\n",
			t_name, s, sh->slot[s].pid, sh->slot[s].seed, hang, sh->slot[s].step);
		print_stack(sh->slot[s].pid);
		sh->slot[s].killed = 1;
		kill(sh->slot[s].pid, SIGKILL);
		waitpid(sh->slot[s].pid, &status, 0);
		failures++;
	}

	for (s = 0; s < nprocs; s++) {
		ioctls += sh->slot[s].ioctls;
		raw += sh->slot[s].raw_ioctls;
		writes += sh->slot[s].writes;
		verbs += sh->slot[s].verbs;
		ok += sh->slot[s].ok;
	}
	printf("%.1f s: %d worker processes (%d SIGKILLed mid-way), %llu uverbs ioctls (%llu raw, %llu from libibverbs; %.0f/s), %llu uverbs writes, %llu libibverbs calls, %llu calls succeeded\n",
	       t_now() - start, spawned, kills, (unsigned long long)ioctls,
	       (unsigned long long)raw, (unsigned long long)(ioctls - raw),
	       ioctls / (t_now() - start), (unsigned long long)writes,
	       (unsigned long long)verbs, (unsigned long long)ok);
	if (ioctls < min_ioctls) {
		fprintf(stderr, "FAIL: %s: %llu ioctls, fewer than the %llu asked for (-m)\n", t_name,
			(unsigned long long)ioctls, (unsigned long long)min_ioctls);
		failures++;
	}
	if (failures) {
		fprintf(stderr, "FAIL: %s: %d failures; replay: -s %u\n", t_name, failures, seed);
		return T_EXIT_FAIL;
	}
	printf("PASS: %s on %s, seed %u\n", t_name, dev, seed);
	return T_EXIT_PASS;
}
