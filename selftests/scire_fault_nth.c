// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_fault_nth: systematic fault injection into one verbs operation at a
 * time. For each kind of operation (below) and N = 1, 2, 3, ... it writes N
 * to /proc/thread-self/fail-nth, runs the operation once, and reads back
 * whether the N-th fault-injection point this thread reached did fail (the
 * file reads 0) or the operation finished before reaching it. Every point
 * the kernel passes while serving this thread counts: failslab and
 * fail_page_alloc (with their ignore-gfp-* filters off) and fail_function's
 * probes (only where they run in task context). The series ends when an
 * operation no longer reaches the N-th point: then every point on its path
 * has been failed once.
 *
 * For each N the operation must either succeed or fail with an errno (a
 * work request: complete, with success or an error status; never vanish),
 * whatever is left behind is destroyed, and at the end of each kind the
 * operation must work again without injection and `rdma resource show`
 * must show the device's counts where they were before the kind started.
 * A crash, a hang or a kernel report is the caller's to see (98-fault-inject
 * checks the kernel log and kmemleak).
 *
 * The program locks all its pages (mlockall) before it injects: a page of
 * libibverbs paged in from the VM's 9p root under injection would fail the
 * 9p client instead of scire, and a failed 9p read leaves the file
 * unreadable for everyone after.
 *
 * Usage: scire_fault_nth -d DEV [-g GID] [-k KIND,...] [-n MAX] [-t SECS]
 *                        [-a ADDR] [-l NETDEV]
 *   -k  kinds (default: all but link): pd cq resize qp ud srq mr mw ah
 *       modify post cm link
 *   -n  at most MAX values of N per kind (default 100000)
 *   -t  at most SECS seconds per kind (default: no limit); a kind cut short
 *       says so
 *   -a  the IPv4 address of DEV's netdev (cm; default 192.168.77.2)
 *   -l  the netdev that `link` adds scire devices on (link)
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/netlink.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_netlink.h>

#include "scire_rc.h"

static struct ibv_context *ctx;
static const char *dev_name;
static struct t_path path;
static int nth_fd = -1;
static const char *cm_addr = "192.168.77.2";
static const char *link_netdev;

/* --- fail-nth ------------------------------------------------------------- */

static void nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len)
		t_fatal("write %u to /proc/thread-self/fail-nth: %s", n, t_errname(errno));
}

/* Disarm; return true if the armed fault was injected. */
static bool nth_disarm(void)
{
	char buf[16] = "";
	long left;

	if (pread(nth_fd, buf, sizeof(buf) - 1, 0) <= 0)
		t_fatal("read /proc/thread-self/fail-nth: %s", t_errname(errno));
	left = strtol(buf, NULL, 10);
	nth_arm(0);
	return left == 0;
}

/* --- one kind: prepare, the operation under injection, undo ------------------ */

/*
 * op returns 0 or a positive errno; what it made stays in its state for
 * undo (called whatever op returned). A result it cannot call either (a
 * failure with errno 0, a lost completion) it reports as -1 after saying
 * what it saw.
 */
struct kind {
	const char *name;
	int (*prepare)(void);		/* before the series (no injection) */
	int (*op)(void);
	void (*undo)(void);
	void (*finish)(void);		/* after the series */
};

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp_a, *qp_b;
static void *buf;
static struct ibv_mr *mr;
#define BUF_SIZE (1 << 20)

/* An errno from a call that returned NULL: 0 there is a bug of its own. */
static int null_errno(const char *what)
{
	if (errno > 0)
		return errno;
	printf("    %s failed with errno %d\n", what, errno);
	return -1;
}

static int base_prepare(void)
{
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("ibv_alloc_pd: %s", t_errname(errno));
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!cq)
		t_fatal("ibv_create_cq: %s", t_errname(errno));
	return 0;
}

