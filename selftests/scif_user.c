// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_user: the SCIF user API through libscif and /dev/scif.
 *
 *   scif_user server PORT        accept one connection on PORT, serve it
 *   scif_user client NODE PORT   connect to NODE:PORT and run the checks
 *   scif_user client-remote NODE PORT   the same, NODE on another host
 *   scif_user loop               both, forked, on this node (loopback)
 *   scif_user closes N           N short connections, forked, on this node
 *
 * The client checks: node ids, bind rules, connect/accept, a 1 MiB
 * byte-exact stream each way (blocking and non-blocking), poll, the
 * refusals of the user ABI (SCIF_MAP_KERNEL, mmap of another host's
 * window, unaligned and overlapping windows, offsets outside windows; a
 * window of this kernel's peer maps), windows in user memory on
 * both sides with readfrom/writeto/vreadfrom/vwriteto (SYNC and not) over
 * multi-page unaligned ranges, fence mark and wait of both sides' RMAs,
 * fence signal of local and remote values, and ECONNRESET after the peer
 * closes. The server does what the client asks over the stream and checks
 * what the client wrote into its window.
 *
 * The receive ring libscif maps (scire's extension, struct
 * scire_scif_rx_ring): the mapping's refusals, a forked child reading
 * through the kernel while the parent maps the ring (neither reads the
 * other's bytes), a tail written past the head (ignored), and a reader
 * lock left taken (the kernel's SCIF_RECV waits until a signal).
 *
 * closes: N connections one after the other, each from the same fixed
 * client port, rebound right after the last close. The client registers a
 * window right after scif_connect() returns (its request can reach the
 * server before the server's accept has returned: that reply was once
 * lost, and scif_register() failed with ETIMEDOUT after 30 s), exchanges
 * 8 bytes and closes at once, while the server registers a window of its
 * own (that request meets a peer that is closing: once it was never
 * acknowledged, and the server's scif_close() waited out every RC retry,
 * about 18 s). Each register must succeed, or fail with ECONNRESET on the
 * server, and each close must return within CLOSE_BOUND seconds, a bound
 * on a hang, not a speed target (a close takes milliseconds).
 *
 * Across two hosts (selftests/pair/50-scif.sh), besides server/client:
 *
 *   scif_user sizes-server PORT MIB       serve one sizes client, MIB window
 *   scif_user sizes-client NODE PORT MIB  RMA from 1 byte to MIB MiB
 *   scif_user fault-server PORT           a connection left to break
 *   scif_user fault-client NODE PORT SECS RMA until the connection breaks
 *
 * sizes: both sides register a window of MIB MiB. For each size from one
 * byte to the whole window (unaligned offsets and lengths among them):
 * writeto and vwriteto (SYNC) checked by the server, readfrom and
 * vreadfrom checked here (nothing written outside the range), and a
 * writeto without SYNC followed by fence_mark (INIT_SELF) and fence_wait.
 * Then fence_signal (INIT_SELF, local and remote) after a half-window
 * writeto that is not SYNC: the server, polling its window, must see all
 * of the data once the remote value arrives; the server writes into our
 * window without SYNC and fence_mark (INIT_PEER) plus fence_wait here
 * must find its data; and this side closes first: the server's blocked
 * scif_recv() must fail with ECONNRESET within CLOSE_BOUND seconds.
 *
 * fault: the client writes and reads 1 MiB (SYNC) in a loop, printing
 * "rma running" after the first round, until a call fails; the test then
 * breaks the connection from outside (the server's host deletes its RDMA
 * device or takes its link down). Every call must fail with an errno, not
 * hang: the RMA that meets the break within SECS seconds, then send,
 * recv and close. The server waits in scif_recv() and must see it fail.
 *
 * Output: one line per check, "ok" or "not ok"; exit status 0 when all
 * pass, 1 otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <scif.h>
#include "scif_check.h"
#include <scif_prog.h>

#define WIN_LEN		(1 << 20)	/* bytes of each side's window */
#define SRV_OFF		0x40000000	/* where the server's window is fixed */
#define STREAM_LEN	(1 << 20)
#define CLOSES_PORT	2110	/* the closes server's port; the client's is +1 */
#define CLOSE_BOUND	5.0	/* seconds: a close taking longer hangs */

/* client-remote: the server is on another host (its windows are not mappable). */
static int peer_remote;
/* The client's connected endpoint; main() closes it so a waiting server ends. */
static scif_epd_t client_epd = -1;

static unsigned char pat(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 131 + seed * 7 + (i >> 12)) ^ seed);
}

/* p[i] = the pattern at window offset base + i */
static void fill_at(unsigned char *p, size_t len, size_t base, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat(base + i, seed);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	fill_at(p, len, 0, seed);
}

static size_t mismatch(const unsigned char *p, size_t len, size_t base,
		       unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(base + i, seed))
			return i + 1;
	return 0;
}

static void *xwindow(void)
{
	void *p;

	if (posix_memalign(&p, 4096, WIN_LEN))
		die("posix_memalign");
	memset(p, 0, WIN_LEN);
	return p;
}

/* Requests of the client to the server, over the stream. */
enum { REQ_CHECK = 1, REQ_FILL, REQ_SIGNAL_CHECK, REQ_STREAM, REQ_BYE };

struct req {
	int op;
	unsigned int seed;
	long off;
	long len;
	unsigned long long val;
};

