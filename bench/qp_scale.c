// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qp_scale: what many QPs and one large MR cost a device (issue 18),
 * scire and rdma_rxe alike.
 *
 *   qp_scale qps   -d DEV [-x GID_INDEX] [-n QPS]
 *   qp_scale reg   -d DEV [-m MIB] [-k REPS]
 *
 * qps: creates QPS RC QPs (default 4096, even) on port 1 of DEV, one PD,
 * one CQ, and connects them in pairs to each other, QP i with QP
 * i + QPS/2 (loopback through the port's GID GID_INDEX, default 0), each
 * through RESET -> INIT -> RTR -> RTS; then one signalled 8-byte RDMA
 * WRITE on the last pair shows the connections carry data. Prints
 *
 *   rc_qp_connect QPS SECONDS KIB_PER_QP SLAB_KIB_PER_QP DESTROY_SECONDS
 *
 * SECONDS: from the first ibv_create_qp to the last QP in RTS;
 * KIB_PER_QP: the drop of /proc/meminfo's MemAvailable over the same
 * span, per QP (kernel and user memory alike: rings, QP structures, the
 * provider's own); SLAB_KIB_PER_QP: the growth of Slab alone, per QP;
 * DESTROY_SECONDS: destroying them all again.
 *
 * reg: touches a buffer of MIB MiB (default 1024) and registers it with
 * ibv_reg_mr (local write, remote read and write) REPS times (default 3),
 * deregistering it after each. Prints
 *
 *   reg_mr BYTES MEDIAN_USEC USEC...
 *
 * Any failure is reported on stderr with the call that failed and its
 * errno (never hidden, never retried), with how far it got: exit status
 * 1. Exit status 2: usage.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static const char *prog = "qp_scale";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* meminfo_kib: field NAME of /proc/meminfo in KiB, or -1. */
static long long meminfo_kib(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = strtoll(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "%s: ibv_get_device_list: %s\n", prog, strerror(errno));
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n) {
		fprintf(stderr, "%s: no RDMA device %s among %d\n", prog, name, n);
	} else {
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fprintf(stderr, "%s: ibv_open_device %s: %s\n", prog, name, strerror(errno));
	}
	ibv_free_device_list(list);
	return ctx;
}

/*
 * The QP modify calls return a positive errno (libibverbs' convention);
 * some providers leave errno alone, so report the return value.
 */
static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *gid, int gid_index,
		  enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dqpn,
		.rq_psn = dqpn & 0xffffff,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = {
				.dgid = *gid,
				.sgid_index = gid_index,
				.hop_limit = 1,
			},
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = qp->qp_num & 0xffffff,
		.max_rd_atomic = 1,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* write_check: one signalled RDMA WRITE of 8 bytes on qp to its peer. */
static int write_check(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, char *buf)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)buf + 64, .rkey = mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	double end = now() + 10;
	int ret, n;

	memcpy(buf, "qp_scale", 8);
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret) {
		fprintf(stderr, "%s: ibv_post_send on QP %u: %s\n", prog, qp->qp_num, strerror(ret));
		return -1;
	}
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && now() < end)
		;
	if (n < 0) {
		fprintf(stderr, "%s: ibv_poll_cq: %d\n", prog, n);
		return -1;
	}
	if (n == 0) {
		fprintf(stderr, "%s: no completion for the RDMA WRITE on QP %u within 10 s\n", prog,
			qp->qp_num);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s: RDMA WRITE on QP %u completed with %s\n", prog, qp->qp_num,
			ibv_wc_status_str(wc.status));
		return -1;
	}
	if (memcmp(buf + 64, "qp_scale", 8)) {
		fprintf(stderr, "%s: RDMA WRITE on QP %u completed, but the bytes did not land\n",
			prog, qp->qp_num);
		return -1;
	}
	return 0;
}

