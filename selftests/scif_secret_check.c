// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_secret_check: the node table's shared secret
 * (kernel/scif/scif_auth.c) from both ends of a connection, for
 * selftests/108-scif-secret.sh.
 *
 *   scif_secret_check listen PORT SECONDS N
 *	A libscif listener on PORT: accepts N connections; of each it reads
 *	what comes (up to 63 bytes) and prints "accepted node N port P data
 *	TEXT". Exits 0, or 1 if the N did not come within SECONDS.
 *
 *   scif_secret_check connect NODE PORT
 *	A libscif client: scif_connect(), then scif_send() of "secret-ok".
 *	Prints "connected" (exit 0) or "refused: ERRNO-TEXT" (exit 2).
 *
 *   scif_secret_check forge SRC DST CM_PORT NODE DST_NODE DST_PORT HOW [ARGS]
 *	A raw rdma_cm client from SRC claiming NODE (port 4242), laid out as
 *	scire_scif's requests with the secret are (scif_cm.c: struct
 *	scif_cm_auth; the proofs as scif_auth_proof() makes them). HOW:
 *	  plain          a request without a nonce (an older node, or one
 *	                 without the secret)
 *	  plain-data     the same, then DATA "spoofed-ok" once established
 *	                 (a host without the secret that a node without one
 *	                 takes)
 *	  proof SECRET   a nonce; checks the reply's proof with SECRET and
 *	                 sends its own, then DATA "forged-ok"; prints "nonce
 *	                 HEX proof HEX" for a replay
 *	  replay NONCE PROOF  an earlier request's nonce and, first on the
 *	                 connection, that request's proof
 *	  silent         a nonce, then nothing
 *	  data           a nonce, then DATA before any proof
 *	Prints "rejected" (exit 0), or "established, server proof
 *	ok|bad|none, then disconnected|kept" (exit 2), or "error: ..." (1).
 *	"disconnected" means the other side ended the connection within
 *	15 s.
 *
 *   scif_secret_check serve ADDR CM_PORT HOW [SECRET]
 *	A raw rdma_cm server on ADDR:CM_PORT standing in for a node: takes
 *	one request and replies with a proof under SECRET (HOW "proof") or
 *	without one (HOW "plain", an older node). Prints "request
 *	flags F, then disconnected|kept"; exits 0.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "scif.h"

#define SCIF_CM_MAGIC	0x53434946
#define SCIF_CM_VERSION	1
#define SCIF_CM_F_AUTH	0x01
#define NONCE_LEN	16
#define MAC_LEN		32
#define MSG_DATA	1
#define MSG_AUTH	4
#define TIMEOUT_MS	5000
#define FORGED_PORT	4242

/* struct scif_cm_auth of scif_cm.c, all big-endian. */
struct cm_auth {
	uint32_t magic;
	uint8_t version;
	uint8_t flags;
	uint8_t rsvd[2];
	uint16_t src_node;
	uint16_t src_port;
	uint16_t dst_node;
	uint16_t dst_port;
	uint8_t nonce[NONCE_LEN];
	uint8_t mac[MAC_LEN];
};

#define CM_AUTH_REQ_LEN	(sizeof(struct cm_auth) - MAC_LEN)

/* struct scif_auth_input of scif_auth.c */
struct auth_input {
	char label[16];
	uint8_t nonce_c[NONCE_LEN];
	uint8_t nonce_s[NONCE_LEN];
	uint16_t client_node;
	uint16_t client_port;
	uint16_t server_node;
	uint16_t server_port;
};

/* struct scif_msg_hdr of scif_main.h, little-endian (x86 here). */
struct msg_hdr {
	uint16_t type;
	uint16_t flags;
	uint32_t len;
	uint64_t consumed;
	uint64_t cookie;
	uint32_t status;
	uint32_t rsvd;
};

