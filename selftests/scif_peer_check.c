// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_peer_check: the SCIF bridge's connection requests from the
 * attacker's side (selftests/105-scif-peer-check.sh).
 *
 *   scif_peer_check listen PORT SECONDS
 *	A SCIF listener (libscif) on PORT of this namespace's node: accepts
 *	one connection, prints "accepted node N port P", closes it and
 *	exits 0; exits 1 if none came within SECONDS.
 *
 *   scif_peer_check hold PORT NPORTS BACKLOG SECONDS
 *	SCIF listeners on PORT .. PORT + NPORTS - 1 with BACKLOG each that
 *	accept nothing: prints "listening", holds them for SECONDS (or until
 *	killed), then closes them, which rejects what they had queued.
 *
 *   scif_peer_check forge SRC DST CM_PORT CLAIM_NODE DST_NODE DST_PORT [magic]
 *	A raw rdma_cm client, no libscif and no /dev/scif: from the address
 *	SRC, it sends DST's SCIF bridge (rdma_cm port CM_PORT) a connection
 *	request whose private data says it comes from node CLAIM_NODE and
 *	asks for DST_NODE:DST_PORT, laid out as scire_scif's own requests
 *	are (kernel/scif/scif_cm.c: magic "SCIF", version 1, the sender's
 *	node and port, the node and port asked for, big-endian). "magic"
 *	sends a wrong magic instead. Prints "sent" once the request is on
 *	its way, then "rejected", "established" or "error: ..."; exits 0 if
 *	rejected, 2 if established (the request was taken), 1 on any other
 *	outcome.
 *
 *   scif_peer_check flood SRC DST CM_PORT CLAIM_NODE DST_NODE DST_PORT SECONDS STOPFILE
 *	The forge request again and again, one after the other, as fast as
 *	they go (an rdma_cm ID each, without a QP: they are meant to be
 *	refused), for SECONDS at most and until the file STOPFILE exists,
 *	each waited for at most 10 s. Prints "flooding" after the first
 *	answer, then "flood: N sent, R rejected, E established, X other in
 *	S s". Exits 0 if every request was answered and none established, 2
 *	if one was established, 1 otherwise.
 *
 *   scif_peer_check connect NODE PORT
 *	A libscif client of this namespace's node: scif_connect() to
 *	NODE:PORT. Prints "connected" (exit 0) or "refused: ERRNO-TEXT"
 *	(exit 2). Used from another namespace, it is a container knocking
 *	on another container's node (selftests/107-netns-exclusive.sh).
 *
 *   scif_peer_check limits PORT
 *	What an unprivileged user's SCIF endpoints can hold, under its own
 *	limits (selftests/51-limits.sh runs it as uid 65534): over a
 *	loopback connection to PORT of this node, windows of half of
 *	RLIMIT_MEMLOCK twice register and one page more is ENOMEM, then
 *	registers again once a window is unregistered; and endpoints are
 *	opened until one fails with EMFILE (RLIMIT_NOFILE), their number
 *	below the limit. Prints what it saw; exits 0, or 1 on a difference.
 *
 *   scif_peer_check memcg PORT N FILE
 *	Who pays for a SCIF connection: N loopback connections to PORT of
 *	this node, connected here and accepted by a child process (both in
 *	the caller's memory cgroup, whose memory.current is FILE), held
 *	together. Prints the cgroup's growth per connection and exits 0 if
 *	it covers at least what scire_scif itself allocates for both ends
 *	(message buffers and receive ring: SCIF_CONN_BYTES), 1 if not or on
 *	an error.
 *
 *   scif_peer_check nodes
 *	Prints what /dev/scif opened here reports: "self N nodes A B ..."
 *	(scif_get_node_ids()).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "scif.h"

#define SCIF_CM_MAGIC	0x53434946
#define SCIF_CM_VERSION	1
#define TIMEOUT_MS	5000

/* The private data of a SCIF connection request (scif_cm.c). */
struct scif_cm_priv {
	uint32_t magic;
	uint8_t version;
	uint8_t rsvd[3];
	uint16_t src_node;
	uint16_t src_port;
	uint16_t dst_node;
	uint16_t dst_port;
};

static int listen_one(int port, int seconds)
{
	struct scif_port_id peer;
	scif_epd_t epd, nepd;

	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED) {
		perror("scif_open");
		return 1;
	}
	if (scif_bind(epd, (uint16_t)port) < 0 || scif_listen(epd, 4) < 0) {
		perror("scif_bind/scif_listen");
		return 1;
	}
	alarm(seconds);
	if (scif_accept(epd, &peer, &nepd, SCIF_ACCEPT_SYNC) < 0) {
		perror("scif_accept");
		return 1;
	}
	printf("accepted node %u port %u\n", peer.node, peer.port);
	fflush(stdout);
	scif_close(nepd);
	scif_close(epd);
	return 0;
}