/* --- server ------------------------------------------------------------------ */

static int server(int port, int ready_fd)
{
	struct scif_port_id peer;
	scif_epd_t lep, epd;
	unsigned char *buf, *win;
	struct req rq;
	off_t off;
	int r;

	who = "server";
	lep = xlisten(port, 4, ready_fd);
	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC))
		die("scif_accept");
	check(peer.port >= SCIF_PORT_RSVD, "accepted peer %u:%u", peer.node, peer.port);

	/* The stream: echo STREAM_LEN bytes back. */
	buf = malloc(STREAM_LEN);
	if (!buf)
		die("malloc");
	xrecv(epd, buf, STREAM_LEN);
	check(!mismatch(buf, STREAM_LEN, 0, 1), "stream in, 1 MiB byte-exact");
	xsend(epd, buf, STREAM_LEN);

	win = xwindow();
	off = scif_register(epd, win, WIN_LEN, SRV_OFF,
			    SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED);
	check(off == SRV_OFF, "register a fixed window at %#lx", (long)SRV_OFF);
	xsend(epd, &off, sizeof(off));

	for (;;) {
		xrecv(epd, &rq, sizeof(rq));
		r = 0;
		switch (rq.op) {
		case REQ_CHECK:
			r = !mismatch(win + rq.off - SRV_OFF, rq.len, rq.off - SRV_OFF, rq.seed);
			check(r, "window holds what the client wrote (%ld bytes at %#lx)",
			      rq.len, rq.off);
			break;
		case REQ_FILL:
			fill(win, WIN_LEN, rq.seed);
			r = 1;
			break;
		case REQ_SIGNAL_CHECK:
			r = *(volatile unsigned long long *)(win + rq.off - SRV_OFF) == rq.val;
			check(r, "remote fence signal wrote %#llx at %#lx", rq.val, rq.off);
			break;
		case REQ_STREAM:
			/* len bytes of the pattern from offset off, then the reply. */
			if (rq.len <= 0 || rq.len > STREAM_LEN)
				break;
			fill_at(buf, rq.len, rq.off, rq.seed);
			xsend(epd, buf, rq.len);
			r = 1;
			break;
		case REQ_BYE:
			scif_unregister(epd, SRV_OFF, WIN_LEN);
			scif_close(epd);
			scif_close(lep);
			free(win);
			free(buf);
			return failures ? 1 : 0;
		}
		xsend(epd, &r, sizeof(r));
	}
}

/* --- client ------------------------------------------------------------------ */

static int ask(scif_epd_t epd, int op, unsigned int seed, long off, long len,
	       unsigned long long val)
{
	struct req rq = { op, seed, off, len, val };
	int r;

	xsend(epd, &rq, sizeof(rq));
	xrecv(epd, &r, sizeof(r));
	return r;
}

static void ask_stream(scif_epd_t epd, unsigned int seed, long base, long len)
{
	struct req rq = { REQ_STREAM, seed, base, len, 0 };

	xsend(epd, &rq, sizeof(rq));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Mappings of the SCIF device in this process (/proc/self/maps). */
static int scif_maps(void)
{
	const char *dev = getenv("SCIF_DEV");
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	if (!dev || !*dev)
		dev = "/dev/scif";
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, dev);
	fclose(f);
	return n;
}

