// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_cm_flood -a IP -p PORT [-t SECONDS] [-n INFLIGHT] [-r [-w MS]]
 *
 * A flood of rdma_cm connection requests at IP for SECONDS (default 10)
 * or until SIGTERM or SIGINT, as fast as they go, INFLIGHT (default 16)
 * at a time. Two targets take
 * turns:
 *
 *   no-listener  PORT + 1, where nothing listens: the target's CM must
 *                reject each request (IB_CM_REJ_INVALID_SERVICE_ID, 8)
 *   refuser      PORT, a listener this program makes on IP that rejects
 *                every request it is handed (rdma_reject: the consumer's
 *                reason, IB_CM_REJ_CONSUMER_DEFINED, 28)
 *
 * Each request is a new cm_id: address and route resolution, then
 * rdma_connect with a QP number (a new one each time) and no QP (the
 * request costs the target what an attacker's would, not a QP of ours). It prints "flooding" once
 * the first request of each target has been refused, then at the end the
 * requests sent and how each ended, per target, and fails if
 *
 *   - one was established (it must not: nothing accepts);
 *   - one was refused with another reason than its target's, or ended in
 *     anything else (unreachable, a connect or address error);
 *   - the listener was not handed as many requests as it refused;
 *   - a request was still open 30 s after the flood stopped sending.
 *
 * With -r, IP is another host's (this program listens nowhere) and only
 * the no-listener target is flooded, at PORT itself. That host may drop
 * requests unanswered (scire's gsi_rate): a request with no answer after
 * MS milliseconds (-w, default 500) is given up (rdma_destroy_id) and a
 * new one started, and one the CM gives up on itself (unreachable)
 * counts as unanswered too, not as a failure; requests still open when
 * the flood stops are given up the same way. The last line then gives
 * the requests answered and unanswered.
 *
 * Exit status: 0 pass, 1 fail.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "scire_test.h"

#define REJ_INVALID_SERVICE_ID	8
#define REJ_CONSUMER_DEFINED	28
#define MAX_INFLIGHT		256

enum target { T_NOLISTEN, T_REFUSER, T_NR };
static const char *const target_name[T_NR] = { "no-listener", "refuser" };
static const int target_reason[T_NR] = { REJ_INVALID_SERVICE_ID, REJ_CONSUMER_DEFINED };

struct tally {
	unsigned long sent, rejected, wrong_reason, established, other, unanswered;
	int last_wrong_reason;
	enum rdma_cm_event_type last_other;
	int last_other_status;
};

struct req {
	struct rdma_cm_id *id;	/* NULL: the slot is free */
	enum target target;
	double connected;	/* when rdma_connect() was called; 0: not yet */
};

static struct tally tally[T_NR];
static struct req reqs[MAX_INFLIGHT];
static struct sockaddr_in dst[T_NR];
static struct rdma_event_channel *ch;
static struct rdma_cm_id *listener;
static volatile sig_atomic_t stop;
static uint32_t next_qpn = 0x100;
static unsigned long handed, refused, refuse_failed, open_reqs;
static int remote;		/* -r */
static double give_up = 0.5;	/* -w, in seconds */

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Start a new request from slot i, at the target that has sent fewer. */
static void start(int i)
{
	struct req *r = &reqs[i];
	enum target t = remote || tally[T_NOLISTEN].sent <= tally[T_REFUSER].sent ?
			T_NOLISTEN : T_REFUSER;

	if (rdma_create_id(ch, &r->id, r, RDMA_PS_TCP))
		t_fatal("rdma_create_id: %s", strerror(errno));
	r->target = t;
	r->connected = 0;
	if (rdma_resolve_addr(r->id, NULL, (struct sockaddr *)&dst[t], 2000))
		t_fatal("rdma_resolve_addr: %s", strerror(errno));
	tally[t].sent++;
	open_reqs++;
}

static void finish(struct req *r)
{
	rdma_destroy_id(r->id);
	r->id = NULL;
	open_reqs--;
}

static void other(struct req *r, struct rdma_cm_event *ev)
{
	tally[r->target].other++;
	tally[r->target].last_other = ev->event;
	tally[r->target].last_other_status = ev->status;
}

/*
 * One event. Returns the slot that became free, or -1. The event is acked
 * here, before an id is destroyed (rdma_destroy_id waits for its acks).
 */
static int handle(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct req *r;
	int status = ev->status;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* The listener's: refuse it, never accept. */
		handed++;
		if (rdma_reject(id, NULL, 0))
			refuse_failed++;
		else
			refused++;
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		return -1;
	}
	if (id == listener || !id->context) {
		/* Nothing else is expected on the listener. */
		fprintf(stderr, "listener event %s (%d)\n", rdma_event_str(ev->event), status);
		refuse_failed++;
		rdma_ack_cm_event(ev);
		return -1;
	}
	r = id->context;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		rdma_ack_cm_event(ev);
		if (rdma_resolve_route(r->id, 2000)) {
			tally[r->target].other++;
			tally[r->target].last_other = RDMA_CM_EVENT_ROUTE_ERROR;
			tally[r->target].last_other_status = -errno;
			break;
		}
		return -1;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		struct rdma_conn_param cp = {
			.retry_count = 1,
			.rnr_retry_count = 1,
		};

		/*
		 * A new QP number each time: the target's CM refuses a REQ
		 * naming a remote QPN it still holds from an earlier one
		 * as a stale connection (reason 10) instead.
		 */
		cp.qp_num = next_qpn;
		next_qpn = next_qpn >= 0xffffff ? 0x100 : next_qpn + 1;

		rdma_ack_cm_event(ev);
		r->connected = now();
		if (rdma_connect(r->id, &cp)) {
			tally[r->target].other++;
			tally[r->target].last_other = RDMA_CM_EVENT_CONNECT_ERROR;
			tally[r->target].last_other_status = -errno;
			break;
		}
		return -1;
	}
	case RDMA_CM_EVENT_REJECTED:
		if (status == target_reason[r->target]) {
			tally[r->target].rejected++;
		} else {
			tally[r->target].wrong_reason++;
			tally[r->target].last_wrong_reason = status;
		}
		rdma_ack_cm_event(ev);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		/* The CM sent the REQ its retries and heard nothing. */
		if (remote)
			tally[r->target].unanswered++;
		else
			other(r, ev);
		rdma_ack_cm_event(ev);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		tally[r->target].established++;
		rdma_ack_cm_event(ev);
		rdma_disconnect(r->id);
		break;
	default:
		other(r, ev);
		rdma_ack_cm_event(ev);
		break;
	}
	finish(r);
	return r - reqs;
}

