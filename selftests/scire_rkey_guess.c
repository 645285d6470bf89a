// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_rkey_guess -d DEV [-g GIDIDX] [-t SECONDS]
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
 * selftests/99-rkey-guess.sh runs honest traffic beside it.
 *
 * A guess hits by chance with probability about NV * guesses / 2^32 when
 * keys are unpredictable (here about 1 in 20,000 runs); a key scheme with a
 * counter in it is found at once.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <inttypes.h>
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

static void side_new(struct side *s)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	s->ctx = t_open_device(dev);
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

static uint64_t access_errors(void)
{
	char path[256];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/resp_remote_access_errors", dev);
	f = fopen(path, "r");
	if (!f)
		t_fatal("%s: %s", path, t_errname(errno));
	if (fscanf(f, "%llu", &v) != 1)
		t_fatal("%s: not a number", path);
	fclose(f);
	return v;
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
	uint64_t counter0, guesses = 0, counted;
	struct ibv_mr *own[NA], *granted, *vmr[NV], *cmr;
	uint8_t *vbuf, *cbuf, *pattern;
	volatile uint32_t *landed;
	struct t_rc_opts o;
	struct t_path path;
	struct ibv_context *probe;
	struct side v, c;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i, j, d, b, changed = 0;
	uint64_t hidden_va;
	double end, flood = 0;

	/* -t SECONDS: the flood; the rest are t_rc_start()'s options. */
	for (i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-t")) {
			flood = atof(argv[i + 1]);
			memmove(&argv[i], &argv[i + 2], (argc - i - 1) * sizeof(*argv));
			argc -= 2;
			break;
		}
	probe = t_rc_start("scire_rkey_guess", argc, argv, 0, &o, &path);
	dev = o.dev;
	page = sysconf(_SC_PAGESIZE);
	side_new(&v);
	side_new(&c);
	t_rc_connect(v.qp, c.qp->qp_num, 0x10, 0x20, &path);
	t_rc_connect(c.qp, v.qp->qp_num, 0x20, 0x10, &path);

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
		printf("flooding\n");
		end = t_now() + flood;
		while (t_now() < end)
			for (i = 0; i <= NA; i++) {
				for (b = 0; b < 256; b++)
					if (b != (int)(seen[i] & 0xff))
						GUESS((seen[i] & ~0xffu) | b);
				if (i < NA)
					GUESS(seen[i]);
			}
		printf("%" PRIu64 " guesses in %.0f s\n", guesses, flood);
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
	write_guess(&c, &sge, (uintptr_t)vbuf, granted->rkey);
	landed = (volatile uint32_t *)vbuf;
	end = t_now() + 60;
	while (*landed != MARK && t_now() < end)
		sched_yield();
	if (*landed != MARK)
		t_fatal("the WRITE with the granted rkey did not land in 60 s: the channel does not work, nothing is shown");
	/* The counter is bumped before the next request is looked at. */
	end = t_now() + 10;
	do {
		counted = access_errors() - counter0;
	} while (counted < guesses && t_now() < end);

	for (i = 0; i < page; i++)
		changed += vbuf[page + i] != pattern[i];
	if (changed)
		t_fail("%d bytes of the hidden page changed: a guess was accepted", changed);
	else
		printf("not one byte of the hidden page (%d regions) changed\n", NV);
	if (counted != guesses)
		t_fail("resp_remote_access_errors grew by %" PRIu64 ", %" PRIu64 " guesses were refused",
		       counted, guesses);
	else
		printf("resp_remote_access_errors: +%" PRIu64 ", one per guess\n", counted);
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