/* The receive ring, which libscif mapped on the first scif_recv(). */
static void ring_checks(scif_epd_t epd)
{
	const long len = 3 * 4096 + 5;
	struct scire_scif_rx_ring *view;
	struct sigaction sa = {}, old;
	struct scifioctl_msg m = {};
	unsigned char *buf;
	long long t0;
	scif_epd_t e;
	int st, r;
	pid_t pid;
	void *p;

	check(scif_maps() >= 1, "ring: libscif mapped the receive ring on its first scif_recv()");
	errno = 0;
	p = mmap(NULL, SCIRE_SCIF_RX_MAP_LEN - 4096, PROT_READ | PROT_WRITE,
		 MAP_SHARED, epd, SCIRE_SCIF_RX_RING_OFFSET);
	check(p == MAP_FAILED && errno == EINVAL, "ring: a mapping of another length is EINVAL");
	errno = 0;
	p = mmap(NULL, SCIRE_SCIF_RX_MAP_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 epd, SCIRE_SCIF_RX_RING_OFFSET);
	check(p == MAP_FAILED && errno == EINVAL, "ring: a private mapping is EINVAL");
	e = scif_open();
	errno = 0;
	p = mmap(NULL, SCIRE_SCIF_RX_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		 e, SCIRE_SCIF_RX_RING_OFFSET);
	check(p == MAP_FAILED && errno == ENOTCONN, "ring: mapping an unconnected endpoint is ENOTCONN");
	scif_close(e);
	view = mmap(NULL, SCIRE_SCIF_RX_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		    epd, SCIRE_SCIF_RX_RING_OFFSET);
	check(view != MAP_FAILED, "ring: a second mapping in the same process");
	if (view == MAP_FAILED)
		return;
	buf = malloc(2 * len);
	if (!buf)
		die("malloc");

	/* The child reads the first half (through the kernel), we the rest. */
	ask_stream(epd, 5, 0, 2 * len);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		errno = 0;
		p = mmap(NULL, SCIRE_SCIF_RX_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
			 epd, SCIRE_SCIF_RX_RING_OFFSET);
		if (p != MAP_FAILED || errno != EBUSY)
			_exit(1);
		r = scif_recv(epd, buf, len, SCIF_RECV_BLOCK);
		_exit(r == len && !mismatch(buf, len, 0, 5) ? 0 : 2);
	}
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	check(WIFEXITED(st) && WEXITSTATUS(st) != 1,
	      "ring: another process's mapping is EBUSY (status %#x)", st);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "ring: a forked child reads the first %ld bytes through the kernel", len);
	memset(buf, 0, len);
	r = scif_recv(epd, buf, len, SCIF_RECV_BLOCK);
	check(r == len && !mismatch(buf, len, len, 5),
	      "ring: the parent reads the next %ld bytes from the ring (got %d)", len, r);
	xrecv(epd, &r, sizeof(r));

	/* A tail past the head, written by this process: the kernel keeps its own. */
	ask_stream(epd, 6, 0, len);
	t0 = time(NULL);
	while (__atomic_load_n(&view->head, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&view->tail, __ATOMIC_RELAXED) < (unsigned long)len &&
	       time(NULL) - t0 < 10)
		usleep(1000);
	__atomic_store_n(&view->tail, __atomic_load_n(&view->head, __ATOMIC_ACQUIRE) + 4096,
			 __ATOMIC_RELEASE);
	memset(buf, 0, len);
	r = scif_recv(epd, buf, len, SCIF_RECV_BLOCK);
	check(r == len && !mismatch(buf, len, 0, 6),
	      "ring: a tail written past the head is ignored, the stream goes on (got %d)", r);
	xrecv(epd, &r, sizeof(r));

	/* A reader lock nobody gives back: SCIF_RECV waits until a signal. */
	__atomic_store_n(&view->lock, SCIRE_SCIF_RX_LOCK_USER, __ATOMIC_RELEASE);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, &old);
	alarm(1);
	m.msg = (__u64)(uintptr_t)buf;
	m.len = 1;
	m.flags = SCIF_RECV_BLOCK;
	errno = 0;
	r = ioctl(epd, SCIF_RECV, &m);
	check(r < 0 && errno == EINTR, "ring: SCIF_RECV waits for a held reader lock until a signal");
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	__atomic_store_n(&view->lock, 0, __ATOMIC_RELEASE);
	check(ask(epd, REQ_FILL, 7, 0, 0, 0), "ring: the stream works after the lock is given back");
	munmap(view, SCIRE_SCIF_RX_MAP_LEN);
	free(buf);
}

