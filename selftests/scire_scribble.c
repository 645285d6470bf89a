// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scribble -d DEV [-g GIDIDX] [-n ITERS] [-s SEED] [-t SECS] [-r ITERS]
 *                [--strict] [--spare BYTES]
 *
 * The kernel must survive whatever user space writes into the memory it
 * shares with it. A child process connects two RC QPs of DEV (A with its
 * own RQ, B on an SRQ), checks that a WRITE and a SEND work, then ITERS
 * times (default 3000):
 *
 *   - writes random bytes over every mapping of /dev/infiniband/uverbs* in
 *     its address space (the CQ, SQ, RQ and SRQ rings and their indices:
 *     random words at random places, more of them in the first 512 bytes
 *     where ring headers live, now and then a whole mapping of random
 *     bytes or of 0xff);
 *   - posts a valid RDMA WRITE A->B, SEND B->A and SEND A->B (the
 *     provider rings the SQ doorbell), a receive on A and one on the SRQ;
 *     their errors are ignored;
 *   - polls both CQs; whatever they return is ignored;
 *   - every -r ITERS iterations (250), moves both QPs RESET->INIT->RTR->RTS
 *     again (this must succeed), so the requester and responder meet
 *     corrupt rings in RTS and not only in ERR.
 *
 * Then it destroys everything, and every destroy call must succeed. An
 * alarm(2) watchdog of SECS seconds (default 20) per iteration turns a
 * hang in the provider or the kernel into a failure that says where.
 *
 * The child must exit normally. Without --strict a child killed by a
 * signal in user space (SIGSEGV, SIGBUS, ...) is reported but tolerated:
 * rxe's provider (rdma-core 44) trusts the ring indices in shared memory
 * and may crash on them. A scire run uses --strict: its provider must not
 * crash either. Kernel problems are caught by the runner's kernel log
 * check.
 *
 * --spare BYTES leaves the first BYTES of every mapping alone. For rxe:
 * its queue header starts with log2_elem_size and index_mask, which its
 * provider takes from shared memory to compute slot addresses, and
 * then come the producer and consumer indices, which it uses unmasked as
 * slot numbers: scribbling any of it crashes the provider at once, before
 * the kernel sees a corrupt ring. --spare 384 keeps rxe's whole header
 * and lets the run reach the kernel with corrupt WQEs and CQEs. Never
 * for scire.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <getopt.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "scire_rc.h"

#define MAX_MAPS	64
#define BUF_LEN		65536

struct mapping {
	uint8_t *start;
	size_t len;
	int writable;
};

/* Progress, shared with the parent so it can say where the child died. */
struct progress {
	long iter;
	char step[64];
};

static struct progress *prog;
static long posted, post_failed, polled;
static const char *dev;
static int gid_index = -1, strict;
static long iters = 3000;
static unsigned int watchdog = 20;
static size_t spare;
static long reconnect_every = 250;
static uint32_t seed;

static void set_step(const char *step)
{
	snprintf(prog->step, sizeof(prog->step), "%s", step);
}

static void on_alarm(int sig)
{
	char msg[160];
	int n;

	n = snprintf(msg, sizeof(msg),
		     "FAIL: scire_scribble: watchdog: iteration %ld hung in '%s' for %u s\n",
		     prog->iter, prog->step, watchdog);
	if (write(2, msg, n) < 0)
		_exit(3);
	_exit(3);
}

/* Every mapping of a uverbs device file; make them writable where allowed. */
static int find_maps(struct mapping *m)
{
	char line[512], path[256], perms[8];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		t_fatal("open /proc/self/maps: %s", t_errname(errno));
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms, path) < 3)
			continue;
		if (strncmp(path, "/dev/infiniband/uverbs", 22))
			continue;
		if (n == MAX_MAPS)
			break;
		m[n].start = (uint8_t *)lo;
		m[n].len = hi - lo;
		m[n].writable = perms[1] == 'w' ||
				!mprotect(m[n].start, m[n].len, PROT_READ | PROT_WRITE);
		n++;
	}
	fclose(f);
	return n;
}

