// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_mpss_abi: /dev/scif called the way MPSS 4's libscif calls it, with
 * raw ioctls and no library, so that programs linked against Intel's
 * libscif.so.0 are known to work on scire.
 *
 *   scif_mpss_abi loop               server and client forked, this node
 *   scif_mpss_abi server PORT        serve one client on PORT
 *   scif_mpss_abi client NODE PORT   connect to NODE:PORT and run the checks
 *
 * The conventions followed are MPSS 4's (scif(7), The ioctl ABI, has the
 * table): SCIF_BIND gets the address of a uint16_t, the port in and out;
 * SCIF_LISTEN and SCIF_FENCE_WAIT get their value in the argument itself;
 * SCIF_CONNECT's self and SCIF_ACCEPTREQ's peer and endpt are left as the
 * stack had them; SCIF_ACCEPTREG gets the address of scifioctl_accept's
 * endpt, on a file opened before SCIF_ACCEPTREQ; SCIF_SEND and SCIF_RECV
 * read out_len back; SCIF_REG reads out_offset back; SCIF_FENCE_MARK's
 * mark points at an int; SCIF_GET_NODEIDS runs on a file of its own and
 * reads len back; scif_poll() is poll(2).
 *
 * Every object the kernel is given lives between guard bytes (a pattern
 * that no write the kernel makes could reproduce) and the guards are
 * checked after the call: the kernel may write only what the table says.
 * SCIF_BIND's uint16_t is on this function's stack with guards on both
 * sides, the bytes after it being what a caller's stack holds (not zero),
 * for port 0 (any) and for a given port; the int of MPSS 3's libscif and
 * the zeroed __u64 of scire's own are bound too.
 *
 * Output: one line per check, "ok" or "not ok"; exit status 0 when all
 * pass, 1 otherwise, 77 when /dev/scif is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scif_check.h"
#include <linux/scif_ioctl.h>
#include <rdma/scire-scif-abi.h>

/* The widths the table states, as a 64-bit ABI lays the structs out. */
#ifdef __LP64__
_Static_assert(sizeof(struct scifioctl_connect) == 8, "scifioctl_connect");
_Static_assert(sizeof(struct scifioctl_accept) == 16, "scifioctl_accept");
_Static_assert(sizeof(struct scifioctl_msg) == 24, "scifioctl_msg");
_Static_assert(sizeof(struct scifioctl_reg) == 40, "scifioctl_reg");
_Static_assert(sizeof(struct scifioctl_unreg) == 16, "scifioctl_unreg");
_Static_assert(sizeof(struct scifioctl_copy) == 40, "scifioctl_copy");
_Static_assert(sizeof(struct scifioctl_fence_mark) == 16, "scifioctl_fence_mark");
_Static_assert(sizeof(struct scifioctl_fence_signal) == 40, "scifioctl_fence_signal");
_Static_assert(sizeof(struct scifioctl_node_ids) == 24, "scifioctl_node_ids");
#endif

#define GUARD		16		/* guard bytes on each side */
#define WIN_LEN		(64 * 4096)	/* bytes of each side's window */
#define SRV_OFF		0x20000000L	/* the server's fixed window */
#define VLEN		(2 * 4096 + 77)	/* bytes of the v* RMAs */

/* --- guarded objects ------------------------------------------------------------ */

static unsigned char guard_byte(size_t i)
{
	return (unsigned char)(0xa5 ^ (i * 29));
}

/*
 * A frame of GUARD + @len + GUARD bytes, all of them the guard pattern;
 * the object is at frame + GUARD (8-byte aligned when frame is).
 */
static void *guard_init(unsigned char *frame, size_t len)
{
	for (size_t i = 0; i < GUARD + len + GUARD; i++)
		frame[i] = guard_byte(i);
	return frame + GUARD;
}

/* Were the guards on both sides of the @len-byte object left alone? */
static int guards_ok(const unsigned char *frame, size_t len)
{
	for (size_t i = 0; i < GUARD; i++)
		if (frame[i] != guard_byte(i))
			return 0;
	for (size_t i = GUARD + len; i < GUARD + len + GUARD; i++)
		if (frame[i] != guard_byte(i))
			return 0;
	return 1;
}