static void base_finish(void)
{
	if (mr && ibv_dereg_mr(mr))
		t_fail("ibv_dereg_mr: %s", t_errname(errno));
	mr = NULL;
	if (cq && ibv_destroy_cq(cq))
		t_fail("ibv_destroy_cq: %s", t_errname(errno));
	cq = NULL;
	if (pd && ibv_dealloc_pd(pd))
		t_fail("ibv_dealloc_pd: %s", t_errname(errno));
	pd = NULL;
}

/* pd */
static struct ibv_pd *op_pd;
static int pd_op(void)
{
	op_pd = ibv_alloc_pd(ctx);
	return op_pd ? 0 : null_errno("ibv_alloc_pd");
}

static void pd_undo(void)
{
	if (op_pd && ibv_dealloc_pd(op_pd))
		t_fail("ibv_dealloc_pd: %s", t_errname(errno));
	op_pd = NULL;
}

/* cq */
static struct ibv_cq *op_cq;
static int cq_op(void)
{
	op_cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	return op_cq ? 0 : null_errno("ibv_create_cq");
}

static void cq_undo(void)
{
	if (op_cq && ibv_destroy_cq(op_cq))
		t_fail("ibv_destroy_cq: %s", t_errname(errno));
	op_cq = NULL;
}

/* qp, ud */
static struct ibv_qp *create_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = srq ? 0 : 64,
			.max_send_sge = 2,
			.max_recv_sge = srq ? 0 : 2,
			.max_inline_data = 64,
		},
		.qp_type = type,
	};

	return ibv_create_qp(pd, &a);
}

static int qp_op(void)
{
	qp_a = create_qp(IBV_QPT_RC, NULL);
	return qp_a ? 0 : null_errno("ibv_create_qp(RC)");
}

static int ud_op(void)
{
	qp_a = create_qp(IBV_QPT_UD, NULL);
	return qp_a ? 0 : null_errno("ibv_create_qp(UD)");
}

static void qp_undo(void)
{
	if (qp_a && ibv_destroy_qp(qp_a))
		t_fail("ibv_destroy_qp: %s", t_errname(errno));
	if (qp_b && ibv_destroy_qp(qp_b))
		t_fail("ibv_destroy_qp: %s", t_errname(errno));
	qp_a = qp_b = NULL;
}

/* srq */
static struct ibv_srq *op_srq;
static int srq_op(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 64, .max_sge = 2 } };

	op_srq = ibv_create_srq(pd, &a);
	return op_srq ? 0 : null_errno("ibv_create_srq");
}

static void srq_undo(void)
{
	if (op_srq && ibv_destroy_srq(op_srq))
		t_fail("ibv_destroy_srq: %s", t_errname(errno));
	op_srq = NULL;
}

/* mr: 1 MiB of this process's memory (touched, locked). */
static int mr_prepare(void)
{
	base_prepare();
	buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		   MAP_POPULATE | MAP_LOCKED, -1, 0);
	if (buf == MAP_FAILED)
		t_fatal("mmap %d bytes: %s", BUF_SIZE, t_errname(errno));
	memset(buf, 0x5a, BUF_SIZE);
	return 0;
}

static void mr_finish(void)
{
	base_finish();
	munmap(buf, BUF_SIZE);
	buf = NULL;
}

static struct ibv_mr *op_mr;
static int mr_op(void)
{
	op_mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS);
	return op_mr ? 0 : null_errno("ibv_reg_mr");
}

static void mr_undo(void)
{
	if (op_mr && ibv_dereg_mr(op_mr))
		t_fail("ibv_dereg_mr: %s", t_errname(errno));
	op_mr = NULL;
}

/* mw */
static struct ibv_mw *op_mw;
static int mw_op(void)
{
	op_mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	return op_mw ? 0 : null_errno("ibv_alloc_mw(type 2)");
}

static void mw_undo(void)
{
	if (op_mw && ibv_dealloc_mw(op_mw))
		t_fail("ibv_dealloc_mw: %s", t_errname(errno));
	op_mw = NULL;
}