static int client(unsigned short node, unsigned short port)
{
	struct scif_port_id dst = { .node = node, .port = port };
	struct scif_pollepd pe;
	unsigned char *buf, *win, *vbuf;
	uint16_t nodes[64], self;
	off_t soff, loff, o;
	int n, ret, mark, i;
	scif_epd_t epd, e2;
	long a, l;

	n = scif_get_nodeIDs(nodes, 64, &self);
	check(n >= 1, "scif_get_nodeIDs: %d nodes, self %u", n, self);

	e2 = scif_open();
	if (e2 < 0)
		die("scif_open");
	ret = scif_bind(e2, 0);
	check(ret >= SCIF_PORT_RSVD, "bind(0) picks port %d >= SCIF_PORT_RSVD", ret);
	errno = 0;
	check(scif_bind(e2, 0) < 0 && errno == EINVAL, "second bind is EINVAL");
	scif_close(e2);

	epd = scif_open();
	if (epd < 0)
		die("scif_open");
	errno = 0;
	check(scif_send(epd, "x", 1, 0) < 0 && errno == ENOTCONN,
	      "send before connect is ENOTCONN");
	for (i = 0; i < 100; i++) {
		ret = scif_connect(epd, &dst);
		if (ret >= 0 || errno != ECONNREFUSED)
			break;
		usleep(100000);	/* the server is not listening yet */
	}
	check(ret >= SCIF_PORT_RSVD, "connect to %u:%u from port %d", node, port, ret);
	if (ret < 0)
		return 1;
	client_epd = epd;

	/* The stream. */
	buf = malloc(STREAM_LEN);
	if (!buf)
		die("malloc");
	errno = 0;
	check(scif_recv(epd, buf, 16, 0) == 0, "non-blocking recv of nothing gives 0");
	pe.epd = epd;
	pe.events = SCIF_POLLIN | SCIF_POLLOUT;
	ret = scif_poll(&pe, 1, 1000);
	check(ret == 1 && (pe.revents & SCIF_POLLOUT) && !(pe.revents & SCIF_POLLIN),
	      "poll: writable, nothing to read (revents %#x)", pe.revents);
	fill(buf, STREAM_LEN, 1);
	xsend(epd, buf, STREAM_LEN);
	memset(buf, 0, STREAM_LEN);
	pe.events = SCIF_POLLIN;
	ret = scif_poll(&pe, 1, 10000);
	check(ret == 1 && (pe.revents & SCIF_POLLIN), "poll: the echo is readable");
	xrecv(epd, buf, STREAM_LEN);
	check(!mismatch(buf, STREAM_LEN, 0, 1), "stream echoed back, 1 MiB byte-exact");
	xrecv(epd, &soff, sizeof(soff));
	check(soff == SRV_OFF, "server's window at %#lx", (long)soff);
	ring_checks(epd);

	/* Refusals of the user ABI. */
	win = xwindow();
	errno = 0;
	check(scif_register(epd, win, WIN_LEN, 0, SCIF_PROT_READ, SCIF_MAP_KERNEL) ==
	      SCIF_REGISTER_FAILED && errno == EINVAL, "SCIF_MAP_KERNEL from user space is EINVAL");
	errno = 0;
	check(scif_register(epd, win + 1, 4096, 0, SCIF_PROT_READ, 0) ==
	      SCIF_REGISTER_FAILED && errno == EINVAL, "unaligned address is EINVAL");
	errno = 0;
	check(scif_register(epd, win, WIN_LEN, 0x1001, SCIF_PROT_READ, SCIF_MAP_FIXED) ==
	      SCIF_REGISTER_FAILED && errno == EINVAL, "unaligned fixed offset is EINVAL");

	loff = scif_register(epd, win, WIN_LEN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	check(loff != SCIF_REGISTER_FAILED && !(loff & 4095),
	      "register at an automatic offset: %#lx", (long)loff);
	if (loff == SCIF_REGISTER_FAILED)
		return 1;
	errno = 0;
	check(scif_register(epd, win, 4096, loff + 4096, SCIF_PROT_READ, SCIF_MAP_FIXED) ==
	      SCIF_REGISTER_FAILED && errno == EADDRINUSE, "overlapping fixed window is EADDRINUSE");
	errno = 0;
	if (peer_remote) {
		check(scif_mmap(NULL, 4096, PROT_READ, 0, epd, soff) == SCIF_MMAP_FAILED &&
		      errno == ENODEV,
		      "scif_mmap of another host's window is refused (ENODEV)");
	} else {
		void *m = scif_mmap(NULL, 4096, PROT_READ, 0, epd, soff);

		/* selftests/106-scif-mmap.sh checks these mappings in depth. */
		check(m != SCIF_MMAP_FAILED && !scif_munmap(m, 4096),
		      "scif_mmap of a window of this kernel's peer maps it");
	}
	errno = 0;
	check(scif_readfrom(epd, loff, 4096, soff + WIN_LEN, SCIF_RMA_SYNC) < 0 &&
	      errno == ENXIO, "readfrom past the peer's window is ENXIO");
	errno = 0;
	check(scif_writeto(epd, loff + WIN_LEN - 4096, 8192, soff, SCIF_RMA_SYNC) < 0 &&
	      errno == ENXIO, "writeto past the local window is ENXIO");

	/* writeto: local window -> server's, unaligned, multi-page, SYNC. */
	fill(win, WIN_LEN, 2);
	a = 4096 * 3 + 123;
	l = 5 * 4096 + 1000;
	ret = scif_writeto(epd, loff + a, l, soff + a, SCIF_RMA_SYNC);
	check(!ret, "writeto %ld bytes at +%ld, SYNC", l, a);
	check(ask(epd, REQ_CHECK, 2, soff + a, l, 0), "server saw the writeto");

	/* writeto without SYNC, then a fence of our own RMAs. */
	ret = scif_writeto(epd, loff, WIN_LEN, soff, 0);
	check(!ret, "writeto of the whole 1 MiB window, not SYNC");
	ret = scif_fence_mark(epd, SCIF_FENCE_INIT_SELF, &mark);
	check(!ret, "fence_mark (INIT_SELF) gives mark %#x", mark);
	check(!scif_fence_wait(epd, mark), "fence_wait on it");
	check(ask(epd, REQ_CHECK, 2, soff, WIN_LEN, 0), "server saw the whole window");

	/* readfrom: the server's window (filled by it) -> ours. */
	check(ask(epd, REQ_FILL, 3, 0, 0, 0), "server filled its window");
	memset(win, 0, WIN_LEN);
	a = 4096 * 7 + 17;
	l = 9 * 4096 + 3;
	ret = scif_readfrom(epd, loff + a, l, soff + a, SCIF_RMA_SYNC);
	check(!ret && !mismatch(win + a, l, a, 3), "readfrom %ld bytes at +%ld, SYNC", l, a);
	check(win[a - 1] == 0 && win[a + l] == 0, "readfrom wrote nothing outside its range");

	/* v*: from and to ordinary memory. */
	vbuf = malloc(3 * 4096 + 100);
	if (!vbuf)
		die("malloc");
	ret = scif_vreadfrom(epd, vbuf + 1, 3 * 4096 + 50, soff + 4096 + 9, SCIF_RMA_SYNC);
	check(!ret && !mismatch(vbuf + 1, 3 * 4096 + 50, 4096 + 9, 3),
	      "vreadfrom into an unaligned buffer");
	fill_at(vbuf, 3 * 4096 + 100, 8 * 4096, 4);
	ret = scif_vwriteto(epd, vbuf, 3 * 4096 + 100, soff + 8 * 4096, SCIF_RMA_SYNC);
	check(!ret, "vwriteto from malloc'd memory");
	check(ask(epd, REQ_CHECK, 4, soff + 8 * 4096, 3 * 4096 + 100, 0),
	      "server saw the vwriteto");
	ret = scif_vwriteto(epd, vbuf, 4096, soff, SCIF_RMA_USECACHE);
	check(!ret, "vwriteto with SCIF_RMA_USECACHE, not SYNC");

	/* Fence signals: local and remote values after the RMAs. */
	o = loff + 64;
	ret = scif_fence_signal(epd, o, 0x1122334455667788ULL, soff + 128,
				0x8877665544332211ULL,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE);
	check(!ret, "fence_signal local and remote");
	for (i = 0; i < 1000 && *(volatile unsigned long long *)(win + 64) !=
	     0x1122334455667788ULL; i++)
		usleep(1000);
	check(*(volatile unsigned long long *)(win + 64) == 0x1122334455667788ULL,
	      "local fence signal value arrived");
	ret = scif_fence_mark(epd, SCIF_FENCE_INIT_SELF, &mark);
	check(!ret && !scif_fence_wait(epd, mark), "fence after the signal");
	check(ask(epd, REQ_SIGNAL_CHECK, 0, soff + 128, 8, 0x8877665544332211ULL),
	      "server saw the remote signal value");

	/* Peer-initiated fence: the server issued no RMAs, mark and wait work. */
	ret = scif_fence_mark(epd, SCIF_FENCE_INIT_PEER, &mark);
	check(!ret, "fence_mark (INIT_PEER) gives mark %#x", mark);
	check(!ret && !scif_fence_wait(epd, mark), "fence_wait on the peer's mark");

	check(!scif_unregister(epd, loff, WIN_LEN), "unregister our window");
	errno = 0;
	check(scif_writeto(epd, loff, 4096, soff, SCIF_RMA_SYNC) < 0 && errno == ENXIO,
	      "writeto from an unregistered window is ENXIO");

	/* Goodbye: the server closes; we see ECONNRESET. */
	{
		struct req rq = { .op = REQ_BYE };

		xsend(epd, &rq, sizeof(rq));
	}
	for (i = 0; i < 100; i++) {
		errno = 0;
		ret = scif_recv(epd, buf, 1, 0);
		if (ret < 0)
			break;
		usleep(50000);
	}
	check(ret < 0 && errno == ECONNRESET, "recv after the peer closed is ECONNRESET");
	free(vbuf);
	free(win);
	free(buf);
	return failures ? 1 : 0;
}

/* --- closes --------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Close @epd of connection @i; fail the check if it hangs. */
static void timed_close(scif_epd_t epd, int i)
{
	double t = now();

	scif_close(epd);
	t = now() - t;
	if (t > CLOSE_BOUND)
		check(0, "connection %d: scif_close took %.1f s (bound %.0f s)", i, t,
		      CLOSE_BOUND);
}

static int closes_server(int n, int ready_fd)
{
	struct scif_port_id peer;
	scif_epd_t lep, epd;
	unsigned char *win;
	long long msg;
	off_t off;
	int i;

	who = "closes server";
	win = xwindow();
	lep = xlisten(CLOSES_PORT, 4, ready_fd);
	for (i = 0; i < n; i++) {
		if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC))
			die("scif_accept");
		xrecv(epd, &msg, sizeof(msg));
		xsend(epd, &msg, sizeof(msg));
		/* The client is closing now: our request meets a closing peer. */
		errno = 0;
		off = scif_register(epd, win, WIN_LEN, 0, SCIF_PROT_READ, 0);
		if (off == SCIF_REGISTER_FAILED && errno != ECONNRESET)
			check(0, "connection %d: register as the peer closes is"
			      " done or ECONNRESET", i);
		timed_close(epd, i);
	}
	scif_close(lep);
	free(win);
	printf("%s: %d checks failed\n", who, failures);
	return failures ? 1 : 0;
}

