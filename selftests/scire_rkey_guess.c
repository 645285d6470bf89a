// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_rkey_guess -d DEV [-g GIDIDX] [-t SECONDS [-D CDEV [-G CGIDIDX]]]
 *
 * A client that guesses rkeys, against a victim with live regions. The
 * victim (its own device context and PD, as another process would have)
 * registers a page it grants the client (the client is told its rkey and
 * address) and, interleaved in time with the client's own registrations,
 * NV regions over a second page whose keys it never tells. The client
 * knows the second page's address (the worst case: only the key protects
 * it) and the keys it saw: its own regions' and the granted one. Over a UC
 * QP connected to the victim's (UC, because a responder drops a refused UC
 * request silently and the QP goes on: IBA 9.9, class D; on RC the first
 * refusal would fail the QP), it sends an 8-byte RDMA WRITE into the
 * hidden page for each guess:
 *
 *   neighbours  every key byte of the indices within +-2 of each key seen
 *   counter     what a key counter would give next: key + j * 0x101
 *   stale-byte  every other key byte of each index seen
 *   random      uniformly random 32-bit keys
 *
 * then a WRITE with the granted key, which must land (the channel works),
 * and, the victim having seen that, checks that
 *
 *   - not one byte of the hidden page changed;
 *   - every guess was counted in DEV's resp_remote_access_errors;
 *   - the victim's CQ holds nothing.
 *
 * With -t, a flood instead, as fast as it goes for SECONDS (it prints
 * "flooding" when it starts), then the same checks: keys that cannot be
 * right (the other key bytes of the indices seen, and the client's own
 * keys, of another PD), so that a long flood never hits by chance;
 * selftests/99-rkey-guess.sh runs honest traffic beside it. SIGTERM ends
 * the flood early and goes on to the checks.
 *
 * With -D, the client is on device CDEV (through its GID CGIDIDX, or its
 * first RoCE v2 GID with an IPv4 address), another host as far as the
 * victim's device DEV can tell: selftests/64-rate-limits.sh gives each a
 * network namespace of its own on one bridge, so the guesses cross the
 * wire and DEV's per-source limit (err_rate) applies to them. A guess
 * DEV drops unread over the limit is counted in err_rate_limited, not
 * resp_remote_access_errors, and a packet may be lost on the way, so the
 * check is that the two counters together grew by no more than the
 * guesses sent, and the write with the granted key is repeated (every
 * 0.5 s, UC drops it silently while the client's address is over the
 * limit) until it lands.
 *
 * A guess hits by chance with probability about NV * guesses / 2^32 when
 * keys are unpredictable (here about 1 in 20,000 runs); a key scheme with a
 * counter in it is found at once.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/mman.h>

#include "scire_rc.h"

#define NV		16	/* hidden regions of the victim */
#define NA		8	/* the client's own regions */
#define NEAR		2	/* index distance of the neighbour guesses */
#define NCOUNTER	64
#define NRANDOM		4096
#define SQ_DEPTH	256
#define SIGNAL_EVERY	64
#define MARK		0x6b657973u	/* "keys" */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static long page;
static const char *dev;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void side_new(struct side *s, const char *name)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	s->ctx = t_open_device(name);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		t_fatal("ibv_alloc_pd: %s", t_errname(errno));
	s->cq = ibv_create_cq(s->ctx, 2 * SQ_DEPTH, NULL, NULL, 0);
	if (!s->cq)
		t_fatal("ibv_create_cq: %s", t_errname(errno));
	qia.send_cq = qia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qia);
	if (!s->qp)
		t_fatal("create UC QP: %s", t_errname(errno));
}

/* The victim device's port counter name. */
static uint64_t dev_counter(const char *name)
{
	char path[256];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev,
		 name);
	f = fopen(path, "r");
	if (!f)
		t_fatal("%s: %s", path, t_errname(errno));
	if (fscanf(f, "%llu", &v) != 1)
		t_fatal("%s: not a number", path);
	fclose(f);
	return v;
}

static uint64_t access_errors(void)
{
	return dev_counter("resp_remote_access_errors");
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *buf, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, page, IBV_ACCESS_LOCAL_WRITE | access);

	if (!mr)
		t_fatal("ibv_reg_mr: %s", t_errname(errno));
	return mr;
}

static int outstanding;

/* Reap the client's send completions until at most keep are outstanding. */
static void reap(struct ibv_cq *cq, int keep)
{
	struct ibv_wc wc;

	while (outstanding > keep) {
		if (!t_poll_one(cq, &wc, t_now() + 30))
			t_fatal("no send completion in 30 s (%d outstanding)", outstanding);
		if (wc.status != IBV_WC_SUCCESS)
			t_fatal("UC WRITE completed with %s: a UC requester does not learn of the responder's refusal",
				ibv_wc_status_str(wc.status));
		outstanding -= SIGNAL_EVERY;
	}
}