/* ah: to the device's own GID, as a UD sender would. */
static struct ibv_ah *op_ah;
static int ah_op(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = path.gid, .sgid_index = path.gid_index, .hop_limit = 64 },
		.port_num = 1,
	};

	op_ah = ibv_create_ah(pd, &a);
	return op_ah ? 0 : null_errno("ibv_create_ah");
}

static void ah_undo(void)
{
	if (op_ah && ibv_destroy_ah(op_ah))
		t_fail("ibv_destroy_ah: %s", t_errname(errno));
	op_ah = NULL;
}

/*
 * RESET -> INIT -> RTR -> RTS of an RC QP towards another; 0 or the errno
 * of the first transition that failed.
 */
static int rc_connect(struct ibv_qp *qp, uint32_t dest_qpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = T_RC_ACCESS,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = path.mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0x123,
		.max_dest_rd_atomic = T_RD_ATOMIC,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = path.gid, .sgid_index = path.gid_index,
				 .hop_limit = 64 },
			.port_num = 1,
		},
	};
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0x123,
		.max_rd_atomic = T_RD_ATOMIC,
	};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The two QPs of modify and post, made before each operation. */
static void make_pair(void)
{
	qp_a = create_qp(IBV_QPT_RC, NULL);
	qp_b = create_qp(IBV_QPT_RC, NULL);
	if (!qp_a || !qp_b)
		t_fatal("ibv_create_qp(RC): %s", t_errname(errno));
}

/* modify: connect one QP of a fresh pair (the other is its peer). */
static int modify_op(void)
{
	int ret = rc_connect(qp_a, qp_b->qp_num);

	return ret > 0 ? ret : ret ? -1 : 0;
}

/*
 * post: on a connected pair, a receive, a SEND and an RDMA WRITE of 4 KiB,
 * polled to their completions. A work request the provider accepted must
 * complete, with success or an error status.
 */
static int post_op(void)
{
	struct ibv_sge s_send = { .addr = (uintptr_t)buf, .length = 4096, .lkey = mr->lkey };
	struct ibv_sge s_recv = { .addr = (uintptr_t)buf + 8192, .length = 4096,
				  .lkey = mr->lkey };
	struct ibv_sge s_write = { .addr = (uintptr_t)buf + 16384, .length = 4096,
				   .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &s_recv, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr wwr = {
		.wr_id = 2, .sg_list = &s_write, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)buf + 65536, .rkey = mr->rkey },
	};
	struct ibv_send_wr swr = {
		.wr_id = 1, .next = &wwr, .sg_list = &s_send, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad_s;
	struct ibv_wc wc;
	int ret, want = 3, got = 0, errors = 0;
	double deadline;

	ret = ibv_post_recv(qp_b, &rwr, &bad_r);
	if (ret)
		return ret;	/* the doorbell may have failed: nothing to wait for */
	ret = ibv_post_send(qp_a, &swr, &bad_s);
	if (ret)
		return ret;
	deadline = t_now() + 20;
	while (got < want) {
		if (!t_poll_one(cq, &wc, deadline)) {
			printf("    %d of %d completions came in 20 s\n", got, want);
			return -1;
		}
		got++;
		if (wc.status != IBV_WC_SUCCESS)
			errors++;
	}
	return errors ? EIO : 0;
}

/* Empty the CQ of what a failed post left behind. */
static void post_undo(void)
{
	struct ibv_wc wc[16];

	qp_undo();
	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
}

static int pair_prepare(void)
{
	mr_prepare();
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS);
	if (!mr)
		t_fatal("ibv_reg_mr: %s", t_errname(errno));
	return 0;
}

/* --- cm: rdma_cm client connects to a listener thread of this process -------- */

static struct rdma_cm_id *cm_listen_id;
static struct rdma_event_channel *cm_listen_ch;
static pthread_t cm_thread;
static volatile int cm_stop;
#define CM_PORT 18777