static int closes_client(int n, unsigned short node)
{
	struct scif_port_id dst = { .node = node, .port = CLOSES_PORT };
	unsigned char *win;
	long long msg;
	scif_epd_t epd;
	int i, ret = -1, k;
	off_t off;

	who = "closes client";
	win = xwindow();
	for (i = 0; i < n; i++) {
		epd = scif_open();
		if (epd < 0)
			die("scif_open");
		/* The port of the last connection, closed just now, is free. */
		if (scif_bind(epd, CLOSES_PORT + 1) != CLOSES_PORT + 1)
			die("scif_bind of the port the last connection closed");
		for (k = 0; k < 100; k++) {
			ret = scif_connect(epd, &dst);
			if (ret >= 0 || errno != ECONNREFUSED)
				break;
			usleep(100000);	/* the server's last close is not done yet */
		}
		if (ret < 0)
			die("scif_connect");
		/* A request at once: the server's accept may not have returned. */
		off = scif_register(epd, win, WIN_LEN, 0, SCIF_PROT_READ, 0);
		if (off == SCIF_REGISTER_FAILED)
			check(0, "connection %d: register right after connect", i);
		msg = i;
		xsend(epd, &msg, sizeof(msg));
		xrecv(epd, &msg, sizeof(msg));
		timed_close(epd, i);
	}
	free(win);
	return failures ? 1 : 0;
}

/* N connections on this node, each closed at once by both sides. */
static int closes(int n)
{
	uint16_t self;
	pid_t pid;
	int rc;

	if (scif_get_nodeIDs(NULL, 0, &self) < 0)
		die("scif_get_nodeIDs");
	pid = start_server(closes_server, n);
	rc = closes_client(n, self);
	if (reap_server(pid))
		rc = 1;
	check(!rc, "%d connections registered at once and closed at once, none hung", n);
	return rc;
}

/* --- sizes and fault: across two hosts ------------------------------------ */