static void proof(const char *secret, int server, const uint8_t *nc,
		  const uint8_t *ns, int cnode, int cport, int snode, int sport,
		  uint8_t *mac)
{
	struct auth_input in = {};
	unsigned int len = MAC_LEN;

	strcpy(in.label, server ? "scif-auth1-srv" : "scif-auth1-cli");
	memcpy(in.nonce_c, nc, NONCE_LEN);
	memcpy(in.nonce_s, ns, NONCE_LEN);
	in.client_node = htons(cnode);
	in.client_port = htons(cport);
	in.server_node = htons(snode);
	in.server_port = htons(sport);
	HMAC(EVP_sha256(), secret, strlen(secret), (const uint8_t *)&in,
	     sizeof(in), mac, &len);
}

static void hex(const char *what, const uint8_t *b, int n)
{
	printf("%s ", what);
	while (n--)
		printf("%02x", *b++);
	printf("\n");
}

static int unhex(const char *s, uint8_t *b, int n)
{
	unsigned int v;

	if ((int)strlen(s) != 2 * n)
		return -1;
	for (; n--; s += 2) {
		if (sscanf(s, "%2x", &v) != 1)
			return -1;
		*b++ = v;
	}
	return 0;
}

static int listen_n(int port, int seconds, int n)
{
	struct scif_port_id peer;
	scif_epd_t epd, nepd;
	char data[64];
	int got;

	epd = scif_open();
	if (epd == SCIF_OPEN_FAILED) {
		perror("scif_open");
		return 1;
	}
	if (scif_bind(epd, (uint16_t)port) < 0 || scif_listen(epd, 8) < 0) {
		perror("scif_bind/scif_listen");
		return 1;
	}
	alarm(seconds);
	while (n--) {
		if (scif_accept(epd, &peer, &nepd, SCIF_ACCEPT_SYNC) < 0) {
			perror("scif_accept");
			return 1;
		}
		got = scif_recv(nepd, data, sizeof(data) - 1, 0);
		if (got <= 0) {
			/* Not there yet: wait for the first bytes. */
			got = scif_recv(nepd, data, 1, SCIF_RECV_BLOCK);
			if (got == 1)
				got += scif_recv(nepd, data + 1, sizeof(data) - 2, 0);
		}
		data[got > 0 ? got : 0] = 0;
		printf("accepted node %u port %u data %s\n", peer.node, peer.port, data);
		fflush(stdout);
		scif_close(nepd);
	}
	scif_close(epd);
	return 0;
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
	if (scif_send(epd, "secret-ok", 9, SCIF_SEND_BLOCK) != 9) {
		printf("error: scif_send: %s\n", strerror(errno));
		scif_close(epd);
		return 1;
	}
	printf("connected\n");
	/* Let the listener read before the close resets the stream. */
	sleep(1);
	scif_close(epd);
	return 0;
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

/*
 * The next event of @ch within @ms (-1: forever); its type, or -1. The
 * reply's private data is copied to @priv (if not NULL).
 */
static int next_event(struct rdma_event_channel *ch, int ms, struct cm_auth *priv,
		      struct rdma_cm_id **new_id)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, ms) != 1 || rdma_get_cm_event(ch, &ev))
		return -1;
	type = ev->event;
	/* A request's private data (56 bytes over the IB CM) ends before mac. */
	if (priv && ev->param.conn.private_data)
		memcpy(priv, ev->param.conn.private_data,
		       ev->param.conn.private_data_len < sizeof(*priv) ?
		       ev->param.conn.private_data_len : sizeof(*priv));
	if (new_id)
		*new_id = ev->id;
	rdma_ack_cm_event(ev);
	return type;
}

static uint8_t bufs[17][4096];

/* A QP with receives posted, as a SCIF peer has; returns its MR. */
static struct ibv_mr *qp_setup(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qpa = {};
	struct ibv_mr *mr;
	int i;

	qpa.qp_type = IBV_QPT_RC;
	qpa.cap.max_send_wr = 16;
	qpa.cap.max_recv_wr = 16;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, NULL, &qpa)) {
		printf("error: rdma_create_qp (%s)\n", strerror(errno));
		return NULL;
	}
	mr = rdma_reg_msgs(id, bufs, sizeof(bufs));
	if (!mr) {
		printf("error: rdma_reg_msgs (%s)\n", strerror(errno));
		return NULL;
	}
	for (i = 0; i < 16; i++)
		rdma_post_recv(id, NULL, bufs[i], sizeof(bufs[i]), mr);
	return mr;
}