/*
 * The QP attributes of one rdma_create_qp(), fresh for every call: it
 * writes back into them, send_cq and recv_cq included (librdmacm's
 * memcpy of the whole ibv_qp_init_attr), so a second call with the same
 * attributes would create no CQs and hand the first id's CQs, destroyed
 * with that id's QP, to the new QP: a use after free in librdmacm's
 * ibv_cq structures whose stale handles the kernel no longer has (ENOENT
 * from QP_CREATE), or reuses for another CQ.
 */
static struct ibv_qp_init_attr cm_qp_attr(void)
{
	return (struct ibv_qp_init_attr){
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
}

/* The passive side: accept every request, let disconnects go. */
static void *cm_listener(void *arg)
{
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };

	while (!cm_stop && !rdma_get_cm_event(cm_listen_ch, &ev)) {
		struct rdma_cm_id *id = ev->id;
		enum rdma_cm_event_type type = ev->event;
		struct ibv_qp_init_attr qa = cm_qp_attr();

		rdma_ack_cm_event(ev);
		switch (type) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			/* The QP runs on the CQs librdmacm made for this id. */
			if (!rdma_create_qp(id, NULL, &qa) &&
			    (!id->send_cq || !id->recv_cq || id->qp->send_cq != id->send_cq ||
			     id->qp->recv_cq != id->recv_cq))
				t_fail("cm listener: the QP's CQs are not its id's");
			if (!id->qp || rdma_accept(id, &cp)) {
				printf("    cm listener: cannot %s a request: %s\n",
				       id->qp ? "accept" : "make a QP for", t_errname(errno));
				if (id->qp)
					rdma_destroy_qp(id);
				rdma_reject(id, NULL, 0);
				rdma_destroy_id(id);
			}
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
			rdma_disconnect(id);
			if (id->qp)
				rdma_destroy_qp(id);
			rdma_destroy_id(id);
			break;
		default:
			break;
		}
	}
	return NULL;
}

static int cm_prepare(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(CM_PORT) };

	inet_pton(AF_INET, cm_addr, &sin.sin_addr);
	cm_listen_ch = rdma_create_event_channel();
	if (!cm_listen_ch)
		t_fatal("rdma_create_event_channel: %s", t_errname(errno));
	if (rdma_create_id(cm_listen_ch, &cm_listen_id, NULL, RDMA_PS_TCP))
		t_fatal("rdma_create_id: %s", t_errname(errno));
	if (rdma_bind_addr(cm_listen_id, (struct sockaddr *)&sin))
		t_fatal("rdma_bind_addr(%s:%d): %s", cm_addr, CM_PORT, t_errname(errno));
	if (rdma_listen(cm_listen_id, 8))
		t_fatal("rdma_listen: %s", t_errname(errno));
	if (pthread_create(&cm_thread, NULL, cm_listener, NULL))
		t_fatal("pthread_create failed");
	return 0;
}

static void cm_finish(void)
{
	cm_stop = 1;
	/* Destroying the listener wakes nothing: cancel the blocked read. */
	pthread_cancel(cm_thread);
	pthread_join(cm_thread, NULL);
	rdma_destroy_id(cm_listen_id);
	rdma_destroy_event_channel(cm_listen_ch);
}

static struct rdma_cm_id *cm_id;
static struct rdma_event_channel *cm_ch;
static bool cm_established;

static unsigned long cur_n;

/* The next event of the client's channel within secs, or NULL (errno set). */
static struct rdma_cm_event *cm_event(int secs)
{
	struct pollfd p = { .fd = cm_ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, secs * 1000) != 1) {
		errno = ETIMEDOUT;
		return NULL;
	}
	errno = 0;	/* what librdmacm's processing of the event sets (cm_wait) */
	return rdma_get_cm_event(cm_ch, &ev) ? NULL : ev;
}

/*
 * Wait for the next event of the client's channel: 0 if it is want, a
 * clean errno if it is another or an error, -1 if none came in 60 s (the
 * longest the kernel's address, route and CM timeouts may take here).
 */