static uint64_t posted;

/* One 8-byte UC RDMA WRITE of the client's sge to (va, rkey). */
static void write_guess(struct side *c, struct ibv_sge *sge, uint64_t va, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = va, .rkey = rkey },
	}, *bad;
	int ret;

	posted++;
	if (posted % SIGNAL_EVERY == 0) {
		wr.send_flags = IBV_SEND_SIGNALED;
		outstanding += SIGNAL_EVERY;
	}
	wr.wr_id = posted;
	reap(c->cq, SQ_DEPTH - 2 * SIGNAL_EVERY);
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		t_fatal("post WRITE %" PRIu64 ": %s", posted, t_errname(ret));
}

int main(int argc, char **argv)
{
	uint32_t seen[NA + 1], hidden[NV];
	uint64_t counter0, limited0 = 0, guesses = 0, counted, limited = 0;
	const char *cdev = NULL;
	int cgid = -1, tries = 0;
	struct ibv_mr *own[NA], *granted, *vmr[NV], *cmr;
	uint8_t *vbuf, *cbuf, *pattern;
	volatile uint32_t *landed;
	struct t_rc_opts o;
	struct t_path path, cpath, vside, cside;
	struct ibv_context *probe;
	struct side v, c;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i, j, d, b, changed = 0;
	uint64_t hidden_va;
	double end, flood = 0;

	/*
	 * -t SECONDS: the flood; -D CDEV, -G CGIDIDX: the client's device;
	 * the rest are t_rc_start()'s options.
	 */
	for (i = 1; i + 1 < argc; ) {
		if (!strcmp(argv[i], "-t"))
			flood = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "-D"))
			cdev = argv[i + 1];
		else if (!strcmp(argv[i], "-G"))
			cgid = atoi(argv[i + 1]);
		else {
			i++;
			continue;
		}
		memmove(&argv[i], &argv[i + 2], (argc - i - 1) * sizeof(*argv));
		argc -= 2;
	}
	if (cdev && flood <= 0)
		t_fatal("-D needs -t: the client on another device floods");
	probe = t_rc_start("scire_rkey_guess", argc, argv, 0, &o, &path);
	dev = o.dev;
	page = sysconf(_SC_PAGESIZE);
	side_new(&v, dev);
	vside = cside = path;
	if (cdev) {
		/* Each QP's destination GID is the other device's. */
		ibv_close_device(t_open_path(cdev, cgid, &cpath));
		vside.gid = cpath.gid;
		cside.gid = path.gid;
		cside.gid_index = cpath.gid_index;
		if (cpath.mtu < path.mtu)
			vside.mtu = cside.mtu = cpath.mtu;
	}
	side_new(&c, cdev ? cdev : dev);
	t_rc_connect(v.qp, c.qp->qp_num, 0x10, 0x20, &vside);
	t_rc_connect(c.qp, v.qp->qp_num, 0x20, 0x10, &cside);

	vbuf = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cbuf = mmap(NULL, (NA + 1) * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pattern = malloc(page);
	if (vbuf == MAP_FAILED || cbuf == MAP_FAILED || !pattern)
		t_fatal("memory: %s", t_errname(errno));
	t_rand_fill(vbuf, 2 * page);
	memcpy(pattern, vbuf + page, page);
	memset(cbuf, 0xee, (NA + 1) * page);
	hidden_va = (uintptr_t)(vbuf + page);

	/* Registrations interleaved: client, victim, client, victim... */
	granted = reg(v.pd, vbuf, IBV_ACCESS_REMOTE_WRITE);
	for (i = 0, j = 0; i < NA || j < NV; ) {
		if (i < NA) {
			own[i] = reg(c.pd, cbuf + (i + 1) * page, IBV_ACCESS_REMOTE_WRITE);
			seen[i] = own[i]->rkey;
			i++;
		}
		if (j < NV) {
			vmr[j] = reg(v.pd, vbuf + page, IBV_ACCESS_REMOTE_WRITE);
			hidden[j] = vmr[j]->rkey;
			j++;
		}
	}
	seen[NA] = granted->rkey;
	cmr = reg(c.pd, cbuf, 0);
	sge = (struct ibv_sge){ .addr = (uintptr_t)cbuf, .length = 8, .lkey = cmr->lkey };

	counter0 = access_errors();
	if (cdev)
		limited0 = dev_counter("err_rate_limited");

	/* Guesses; a guess equal to a hidden key is a bug of the test. */
#define GUESS(k) do {							\
		uint32_t g_ = (k);					\
		for (int h_ = 0; h_ < NV; h_++)				\
			if (g_ == hidden[h_])				\
				t_fail("guess %#x is hidden key %d: a guess found it", g_, h_); \
		if (g_ != granted->rkey) {				\
			write_guess(&c, &sge, hidden_va + 8 * (guesses % (page / 8)), g_); \
			guesses++;					\
		}							\
	} while (0)

	if (flood > 0) {
		signal(SIGTERM, on_term);
		printf("flooding\n");
		end = t_now() + flood;
		while (!stop && t_now() < end)
			for (i = 0; i <= NA; i++) {
				for (b = 0; b < 256; b++)
					if (b != (int)(seen[i] & 0xff))
						GUESS((seen[i] & ~0xffu) | b);
				if (i < NA)
					GUESS(seen[i]);
			}
		printf("%" PRIu64 " guesses in %.1f s\n", guesses, flood - (end - t_now()));
		goto granted;
	}
	for (i = 0; i <= NA; i++) {
		uint32_t idx = seen[i] >> 8;

		for (d = -NEAR; d <= NEAR; d++)
			for (b = 0; b < 256; b++)
				if (d)
					GUESS(((idx + d) & 0xffffff) << 8 | b);
		for (b = 0; b < 256; b++)
			if (b != (int)(seen[i] & 0xff))
				GUESS(idx << 8 | b);
	}
	printf("neighbours and stale key bytes of %d keys seen: %" PRIu64 " guesses\n", NA + 1,
	       guesses);
	for (i = 0; i <= NA; i++)
		for (j = 1; j <= NCOUNTER; j++)
			GUESS(seen[i] + j * 0x101u);
	for (i = 0; i < NRANDOM; i++)
		GUESS((uint32_t)t_rand64());
	printf("%" PRIu64 " guesses in all (counter successors, %d random)\n", guesses, NRANDOM);