static int hold(int port, int nports, int backlog, int seconds)
{
	scif_epd_t epd;
	int i;

	for (i = 0; i < nports; i++) {
		epd = scif_open();
		if (epd == SCIF_OPEN_FAILED) {
			perror("scif_open");
			return 1;
		}
		if (scif_bind(epd, (uint16_t)(port + i)) < 0 || scif_listen(epd, backlog) < 0) {
			perror("scif_bind/scif_listen");
			return 1;
		}
	}
	printf("listening\n");
	fflush(stdout);
	sleep(seconds);
	return 0;
}

static int limits(int port)
{
	uint16_t nodes[64], self;
	struct scif_port_id dst, peer;
	scif_epd_t lep, cep, aep, eps[4096];
	size_t lim, half, pg = (size_t)sysconf(_SC_PAGESIZE);
	int fds[2], n, bad = 0, err;
	struct rlimit rl;
	off_t a, b, c;
	char *buf, x;
	pid_t pid;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY) {
		printf("error: RLIMIT_MEMLOCK must be finite\n");
		return 1;
	}
	lim = rl.rlim_cur / pg * pg;
	half = lim / 2 / pg * pg;
	if (scif_get_node_ids(nodes, 64, &self) < 0) {
		perror("scif_get_node_ids");
		return 1;
	}
	lep = scif_open();
	if (lep == SCIF_OPEN_FAILED || scif_bind(lep, (uint16_t)port) < 0 ||
	    scif_listen(lep, 1) < 0) {
		perror("listener");
		return 1;
	}
	if (pipe(fds))
		return 1;
	pid = fork();
	if (pid == 0) {
		/* The accepting side holds its end until the parent is done. */
		close(fds[1]);
		alarm(120);
		if (scif_accept(lep, &peer, &aep, SCIF_ACCEPT_SYNC) < 0)
			_exit(1);
		while (read(fds[0], &x, 1) > 0)
			;
		_exit(0);
	}
	close(fds[0]);
	cep = scif_open();
	dst.node = self;
	dst.port = (uint16_t)port;
	if (cep == SCIF_OPEN_FAILED || scif_connect(cep, &dst) < 0) {
		perror("scif_connect (loopback)");
		return 1;
	}
	buf = mmap(NULL, lim + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	memset(buf, 1, lim + 2 * pg);
	a = scif_register(cep, buf, half, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	b = scif_register(cep, buf + half, lim - half, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (a < 0 || b < 0) {
		printf("windows up to RLIMIT_MEMLOCK (%zu bytes): %s\n", lim, strerror(errno));
		return 1;
	}
	c = scif_register(cep, buf + lim, pg, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	err = errno;
	if (c >= 0 || err != ENOMEM) {
		printf("one page beyond RLIMIT_MEMLOCK: %s, expected ENOMEM\n",
		       c >= 0 ? "registered" : strerror(err));
		bad = 1;
	} else {
		printf("windows: %zu bytes pinned, one page more: ENOMEM\n", lim);
	}
	if (scif_unregister(cep, a, half) < 0 ||
	    scif_register(cep, buf + lim, pg, 0, SCIF_PROT_READ, 0) < 0) {
		printf("after scif_unregister(), a page: %s\n", strerror(errno));
		bad = 1;
	}

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	for (n = 0; n < 4096; n++) {
		eps[n] = scif_open();
		if (eps[n] == SCIF_OPEN_FAILED)
			break;
	}
	err = errno;
	if (n == 4096 || err != EMFILE || (rlim_t)n >= rl.rlim_cur) {
		printf("endpoints: %d opened under RLIMIT_NOFILE %llu, then %s; expected EMFILE\n",
		       n, (unsigned long long)rl.rlim_cur, n == 4096 ? "none failed" : strerror(err));
		bad = 1;
	} else {
		printf("endpoints: %d opened under RLIMIT_NOFILE %llu, then EMFILE\n", n,
		       (unsigned long long)rl.rlim_cur);
	}
	while (n--)
		scif_close(eps[n]);
	scif_close(cep);
	close(fds[1]);
	waitpid(pid, &err, 0);
	scif_close(lep);
	return bad;
}

/*
 * What scire_scif allocates for one end of a connection itself
 * (kernel/scif/scif_main.h, include/uapi/rdma/scire-scif-abi.h): 32 send
 * and 32 receive message buffers of 4 KiB and the receive ring with its
 * control page. The QP and CQ beside them are the RDMA device's.
 */
#define SCIF_CONN_BYTES	((32 + 32) * 4096 + SCIRE_SCIF_RX_MAP_LEN)

static long long memcg_current(const char *file)
{
	long long v = -1;
	FILE *f = fopen(file, "r");

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int memcg(int port, int n, const char *file)
{
	scif_epd_t lep, aep, *ceps;
	struct scif_port_id dst, peer;
	long long before, after, per;
	int fds[2], acks[2], i, st;
	uint16_t nodes[64], self;
	char x;
	pid_t pid;

	if (n < 1 || n > 256 || scif_get_node_ids(nodes, 64, &self) < 0)
		return 1;
	ceps = calloc(n, sizeof(*ceps));
	lep = scif_open();
	if (!ceps || lep == SCIF_OPEN_FAILED || scif_bind(lep, (uint16_t)port) < 0 ||
	    scif_listen(lep, n) < 0) {
		perror("listener");
		return 1;
	}
	if (pipe(fds) || pipe(acks))
		return 1;
	pid = fork();
	if (pid == 0) {
		/* Accept all, say so, and hold them until the parent is done. */
		close(fds[1]);
		close(acks[0]);
		alarm(120);
		for (i = 0; i < n; i++)
			if (scif_accept(lep, &peer, &aep, SCIF_ACCEPT_SYNC) < 0)
				_exit(1);
		if (write(acks[1], "a", 1) != 1)
			_exit(1);
		while (read(fds[0], &x, 1) > 0)
			;
		_exit(0);
	}
	close(fds[0]);
	close(acks[1]);
	before = memcg_current(file);
	dst.node = self;
	dst.port = (uint16_t)port;
	for (i = 0; i < n; i++) {
		ceps[i] = scif_open();
		if (ceps[i] == SCIF_OPEN_FAILED || scif_connect(ceps[i], &dst) < 0) {
			printf("connection %d of %d: %s\n", i + 1, n, strerror(errno));
			return 1;
		}
	}
	if (read(acks[0], &x, 1) != 1) {
		printf("the accepting child failed\n");
		return 1;
	}
	after = memcg_current(file);
	if (before < 0 || after < 0) {
		printf("cannot read %s\n", file);
		return 1;
	}
	per = (after - before) / n;
	printf("%d connections, both ends in this cgroup: memory.current +%lld bytes, %lld per connection (scire_scif's own buffers and rings of both ends: %d)\n",
	       n, after - before, per, 2 * SCIF_CONN_BYTES);
	for (i = 0; i < n; i++)
		scif_close(ceps[i]);
	close(fds[1]);
	waitpid(pid, &st, 0);
	scif_close(lep);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return per >= 2 * SCIF_CONN_BYTES ? 0 : 1;
}

static int get_addr(const char *host, int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *res;
	int ret;

	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret) {
		fprintf(stderr, "bad address %s: %s\n", host, gai_strerror(ret));
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	return 0;
}

/* Wait for the next event of @ch; return its type, or -1. */
static int next_event(struct rdma_event_channel *ch, int *status)
{
	struct rdma_cm_event *ev;
	int type;

	if (rdma_get_cm_event(ch, &ev))
		return -1;
	type = ev->event;
	*status = ev->status;
	rdma_ack_cm_event(ev);
	return type;
}

static int forge(char **argv, int wrong_magic)
{
	struct sockaddr_storage src, dst;
	struct rdma_event_channel *ch;
	struct rdma_conn_param param = {};
	struct ibv_qp_init_attr qpa = {};
	struct scif_cm_priv priv = {};
	struct rdma_cm_id *id;
	int type, status, ret = 1;
	static char buf[16][4096];
	struct ibv_mr *mr;
	int i;

	if (get_addr(argv[0], 0, &src) || get_addr(argv[1], atoi(argv[2]), &dst))
		return 1;
	priv.magic = htonl(wrong_magic ? 0x46494353 : SCIF_CM_MAGIC);
	priv.version = SCIF_CM_VERSION;
	priv.src_node = htons((uint16_t)atoi(argv[3]));
	priv.src_port = htons(4242);
	priv.dst_node = htons((uint16_t)atoi(argv[4]));
	priv.dst_port = htons((uint16_t)atoi(argv[5]));

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		return 1;
	}
	if (rdma_resolve_addr(id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, TIMEOUT_MS) ||
	    next_event(ch, &status) != RDMA_CM_EVENT_ADDR_RESOLVED) {
		printf("error: address resolution (%s)\n", strerror(errno));
		goto out;
	}
	if (rdma_resolve_route(id, TIMEOUT_MS) ||
	    next_event(ch, &status) != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		printf("error: route resolution (%s)\n", strerror(errno));
		goto out;
	}
	/* A real QP with receives posted, as a SCIF peer would have. */
	qpa.qp_type = IBV_QPT_RC;
	qpa.cap.max_send_wr = 16;
	qpa.cap.max_recv_wr = 16;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, NULL, &qpa)) {
		printf("error: rdma_create_qp (%s)\n", strerror(errno));
		goto out;
	}
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (!mr) {
		printf("error: rdma_reg_msgs (%s)\n", strerror(errno));
		goto out_qp;
	}
	for (i = 0; i < 16; i++)
		rdma_post_recv(id, NULL, buf[i], sizeof(buf[i]), mr);
	param.private_data = &priv;
	param.private_data_len = sizeof(priv);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 3;
	param.rnr_retry_count = 3;
	if (rdma_connect(id, &param)) {
		printf("error: rdma_connect (%s)\n", strerror(errno));
		goto out_mr;
	}
	printf("sent\n");
	fflush(stdout);
	type = next_event(ch, &status);
	switch (type) {
	case RDMA_CM_EVENT_REJECTED:
		printf("rejected\n");
		ret = 0;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		printf("established\n");
		rdma_disconnect(id);
		ret = 2;
		break;
	default:
		printf("error: event %s, status %d\n",
		       type < 0 ? "none" : rdma_event_str(type), status);
	}
out_mr:
	rdma_dereg_mr(mr);
out_qp:
	rdma_destroy_qp(id);
out:
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return ret;
}

/* The next event of @ch within @ms; its type, or -1. */
static int next_event_ms(struct rdma_event_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, ms) != 1 || rdma_get_cm_event(ch, &ev))
		return -1;
	type = ev->event;
	rdma_ack_cm_event(ev);
	return type;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int flood(char **argv)
{
	long sent = 0, rejected = 0, established = 0, other = 0;
	struct sockaddr_storage src, dst;
	struct rdma_conn_param param = {};
	struct scif_cm_priv priv = {};
	struct rdma_event_channel *ch;
	double start, limit = atof(argv[6]);
	const char *stop = argv[7];
	struct rdma_cm_id *id;
	struct stat st;
	int type;

	if (get_addr(argv[0], 0, &src) || get_addr(argv[1], atoi(argv[2]), &dst))
		return 1;
	priv.magic = htonl(SCIF_CM_MAGIC);
	priv.version = SCIF_CM_VERSION;
	priv.src_node = htons((uint16_t)atoi(argv[3]));
	priv.src_port = htons(4243);
	priv.dst_node = htons((uint16_t)atoi(argv[4]));
	priv.dst_port = htons((uint16_t)atoi(argv[5]));
	param.private_data = &priv;
	param.private_data_len = sizeof(priv);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 3;
	param.rnr_retry_count = 3;
	param.qp_num = 0x1234;	/* no QP: nothing is meant to be taken */
	ch = rdma_create_event_channel();
	if (!ch) {
		perror("rdma_create_event_channel");
		return 1;
	}
	start = now_s();
	while (now_s() - start < limit && stat(stop, &st)) {
		if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
			perror("rdma_create_id");
			break;
		}
		type = -1;
		if (!rdma_resolve_addr(id, (struct sockaddr *)&src,
				       (struct sockaddr *)&dst, TIMEOUT_MS) &&
		    next_event_ms(ch, 10000) == RDMA_CM_EVENT_ADDR_RESOLVED &&
		    !rdma_resolve_route(id, TIMEOUT_MS) &&
		    next_event_ms(ch, 10000) == RDMA_CM_EVENT_ROUTE_RESOLVED &&
		    !rdma_connect(id, &param)) {
			sent++;
			type = next_event_ms(ch, 10000);
		}
		if (type == RDMA_CM_EVENT_REJECTED)
			rejected++;
		else if (type == RDMA_CM_EVENT_ESTABLISHED)
			established++;
		else
			other++;
		if (sent + other == 1) {
			printf("flooding\n");
			fflush(stdout);
		}
		rdma_destroy_id(id);
	}
	printf("flood: %ld sent, %ld rejected, %ld established, %ld other in %.1f s\n",
	       sent, rejected, established, other, now_s() - start);
	rdma_destroy_event_channel(ch);
	if (established)
		return 2;
	return sent && !other ? 0 : 1;
}