static int cm_wait(enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = cm_event(60);
	int ret, err = errno;

	if (!ev) {
		if (errno != ETIMEDOUT)
			return null_errno("rdma_get_cm_event");
		printf("    cm: N=%lu: no event in 60 s, waiting for %s\n", cur_n,
		       rdma_event_str(want));
		return -1;
	}
	/*
	 * Status -1 with errno set: librdmacm's own processing of the event
	 * failed (querying the address or path, moving the QP to RTR/RTS on
	 * CONNECT_RESPONSE) and it reports that as -1, the cause in errno.
	 */
	if (ev->event == want)
		ret = 0;
	else if (ev->status == -1 && err > 0)
		ret = err;
	else
		ret = ev->status < 0 ? -ev->status : ECONNREFUSED;
	if (ret)
		printf("    cm: N=%lu: %s (status %d, %s) instead of %s\n", cur_n,
		       rdma_event_str(ev->event), ev->status, t_errname(ret),
		       rdma_event_str(want));
	rdma_ack_cm_event(ev);
	return ret;
}

/*
 * The whole active side: id, address and route resolution, QP, connect,
 * established; an event other than the one wanted is a clean failure.
 */
static int cm_op(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(CM_PORT) };
	struct ibv_qp_init_attr qa = cm_qp_attr();
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	int ret;

	inet_pton(AF_INET, cm_addr, &sin.sin_addr);
	cm_ch = rdma_create_event_channel();
	if (!cm_ch)
		return null_errno("rdma_create_event_channel");
	if (rdma_create_id(cm_ch, &cm_id, NULL, RDMA_PS_TCP)) {
		cm_id = NULL;
		return null_errno("rdma_create_id");
	}
	if (rdma_resolve_addr(cm_id, NULL, (struct sockaddr *)&sin, 5000))
		return null_errno("rdma_resolve_addr");
	ret = cm_wait(RDMA_CM_EVENT_ADDR_RESOLVED);
	if (ret)
		return ret;
	if (rdma_resolve_route(cm_id, 5000))
		return null_errno("rdma_resolve_route");
	ret = cm_wait(RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (ret)
		return ret;
	if (rdma_create_qp(cm_id, NULL, &qa))
		return null_errno("rdma_create_qp");
	if (rdma_connect(cm_id, &cp))
		return null_errno("rdma_connect");
	ret = cm_wait(RDMA_CM_EVENT_ESTABLISHED);
	cm_established = !ret;
	return ret;
}

static void cm_undo(void)
{
	struct rdma_cm_event *ev;

	if (cm_id) {
		/* DISCONNECTED, or a timeout's error event. */
		if (cm_established && !rdma_disconnect(cm_id)) {
			ev = cm_event(30);
			if (ev)
				rdma_ack_cm_event(ev);
		}
		cm_established = false;
		if (cm_id->qp)
			rdma_destroy_qp(cm_id);
		if (rdma_destroy_id(cm_id))
			t_fail("rdma_destroy_id: %s", t_errname(errno));
		cm_id = NULL;
	}
	if (cm_ch)
		rdma_destroy_event_channel(cm_ch);
	cm_ch = NULL;
}

/* --- link: RDMA_NLDEV_CMD_NEWLINK of a second scire device ----------------- */

#define LINK_DEV "scire_fi"
static int nl_fd = -1;