#define BIG_OFF		0x80000000L	/* the sizes server's window */

/* Requests of the sizes client, after the ones above. */
enum { REQ_FILLR = 16, REQ_WAIT_SIGNAL, REQ_PEER_WRITE, REQ_PEER_CLOSES };

/* A sizes request carries two more values than struct req. */
struct req2 {
	struct req r;
	long off2;
	long len2;
};

static scif_epd_t connect_to(unsigned short node, unsigned short port)
{
	struct scif_port_id dst = { .node = node, .port = port };
	scif_epd_t epd = scif_open();
	int i, ret = -1;

	if (epd < 0)
		die("scif_open");
	for (i = 0; i < 300; i++) {
		ret = scif_connect(epd, &dst);
		if (ret >= 0 || (errno != ECONNREFUSED && errno != ENETUNREACH &&
				 errno != EHOSTUNREACH))
			break;
		usleep(100000);	/* the server is not listening yet */
	}
	check(ret >= SCIF_PORT_RSVD, "connect to %u:%u from port %d", node, port, ret);
	if (ret < 0)
		exit(1);
	return epd;
}

static void *xbig(long len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		die("posix_memalign");
	memset(p, 0, len);
	return p;
}

static int sizes_server(int port, long wlen)
{
	struct scif_port_id peer;
	unsigned char *win;
	scif_epd_t lep, epd;
	struct req2 q;
	double t;
	off_t off;
	int r, i;

	who = "sizes server";
	if (wlen < (1 << 20))
		wlen = 1 << 20;
	win = xbig(wlen);
	lep = xlisten(port, 4, -1);
	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC))
		die("scif_accept");
	check(1, "accepted peer %u:%u", peer.node, peer.port);
	off = scif_register(epd, win, wlen, BIG_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_FIXED);
	check(off == BIG_OFF, "register a fixed window of %ld MiB at %#lx", wlen >> 20,
	      BIG_OFF);
	xsend(epd, &off, sizeof(off));
	for (;;) {
		xrecv(epd, &q, sizeof(q));
		r = 0;
		switch (q.r.op) {
		case REQ_CHECK:
			r = !mismatch(win + q.r.off - BIG_OFF, q.r.len, q.r.off - BIG_OFF,
				      q.r.seed);
			if (!r)
				check(0, "window holds what the client wrote (%ld bytes at %#lx)",
				      q.r.len, q.r.off);
			break;
		case REQ_FILLR:
			fill_at(win + q.r.off - BIG_OFF, q.r.len, q.r.off - BIG_OFF, q.r.seed);
			r = 1;
			break;
		case REQ_WAIT_SIGNAL:
			/* Poll for the value at off2, then the data must all be there. */
			for (i = 0; i < 30000 && *(volatile unsigned long long *)
			     (win + q.off2 - BIG_OFF) != q.r.val; i++)
				usleep(1000);
			check(i < 30000, "remote fence signal %#llx arrived", q.r.val);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			r = i < 30000 && !mismatch(win + q.r.off - BIG_OFF, q.r.len,
						   q.r.off - BIG_OFF, q.r.seed);
			check(r, "all %ld bytes written before the fence signal are there"
			      " when its value is", q.r.len);
			break;
		case REQ_PEER_WRITE:
			/* Our range to the client's window at off2, not SYNC. */
			fill_at(win + q.r.off - BIG_OFF, q.r.len, q.r.off - BIG_OFF, q.r.seed);
			r = !scif_writeto(epd, q.r.off, q.r.len, q.off2, 0);
			check(r, "writeto of %ld bytes into the client's window, not SYNC",
			      q.r.len);
			break;
		case REQ_PEER_CLOSES:
			r = 1;
			xsend(epd, &r, sizeof(r));
			t = now();
			errno = 0;
			r = scif_recv(epd, &q, sizeof(q), SCIF_RECV_BLOCK);
			t = now() - t;
			check(r < 0 && errno == ECONNRESET && t < CLOSE_BOUND,
			      "the client closed: blocked recv is ECONNRESET after %.1f s", t);
			errno = 0;
			check(scif_send(epd, &q, 8, SCIF_SEND_BLOCK) < 0 && errno == ECONNRESET,
			      "send after the client closed is ECONNRESET");
			scif_unregister(epd, BIG_OFF, wlen);
			timed_close(epd, 0);
			scif_close(lep);
			free(win);
			printf("%s: %d checks, %d failed\n", who, checks, failures);
			return failures ? 1 : 0;
		}
		xsend(epd, &r, sizeof(r));
	}
}

static int ask2(scif_epd_t epd, int op, unsigned int seed, long off, long len,
		unsigned long long val, long off2)
{
	struct req2 q = { { op, seed, off, len, val }, off2, 0 };
	int r;

	xsend(epd, &q, sizeof(q));
	xrecv(epd, &r, sizeof(r));
	return r;
}

