// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_conn_ktest.ko: the SCIF kernel API's endpoints, checked from a
 * kernel module (selftests/103-scif-kernel.sh). Loading it runs the
 * checks on the node of the loading task's namespace and fails with -EIO
 * (after printing each failed check) if any fails:
 *
 *   - scif_get_node_ids() names this node;
 *   - bind rules: port 0 picks a port >= SCIF_PORT_RSVD, a second bind and
 *     a bind to a port in use fail with EINVAL, connect on a listener
 *     fails with EOPNOTSUPP;
 *   - accept without SCIF_ACCEPT_SYNC and no request: EAGAIN;
 *   - connect to this node's own listener from a kthread, accept with
 *     SCIF_ACCEPT_SYNC: both ends agree on who is who;
 *   - a byte-exact stream of 1 MiB each way (16 times the window), in
 *     pieces of odd sizes, blocking on both sides;
 *   - non-blocking recv with nothing there: 0; scif_poll() sees EPOLLOUT
 *     and, after a send, EPOLLIN;
 *   - a backlog of 1: the second connect is refused (ECONNREFUSED);
 *   - connect to a port nobody listens on: ECONNREFUSED;
 *   - the peer closes: recv returns what was sent, then ECONNRESET;
 *     send fails with ECONNRESET; poll reports EPOLLHUP; connecting that
 *     endpoint again fails with EINVAL.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/scif.h>

#define STREAM_LEN	(1024 * 1024)

static int failures, checks;

#define CHECK(cond, fmt, ...) do {						\
	checks++;								\
	if (!(cond)) {								\
		pr_err("scif_conn_ktest: FAIL line %d: " fmt "\n", __LINE__,	\
		       ##__VA_ARGS__);						\
		failures++;							\
	}									\
} while (0)

struct side {
	scif_epd_t epd;
	struct scif_port_id dst;
	int connect_ret;
	u8 *out, *in;
	int sent, got;
	struct completion done;
};

static u8 pattern(int i, int salt)
{
	return (u8)(i * 131 + salt * 17 + (i >> 9));
}

static int send_all(scif_epd_t epd, const u8 *buf, int len)
{
	int off = 0, chunk = 1, ret;

	while (off < len) {
		chunk = min(len - off, (chunk * 7 + 1) % 70001 + 1);
		ret = scif_send(epd, (void *)(buf + off), chunk, SCIF_SEND_BLOCK);
		if (ret != chunk)
			return ret < 0 ? ret : -EIO;
		off += chunk;
	}
	return off;
}

static int recv_all(scif_epd_t epd, u8 *buf, int len)
{
	int off = 0, chunk = 3, ret;

	while (off < len) {
		chunk = min(len - off, (chunk * 5 + 3) % 50021 + 1);
		ret = scif_recv(epd, buf + off, chunk, SCIF_RECV_BLOCK);
		if (ret != chunk)
			return ret < 0 ? ret : -EIO;
		off += chunk;
	}
	return off;
}

/* The connecting side: connect, then stream out while the other streams in. */
static int connector(void *arg)
{
	struct side *s = arg;

	s->connect_ret = scif_connect(s->epd, &s->dst);
	if (s->connect_ret >= 0 && s->out) {
		s->sent = send_all(s->epd, s->out, STREAM_LEN);
		s->got = recv_all(s->epd, s->in, STREAM_LEN);
	}
	complete(&s->done);
	return 0;
}

static void check_stream(const u8 *buf, int salt, const char *what)
{
	int i;

	for (i = 0; i < STREAM_LEN; i++) {
		if (buf[i] != pattern(i, salt)) {
			CHECK(0, "%s: byte %d is 0x%02x, expected 0x%02x", what, i,
			      buf[i], pattern(i, salt));
			return;
		}
	}
}