static void nl_put_str(struct nlmsghdr *h, int type, const char *s)
{
	struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
	int len = strlen(s) + 1;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, s, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void nl_put_u32(struct nlmsghdr *h, int type, uint32_t v)
{
	struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + 4;
	memcpy((char *)a + NLA_HDRLEN, &v, 4);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Send one nldev request, return its ack's errno (0, positive) or -1. */
static int nl_request(struct nlmsghdr *h)
{
	static uint32_t seq;
	char reply[4096];
	struct nlmsghdr *r = (struct nlmsghdr *)reply;
	ssize_t n;

	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = ++seq;
	if (send(nl_fd, h, h->nlmsg_len, 0) < 0)
		return errno;
	for (;;) {
		n = recv(nl_fd, reply, sizeof(reply), 0);
		if (n < 0)
			return errno;
		if (!NLMSG_OK(r, n) || r->nlmsg_seq != seq)
			continue;
		if (r->nlmsg_type != NLMSG_ERROR) {
			printf("    netlink: reply type %u, expected an ack\n", r->nlmsg_type);
			return -1;
		}
		return -((struct nlmsgerr *)NLMSG_DATA(r))->error;
	}
}

static int link_prepare(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (!link_netdev)
		t_fatal("link: give the netdev to add devices on with -l");
	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)))
		t_fatal("netlink socket (NETLINK_RDMA): %s", t_errname(errno));
	return 0;
}

static void link_finish(void)
{
	close(nl_fd);
}

static int link_op(void)
{
	union { struct nlmsghdr h; char b[512]; } m = { .h = {
		.nlmsg_len = NLMSG_HDRLEN,
		.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK),
	} };

	nl_put_str(&m.h, RDMA_NLDEV_ATTR_DEV_NAME, LINK_DEV);
	nl_put_str(&m.h, RDMA_NLDEV_ATTR_LINK_TYPE, "scire");
	nl_put_str(&m.h, RDMA_NLDEV_ATTR_NDEV_NAME, link_netdev);
	return nl_request(&m.h);
}

/*
 * The index of RDMA device NAME from an RDMA_NLDEV_CMD_GET dump, -1 if no
 * device has that name. Not libibverbs' list: a device whose ib_uverbs
 * client failed to attach (an allocation failing under injection; the
 * core ignores a client's failed add and registers the device anyway) has
 * no uverbs node, so libibverbs never sees it, yet it exists and must be
 * deleted.
 */
static int nl_dev_index(const char *name)
{
	static uint32_t seq = 1U << 30;
	struct nlmsghdr req = {
		.nlmsg_len = NLMSG_HDRLEN,
		.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET),
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.nlmsg_seq = ++seq,
	};
	char dump[16384];
	int idx = -1;

	if (send(nl_fd, &req, req.nlmsg_len, 0) < 0)
		t_fatal("nldev dump: %s", t_errname(errno));
	for (;;) {
		ssize_t n = recv(nl_fd, dump, sizeof(dump), 0);
		struct nlmsghdr *h;

		if (n < 0)
			t_fatal("nldev dump: %s", t_errname(errno));
		for (h = (struct nlmsghdr *)dump; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			int len = h->nlmsg_len - NLMSG_HDRLEN, i = -1;
			struct nlattr *a = NLMSG_DATA(h);
			bool match = false;

			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return idx;
			if (h->nlmsg_type == NLMSG_ERROR)
				t_fatal("nldev dump: %s",
					t_errname(-((struct nlmsgerr *)NLMSG_DATA(h))->error));
			for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
			     len -= NLA_ALIGN(a->nla_len),
			     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
				void *v = (char *)a + NLA_HDRLEN;

				if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX && a->nla_len >= NLA_HDRLEN + 4)
					memcpy(&i, v, 4);
				else if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME)
					match = !strncmp(v, name, a->nla_len - NLA_HDRLEN);
			}
			if (match)
				idx = i;
		}
	}
}

/* Delete LINK_DEV if it exists. */
static void link_undo(void)
{
	union { struct nlmsghdr h; char b[512]; } m = { .h = {
		.nlmsg_len = NLMSG_HDRLEN,
		.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_DELLINK),
	} };
	int idx = nl_dev_index(LINK_DEV), ret;

	if (idx < 0) {
		if (!access("/sys/class/infiniband/" LINK_DEV, F_OK))
			t_fatal("%s is in sysfs but not in the nldev dump", LINK_DEV);
		return;
	}
	nl_put_u32(&m.h, RDMA_NLDEV_ATTR_DEV_INDEX, idx);
	ret = nl_request(&m.h);
	if (ret)
		t_fatal("delete link %s (index %d): %s", LINK_DEV, idx, t_errname(ret));
}

