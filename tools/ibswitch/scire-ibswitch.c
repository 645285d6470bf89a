// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire-ibswitch: an emulated InfiniBand switch for scire_ib ports
 * (docs/scire_ib.md, "The switch"; man/man8/scire-ibswitch.8).
 *
 *   scire-ibswitch --listen ADDR[:PORT] [--ports N] [--guid GUID]
 *                  [--node-desc TEXT] [--link P=ADDR[:PORT]]... [--verbose]
 *
 * One process, one UDP socket, one thread: every datagram is handled to
 * the end before the next is read, so the switch's state needs no locks
 * and a fabric's packet rate is what one core relays.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ibsw.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Datagrams move in batches of BATCH, one recvmmsg() in and one
 * sendmmsg() out per batch, instead of a system call per datagram each
 * way. A scire_ib datagram is at most SIB_HDR_LEN + 4 * 0x7ff bytes (the
 * LRH's packet length); a larger one is read truncated and counted as
 * malformed.
 */
#define BATCH		64
#define DGRAM_MAX	(SIB_HDR_LEN + 4 * 0x7ff)

struct prog {
	int fd;
	bool verbose;
	bool was_up[IBSW_MAX_PORTS + 1];
	bool was_attached[IBSW_MAX_PORTS + 1];
	/* what the switch sent while handling the last batch */
	int nout;
	struct sockaddr_in out_to[BATCH];
	struct iovec out_iov[BATCH];
	struct mmsghdr out_msg[BATCH];
	uint8_t out_buf[BATCH][DGRAM_MAX];
};

/*
 * Send what is queued. Blocking: a full send buffer waits rather than
 * drops, since an RC QP's go-back-N retransmits a whole burst for one
 * lost packet, and a switch that drops the same tail of every burst never
 * lets it make progress. The receive side still drops when the switch
 * falls behind, as a congested link would.
 */
static void flush(struct prog *pr)
{
	int done = 0, n;

	while (done < pr->nout) {
		n = sendmmsg(pr->fd, pr->out_msg + done, pr->nout - done, 0);
		if (n > 0) {
			done += n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else {
			/* A peer gone (ICMP unreachable) fails one datagram. */
			done++;
		}
	}
	pr->nout = 0;
}

static void xmit(struct ibsw *sw, int port, const uint8_t *buf, size_t len)
{
	struct prog *pr = sw->priv;
	int i;

	if (len > DGRAM_MAX)
		return;
	if (pr->nout == BATCH)
		flush(pr);
	i = pr->nout++;
	memcpy(pr->out_buf[i], buf, len);
	pr->out_to[i] = (struct sockaddr_in) {
		.sin_family = AF_INET,
		.sin_addr.s_addr = sw->port[port].addr,
		.sin_port = sw->port[port].udp_port,
	};
	pr->out_iov[i] = (struct iovec) { .iov_base = pr->out_buf[i], .iov_len = len };
	pr->out_msg[i].msg_hdr = (struct msghdr) {
		.msg_name = &pr->out_to[i],
		.msg_namelen = sizeof(pr->out_to[i]),
		.msg_iov = &pr->out_iov[i],
		.msg_iovlen = 1,
	};
}

/* Tell what changed at the ports since the last look (--verbose). */
static void report(struct ibsw *sw, struct prog *pr)
{
	char a[INET_ADDRSTRLEN];

	for (int p = 1; p <= sw->nports; p++) {
		struct ibsw_port *q = &sw->port[p];

		if (q->attached == pr->was_attached[p] &&
		    q->link_up == pr->was_up[p])
			continue;
		pr->was_attached[p] = q->attached;
		pr->was_up[p] = q->link_up;
		if (!pr->verbose)
			continue;
		inet_ntop(AF_INET, &q->addr, a, sizeof(a));
		fprintf(stderr, "scire-ibswitch: port %d (%s:%u, port GUID 0x%016llx): link %s\n",
			p, a, ntohs(q->udp_port),
			(unsigned long long)q->peer_port_guid,
			q->link_up ? "up" : "down");
	}
}

static int parse_listen(const char *arg, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	char *end;

	if (n >= sizeof(host))
		return -1;
	memcpy(host, arg, n);
	host[n] = 0;
	sa->sin_family = AF_INET;
	sa->sin_port = htons(IBSW_DEFAULT_UDP_PORT);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return -1;
	if (colon) {
		unsigned long port = strtoul(colon + 1, &end, 10);

		if (*end || !colon[1] || port < 1 || port > 65535)
			return -1;
		sa->sin_port = htons(port);
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: scire-ibswitch --listen ADDR[:PORT] [--ports N] [--guid GUID]\n"
		"                      [--node-desc TEXT] [--link P=ADDR[:PORT]]... [--verbose]\n"
		"  --listen    IPv4 address (and UDP port, default %d) the switch's\n"
		"              ports are reached at: a host writes it to its\n"
		"              ports/1/scire_ib_peer\n"
		"  --ports     external ports, 1..%d (default 8)\n"
		"  --guid      NodeGUID (default: from the listen address and port)\n"
		"  --node-desc NodeDescription (default \"scire-ibswitch ADDR:PORT\")\n"
		"  --link      cable port P to another switch listening at ADDR[:PORT];\n"
		"              this switch calls it\n"
		"  --verbose   tell on stderr when a port's link goes up or down\n",
		IBSW_DEFAULT_UDP_PORT, IBSW_MAX_PORTS);
}

#define MAX_LINKS	IBSW_MAX_PORTS

/* --link P=ADDR[:PORT]: the port and the peer it is cabled to. */
static int parse_link(const char *arg, int *port, struct sockaddr_in *sa)
{
	unsigned long p;
	char *end;

	p = strtoul(arg, &end, 10);
	if (end == arg || *end != '=' || p < 1 || p > IBSW_MAX_PORTS)
		return -1;
	*port = (int)p;
	return parse_listen(end + 1, sa);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "ports", required_argument, NULL, 'p' },
		{ "guid", required_argument, NULL, 'g' },
		{ "node-desc", required_argument, NULL, 'd' },
		{ "link", required_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct sockaddr_in sa = { 0 };
	const char *listen_arg = NULL, *desc = NULL;
	static struct ibsw sw;
	static struct prog pr = { .fd = -1 };
	static uint8_t in_buf[BATCH][DGRAM_MAX + 1];
	static struct sockaddr_in in_from[BATCH];
	static struct iovec in_iov[BATCH];
	static struct mmsghdr in_msg[BATCH];
	uint64_t guid = 0;
	char defdesc[64], a[INET_ADDRSTRLEN];
	struct sockaddr_in links[MAX_LINKS];
	int link_port[MAX_LINKS], nlinks = 0;
	int nports = 8, c;
	char *end;

	while ((c = getopt_long(argc, argv, "l:p:g:d:L:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'L':
			if (nlinks == MAX_LINKS ||
			    parse_link(optarg, &link_port[nlinks], &links[nlinks])) {
				fprintf(stderr, "scire-ibswitch: --link wants P=IPv4ADDR[:PORT], P in 1..%d, not '%s'\n",
					IBSW_MAX_PORTS, optarg);
				return 2;
			}
			nlinks++;
			break;
		case 'l':
			listen_arg = optarg;
			break;
		case 'p':
			nports = strtol(optarg, &end, 10);
			if (*end || nports < 1 || nports > IBSW_MAX_PORTS) {
				fprintf(stderr, "scire-ibswitch: --ports takes 1..%d\n",
					IBSW_MAX_PORTS);
				return 2;
			}
			break;
		case 'g':
			guid = strtoull(optarg, &end, 0);
			if (*end || !guid) {
				fprintf(stderr, "scire-ibswitch: bad --guid '%s'\n", optarg);
				return 2;
			}
			break;
		case 'd':
			desc = optarg;
			break;
		case 'v':
			pr.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !listen_arg) {
		usage(stderr);
		return 2;
	}
	if (parse_listen(listen_arg, &sa)) {
		fprintf(stderr, "scire-ibswitch: --listen wants IPv4ADDR[:PORT], not '%s'\n",
			listen_arg);
		return 2;
	}
	inet_ntop(AF_INET, &sa.sin_addr, a, sizeof(a));
	/*
	 * A locally administered EUI-64 from the address and port, stable
	 * across restarts, so that the SM finds the same switch again; the
	 * low byte stays free for the per-cable GUIDs of the HELLOs.
	 */
	if (!guid)
		guid = 0x025c1e0000000000ull |
		       ((uint64_t)ntohl(sa.sin_addr.s_addr) << 8 ^
			(uint64_t)ntohs(sa.sin_port) << 40);
	if (!desc) {
		snprintf(defdesc, sizeof(defdesc), "scire-ibswitch %s:%u", a,
			 ntohs(sa.sin_port));
		desc = defdesc;
	}

	pr.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (pr.fd < 0 || bind(pr.fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "scire-ibswitch: cannot listen at %s:%u: %s\n", a,
			ntohs(sa.sin_port), strerror(errno));
		return 1;
	}
	/*
	 * Room for the bursts of every port at once: a 64 KiB RC message is
	 * 16 to 64 datagrams, and the default buffers hold about a hundred.
	 * FORCE works for root beyond rmem_max/wmem_max; the plain option
	 * gets what the limits allow otherwise.
	 */
	int bufsz = 8 << 20;

	if (setsockopt(pr.fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsz, sizeof(bufsz)))
		setsockopt(pr.fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	if (setsockopt(pr.fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsz, sizeof(bufsz)))
		setsockopt(pr.fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	ibsw_init(&sw, nports, guid, desc, xmit, &pr);
	for (int i = 0; i < nlinks; i++) {
		char la[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &links[i].sin_addr, la, sizeof(la));
		if (links[i].sin_addr.s_addr == sa.sin_addr.s_addr &&
		    links[i].sin_port == sa.sin_port) {
			fprintf(stderr, "scire-ibswitch: --link %d=%s:%u is this switch\n",
				link_port[i], la, ntohs(links[i].sin_port));
			return 2;
		}
		if (ibsw_port_link(&sw, link_port[i], links[i].sin_addr.s_addr,
				   links[i].sin_port)) {
			fprintf(stderr, "scire-ibswitch: --link %d=%s:%u: no such port (--ports %d), or the port or the peer is cabled twice\n",
				link_port[i], la, ntohs(links[i].sin_port), nports);
			return 2;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "scire-ibswitch: %d ports at %s:%u, NodeGUID 0x%016llx\n",
		nports, a, ntohs(sa.sin_port), (unsigned long long)guid);

	while (!stop) {
		struct pollfd pfd = { .fd = pr.fd, .events = POLLIN };
		int n;

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		/* Up to four batches, then the timers. */
		for (int round = 0; round < 4; round++) {
			for (int i = 0; i < BATCH; i++) {
				in_iov[i] = (struct iovec) {
					.iov_base = in_buf[i], .iov_len = sizeof(in_buf[i]),
				};
				in_msg[i].msg_hdr = (struct msghdr) {
					.msg_name = &in_from[i],
					.msg_namelen = sizeof(in_from[i]),
					.msg_iov = &in_iov[i],
					.msg_iovlen = 1,
				};
			}
			n = recvmmsg(pr.fd, in_msg, BATCH, MSG_DONTWAIT, NULL);
			if (n <= 0)
				break;
			for (int i = 0; i < n; i++) {
				struct msghdr *h = &in_msg[i].msg_hdr;
				size_t len = in_msg[i].msg_len;

				if (in_from[i].sin_family != AF_INET)
					continue;
				/* Too long for scire_ib: the switch counts it. */
				if (h->msg_flags & MSG_TRUNC)
					len = DGRAM_MAX + 1;
				ibsw_rcv(&sw, now_ms(), in_from[i].sin_addr.s_addr,
					 in_from[i].sin_port, in_buf[i], len);
			}
			flush(&pr);
			if (n < BATCH)
				break;
		}
		ibsw_tick(&sw, now_ms());
		flush(&pr);
		report(&sw, &pr);
	}
	close(pr.fd);
	return 0;
}