static int sizes_client(unsigned short node, unsigned short port, long wlen)
{
	long sz[] = { 1, 2, 7, 4095, 4096, 4097, 65536 + 5, (1 << 20) + 3, 4 << 20,
		      wlen - 4096 - 123, wlen };
	unsigned char *win, *vb;
	scif_epd_t epd;
	off_t soff, loff;
	unsigned int s;
	int ret, mark, ok, i;
	long o, len;
	double t;

	if (wlen < (1 << 20))
		wlen = 1 << 20;
	epd = connect_to(node, port);
	xrecv(epd, &soff, sizeof(soff));
	check(soff == BIG_OFF, "server's window at %#lx", (long)soff);
	win = xbig(wlen);
	vb = xbig(wlen + 4096);
	loff = scif_register(epd, win, wlen, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	check(loff != SCIF_REGISTER_FAILED, "register %ld MiB at %#lx", wlen >> 20, (long)loff);
	if (loff == SCIF_REGISTER_FAILED)
		return 1;

	for (i = 0; i < (int)(sizeof(sz) / sizeof(sz[0])); i++) {
		len = sz[i];
		if (len <= 0 || len > wlen)
			continue;
		/* An unaligned offset where there is room for one. */
		o = len + 4096 + 123 <= wlen ? 4096 + 123 + i : wlen - len;
		if (o + len > wlen)
			o = wlen - len;
		s = 20 + 4 * i;
		t = now();

		fill_at(win + o, len, o, s);
		ret = scif_writeto(epd, loff + o, len, soff + o, SCIF_RMA_SYNC);
		check(!ret && ask2(epd, REQ_CHECK, s, soff + o, len, 0, 0),
		      "writeto %ld bytes at +%ld, SYNC: the server has them", len, o);

		check(ask2(epd, REQ_FILLR, s + 1, soff + o, len, 0, 0), "server filled");
		memset(win, 0xa5, wlen);
		ret = scif_readfrom(epd, loff + o, len, soff + o, SCIF_RMA_SYNC);
		ok = !ret && !mismatch(win + o, len, o, s + 1) &&
		     (o == 0 || win[o - 1] == 0xa5) && (o + len == wlen || win[o + len] == 0xa5);
		check(ok, "readfrom %ld bytes at +%ld, SYNC: byte-exact, nothing outside", len, o);

		fill_at(vb + 1, len, o, s + 2);
		ret = scif_vwriteto(epd, vb + 1, len, soff + o, SCIF_RMA_SYNC);
		check(!ret && ask2(epd, REQ_CHECK, s + 2, soff + o, len, 0, 0),
		      "vwriteto %ld bytes from an unaligned buffer: the server has them", len);

		memset(vb, 0, len + 2);
		ret = scif_vreadfrom(epd, vb + 1, len, soff + o, SCIF_RMA_SYNC);
		check(!ret && !mismatch(vb + 1, len, o, s + 2) && !vb[0] && !vb[len + 1],
		      "vreadfrom %ld bytes into an unaligned buffer: byte-exact", len);

		fill_at(win + o, len, o, s + 3);
		ret = scif_writeto(epd, loff + o, len, soff + o, 0);
		ret = ret ? ret : scif_fence_mark(epd, SCIF_FENCE_INIT_SELF, &mark);
		ret = ret ? ret : scif_fence_wait(epd, mark);
		check(!ret && ask2(epd, REQ_CHECK, s + 3, soff + o, len, 0, 0),
		      "writeto %ld bytes not SYNC, fence_mark, fence_wait: the server has"
		      " them (%.1f s for this size)", len, now() - t);
	}

	/* fence_signal after an RMA that is not SYNC: data before value. */
	len = wlen / 2;
	fill(win, len, 90);
	{
		struct req2 q = { { REQ_WAIT_SIGNAL, 90, soff, len, 0x5ca1ab1e0ddba11ULL },
				  soff + wlen - 8, 0 };

		xsend(epd, &q, sizeof(q));
	}
	ret = scif_writeto(epd, loff, len, soff, 0);
	check(!ret, "writeto %ld bytes, not SYNC, the server polling", len);
	ret = scif_fence_signal(epd, loff + wlen - 8, 0x1122334455667788ULL, soff + wlen - 8,
				0x5ca1ab1e0ddba11ULL,
				SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE);
	check(!ret, "fence_signal (INIT_SELF, local and remote)");
	xrecv(epd, &ok, sizeof(ok));
	check(ok, "server: the data was there when the signal's value was");
	for (i = 0; i < 10000 && *(volatile unsigned long long *)(win + wlen - 8) !=
	     0x1122334455667788ULL; i++)
		usleep(1000);
	check(i < 10000, "the local fence signal value arrived");

	/* INIT_PEER: the server writes into our window, we mark and wait. */
	o = 8192 + 5;
	len = (1 << 20) + 77;
	memset(win, 0, wlen);
	check(ask2(epd, REQ_PEER_WRITE, 91, soff + o, len, 0, loff + o),
	      "server issued its writeto");
	ret = scif_fence_mark(epd, SCIF_FENCE_INIT_PEER, &mark);
	check(!ret, "fence_mark (INIT_PEER) gives mark %#x", mark);
	check(!ret && !scif_fence_wait(epd, mark), "fence_wait on the peer's mark");
	check(!mismatch(win + o, len, o, 91) && !win[o - 1] && !win[o + len],
	      "the peer's %ld bytes are in our window after the wait", len);

	/* This side closes first. */
	check(!scif_unregister(epd, loff, wlen), "unregister our window");
	check(ask2(epd, REQ_PEER_CLOSES, 0, 0, 0, 0, 0), "server ready for our close");
	timed_close(epd, 0);
	check(1, "closed first; the server reports what it saw");
	free(win);
	free(vb);
	printf("%s: %d checks, %d failed\n", who, checks, failures);
	return failures ? 1 : 0;
}

static int failed_cleanly(int e)
{
	return e == ECONNRESET || e == ENOTCONN || e == ETIMEDOUT || e == EIO ||
	       e == ENODEV || e == ENETDOWN || e == ENETUNREACH || e == EHOSTUNREACH ||
	       e == ECONNABORTED;
}

static int fault_server(int port)
{
	struct scif_port_id peer;
	unsigned char *win;
	scif_epd_t lep, epd;
	off_t off;
	double t;
	int r, e;
	char c;

	who = "fault server";
	win = xwindow();
	lep = xlisten(port, 4, -1);
	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC))
		die("scif_accept");
	off = scif_register(epd, win, WIN_LEN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	check(off != SCIF_REGISTER_FAILED, "register 1 MiB");
	xsend(epd, &off, sizeof(off));
	printf("fault server: waiting in scif_recv\n");
	t = now();
	errno = 0;
	r = scif_recv(epd, &c, 1, SCIF_RECV_BLOCK);
	e = errno;
	check(r < 0 && failed_cleanly(e), "the blocked recv failed (%s) after %.1f s",
	      strerror(e), now() - t);
	t = now();
	scif_close(epd);
	scif_close(lep);
	check(now() - t < CLOSE_BOUND, "close took %.1f s", now() - t);
	printf("%s: %d checks, %d failed\n", who, checks, failures);
	return failures ? 1 : 0;
}