static void nop(void) { }
static int nop_prepare(void) { return 0; }

/* Kinds whose operation needs objects made fresh each time. */
static void pair_before(void) { make_pair(); }
static void cq_before(void)
{
	op_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!op_cq)
		t_fatal("ibv_create_cq: %s", t_errname(errno));
}

/* resize: a CQ made without injection grows under it. */
static int resize_only(void)
{
	return ibv_resize_cq(op_cq, 1024);
}

static void post_before(void)
{
	make_pair();
	if (rc_connect(qp_a, qp_b->qp_num) || rc_connect(qp_b, qp_a->qp_num))
		t_fatal("connect the QP pair: %s", t_errname(errno));
}

struct kind_def {
	struct kind k;
	void (*before)(void);	/* before each operation (no injection) */
	bool all;		/* in the default list */
	/*
	 * Count resources between prepare and finish, not around them: for
	 * cm, whose listener (prepare) is the first rdma_cm id, so librdmacm
	 * opens a verbs context then and keeps it open until the process
	 * exits.
	 */
	bool count_inside;
};

static const struct kind_def kinds[] = {
	{ { "pd", nop_prepare, pd_op, pd_undo, nop }, NULL, true, false },
	{ { "cq", nop_prepare, cq_op, cq_undo, nop }, NULL, true, false },
	{ { "resize", nop_prepare, resize_only, cq_undo, nop }, cq_before, true, false },
	{ { "qp", base_prepare, qp_op, qp_undo, base_finish }, NULL, true, false },
	{ { "ud", base_prepare, ud_op, qp_undo, base_finish }, NULL, true, false },
	{ { "srq", base_prepare, srq_op, srq_undo, base_finish }, NULL, true, false },
	{ { "mr", mr_prepare, mr_op, mr_undo, mr_finish }, NULL, true, false },
	{ { "mw", base_prepare, mw_op, mw_undo, base_finish }, NULL, true, false },
	{ { "ah", base_prepare, ah_op, ah_undo, base_finish }, NULL, true, false },
	{ { "modify", base_prepare, modify_op, qp_undo, base_finish }, pair_before, true, false },
	{ { "post", pair_prepare, post_op, post_undo, mr_finish }, post_before, true, false },
	{ { "cm", cm_prepare, cm_op, cm_undo, cm_finish }, NULL, true, true },
	{ { "link", link_prepare, link_op, link_undo, link_finish }, NULL, false, false },
};

/* --- the series --------------------------------------------------------------- */

/* DEV's line of `rdma resource show`, from its first count on. */
static void res_counts(char *out, size_t len)
{
	char line[512], want[64];
	FILE *f = popen("rdma resource show 2>&1", "r");

	*out = 0;
	snprintf(want, sizeof(want), " %s: ", dev_name);
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want);

		if (p) {
			snprintf(out, len, "%s", p + strlen(want));
			out[strcspn(out, "\n")] = 0;
		}
	}
	if (f)
		pclose(f);
}

static unsigned long max_n = 100000;
static double max_secs;

/* Count of each errno a kind's operation failed with. */
struct tally {
	unsigned long points, failed, tolerated, bad, by_errno[256];
};