static int run_qps(struct ibv_context *ctx, int gid_index, int nqp)
{
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_qp **qp = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	union ibv_gid gid;
	long long avail0, slab0, avail1, slab1;
	double t0, t1, t2;
	static char buf[4096];
	int half = nqp / 2, made = 0, i, ret, rc = 1;
	const char *step = "";

	ret = ibv_query_device(ctx, &dattr);
	if (ret) {
		fprintf(stderr, "%s: ibv_query_device: %s\n", prog, strerror(ret));
		return 1;
	}
	ret = ibv_query_port(ctx, 1, &pattr);
	if (ret) {
		fprintf(stderr, "%s: ibv_query_port 1: %s\n", prog, strerror(ret));
		return 1;
	}
	if (ibv_query_gid(ctx, 1, gid_index, &gid)) {
		fprintf(stderr, "%s: ibv_query_gid port 1 index %d: %s\n", prog, gid_index,
			strerror(errno));
		return 1;
	}
	/* The limits go to stderr: run-guest.sh reports them beside the figure. */
	fprintf(stderr, "%s: %s max_qp %d max_cq %d max_mr %d max_qp_wr %d\n", prog,
		ibv_get_device_name(ctx->device), dattr.max_qp, dattr.max_cq, dattr.max_mr,
		dattr.max_qp_wr);
	if (nqp > dattr.max_qp)
		fprintf(stderr, "%s: %d QPs wanted, the device reports max_qp %d: trying anyway\n",
			prog, nqp, dattr.max_qp);

	qp = calloc(nqp, sizeof(*qp));
	pd = ibv_alloc_pd(ctx);
	if (!qp || !pd) {
		fprintf(stderr, "%s: %s: %s\n", prog, qp ? "ibv_alloc_pd" : "calloc", strerror(errno));
		goto out;
	}
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq) {
		fprintf(stderr, "%s: ibv_create_cq: %s\n", prog, strerror(errno));
		goto out;
	}
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		fprintf(stderr, "%s: ibv_reg_mr of %zu bytes: %s\n", prog, sizeof(buf), strerror(errno));
		goto out;
	}
	init.send_cq = cq;
	init.recv_cq = cq;

	avail0 = meminfo_kib("MemAvailable");
	slab0 = meminfo_kib("Slab");
	t0 = now();
	for (made = 0; made < nqp; made++) {
		qp[made] = ibv_create_qp(pd, &init);
		if (!qp[made]) {
			fprintf(stderr, "%s: ibv_create_qp of QP %d of %d (RC, 1 WR each way, one CQ): %s (errno %d)\n",
				prog, made + 1, nqp, strerror(errno), errno);
			goto out;
		}
	}
	for (i = 0; i < nqp; i++) {
		step = "INIT";
		ret = to_init(qp[i]);
		if (ret)
			goto modfail;
	}
	for (i = 0; i < nqp; i++) {
		step = "RTR";
		ret = to_rtr(qp[i], qp[(i + half) % nqp]->qp_num, &gid, gid_index,
			     pattr.active_mtu);
		if (ret)
			goto modfail;
		step = "RTS";
		ret = to_rts(qp[i]);
		if (ret)
			goto modfail;
	}
	t1 = now();
	avail1 = meminfo_kib("MemAvailable");
	slab1 = meminfo_kib("Slab");
	if (write_check(qp[half - 1], cq, mr, buf))
		goto out;

	while (made > 0) {
		ret = ibv_destroy_qp(qp[--made]);
		if (ret) {
			fprintf(stderr, "%s: ibv_destroy_qp of QP %u: %s\n", prog, qp[made]->qp_num,
				strerror(ret));
			goto out;
		}
	}
	t2 = now();
	printf("rc_qp_connect %d %.3f %.1f %.1f %.3f\n", nqp, t1 - t0,
	       (double)(avail0 - avail1) / nqp, (double)(slab1 - slab0) / nqp, t2 - t1);
	rc = 0;
	goto out;

modfail:
	fprintf(stderr, "%s: ibv_modify_qp of QP %d (qpn %u) of %d to %s: %s (errno %d)\n", prog,
		i + 1, qp[i]->qp_num, nqp, step, strerror(ret), ret);
out:
	while (made > 0)
		ibv_destroy_qp(qp[--made]);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	free(qp);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int run_reg(struct ibv_context *ctx, size_t mib, int reps)
{
	size_t len = mib << 20;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	double *us, t0;
	char *buf;
	int i, rc = 1;

	us = calloc(reps, sizeof(*us));
	pd = ibv_alloc_pd(ctx);
	if (!us || !pd) {
		fprintf(stderr, "%s: %s: %s\n", prog, us ? "ibv_alloc_pd" : "calloc", strerror(errno));
		goto out_pd;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		fprintf(stderr, "%s: mmap of %zu MiB: %s\n", prog, mib, strerror(errno));
		goto out_pd;
	}
	/* Touched: the figure is the registration, not page faults. */
	memset(buf, 0x5a, len);
	for (i = 0; i < reps; i++) {
		t0 = now();
		mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
		us[i] = (now() - t0) * 1e6;
		if (!mr) {
			fprintf(stderr, "%s: ibv_reg_mr of %zu MiB (repetition %d): %s (errno %d)\n",
				prog, mib, i + 1, strerror(errno), errno);
			goto out;
		}
		if (ibv_dereg_mr(mr)) {
			fprintf(stderr, "%s: ibv_dereg_mr of %zu MiB: %s\n", prog, mib, strerror(errno));
			goto out;
		}
	}
	printf("reg_mr %zu", len);
	{
		double *s = malloc(reps * sizeof(*s));

		if (!s) {
			fprintf(stderr, "%s: malloc: %s\n", prog, strerror(errno));
			goto out;
		}
		memcpy(s, us, reps * sizeof(*s));
		qsort(s, reps, sizeof(*s), cmp_double);
		printf(" %.0f", reps % 2 ? s[reps / 2] : (s[reps / 2 - 1] + s[reps / 2]) / 2);
		free(s);
	}
	for (i = 0; i < reps; i++)
		printf(" %.0f", us[i]);
	printf("\n");
	rc = 0;
out:
	munmap(buf, len);
out_pd:
	if (pd)
		ibv_dealloc_pd(pd);
	free(us);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s qps -d DEV [-x GID_INDEX] [-n QPS]\n"
		"       %s reg -d DEV [-m MIB] [-k REPS]\n", prog, prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *mode;
	struct ibv_context *ctx;
	int gid_index = 0, nqp = 4096, reps = 3, opt, rc;
	long mib = 1024;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "d:x:n:m:k:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'x':
			gid_index = atoi(optarg);
			break;
		case 'n':
			nqp = atoi(optarg);
			break;
		case 'm':
			mib = atol(optarg);
			break;
		case 'k':
			reps = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!dev || optind != argc || nqp < 2 || nqp % 2 || mib < 1 || reps < 1 ||
	    (strcmp(mode, "qps") && strcmp(mode, "reg")))
		usage();
	ctx = open_dev(dev);
	if (!ctx)
		return 1;
	if (!strcmp(mode, "qps"))
		rc = run_qps(ctx, gid_index, nqp);
	else
		rc = run_reg(ctx, mib, reps);
	ibv_close_device(ctx);
	return rc;
}