static void run(void)
{
	struct scif_port_id peer, dst;
	struct scif_pollepd pe;
	struct side c = {};
	scif_epd_t lep, nep = NULL, x, y;
	struct task_struct *t;
	u8 *out, *in, small[16];
	u16 nodes[8], self;
	int n, port, ret, i;

	n = scif_get_node_ids(nodes, ARRAY_SIZE(nodes), &self);
	CHECK(n >= 1, "scif_get_node_ids: %d", n);
	for (i = 0; i < n && i < ARRAY_SIZE(nodes) && nodes[i] != self; i++)
		;
	CHECK(i < n, "self node %u not among the %d node ids", self, n);

	lep = scif_open();
	CHECK(lep, "scif_open");
	if (!lep)
		return;
	port = scif_bind(lep, 0);
	CHECK(port >= SCIF_PORT_RSVD, "scif_bind(0): %d", port);
	ret = scif_bind(lep, 0);
	CHECK(ret == -EINVAL, "second scif_bind: %d", ret);
	x = scif_open();
	ret = x ? scif_bind(x, port) : -ENOMEM;
	CHECK(ret == -EINVAL, "scif_bind to a port in use: %d", ret);
	if (x)
		scif_close(x);
	ret = scif_listen(lep, 1);
	CHECK(!ret, "scif_listen: %d", ret);
	dst.node = self;
	dst.port = port;
	ret = scif_connect(lep, &dst);
	CHECK(ret == -EOPNOTSUPP, "scif_connect on a listener: %d", ret);
	ret = scif_accept(lep, &peer, &nep, 0);
	CHECK(ret == -EAGAIN, "scif_accept with nothing pending: %d", ret);

	out = vmalloc(STREAM_LEN);
	in = vmalloc(STREAM_LEN);
	c.out = vmalloc(STREAM_LEN);
	c.in = vmalloc(STREAM_LEN);
	if (!out || !in || !c.out || !c.in) {
		CHECK(0, "out of memory");
		goto out;
	}
	for (i = 0; i < STREAM_LEN; i++) {
		out[i] = pattern(i, 1);
		c.out[i] = pattern(i, 2);
	}

	c.epd = scif_open();
	c.dst = dst;
	init_completion(&c.done);
	t = kthread_run(connector, &c, "scif_ktest_conn");
	if (IS_ERR(t)) {
		CHECK(0, "kthread_run: %ld", PTR_ERR(t));
		goto out;
	}
	ret = scif_accept(lep, &peer, &nep, SCIF_ACCEPT_SYNC);
	CHECK(!ret, "scif_accept(SYNC): %d", ret);
	if (ret) {
		wait_for_completion(&c.done);
		goto out;
	}
	ret = recv_all(nep, in, STREAM_LEN);
	CHECK(ret == STREAM_LEN, "stream in: %d", ret);
	ret = send_all(nep, out, STREAM_LEN);
	CHECK(ret == STREAM_LEN, "stream out: %d", ret);
	wait_for_completion(&c.done);
	CHECK(c.connect_ret > 0, "scif_connect: %d", c.connect_ret);
	CHECK(peer.node == self && peer.port == c.connect_ret,
	      "accepted peer %u:%u, connector is %u:%d", peer.node, peer.port,
	      self, c.connect_ret);
	CHECK(c.sent == STREAM_LEN && c.got == STREAM_LEN, "connector sent %d, got %d",
	      c.sent, c.got);
	check_stream(in, 2, "accepted side received");
	check_stream(c.in, 1, "connecting side received");

	ret = scif_recv(nep, small, sizeof(small), 0);
	CHECK(ret == 0, "non-blocking recv with nothing there: %d", ret);
	pe.epd = nep;
	pe.events = EPOLLIN | EPOLLOUT;
	/*
	 * Writable once the peer's credit for the last bytes of the stream
	 * is back, which may still be on its way: wait for it, and nothing
	 * else may be ready meanwhile.
	 */
	ret = scif_poll(&pe, 1, 5000);
	CHECK(ret == 1 && pe.revents == EPOLLOUT, "poll of an idle connection: %d, 0x%x",
	      ret, pe.revents);
	ret = scif_send(c.epd, "scif", 4, SCIF_SEND_BLOCK);
	CHECK(ret == 4, "send 4: %d", ret);
	pe.events = EPOLLIN;
	ret = scif_poll(&pe, 1, 5000);
	CHECK(ret == 1 && (pe.revents & EPOLLIN), "poll for the 4 bytes: %d, 0x%x", ret,
	      pe.revents);

	/* A backlog of 1: one request waits, the next is refused. */
	x = scif_open();
	y = scif_open();
	if (x && y) {
		struct side s2 = { .epd = x, .dst = dst };

		init_completion(&s2.done);
		s2.out = NULL;
		t = kthread_run(connector, &s2, "scif_ktest_bl");
		/* Wait until its request is pending on the listener. */
		pe.epd = lep;
		pe.events = EPOLLIN;
		ret = scif_poll(&pe, 1, 10000);
		CHECK(ret == 1, "poll of the listener for a request: %d", ret);
		ret = scif_connect(y, &dst);
		CHECK(ret == -ECONNREFUSED, "connect beyond the backlog: %d", ret);
		ret = scif_accept(lep, &peer, &x, SCIF_ACCEPT_SYNC);
		CHECK(!ret, "accept of the backlogged request: %d", ret);
		if (!IS_ERR(t))
			wait_for_completion(&s2.done);
		CHECK(s2.connect_ret > 0, "backlogged connect: %d", s2.connect_ret);
		if (!ret)
			scif_close(x);
		scif_close(s2.epd);
		scif_close(y);
	}

	/* Nobody on the port. */
	x = scif_open();
	if (x) {
		struct scif_port_id none = { .node = self, .port = port + 1 };

		ret = scif_connect(x, &none);
		CHECK(ret == -ECONNREFUSED, "connect to a port nobody listens on: %d", ret);
		scif_close(x);
	}

	/* The peer closes: data first, then ECONNRESET. */
	ret = scif_send(c.epd, "bye", 3, SCIF_SEND_BLOCK);
	CHECK(ret == 3, "send 3: %d", ret);
	scif_close(c.epd);
	c.epd = NULL;
	pe.epd = nep;
	pe.events = EPOLLIN;
	for (i = 0; i < 100; i++) {
		ret = scif_poll(&pe, 1, 100);
		if (ret == 1 && (pe.revents & EPOLLHUP))
			break;
	}
	CHECK(pe.revents & EPOLLHUP, "no EPOLLHUP after the peer closed: 0x%x", pe.revents);
	ret = scif_recv(nep, small, sizeof(small), 0);
	CHECK(ret == 7 && !memcmp(small, "scifbye", 7), "recv after close: %d", ret);
	ret = scif_recv(nep, small, sizeof(small), SCIF_RECV_BLOCK);
	CHECK(ret == -ECONNRESET, "recv once drained: %d", ret);
	ret = scif_send(nep, small, 1, 0);
	CHECK(ret == -ECONNRESET, "send to a closed peer: %d", ret);
	/* An endpoint is connected once (as upstream SCIF). */
	ret = scif_connect(nep, &c.dst);
	CHECK(ret == -EINVAL, "connect on an endpoint whose peer closed: %d", ret);
out:
	if (nep)
		scif_close(nep);
	if (c.epd)
		scif_close(c.epd);
	scif_close(lep);
	vfree(out);
	vfree(in);
	vfree(c.out);
	vfree(c.in);
}

static int __init scif_conn_ktest_init(void)
{
	run();
	if (failures) {
		pr_err("scif_conn_ktest: %d check(s) failed\n", failures);
		return -EIO;
	}
	pr_info("scif_conn_ktest: PASS %d checks\n", checks);
	return 0;
}

static void __exit scif_conn_ktest_exit(void)
{
}

module_init(scif_conn_ktest_init);
module_exit(scif_conn_ktest_exit);
MODULE_AUTHOR("The scire authors");
MODULE_DESCRIPTION("SCIF kernel API endpoint checks");
MODULE_LICENSE("Dual BSD/GPL");