/*
 * -r: give up the requests that have waited for an answer longer than
 * @age seconds (all that have been sent, with 0); returns how many.
 * Their slots are free afterwards.
 */
static int give_up_old(double age, int restart)
{
	double t = now();
	int i, n = 0;

	for (i = 0; i < MAX_INFLIGHT; i++) {
		struct req *r = &reqs[i];

		if (!r->id || !r->connected || t - r->connected < age)
			continue;
		tally[r->target].unanswered++;
		finish(r);
		n++;
		if (restart)
			start(i);
	}
	return n;
}

/* Wait up to ms for one event and handle it; the freed slot or -1. */
static int step(int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) <= 0)
		return -1;
	if (rdma_get_cm_event(ch, &ev))
		t_fatal("rdma_get_cm_event: %s", strerror(errno));
	return handle(ev);
}

int main(int argc, char **argv)
{
	const char *ip = NULL;
	int port = 0, secs = 10, inflight = 16, opt, fails = 0, said = 0;
	double end, drain_end, t0;
	struct sockaddr_in la;
	int i, t;

	t_name = "scire_cm_flood";
	while ((opt = getopt(argc, argv, "a:p:t:n:rw:")) != -1) {
		switch (opt) {
		case 'a': ip = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		case 'n': inflight = atoi(optarg); break;
		case 'r': remote = 1; break;
		case 'w': give_up = atoi(optarg) / 1000.0; break;
		default:
			fprintf(stderr, "usage: %s -a IP -p PORT [-t SECONDS] [-n INFLIGHT] [-r [-w MS]]\n",
				argv[0]);
			return T_EXIT_FAIL;
		}
	}
	if (!ip || port <= 0 || port >= 65535 || secs <= 0 || inflight <= 0 || inflight > MAX_INFLIGHT ||
	    give_up <= 0)
		t_fatal("need -a IP and -p PORT (1-65534); -t > 0; -n 1-%d; -w > 0", MAX_INFLIGHT);

	for (t = 0; t < T_NR; t++) {
		dst[t].sin_family = AF_INET;
		if (inet_pton(AF_INET, ip, &dst[t].sin_addr) != 1)
			t_fatal("not an IPv4 address: %s", ip);
	}
	dst[T_REFUSER].sin_port = htons(port);
	dst[T_NOLISTEN].sin_port = htons(remote ? port : port + 1);

	ch = rdma_create_event_channel();
	if (!ch)
		t_fatal("rdma_create_event_channel: %s", strerror(errno));
	if (!remote) {
		if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP))
			t_fatal("rdma_create_id (listener): %s", strerror(errno));
		la = dst[T_REFUSER];
		if (rdma_bind_addr(listener, (struct sockaddr *)&la))
			t_fatal("rdma_bind_addr %s:%d: %s", ip, port, strerror(errno));
		if (rdma_listen(listener, 64))
			t_fatal("rdma_listen: %s", strerror(errno));
	}

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	t0 = now();
	end = t0 + secs;
	for (i = 0; i < inflight; i++)
		start(i);
	while (!stop && now() < end) {
		i = step(remote ? 20 : 100);
		if (!said && tally[T_NOLISTEN].rejected && (remote || tally[T_REFUSER].rejected)) {
			if (remote)
				printf("flooding %s: port %d (no listener), %d at a time, giving up after %.0f ms\n",
				       ip, port, inflight, give_up * 1000);
			else
				printf("flooding %s: ports %d (refuser) and %d (no listener), %d at a time\n",
				       ip, port, port + 1, inflight);
			fflush(stdout);
			said = 1;
		}
		if (i >= 0 && !stop && now() < end)
			start(i);
		if (remote && !stop && now() < end)
			give_up_old(give_up, 1);
	}
	drain_end = now() + (remote ? give_up + 1 : 30);
	while (open_reqs && now() < drain_end)
		step(100);
	if (remote)
		give_up_old(0, 0);

	printf("%.1f s of requests at %s:\n", now() - t0, ip);
	for (t = 0; t < (remote ? 1 : T_NR); t++) {
		struct tally *y = &tally[t];

		printf("  %-12s sent %lu, rejected with reason %d %lu, other reasons %lu, established %lu, other ends %lu\n",
		       target_name[t], y->sent, target_reason[t], y->rejected, y->wrong_reason,
		       y->established, y->other);
		if (y->established) {
			t_fail("%s: %lu requests were established", target_name[t], y->established);
			fails++;
		}
		if (y->wrong_reason) {
			t_fail("%s: %lu refused with another reason than %d (last %d)", target_name[t],
			       y->wrong_reason, target_reason[t], y->last_wrong_reason);
			fails++;
		}
		if (y->other) {
			t_fail("%s: %lu ended otherwise (last: %s, status %d)", target_name[t], y->other,
			       rdma_event_str(y->last_other), y->last_other_status);
			fails++;
		}
		if (!y->rejected) {
			t_fail("%s: no request was rejected", target_name[t]);
			fails++;
		}
	}
	if (remote)
		printf("answered %lu, unanswered %lu\n",
		       tally[T_NOLISTEN].rejected + tally[T_NOLISTEN].wrong_reason +
		       tally[T_NOLISTEN].established,
		       tally[T_NOLISTEN].unanswered);
	else
		printf("  listener     handed %lu, refused %lu, rdma_reject failed %lu\n", handed, refused,
		       refuse_failed);
	if (open_reqs) {
		t_fail("%lu requests still open 30 s after the last was sent", open_reqs);
		fails++;
	}
	if (!remote && (refuse_failed || handed != tally[T_REFUSER].rejected)) {
		t_fail("the listener was handed %lu requests, refused %lu (%lu failed), its targets saw %lu rejections",
		       handed, refused, refuse_failed, tally[T_REFUSER].rejected);
		fails++;
	}
	for (i = 0; i < MAX_INFLIGHT; i++)
		if (reqs[i].id)
			rdma_destroy_id(reqs[i].id);
	if (listener)
		rdma_destroy_id(listener);
	rdma_destroy_event_channel(ch);
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