/* A 32-bit value that ring code might find interesting. */
static uint32_t nasty_u32(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff,
		0x80000000, 0xfffffffe, 0xffffffff,
	};

	if (t_one_in(2))
		return v[t_rand_below(sizeof(v) / sizeof(v[0]))] + (t_one_in(4) ? -1 : 0);
	return (uint32_t)t_rand64();
}

static void scribble(struct mapping *m, int n, long iter)
{
	int i, k;

	for (i = 0; i < n; i++) {
		uint8_t *p = m[i].start + spare;
		size_t len = m[i].len - spare;

		if (!m[i].writable || m[i].len <= spare)
			continue;
		if (iter % 97 == (long)i % 97) {
			t_rand_fill(p, len);
			continue;
		}
		if (iter % 89 == (long)i % 89) {
			memset(p, 0xff, len);
			continue;
		}
		for (k = 0; k < 8; k++) {
			size_t hot = len < 512 ? len : 512;
			size_t off = (t_one_in(2) ? t_rand_below(hot) : t_rand_below(len)) & ~3UL;
			uint32_t v = nasty_u32();

			if (off + 4 <= len)
				memcpy(p + off, &v, 4);
		}
		if (t_one_in(4)) {
			size_t off = t_rand_below(len), l = t_rand_range(1, 64);

			t_rand_fill(p + off, off + l <= len ? l : len - off);
		}
	}
}

/* Results are not checked, only counted for the summary. */
static void count(int ret)
{
	if (ret)
		post_failed++;
	else
		posted++;
}

static void post_all(struct ibv_qp *a, struct ibv_qp *b, struct ibv_srq *srq,
		     struct ibv_mr *mr, uint8_t *buf)
{
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_send_wr swr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)buf + 4096, mr->rkey },
	}, *sbad;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;

	set_step("ibv_post_send (RDMA WRITE A->B)");
	count(ibv_post_send(a, &swr, &sbad));
	set_step("ibv_post_send (SEND B->A)");
	swr.opcode = IBV_WR_SEND;
	count(ibv_post_send(b, &swr, &sbad));
	set_step("ibv_post_send (SEND A->B, to the SRQ)");
	count(ibv_post_send(a, &swr, &sbad));
	set_step("ibv_post_recv (A)");
	count(ibv_post_recv(a, &rwr, &rbad));
	set_step("ibv_post_srq_recv");
	count(ibv_post_srq_recv(srq, &rwr, &rbad));
}