static int run_kind(const struct kind_def *d)
{
	const struct kind *k = &d->k;
	char before[512], after[512], errs[1024] = "";
	struct tally t = { 0 };
	double start = t_now();
	unsigned long n;
	bool injected, cut = false;
	int ret, e, fails_before = t_failures;

	if (!d->count_inside)
		res_counts(before, sizeof(before));
	k->prepare();
	if (d->count_inside)
		res_counts(before, sizeof(before));
	for (n = 1; ; n++) {
		if (n > max_n || (max_secs && t_now() - start > max_secs)) {
			cut = true;
			break;
		}
		if (d->before)
			d->before();
		cur_n = n;
		nth_arm(n);
		ret = k->op();
		injected = nth_disarm();
		k->undo();
		if (!injected && !ret)
			break;		/* the whole path ran: every point was failed once */
		if (!injected) {
			/* Failed with no fault injected: the operation itself fails. */
			printf("  %s: fails without injection (N=%lu): %s\n", k->name, n,
			       ret > 0 ? t_errname(ret) : "see above");
			t.bad++;
			break;
		}
		t.points++;
		if (!ret)
			t.tolerated++;
		else if (ret < 0)
			t.bad++, printf("  %s: N=%lu: not a clean failure (above)\n", k->name, n);
		else
			t.failed++, t.by_errno[ret < 256 ? ret : 255]++;
	}
	/* Without injection the operation works (and its state undoes). */
	if (d->before)
		d->before();
	ret = k->op();
	k->undo();
	if (ret) {
		printf("  %s: after the series it fails without injection: %s\n", k->name,
		       ret > 0 ? t_errname(ret) : "see above");
		t.bad++;
	}
	if (d->count_inside)
		res_counts(after, sizeof(after));
	k->finish();
	if (!d->count_inside)
		res_counts(after, sizeof(after));

	for (e = 1; e < 256; e++)
		if (t.by_errno[e])
			snprintf(errs + strlen(errs), sizeof(errs) - strlen(errs), "%s%s %lu",
				 *errs ? ", " : "", t_errname(e), t.by_errno[e]);
	printf("%s: %lu fault points%s in %.1f s: %lu failed cleanly (%s), %lu tolerated%s\n",
	       k->name, t.points, cut ? " (cut short: the budget ran out)" : "",
	       t_now() - start, t.failed, *errs ? errs : "none", t.tolerated,
	       t.bad ? ", and bad outcomes above" : "");
	if (strcmp(before, after)) {
		t_fail("%s: %s resources before '%s', after '%s'", k->name, dev_name, before,
		       after);
	}
	if (t.bad)
		t_fail("%s: %lu bad outcomes", k->name, t.bad);
	return t_failures == fails_before;
}

int main(int argc, char **argv)
{
	const char *want = NULL;
	int gid_index = -1, c, i, ran = 0;

	t_name = "scire_fault_nth";
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:g:k:n:t:a:l:")) != -1) {
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'k': want = optarg; break;
		case 'n': max_n = strtoul(optarg, NULL, 0); break;
		case 't': max_secs = atof(optarg); break;
		case 'a': cm_addr = optarg; break;
		case 'l': link_netdev = optarg; break;
		default: exit(T_EXIT_FAIL);
		}
	}
	if (!dev_name) {
		fprintf(stderr, "usage: %s -d DEV [-g GID] [-k KIND,...] [-n MAX] [-t SECS] [-a ADDR] [-l NETDEV]\n",
			argv[0]);
		exit(T_EXIT_FAIL);
	}

	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		t_skip("/proc/thread-self/fail-nth: %s (a kernel without CONFIG_FAULT_INJECTION)",
		       t_errname(errno));
	ctx = t_open_path(dev_name, gid_index, &path);
	/* Everything mapped now stays in memory: no 9p paging under injection. */
	if (mlockall(MCL_CURRENT))
		t_fatal("mlockall: %s", t_errname(errno));

	for (i = 0; i < (int)(sizeof(kinds) / sizeof(kinds[0])); i++) {
		const char *name = kinds[i].k.name;
		bool on = kinds[i].all;

		if (want) {
			const char *p = strstr(want, name);
			size_t l = strlen(name);

			on = false;
			while (p) {
				if ((p == want || p[-1] == ',') && (p[l] == 0 || p[l] == ','))
					on = true;
				p = strstr(p + 1, name);
			}
		}
		if (!on)
			continue;
		run_kind(&kinds[i]);
		ran++;
	}
	if (!ran)
		t_fatal("no kind matches '%s'", want);
	ibv_close_device(ctx);
	return t_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}