static int fault_client(unsigned short node, unsigned short port, int secs)
{
	unsigned char *win;
	double t0, last;
	scif_epd_t epd;
	off_t soff, loff;
	long rounds = 0;
	int ret = 0, e = 0;
	char c;

	who = "fault client";
	epd = connect_to(node, port);
	xrecv(epd, &soff, sizeof(soff));
	win = xwindow();
	loff = scif_register(epd, win, WIN_LEN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	check(loff != SCIF_REGISTER_FAILED, "register 1 MiB");
	fill(win, WIN_LEN, 99);
	t0 = last = now();
	while (now() - t0 < secs) {
		errno = 0;
		ret = rounds & 1 ? scif_readfrom(epd, loff, WIN_LEN, soff, SCIF_RMA_SYNC) :
			scif_writeto(epd, loff, WIN_LEN, soff, SCIF_RMA_SYNC);
		if (ret) {
			e = errno;
			break;
		}
		if (!rounds++)
			printf("rma running\n");
		last = now();
	}
	errno = e;
	check(ret && failed_cleanly(e), "RMA failed (%s) after %ld rounds, %.1f s after"
	      " the last one that worked", strerror(e), rounds, now() - last);
	check(ret && now() - last < secs, "the failure came within %d s", secs);
	errno = 0;
	last = now();
	ret = scif_send(epd, "x", 1, SCIF_SEND_BLOCK);
	e = errno;
	check(ret < 0 && failed_cleanly(e), "send fails at once (%s, %.1f s)", strerror(e),
	      now() - last);
	errno = 0;
	last = now();
	ret = scif_recv(epd, &c, 1, SCIF_RECV_BLOCK);
	e = errno;
	check(ret < 0 && failed_cleanly(e), "blocking recv fails at once (%s, %.1f s)",
	      strerror(e), now() - last);
	errno = 0;
	ret = scif_writeto(epd, loff, 4096, soff, SCIF_RMA_SYNC);
	check(ret < 0, "another writeto fails too");
	timed_close(epd, 0);
	check(1, "closed");
	free(win);
	printf("%s: %d checks, %d failed\n", who, checks, failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint16_t self;
	pid_t pid;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]), -1);
	if (argc == 4 && (!strcmp(argv[1], "client") || !strcmp(argv[1], "client-remote"))) {
		peer_remote = !strcmp(argv[1], "client-remote");
		rc = client(atoi(argv[2]), atoi(argv[3]));
		if (client_epd >= 0)
			scif_close(client_epd);
		printf("%s: %d checks, %d failed\n", who, checks, failures);
		return rc;
	}
	if (argc == 3 && !strcmp(argv[1], "closes"))
		return closes(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "sizes-server"))
		return sizes_server(atoi(argv[2]), atol(argv[3]) << 20);
	if (argc == 5 && !strcmp(argv[1], "sizes-client"))
		return sizes_client(atoi(argv[2]), atoi(argv[3]), atol(argv[4]) << 20);
	if (argc == 3 && !strcmp(argv[1], "fault-server"))
		return fault_server(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "fault-client"))
		return fault_client(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc != 2 || strcmp(argv[1], "loop")) {
		fprintf(stderr, "usage: %s server PORT | client NODE PORT | loop | closes N |\n"
			"  sizes-server PORT MIB | sizes-client NODE PORT MIB |\n"
			"  fault-server PORT | fault-client NODE PORT SECS\n", argv[0]);
		return 2;
	}
	if (scif_get_nodeIDs(NULL, 0, &self) < 0) {
		perror("scif_get_nodeIDs");
		return errno == ENOENT ? 77 : 1;
	}
	pid = start_server(server, 2100);
	rc = client(self, 2100);
	if (client_epd >= 0)
		scif_close(client_epd);
	if (reap_server(pid))
		rc = 1;
	printf("loop: client %d checks, %d failed; server %s\n", checks, failures,
	       rc ? "or client failed" : "passed");
	return rc;
}