granted:
	/* The granted key works: its write lands, after every guess (UC order). */
	memcpy(cbuf, &(uint32_t){ MARK }, 4);
	landed = (volatile uint32_t *)vbuf;
	end = t_now() + 60;
	do {
		double again = t_now() + 0.5;

		write_guess(&c, &sge, (uintptr_t)vbuf, granted->rkey);
		tries++;
		while (*landed != MARK && t_now() < (cdev ? again : end))
			sched_yield();
	} while (*landed != MARK && t_now() < end);
	if (*landed != MARK)
		t_fatal("the WRITE with the granted rkey did not land in 60 s: the channel does not work, nothing is shown");
	if (tries > 1)
		printf("the WRITE with the granted rkey landed at try %d\n", tries);
	/*
	 * The counters are bumped before the next request is looked at, and
	 * every guess went before the write that landed (one UC QP, in
	 * order); across the wire a lost guess is never counted, so only
	 * the same host waits for the count to come level.
	 */
	end = t_now() + 10;
	do {
		counted = access_errors() - counter0;
		if (cdev)
			limited = dev_counter("err_rate_limited") - limited0;
	} while (!cdev && counted < guesses && t_now() < end);

	for (i = 0; i < page; i++)
		changed += vbuf[page + i] != pattern[i];
	if (changed)
		t_fail("%d bytes of the hidden page changed: a guess was accepted", changed);
	else
		printf("not one byte of the hidden page (%d regions) changed\n", NV);
	if (cdev) {
		/* The granted writes before the one that landed may be dropped unread too. */
		if (!counted || counted + limited > guesses + tries - 1)
			t_fail("resp_remote_access_errors +%" PRIu64 " and err_rate_limited +%" PRIu64
			       " for %" PRIu64 " guesses from %s",
			       counted, limited, guesses, cdev);
		else
			printf("from %s: resp_remote_access_errors +%" PRIu64
			       ", err_rate_limited +%" PRIu64 ", %" PRIu64 " lost on the way\n",
			       cdev, counted, limited,
			       guesses + tries - 1 > counted + limited ?
			       guesses + tries - 1 - counted - limited : 0);
	} else if (counted != guesses) {
		t_fail("resp_remote_access_errors grew by %" PRIu64 ", %" PRIu64 " guesses were refused",
		       counted, guesses);
	} else {
		printf("resp_remote_access_errors: +%" PRIu64 ", one per guess\n", counted);
	}
	if (ibv_poll_cq(v.cq, 1, &wc) != 0)
		t_fail("the victim's CQ holds a completion (wr_id %" PRIu64 ", %s)", wc.wr_id,
		       ibv_wc_status_str(wc.status));

	reap(c.cq, 0);
	for (i = 0; i < NV; i++)
		ibv_dereg_mr(vmr[i]);
	for (i = 0; i < NA; i++)
		ibv_dereg_mr(own[i]);
	ibv_dereg_mr(granted);
	ibv_dereg_mr(cmr);
	ibv_destroy_qp(v.qp);
	ibv_destroy_qp(c.qp);
	ibv_destroy_cq(v.cq);
	ibv_destroy_cq(c.cq);
	ibv_dealloc_pd(v.pd);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(v.ctx);
	ibv_close_device(c.ctx);
	ibv_close_device(probe);
	return t_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}