static int connect_one(int node, int port)
{
	struct scif_port_id dst = { .node = (uint16_t)node, .port = (uint16_t)port };
	scif_epd_t epd;

	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED) {
		perror("scif_open");
		return 1;
	}
	if (scif_connect(epd, &dst) < 0) {
		printf("refused: %s\n", strerror(errno));
		scif_close(epd);
		return 2;
	}
	printf("connected\n");
	scif_close(epd);
	return 0;
}

static int show_nodes(void)
{
	uint16_t nodes[64], self;
	int n, i;

	n = scif_get_node_ids(nodes, 64, &self);
	if (n < 0) {
		perror("scif_get_node_ids");
		return 1;
	}
	printf("self %u nodes", self);
	for (i = 0; i < n && i < 64; i++)
		printf(" %u", nodes[i]);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "connect"))
		return connect_one(atoi(argv[2]), atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "nodes"))
		return show_nodes();
	if (argc == 4 && !strcmp(argv[1], "listen"))
		return listen_one(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "limits"))
		return limits(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "memcg"))
		return memcg(atoi(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 6 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 10 && !strcmp(argv[1], "flood"))
		return flood(argv + 2);
	if ((argc == 8 || argc == 9) && !strcmp(argv[1], "forge"))
		return forge(argv + 2, argc == 9 && !strcmp(argv[8], "magic"));
	fprintf(stderr, "usage: %s listen PORT SECONDS\n"
		"       %s hold PORT NPORTS BACKLOG SECONDS\n"
		"       %s forge SRC DST CM_PORT CLAIM_NODE DST_NODE DST_PORT [magic]\n"
		"       %s flood SRC DST CM_PORT CLAIM_NODE DST_NODE DST_PORT SECONDS STOPFILE\n"
		"       %s connect NODE PORT\n"
		"       %s limits PORT\n"
		"       %s memcg PORT N FILE\n"
		"       %s nodes\n",
		argv[0], argv[0], argv[0], argv[0], argv[0], argv[0], argv[0], argv[0]);
	return 1;
}