/* Before any scribbling the QPs work: a WRITE A->B and a SEND B->A. */
static void sanity(struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *scq,
		   struct ibv_cq *rcq, struct ibv_mr *mr, uint8_t *buf)
{
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)buf + 4096, mr->rkey },
	}, *bad;
	double deadline = t_now() + 20;
	struct ibv_wc wc;
	int i, ret;

	ret = ibv_post_send(a, &wr, &bad);
	if (ret)
		t_fatal("before scribbling: post RDMA WRITE A->B: %s", t_errname(ret));
	wr.wr_id = 2;
	wr.opcode = IBV_WR_SEND;
	ret = ibv_post_send(b, &wr, &bad);
	if (ret)
		t_fatal("before scribbling: post SEND B->A: %s", t_errname(ret));
	for (i = 0; i < 3; i++) {
		const char *what = i < 2 ? "send" : "receive";

		if (!t_poll_one(i < 2 ? scq : rcq, &wc, deadline))
			t_fatal("before scribbling: no %s CQE within 20 s", what);
		if (wc.status != IBV_WC_SUCCESS)
			t_fatal("before scribbling: %s CQE wr_id %llu: status %s", what,
				(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	}
}

/* The child: everything that touches the device. */
static int child(void)
{
	struct ibv_qp_init_attr qa = {
		.cap = {
			.max_send_wr = 32,
			.max_recv_wr = 32,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 2 } };
	struct mapping maps[MAX_MAPS];
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_context *ctx;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *a, *b;
	struct ibv_srq *srq;
	struct ibv_wc wc[16];
	struct ibv_sge sge;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct t_path path;
	int nmaps, writable = 0, i, ret;
	long it, reconnects = 0;
	uint8_t *buf;

	t_rng_seed(seed);
	signal(SIGALRM, on_alarm);
	alarm(watchdog);
	set_step("setup");

	ctx = t_open_path(dev, gid_index, &path);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));
	buf = calloc(1, BUF_LEN);
	if (!buf)
		t_fatal("calloc: out of memory");
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | T_RC_ACCESS);
	if (!mr)
		t_fatal("reg_mr: %s", t_errname(errno));
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!scq || !rcq)
		t_fatal("create_cq: %s", t_errname(errno));
	srq = ibv_create_srq(pd, &sa);
	if (!srq)
		t_fatal("create_srq: %s", t_errname(errno));
	qa.send_cq = scq;
	qa.recv_cq = rcq;
	a = ibv_create_qp(pd, &qa);
	qa.srq = srq;
	b = ibv_create_qp(pd, &qa);
	if (!a || !b)
		t_fatal("create RC QP%s: %s", a ? " on the SRQ" : "", t_errname(errno));
	t_rc_connect_pair(a, b, &path);

	sge = (struct ibv_sge){ (uintptr_t)buf + 8192, 256, mr->lkey };
	rwr = (struct ibv_recv_wr){ .sg_list = &sge, .num_sge = 1 };
	for (i = 0; i < 8; i++) {
		if ((ret = ibv_post_recv(a, &rwr, &rbad)) ||
		    (ret = ibv_post_srq_recv(srq, &rwr, &rbad)))
			t_fatal("post receives before scribbling: %s", t_errname(ret));
	}
	sanity(a, b, scq, rcq, mr, buf);

	nmaps = find_maps(maps);
	for (i = 0; i < nmaps; i++)
		writable += maps[i].writable;
	printf("%d mappings of /dev/infiniband/uverbs*, %d writable:", nmaps, writable);
	for (i = 0; i < nmaps; i++)
		printf(" %zu%s", maps[i].len, maps[i].writable ? "" : "(ro)");
	printf(" bytes\n");
	if (!writable)
		t_fatal("no writable uverbs mapping: nothing to scribble on");

	for (it = 0; it < iters; it++) {
		prog->iter = it;
		alarm(watchdog);
		if (it && it % reconnect_every == 0) {
			/* Back to RTS: the requester meets corrupt rings again. */
			set_step("modify_qp RESET->INIT->RTR->RTS");
			t_rc_connect_pair(a, b, &path);
			reconnects++;
		}
		set_step("scribbling");
		scribble(maps, nmaps, it);
		post_all(a, b, srq, mr, buf);
		set_step("ibv_poll_cq (send CQ)");
		ret = ibv_poll_cq(scq, 16, wc);
		polled += ret > 0 ? ret : 0;
		set_step("ibv_poll_cq (recv CQ)");
		ret = ibv_poll_cq(rcq, 16, wc);
		polled += ret > 0 ? ret : 0;
	}
	printf("%ld iterations, %ld QP resets to RTS: %ld posts accepted, %ld refused, %ld CQEs polled; QP A %s, QP B %s\n",
	       it, reconnects, posted, post_failed, polled, t_qp_state_str(t_qp_state(a)),
	       t_qp_state_str(t_qp_state(b)));

	/* Rings full of garbage or not: every object must go away cleanly. */
	prog->iter = it;
	alarm(watchdog);
	set_step("destroy_qp A");
	if ((ret = ibv_destroy_qp(a)))
		t_fail("after scribbling: destroy_qp A: %s", t_errname(ret));
	set_step("destroy_qp B");
	if ((ret = ibv_destroy_qp(b)))
		t_fail("after scribbling: destroy_qp B (on the SRQ): %s", t_errname(ret));
	set_step("destroy_srq");
	if ((ret = ibv_destroy_srq(srq)))
		t_fail("after scribbling: destroy_srq: %s", t_errname(ret));
	set_step("destroy_cq");
	if ((ret = ibv_destroy_cq(scq)))
		t_fail("after scribbling: destroy_cq (send): %s", t_errname(ret));
	if ((ret = ibv_destroy_cq(rcq)))
		t_fail("after scribbling: destroy_cq (recv): %s", t_errname(ret));
	set_step("dereg_mr");
	if ((ret = ibv_dereg_mr(mr)))
		t_fail("after scribbling: dereg_mr: %s", t_errname(ret));
	set_step("dealloc_pd");
	if ((ret = ibv_dealloc_pd(pd)))
		t_fail("after scribbling: dealloc_pd: %s", t_errname(ret));
	set_step("close_device");
	if ((ret = ibv_close_device(ctx)))
		t_fail("after scribbling: close_device: %s", t_errname(ret));
	alarm(0);
	free(buf);
	return t_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "strict", no_argument, NULL, 'S' },
		{ "spare", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int c, status, seed_given = 0;
	pid_t pid;

	t_name = "scire_scribble";
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "d:g:n:s:t:r:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 's': seed = strtoul(optarg, NULL, 0); seed_given = 1; break;
		case 't': watchdog = atoi(optarg); break;
		case 'r': reconnect_every = atol(optarg); break;
		case 'S': strict = 1; break;
		case 'P': spare = strtoul(optarg, NULL, 0); break;
		default: dev = NULL; optind = argc + 1; break;
		}
	}
	if (!dev || optind != argc || iters < 1 || watchdog < 1 || reconnect_every < 1) {
		fprintf(stderr, "usage: %s -d DEV [-g GIDIDX] [-n ITERS] [-s SEED] [-t SECS] [-r ITERS] [--strict] [--spare BYTES]\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	if (!seed_given)
		seed = t_fresh_seed();
	printf("seed %u (replay: -s %u), %ld iterations%s, sparing the first %zu bytes of each mapping\n",
	       seed, seed, iters, strict ? ", --strict" : "", spare);

	prog = mmap(NULL, sizeof(*prog), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (prog == MAP_FAILED)
		t_fatal("mmap: %s", t_errname(errno));
	prog->iter = -1;
	snprintf(prog->step, sizeof(prog->step), "not started");

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		t_fatal("fork: %s", t_errname(errno));
	if (!pid)
		exit(child());
	if (waitpid(pid, &status, 0) != pid)
		t_fatal("waitpid: %s", t_errname(errno));

	if (WIFEXITED(status)) {
		switch (WEXITSTATUS(status)) {
		case T_EXIT_PASS:
			printf("PASS: %s on %s: %ld iterations, seed %u\n", t_name, dev, iters,
			       seed);
			return T_EXIT_PASS;
		case 3:
			/* The watchdog said where. */
			return T_EXIT_FAIL;
		default:
			fprintf(stderr, "FAIL: %s: child exited with status %d at iteration %ld, step '%s'; replay: -s %u\n",
				t_name, WEXITSTATUS(status), prog->iter, prog->step, seed);
			return T_EXIT_FAIL;
		}
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (strict || sig == SIGKILL || sig == SIGALRM) {
			fprintf(stderr, "FAIL: %s: child killed by %s at iteration %ld in '%s'; replay: -s %u\n",
				t_name, strsignal(sig), prog->iter, prog->step, seed);
			return T_EXIT_FAIL;
		}
		printf("NOTE: child killed by %s at iteration %ld in '%s' (replay: -s %u): tolerated without --strict (the provider read a scribbled ring); the kernel side was exercised up to there\n",
		       strsignal(sig), prog->iter, prog->step, seed);
		printf("PASS: %s on %s (provider crash tolerated)\n", t_name, dev);
		return T_EXIT_PASS;
	}
	t_fatal("child ended with wait status %#x", status);
}