static void send_msg(struct rdma_cm_id *id, struct ibv_mr *mr, int type,
		     const void *data, int len)
{
	struct msg_hdr *hdr = (struct msg_hdr *)bufs[16];
	struct ibv_wc wc;

	memset(hdr, 0, sizeof(*hdr));
	hdr->type = type;
	hdr->len = len;
	memcpy(hdr + 1, data, len);
	if (rdma_post_send(id, NULL, hdr, sizeof(*hdr) + len, mr, IBV_SEND_SIGNALED) ||
	    rdma_get_send_comp(id, &wc) <= 0)
		fprintf(stderr, "send of message %d failed\n", type);
}

static int forge(char **argv, int argc)
{
	const char *how = argv[6];
	struct sockaddr_storage src, dst;
	struct rdma_event_channel *ch;
	struct rdma_conn_param param = {};
	struct cm_auth priv = {}, rep = {};
	int node = atoi(argv[3]), dnode = atoi(argv[4]), dport = atoi(argv[5]);
	uint8_t old_proof[MAC_LEN], mac[MAC_LEN];
	const char *server_proof = "none";
	struct rdma_cm_id *id;
	struct ibv_mr *mr = NULL;
	int type, ret = 1;

	if (get_addr(argv[0], 0, &src) || get_addr(argv[1], atoi(argv[2]), &dst))
		return 1;
	priv.magic = htonl(SCIF_CM_MAGIC);
	priv.version = SCIF_CM_VERSION;
	priv.src_node = htons(node);
	priv.src_port = htons(FORGED_PORT);
	priv.dst_node = htons(dnode);
	priv.dst_port = htons(dport);
	param.private_data = &priv;
	param.private_data_len = CM_AUTH_REQ_LEN;
	if (!strcmp(how, "plain") || !strcmp(how, "plain-data")) {
		param.private_data_len = 16;
	} else if (!strcmp(how, "replay")) {
		if (argc < 9 || unhex(argv[7], priv.nonce, NONCE_LEN) ||
		    unhex(argv[8], old_proof, MAC_LEN)) {
			fprintf(stderr, "replay NONCE PROOF: hex, %d and %d bytes\n",
				NONCE_LEN, MAC_LEN);
			return 1;
		}
	} else if (!strcmp(how, "proof") && argc < 8) {
		fprintf(stderr, "proof SECRET\n");
		return 1;
	}
	if (strcmp(how, "plain") && strcmp(how, "plain-data")) {
		priv.flags = SCIF_CM_F_AUTH;
		if (strcmp(how, "replay"))
			RAND_bytes(priv.nonce, NONCE_LEN);
	}

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		return 1;
	}
	if (rdma_resolve_addr(id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, TIMEOUT_MS) ||
	    next_event(ch, -1, NULL, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED) {
		printf("error: address resolution (%s)\n", strerror(errno));
		goto out;
	}
	if (rdma_resolve_route(id, TIMEOUT_MS) ||
	    next_event(ch, -1, NULL, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		printf("error: route resolution (%s)\n", strerror(errno));
		goto out;
	}
	mr = qp_setup(id);
	if (!mr)
		goto out;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 3;
	param.rnr_retry_count = 3;
	if (rdma_connect(id, &param)) {
		printf("error: rdma_connect (%s)\n", strerror(errno));
		goto out;
	}
	type = next_event(ch, 30000, &rep, NULL);
	if (type == RDMA_CM_EVENT_REJECTED) {
		printf("rejected\n");
		ret = 0;
		goto out;
	}
	if (type != RDMA_CM_EVENT_ESTABLISHED) {
		printf("error: event %s\n", type < 0 ? "none" : rdma_event_str(type));
		goto out;
	}
	if (rep.flags & SCIF_CM_F_AUTH && !strcmp(how, "proof")) {
		proof(argv[7], 1, priv.nonce, rep.nonce, node, FORGED_PORT,
		      dnode, dport, mac);
		server_proof = memcmp(mac, rep.mac, MAC_LEN) ? "bad" : "ok";
	} else if (rep.flags & SCIF_CM_F_AUTH) {
		server_proof = "not checked";
	}
	if (!strcmp(how, "proof")) {
		proof(argv[7], 0, priv.nonce, rep.nonce, node, FORGED_PORT,
		      dnode, dport, mac);
		hex("nonce", priv.nonce, NONCE_LEN);
		hex("proof", mac, MAC_LEN);
		send_msg(id, mr, MSG_AUTH, mac, MAC_LEN);
		send_msg(id, mr, MSG_DATA, "forged-ok", 9);
	} else if (!strcmp(how, "replay")) {
		send_msg(id, mr, MSG_AUTH, old_proof, MAC_LEN);
	} else if (!strcmp(how, "data")) {
		send_msg(id, mr, MSG_DATA, "no-proof", 8);
	} else if (!strcmp(how, "plain-data")) {
		send_msg(id, mr, MSG_DATA, "spoofed-ok", 10);
	}
	type = next_event(ch, 15000, NULL, NULL);
	printf("established, server proof %s, then %s\n", server_proof,
	       type == RDMA_CM_EVENT_DISCONNECTED ? "disconnected" : "kept");
	rdma_disconnect(id);
	ret = 2;
out:
	if (mr)
		rdma_dereg_mr(mr);
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return ret;
}

static int serve(char **argv, int argc)
{
	const char *how = argv[2];
	struct rdma_conn_param param = {};
	struct sockaddr_storage addr;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid, *id = NULL;
	struct cm_auth req = {}, rep = {};
	struct ibv_mr *mr;
	int type;

	if (get_addr(argv[0], atoi(argv[1]), &addr))
		return 1;
	if (!strcmp(how, "proof") && argc < 4) {
		fprintf(stderr, "proof SECRET\n");
		return 1;
	}
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&addr) || rdma_listen(lid, 4)) {
		printf("error: listen (%s)\n", strerror(errno));
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	type = next_event(ch, 120000, &req, &id);
	if (type != RDMA_CM_EVENT_CONNECT_REQUEST) {
		printf("error: event %s\n", type < 0 ? "none" : rdma_event_str(type));
		return 1;
	}
	mr = qp_setup(id);
	if (!mr)
		return 1;
	rep.magic = htonl(SCIF_CM_MAGIC);
	rep.version = SCIF_CM_VERSION;
	rep.src_node = req.dst_node;
	rep.src_port = req.dst_port;
	rep.dst_node = req.src_node;
	rep.dst_port = req.src_port;
	param.private_data = &rep;
	param.private_data_len = 16;
	if (!strcmp(how, "proof")) {
		rep.flags = SCIF_CM_F_AUTH;
		RAND_bytes(rep.nonce, NONCE_LEN);
		proof(argv[3], 1, req.nonce, rep.nonce, ntohs(req.src_node),
		      ntohs(req.src_port), ntohs(req.dst_node), ntohs(req.dst_port),
		      rep.mac);
		param.private_data_len = sizeof(rep);
	}
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.rnr_retry_count = 7;
	if (rdma_accept(id, &param)) {
		printf("error: rdma_accept (%s)\n", strerror(errno));
		return 1;
	}
	type = next_event(ch, 30000, NULL, NULL);
	if (type == RDMA_CM_EVENT_ESTABLISHED)
		type = next_event(ch, 15000, NULL, NULL);
	printf("request flags %u, then %s\n", req.flags,
	       type == RDMA_CM_EVENT_DISCONNECTED ? "disconnected" : "kept");
	rdma_disconnect(id);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "listen"))
		return listen_n(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "connect"))
		return connect_one(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 9 && !strcmp(argv[1], "forge"))
		return forge(argv + 2, argc - 2);
	if (argc >= 5 && !strcmp(argv[1], "serve"))
		return serve(argv + 2, argc - 2);
	fprintf(stderr, "usage: %s listen PORT SECONDS N\n"
		"       %s connect NODE PORT\n"
		"       %s forge SRC DST CM_PORT NODE DST_NODE DST_PORT HOW [ARGS]\n"
		"       %s serve ADDR CM_PORT HOW [SECRET]\n",
		argv[0], argv[0], argv[0], argv[0]);
	return 1;
}