/* Do @len bytes of @frame from @at still hold the guard pattern? */
static int untouched(const unsigned char *frame, size_t at, size_t len)
{
	for (size_t i = at; i < at + len; i++)
		if (frame[i] != guard_byte(i))
			return 0;
	return 1;
}

static unsigned char pat(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 151 + seed * 13 + (i >> 11)) ^ seed);
}

static void fill_at(unsigned char *p, size_t len, size_t base, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat(base + i, seed);
}

static int matches(const unsigned char *p, size_t len, size_t base, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(base + i, seed))
			return 0;
	return 1;
}

static unsigned char *xwindow(void)
{
	void *p;

	if (posix_memalign(&p, 4096, WIN_LEN))
		die("posix_memalign");
	memset(p, 0, WIN_LEN);
	return p;
}

/* --- the calls, as MPSS 4's libscif makes them ----------------------------------- */

static int xopen(void)
{
	int fd = open("/dev/scif", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open /dev/scif");
	return fd;
}

/* SCIF_SEND/SCIF_RECV, the struct between guards; the bytes moved or -1. */
static int msg_call(int fd, unsigned long cmd, void *buf, int len, int flags,
		    int *guards)
{
	unsigned char frame[GUARD + sizeof(struct scifioctl_msg) + GUARD]
		__attribute__((aligned(8)));
	struct scifioctl_msg *m = guard_init(frame, sizeof(*m));

	/* The padding after out_len keeps what the stack held. */
	m->msg = (__u64)(uintptr_t)buf;
	m->len = len;
	m->flags = flags;
	m->out_len = 0;
	if (ioctl(fd, cmd, m) < 0)
		return -1;
	*guards = guards_ok(frame, sizeof(*m)) &&
		  untouched(frame, GUARD + 20, 4) &&
		  m->msg == (__u64)(uintptr_t)buf && m->len == len && m->flags == flags;
	return m->out_len;
}

/* Exactly @len bytes over the stream, blocking. */
static void xsend(int fd, const void *buf, int len)
{
	int g;

	if (msg_call(fd, SCIF_SEND, (void *)buf, len, SCIF_SEND_BLOCK, &g) != len)
		die("SCIF_SEND");
	if (!g)
		check(0, "SCIF_SEND wrote only out_len (4 bytes) of its argument");
}

static void xrecv(int fd, void *buf, int len)
{
	int g;

	if (msg_call(fd, SCIF_RECV, buf, len, SCIF_RECV_BLOCK, &g) != len)
		die("SCIF_RECV");
	if (!g)
		check(0, "SCIF_RECV wrote only out_len (4 bytes) of its argument");
}

/*
 * SCIF_BIND of @port with the uint16_t on this function's stack, guards on
 * both sides; the port bound (or -1), and whether the guards held.
 */
static int bind_u16(int fd, uint16_t port, int *guards)
{
	unsigned char frame[GUARD + sizeof(uint16_t) + GUARD] __attribute__((aligned(8)));
	uint16_t *pn = guard_init(frame, sizeof(*pn));
	int ret;

	*pn = port;
	ret = ioctl(fd, SCIF_BIND, pn);
	*guards = guards_ok(frame, sizeof(*pn));
	return ret < 0 ? -1 : *pn;
}

/* SCIF_REG of [@addr, +@len) at @offset; the offset or -1. */
static long reg_call(int fd, void *addr, size_t len, long offset, int prot,
		     int flags, int *guards)
{
	unsigned char frame[GUARD + sizeof(struct scifioctl_reg) + GUARD]
		__attribute__((aligned(8)));
	struct scifioctl_reg *r = guard_init(frame, sizeof(*r));

	r->addr = (__u64)(uintptr_t)addr;
	r->len = len;
	r->offset = offset;
	r->prot = prot;
	r->flags = flags;
	r->out_offset = 0;
	if (ioctl(fd, SCIF_REG, r) < 0) {
		*guards = guards_ok(frame, sizeof(*r)) && !r->out_offset;
		return -1;
	}
	*guards = guards_ok(frame, sizeof(*r)) && r->addr == (__u64)(uintptr_t)addr &&
		  r->len == len && r->offset == offset && r->prot == prot &&
		  r->flags == flags;
	return r->out_offset;
}

/* SCIF_UNREG; 0 or -1. */
static int unreg_call(int fd, long offset, size_t len, int *guards)
{
	unsigned char frame[GUARD + sizeof(struct scifioctl_unreg) + GUARD]
		__attribute__((aligned(8)));
	struct scifioctl_unreg *u = guard_init(frame, sizeof(*u));
	int ret;

	u->offset = offset;
	u->len = len;
	ret = ioctl(fd, SCIF_UNREG, u);
	*guards = guards_ok(frame, sizeof(*u)) && u->offset == offset && u->len == len;
	return ret;
}

/* One of the four RMA ioctls; its struct must come back unchanged. */
static int copy_call(int fd, unsigned long cmd, long loffset, void *addr,
		     size_t len, long roffset, int flags, int *guards)
{
	unsigned char frame[GUARD + sizeof(struct scifioctl_copy) + GUARD]
		__attribute__((aligned(8)));
	struct scifioctl_copy *c = guard_init(frame, sizeof(*c));
	unsigned char before[sizeof(*c)];
	int ret;

	c->loffset = loffset;
	c->len = len;
	c->roffset = roffset;
	c->addr = (__u64)(uintptr_t)addr;
	c->flags = flags;
	memcpy(before, c, sizeof(*c));
	ret = ioctl(fd, cmd, c);
	*guards = guards_ok(frame, sizeof(*c)) && !memcmp(before, c, sizeof(*c));
	return ret;
}

/* SCIF_FENCE_MARK: the mark is an int between guards; the mark or -1. */
static int mark_call(int fd, int flags, int *mark, int *guards)
{
	unsigned char sframe[GUARD + sizeof(struct scifioctl_fence_mark) + GUARD]
		__attribute__((aligned(8)));
	unsigned char iframe[GUARD + sizeof(int) + GUARD] __attribute__((aligned(8)));
	struct scifioctl_fence_mark *m = guard_init(sframe, sizeof(*m));
	int *ip = guard_init(iframe, sizeof(*ip));
	int ret;

	m->flags = flags;
	m->mark = (__u64)(uintptr_t)ip;
	ret = ioctl(fd, SCIF_FENCE_MARK, m);
	*guards = guards_ok(sframe, sizeof(*m)) && guards_ok(iframe, sizeof(*ip)) &&
		  m->flags == flags && m->mark == (__u64)(uintptr_t)ip;
	*mark = *ip;
	return ret;
}

static int signal_call(int fd, long loff, uint64_t lval, long roff, uint64_t rval,
		       int flags, int *guards)
{
	unsigned char frame[GUARD + sizeof(struct scifioctl_fence_signal) + GUARD]
		__attribute__((aligned(8)));
	struct scifioctl_fence_signal *s = guard_init(frame, sizeof(*s));
	unsigned char before[sizeof(*s)];
	int ret;

	s->loff = loff;
	s->lval = lval;
	s->roff = roff;
	s->rval = rval;
	s->flags = flags;
	memcpy(before, s, sizeof(*s));
	ret = ioctl(fd, SCIF_FENCE_SIGNAL, s);
	*guards = guards_ok(frame, sizeof(*s)) && !memcmp(before, s, sizeof(*s));
	return ret;
}

/*
 * SCIF_GET_NODEIDS on a file of its own, as MPSS's scif_get_nodeIDs():
 * room for @room ids (NULL nodes when 0); the node count or -1, *self set.
 * Checks that only len, @room ids at most and self were written.
 */
static int node_ids(int room, uint16_t *ids, uint16_t *self)
{
	unsigned char sframe[GUARD + sizeof(struct scifioctl_node_ids) + GUARD]
		__attribute__((aligned(8)));
	unsigned char nframe[GUARD + 8 * sizeof(uint16_t) + GUARD] __attribute__((aligned(8)));
	unsigned char self_frame[GUARD + sizeof(uint16_t) + GUARD] __attribute__((aligned(8)));
	struct scifioctl_node_ids *n = guard_init(sframe, sizeof(*n));
	uint16_t *nodes = guard_init(nframe, 8 * sizeof(uint16_t));
	uint16_t *me = guard_init(self_frame, sizeof(*me));
	int fd = xopen(), ret, len, ok;

	n->nodes = room ? (__u64)(uintptr_t)nodes : 0;
	n->self = (__u64)(uintptr_t)me;
	n->len = room;
	ret = ioctl(fd, SCIF_GET_NODEIDS, n);
	close(fd);
	if (ret < 0)
		return -1;
	len = n->len;
	ok = guards_ok(sframe, sizeof(*n)) && guards_ok(self_frame, sizeof(*me)) &&
	     untouched(sframe, GUARD + 20, 4) &&
	     n->nodes == (room ? (__u64)(uintptr_t)nodes : 0) &&
	     n->self == (__u64)(uintptr_t)me;
	/* The ids beyond min(len, room) keep the guard pattern. */
	ok = ok && guards_ok(nframe, 8 * sizeof(uint16_t)) &&
	     untouched(nframe, GUARD + 2 * (len < room ? len : room),
		       2 * (8 - (len < room ? len : room)));
	check(ok, "SCIF_GET_NODEIDS (room for %d) wrote len, %d id(s) and a u16 self,"
	      " nothing else", room, len < room ? len : room);
	memcpy(ids, nodes, 8 * sizeof(uint16_t));
	*self = *me;
	return len;
}

/* --- server ---------------------------------------------------------------------- */

/* Requests of the client to the server, over the stream. */
enum { REQ_CHECK = 1, REQ_FILL, REQ_VALUE, REQ_BYE };

struct req {
	int op;
	unsigned int seed;
	long off;
	long len;
	unsigned long long val;
};

/* What the client tells the server first: the address it connected from. */
struct hello {
	uint16_t node, port;
};

static int server(int port, int ready_fd)
{
	unsigned char aframe[GUARD + sizeof(struct scifioctl_accept) + GUARD]
		__attribute__((aligned(8)));
	struct scifioctl_accept *acc;
	struct pollfd pfd;
	unsigned char *win;
	struct hello hello;
	int lfd, fd, fd2, g, r;
	struct req rq;
	long off;
	__u64 token;

	who = "server";
	checks = failures = 0;	/* a forked server counts its own */
	lfd = xopen();
	r = bind_u16(lfd, port, &g);
	check(r == port && g, "SCIF_BIND of a uint16_t port %d gives %d, guards intact", port, r);
	if (r != port)
		return 1;
	/* The backlog is the argument itself. */
	check(!ioctl(lfd, SCIF_LISTEN, 4), "SCIF_LISTEN, backlog 4 passed as the value");
	if (ready_fd >= 0) {
		if (write(ready_fd, "r", 1) != 1)
			die("ready");
		close(ready_fd);
	}

	pfd.fd = lfd;
	pfd.events = POLLIN;
	r = poll(&pfd, 1, 120000);
	check(r == 1 && (pfd.revents & POLLIN), "poll: the listener is readable when a"
	      " request waits (revents %#x)", pfd.revents);

	/* The new file first, then SCIF_ACCEPTREQ, then SCIF_ACCEPTREG. */
	fd = xopen();
	acc = guard_init(aframe, sizeof(*acc));
	acc->flags = SCIF_ACCEPT_SYNC;	/* peer and endpt: what the stack held */
	r = ioctl(lfd, SCIF_ACCEPTREQ, acc);
	check(!r && guards_ok(aframe, sizeof(*acc)) && acc->flags == SCIF_ACCEPT_SYNC,
	      "SCIF_ACCEPTREQ wrote within its 16 bytes, peer %u:%u", acc->peer.node,
	      acc->peer.port);
	if (r)
		return 1;
	token = acc->endpt;
	r = ioctl(fd, SCIF_ACCEPTREG, &acc->endpt);
	check(!r && guards_ok(aframe, sizeof(*acc)) && acc->endpt == token,
	      "SCIF_ACCEPTREG with the address of scifioctl_accept's endpt");
	if (r)
		return 1;
	fd2 = xopen();
	errno = 0;
	check(ioctl(fd2, SCIF_ACCEPTREG, &token) < 0 && (errno == EINVAL || errno == ENOENT),
	      "SCIF_ACCEPTREG of a token claimed already fails");
	close(fd2);

	xrecv(fd, &hello, sizeof(hello));
	check(hello.node == acc->peer.node && hello.port == acc->peer.port,
	      "SCIF_ACCEPTREQ's peer is the client's %u:%u", hello.node, hello.port);
	xsend(fd, &hello, sizeof(hello));

	win = xwindow();
	off = reg_call(fd, win, WIN_LEN, SRV_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE,
		       SCIF_MAP_FIXED, &g);
	check(off == SRV_OFF && g, "SCIF_REG of a fixed window at %#lx, out_offset only",
	      SRV_OFF);
	xsend(fd, &off, sizeof(off));

	for (;;) {
		xrecv(fd, &rq, sizeof(rq));
		r = 0;
		switch (rq.op) {
		case REQ_CHECK:
			r = rq.off >= SRV_OFF && rq.len > 0 && rq.off - SRV_OFF + rq.len <= WIN_LEN &&
			    matches(win + rq.off - SRV_OFF, rq.len, rq.off - SRV_OFF, rq.seed);
			check(r, "the window holds what the client wrote (%ld bytes at %#lx)",
			      rq.len, rq.off);
			break;
		case REQ_FILL:
			fill_at(win, WIN_LEN, 0, rq.seed);
			r = 1;
			break;
		case REQ_VALUE:
			r = rq.off >= SRV_OFF && rq.off - SRV_OFF + 8 <= WIN_LEN &&
			    *(volatile unsigned long long *)(win + rq.off - SRV_OFF) == rq.val;
			check(r, "the remote fence signal wrote %#llx at %#lx", rq.val, rq.off);
			break;
		case REQ_BYE:
			check(!unreg_call(fd, SRV_OFF, WIN_LEN, &g) && g,
			      "SCIF_UNREG of the server's window");
			close(fd);
			close(lfd);
			free(win);
			printf("%s: %d checks, %d failed\n", who, checks, failures);
			return failures ? 1 : 0;
		}
		xsend(fd, &r, sizeof(r));
	}
}

/* --- client ---------------------------------------------------------------------- */

static int ask(int fd, int op, unsigned int seed, long off, long len,
	       unsigned long long val)
{
	struct req rq = { op, seed, off, len, val };
	int r;

	xsend(fd, &rq, sizeof(rq));
	xrecv(fd, &r, sizeof(r));
	return r;
}

/* Binds as MPSS 3's libscif (int) and scire's (a zeroed __u64) do. */
static void bind_widths(void)
{
	unsigned char frame[GUARD + 8 + GUARD] __attribute__((aligned(8)));
	int fd = xopen(), r, g;
	__u64 *wide;
	int *pni;

	pni = guard_init(frame, sizeof(*pni));
	*pni = 0;
	r = ioctl(fd, SCIF_BIND, pni);
	check(!r && *pni >= SCIF_PORT_RSVD && *pni <= 65535 && guards_ok(frame, sizeof(*pni)),
	      "SCIF_BIND of a zeroed int (MPSS 3's libscif): port %d", *pni);
	close(fd);

	fd = xopen();
	wide = guard_init(frame, sizeof(*wide));
	*wide = 0;
	r = ioctl(fd, SCIF_BIND, wide);
	check(!r && *wide >= SCIF_PORT_RSVD && *wide <= 65535 && guards_ok(frame, sizeof(*wide)),
	      "SCIF_BIND of a zeroed __u64 (scire's libscif): port %llu",
	      (unsigned long long)*wide);
	close(fd);

	fd = xopen();
	errno = 0;
	check(ioctl(fd, SCIF_BIND, NULL) < 0 && errno == EFAULT, "SCIF_BIND of NULL is EFAULT");
	r = bind_u16(fd, 0, &g);
	check(r >= SCIF_PORT_RSVD && g, "... and the endpoint can still be bound (port %d)", r);
	errno = 0;
	r = bind_u16(fd, 0, &g);
	check(r < 0 && errno == EINVAL && g, "SCIF_BIND of a bound endpoint is EINVAL,"
	      " guards intact");
	close(fd);
}

static int client(uint16_t node, int port)
{
	unsigned char cframe[GUARD + sizeof(struct scifioctl_connect) + GUARD]
		__attribute__((aligned(8)));
	struct scifioctl_connect *conn;
	unsigned char *win, *vbuf;
	uint16_t ids[8], self, me;
	struct hello hello;
	struct pollfd pfd;
	int fd, fd2, r, g, n, i, mark, found, myport;
	long loff, soff, a, l;
	char c;

	/* Node ids, with room for 8, for 1, and none. */
	n = node_ids(8, ids, &self);
	found = 0;
	for (i = 0; i < n && i < 8; i++)
		found |= ids[i] == self;
	check(n >= 1 && found, "SCIF_GET_NODEIDS: %d node(s), self %u among them", n, self);
	r = node_ids(1, ids, &me);
	check(r == n && me == self, "SCIF_GET_NODEIDS with room for 1: len %d (all nodes)", r);
	r = node_ids(0, ids, &me);
	check(r == n && me == self, "SCIF_GET_NODEIDS with no room, nodes NULL: len %d", r);

	/* SCIF_BIND as MPSS 4's scif_bind(): any port, then a given one. */
	fd = xopen();
	r = bind_u16(fd, 0, &g);
	check(r >= SCIF_PORT_RSVD && r <= 65535 && g,
	      "SCIF_BIND of a uint16_t port 0 (any): port %d, both stack guards intact", r);
	close(fd);
	myport = port + 1;
	fd = xopen();
	r = bind_u16(fd, myport, &g);
	check(r == myport && g, "SCIF_BIND of a uint16_t port %d: port %d, both stack"
	      " guards intact", myport, r);
	if (r != myport)
		return 1;
	fd2 = xopen();
	errno = 0;
	r = bind_u16(fd2, myport, &g);
	check(r < 0 && errno == EINVAL && g, "SCIF_BIND of a port in use is EINVAL, the"
	      " uint16_t and its guards untouched");
	close(fd2);
	bind_widths();

	/* SCIF_CONNECT: self as the stack had it, peer set. */
	conn = guard_init(cframe, sizeof(*conn));
	for (i = 0; i < 600; i++) {
		conn->peer.node = node;
		conn->peer.port = port;
		r = ioctl(fd, SCIF_CONNECT, conn);
		if (r == 0 || errno != ECONNREFUSED)
			break;
		usleep(100000);	/* the server is not listening yet */
	}
	check(!r && conn->self.port == myport && conn->self.node == self &&
	      conn->peer.node == node && conn->peer.port == port &&
	      guards_ok(cframe, sizeof(*conn)),
	      "SCIF_CONNECT to %u:%d: self %u:%u, within its 8 bytes", node, port,
	      conn->self.node, conn->self.port);
	if (r)
		return 1;

	/* The stream, and poll. */
	r = msg_call(fd, SCIF_RECV, &c, 1, 0, &g);
	check(r == 0 && g, "SCIF_RECV, not blocking, of nothing: out_len 0, only out_len"
	      " written");
	pfd.fd = fd;
	pfd.events = POLLIN | POLLOUT;
	r = poll(&pfd, 1, 10000);
	check(r == 1 && (pfd.revents & POLLOUT) && !(pfd.revents & POLLIN),
	      "poll: writable, nothing to read (revents %#x)", pfd.revents);
	hello.node = self;
	hello.port = myport;
	r = msg_call(fd, SCIF_SEND, &hello, sizeof(hello), SCIF_SEND_BLOCK, &g);
	check(r == sizeof(hello) && g, "SCIF_SEND of %zu bytes: out_len %d, only out_len"
	      " written", sizeof(hello), r);
	pfd.events = POLLIN;
	r = poll(&pfd, 1, 30000);
	check(r == 1 && (pfd.revents & POLLIN), "poll: the answer is readable");
	memset(&hello, 0, sizeof(hello));
	r = msg_call(fd, SCIF_RECV, &hello, sizeof(hello), SCIF_RECV_BLOCK, &g);
	check(r == sizeof(hello) && g && hello.port == myport,
	      "SCIF_RECV of %zu bytes: out_len %d, only out_len written", sizeof(hello), r);
	xrecv(fd, &soff, sizeof(soff));
	check(soff == SRV_OFF, "the server's window is at %#lx", soff);

	/* Windows. */
	win = xwindow();
	errno = 0;
	r = reg_call(fd, win, WIN_LEN, 0, SCIF_PROT_READ, SCIF_MAP_KERNEL, &g) < 0;
	check(r && errno == EINVAL && g, "SCIF_REG with SCIF_MAP_KERNEL is EINVAL,"
	      " out_offset untouched");
	loff = reg_call(fd, win, WIN_LEN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0, &g);
	check(loff > 0 && !(loff & 4095) && g, "SCIF_REG at an automatic offset: out_offset"
	      " %#lx, nothing else written", loff);
	if (loff <= 0)
		return 1;

	/* writeto, readfrom, vwriteto, vreadfrom. */
	fill_at(win, WIN_LEN, 0, 2);
	a = 4096 + 99;
	l = 5 * 4096 + 1000;
	r = copy_call(fd, SCIF_WRITETO, loff + a, NULL, l, soff + a, SCIF_RMA_SYNC, &g);
	check(!r && g, "SCIF_WRITETO of %ld bytes, SYNC, its struct unchanged", l);
	check(ask(fd, REQ_CHECK, 2, soff + a, l, 0), "the server saw the writeto");

	check(ask(fd, REQ_FILL, 3, 0, 0, 0), "the server filled its window");
	memset(win, 0, WIN_LEN);
	a = 3 * 4096 + 5;
	l = 7 * 4096 + 3;
	r = copy_call(fd, SCIF_READFROM, loff + a, NULL, l, soff + a, SCIF_RMA_SYNC, &g);
	check(!r && g && matches(win + a, l, a, 3) && !win[a - 1] && !win[a + l],
	      "SCIF_READFROM of %ld bytes, SYNC, byte-exact, its struct unchanged", l);

	vbuf = malloc(VLEN + 2);
	if (!vbuf)
		die("malloc");
	memset(vbuf, 0, VLEN + 2);
	r = copy_call(fd, SCIF_VREADFROM, 0, vbuf + 1, VLEN, soff + 9 * 4096 + 11,
		      SCIF_RMA_SYNC, &g);
	check(!r && g && matches(vbuf + 1, VLEN, 9 * 4096 + 11, 3) && !vbuf[0] &&
	      !vbuf[VLEN + 1], "SCIF_VREADFROM of %d bytes into malloc'd memory", VLEN);
	fill_at(vbuf, VLEN, 20 * 4096, 4);
	r = copy_call(fd, SCIF_VWRITETO, 0, vbuf, VLEN, soff + 20 * 4096, SCIF_RMA_SYNC, &g);
	check(!r && g, "SCIF_VWRITETO of %d bytes from malloc'd memory", VLEN);
	check(ask(fd, REQ_CHECK, 4, soff + 20 * 4096, VLEN, 0), "the server saw the vwriteto");

	/* Fences: mark (an int written), wait (the mark as the value), signal. */
	fill_at(win, WIN_LEN, 0, 5);
	r = copy_call(fd, SCIF_WRITETO, loff, NULL, WIN_LEN, soff, 0, &g);
	check(!r && g, "SCIF_WRITETO of the whole window, not SYNC");
	mark = -1;
	r = mark_call(fd, SCIF_FENCE_INIT_SELF, &mark, &g);
	check(!r && g && mark != -1, "SCIF_FENCE_MARK (INIT_SELF) wrote the int mark %#x"
	      " and nothing else", mark);
	check(!ioctl(fd, SCIF_FENCE_WAIT, mark), "SCIF_FENCE_WAIT, the mark passed as the value");
	check(ask(fd, REQ_CHECK, 5, soff, WIN_LEN, 0), "the server saw the whole window");
	mark = -1;
	r = mark_call(fd, SCIF_FENCE_INIT_PEER, &mark, &g);
	check(!r && g && mark != -1, "SCIF_FENCE_MARK (INIT_PEER) wrote the int mark %#x", mark);
	check(!r && !ioctl(fd, SCIF_FENCE_WAIT, mark), "SCIF_FENCE_WAIT on the peer's mark");
	r = signal_call(fd, loff + 64, 0x0102030405060708ULL, soff + 128,
			0x8070605040302010ULL,
			SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE, &g);
	check(!r && g, "SCIF_FENCE_SIGNAL local and remote, its struct unchanged");
	for (i = 0; i < 5000 && *(volatile unsigned long long *)(win + 64) !=
	     0x0102030405060708ULL; i++)
		usleep(1000);
	check(*(volatile unsigned long long *)(win + 64) == 0x0102030405060708ULL,
	      "the local fence signal value arrived");
	r = mark_call(fd, SCIF_FENCE_INIT_SELF, &mark, &g);
	check(!r && !ioctl(fd, SCIF_FENCE_WAIT, mark), "a fence after the signal");
	check(ask(fd, REQ_VALUE, 0, soff + 128, 8, 0x8070605040302010ULL),
	      "the server saw the remote signal value");

	check(!unreg_call(fd, loff, WIN_LEN, &g) && g, "SCIF_UNREG of the client's window,"
	      " its struct unchanged");
	errno = 0;
	r = copy_call(fd, SCIF_WRITETO, loff, NULL, 4096, soff, SCIF_RMA_SYNC, &g);
	check(r < 0 && errno == ENXIO && g, "SCIF_WRITETO from the unregistered window is ENXIO");

	/* Goodbye: the server closes, the stream then says ECONNRESET. */
	{
		struct req rq = { .op = REQ_BYE };

		xsend(fd, &rq, sizeof(rq));
	}
	pfd.events = POLLIN;
	r = poll(&pfd, 1, 30000);
	check(r == 1 && (pfd.revents & POLLHUP), "poll: POLLHUP once the server closed"
	      " (revents %#x)", pfd.revents);
	errno = 0;
	r = msg_call(fd, SCIF_RECV, &c, 1, 0, &g);
	check(r < 0 && errno == ECONNRESET, "SCIF_RECV after the server closed is ECONNRESET");
	close(fd);
	free(vbuf);
	free(win);
	return failures ? 1 : 0;
}

/* The server forked, listening once it has written its ready byte. */
static pid_t start_server(int port)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(pfd[0]);
		_exit(server(port, pfd[1]));
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		errno = errno ? errno : EPIPE;
		die("the server did not start");
	}
	close(pfd[0]);
	return pid;
}

int main(int argc, char **argv)
{
	uint16_t ids[8], self;
	int rc, st;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/dev/scif", R_OK | W_OK)) {
		printf("/dev/scif: %s\n", strerror(errno));
		return 77;
	}
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]), -1);
	if (argc == 4 && !strcmp(argv[1], "client")) {
		rc = client(atoi(argv[2]), atoi(argv[3]));
		printf("%s: %d checks, %d failed\n", who, checks, failures);
		return rc;
	}
	if (argc != 2 || strcmp(argv[1], "loop")) {
		fprintf(stderr, "usage: %s loop | server PORT | client NODE PORT\n", argv[0]);
		return 2;
	}
	if (node_ids(8, ids, &self) < 0)
		die("SCIF_GET_NODEIDS");
	pid = start_server(2300);
	rc = client(self, 2300);
	printf("%s: %d checks, %d failed\n", who, checks, failures);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("not ok loop: the server failed (status %#x)\n", st);
		rc = 1;
	}
	return rc;
}
