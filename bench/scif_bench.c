// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_bench: what the SCIF API costs through libscif and /dev/scif, in
 * the terms perftest uses for the verbs underneath, so that the two can
 * be read side by side (bench/run-guest.sh runs both on the same path).
 *
 *   scif_bench server PORT               serve one client on PORT
 *   scif_bench client NODE PORT [OPT]    connect to NODE:PORT and measure
 *   scif_bench loop [OPT]                both, forked, on this node
 *
 * Options (client and loop):
 *   -s SIZES   RMA sizes, comma separated, K and M suffixes allowed
 *              (default 4K,64K,1M,16M)
 *   -t SECS    timed window per RMA kind and size (default 1, fractions ok)
 *   -N OPS     instead of a timed window, exactly OPS RMAs per kind and
 *              size (make bench-cost counts the instructions of a run
 *              with OPS and one with 2 x OPS: the difference is OPS RMAs)
 *   -k KINDS   writeto, readfrom or both (default both)
 *   -n ITERS   send/recv round trips (default 1000)
 *   -r MIBS    register/unregister buffer sizes in MiB, comma separated
 *              (default 1,16,64; 0 for none)
 *   -p PORT    loop only: the server's port (default 2300)
 *
 * The client prints one line per figure, "TOOL SIZE VALUE DETAILS":
 *
 *   scif_writeto_bw SIZE MIB_S    scif_writeto() from the client's window
 *   scif_readfrom_bw SIZE MIB_S   scif_readfrom() into it
 *        Each side registers one window of the largest SIZE once. Ops
 *        use its start as perftest uses its buffer: ib_write_bw and
 *        ib_read_bw move their addresses in SIZE steps through a page
 *        (their cycle buffer) only for messages of half a page or less,
 *        and otherwise post every WR from and to the same address, so
 *        a 64 KiB cell of theirs touches 64 KiB on each side. Walking a
 *        16 MiB window instead made SCIF's 64 KiB cells on one node
 *        0.72-0.88x of perftest's, against 0.81-1.04x at the start (one
 *        boot, bench/profiles.md): that measured the host's caches.
 *        Ops go back to back without SCIF_RMA_SYNC (the
 *        call returns once its RDMA WRs are posted, as ib_write_bw posts
 *        without waiting), for SECS seconds; then one scif_fence_mark()
 *        + scif_fence_wait() waits for the last of them. What is in
 *        flight is bounded as perftest's tx depth bounds it: a fence mark
 *        after every GROUP_BYTES (or every op, when larger), and before
 *        it a fence wait for the previous mark, so that at most two such
 *        groups are outstanding (unbounded, the send queue holds minutes
 *        of work at 1 MiB over a veth, and a fence waits 30 s at most).
 *        MiB/s (2^20 bytes/s, perftest's "MB/sec") = ops x SIZE / (first
 *        call to the last fence's end): perftest's BW average. Below
 *        1 MiB the clock is read every CLOCK_EVERY ops, not every op:
 *        perftest reads the TSC, and clock_gettime() here can be a
 *        system call (under TCG the guest's clocksource is the HPET,
 *        which the vDSO cannot read).
 *   scif_send_lat 8 USEC          half the median round trip of an 8-byte
 *        scif_send() answered by an 8-byte scif_send() of the peer
 *        (blocking both ways), as ib_send_lat's t_typical is half of its
 *        median ping-pong; DETAILS has the median round trip itself.
 *        Each round trip is timed as perftest times its own, with the
 *        TSC (x86; elsewhere clock_gettime()): a clock_gettime() of the
 *        HPET inside every timed round trip would add a system call and
 *        an emulated device read to what is measured. The TSC's rate is
 *        taken from clock_gettime() across the whole loop.
 *   scif_bench_setup 0 MS          what the rest cost: connect, the
 *        windows, the goodbye and close, in milliseconds (DETAILS)
 *   scif_bench_server 0 MS         (the server prints it) what its
 *        unregister and close cost after the goodbye
 *   scif_register BYTES US_PER_MIB  scif_register() + scif_unregister()
 *        of a buffer of BYTES (the -r sizes; pages touched beforehand, so
 *        no page fault is counted), median of the repetitions, per MiB.
 *
 * Exit status 0 if every call succeeded; 1 otherwise (with what failed on
 * stderr); 2 on usage errors; 77 if SCIF is not there.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SCIF_BENCH_TSC
#endif

#include <scif.h>
#include <scif_prog.h>

#define SRV_OFF		0x40000000	/* the server's window, fixed */
#define MSG_BYE		UINT64_MAX	/* client -> server: the end */
#define MAX_LIST	16
#define LAT_WARMUP	10
#define REG_MIN_REPS	3
#define REG_MIN_SECS	0.5
#define GROUP_BYTES	(4 << 20)	/* RMA bytes between two fence marks */
#define CLOCK_EVERY	16		/* RMAs below 1 MiB between two clock reads */

static const char *who = "client";

static void die(const char *what)
{
	fprintf(stderr, "scif_bench %s: %s: %s\n", who, what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A cheap counter for short intervals: the TSC, or nanoseconds. */
#ifdef SCIF_BENCH_TSC
static uint64_t ticks(void)
{
	return __rdtsc();
}
#else
static uint64_t ticks(void)
{
	return (uint64_t)(now() * 1e9);
}
#endif

/* A page-aligned buffer of len bytes, every page touched. */
static void *xbuffer(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		die("posix_memalign");
	memset(p, 0x5a, len);
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --- server ------------------------------------------------------------------ */

/*
 * Accept one client; register a window of the length it asks for; then
 * echo every 8-byte message until MSG_BYE, echoed once the window is gone.
 */
static int server(int port, int ready_fd)
{
	struct scif_port_id peer;
	double t0, t1, t2;
	scif_epd_t lep, epd;
	uint64_t len, msg;
	void *win;
	off_t off;

	who = "server";
	lep = xlisten(port, 1, ready_fd);
	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC))
		die("scif_accept");
	xrecv(epd, &len, sizeof(len));
	win = xbuffer(len);
	off = scif_register(epd, win, len, SRV_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    SCIF_MAP_FIXED);
	if (off == SCIF_REGISTER_FAILED)
		die("scif_register of the window");
	xsend(epd, &off, sizeof(off));
	for (;;) {
		xrecv(epd, &msg, sizeof(msg));
		if (msg == MSG_BYE)
			break;
		xsend(epd, &msg, sizeof(msg));
	}
	/*
	 * The window goes before the goodbye's echo: once the client has
	 * the echo it closes, and a window of a connection already reset
	 * cannot be unregistered (ECONNRESET, as upstream SCIF answers).
	 */
	t0 = now();
	if (scif_unregister(epd, off, len))
		die("scif_unregister of the window");
	t1 = now();
	xsend(epd, &msg, sizeof(msg));
	scif_close(epd);
	t2 = now();
	scif_close(lep);
	free(win);
	printf("scif_bench_server 0 %.1f unregister_ms=%.1f close_ms=%.1f close_listener_ms=%.1f\n",
	       (now() - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) * 1e3, (now() - t2) * 1e3);
	return 0;
}

/* --- client ------------------------------------------------------------------ */

struct opts {
	size_t sizes[MAX_LIST];
	int nsizes;
	double secs;
	long ops;
	int kinds;		/* bit 0: writeto, bit 1: readfrom */
	int lat_iters;
	size_t reg_mib[MAX_LIST];
	int nreg;
};

static void lat(scif_epd_t epd, int iters)
{
	double *rtt = calloc(iters, sizeof(*rtt));
	uint64_t msg, back, c, c0, c1;
	double t, t0, us_per_tick;
	int i;

	if (!rtt)
		die("calloc");
	t0 = now();
	c0 = ticks();
	for (i = -LAT_WARMUP; i < iters; i++) {
		msg = (uint64_t)(i + LAT_WARMUP);
		c = ticks();
		xsend(epd, &msg, sizeof(msg));
		xrecv(epd, &back, sizeof(back));
		if (i >= 0)
			rtt[i] = (double)(ticks() - c);
		if (back != msg) {
			errno = EPROTO;
			die("the echo differs from the message");
		}
	}
	c1 = ticks();
	t = now() - t0;
	if (c1 <= c0) {
		errno = ERANGE;
		die("the cycle counter did not advance across the round trips");
	}
	us_per_tick = t * 1e6 / (double)(c1 - c0);
	for (i = 0; i < iters; i++)
		rtt[i] *= us_per_tick;
	t = median(rtt, iters);
	printf("scif_send_lat 8 %.3f rtt_median=%.3f rtt_min=%.3f rtt_max=%.3f iters=%d\n",
	       t / 2, t, rtt[0], rtt[iters - 1], iters);
	free(rtt);
}

/*
 * RMAs of size bytes for secs seconds, or exactly nops of them if nops is
 * not 0, then one fence: MiB/s.
 */
static void rma_bw(scif_epd_t epd, off_t loff, off_t roff, size_t win_len, size_t size,
		   double secs, long nops, int to_peer)
{
	const char *name = to_peer ? "scif_writeto_bw" : "scif_readfrom_bw";
	/* perftest's cycle buffer is a page. */
	size_t slots = size * 2 <= 4096 ? (win_len < 4096 ? win_len : 4096) / size : 1;
	size_t at;
	long group = size >= GROUP_BYTES ? 1 : GROUP_BYTES / size;
	long clock_every = size >= (1 << 20) ? 1 : CLOCK_EVERY;
	double t0, t_post, t_end;
	int mark, prev = 0, marked = 0, ret;
	long ops = 0;

	t0 = now();
	for (;;) {
		at = (ops % slots) * size;
		if (to_peer)
			ret = scif_writeto(epd, loff + at, size, roff + at, 0);
		else
			ret = scif_readfrom(epd, loff + at, size, roff + at, 0);
		if (ret)
			die(to_peer ? "scif_writeto" : "scif_readfrom");
		ops++;
		if (ops % group == 0) {
			/* The group before this one done: two in flight at most. */
			if (marked && scif_fence_wait(epd, prev))
				die("scif_fence_wait");
			if (scif_fence_mark(epd, SCIF_FENCE_INIT_SELF, &prev))
				die("scif_fence_mark");
			marked = 1;
		}
		if (nops) {
			if (ops < nops)
				continue;
			t_post = now();
			break;
		}
		if (ops % clock_every)
			continue;
		t_post = now();
		if (t_post - t0 >= secs)
			break;
	}
	if (scif_fence_mark(epd, SCIF_FENCE_INIT_SELF, &mark))
		die("scif_fence_mark");
	if (scif_fence_wait(epd, mark))
		die("scif_fence_wait");
	t_end = now();
	printf("%s %zu %.6f ops=%ld secs=%.3f drain_ms=%.3f no_sync_fence_every=%ld\n", name,
	       size, ops * (double)size / (t_end - t0) / 1048576, ops, t_end - t0,
	       (t_end - t_post) * 1e3, group);
}

static void reg_cost(scif_epd_t epd, size_t mib)
{
	size_t len = mib << 20;
	double v[64], t, t0;
	void *buf = xbuffer(len);
	int n = 0;
	off_t off;

	t0 = now();
	while (n < (int)(sizeof(v) / sizeof(v[0])) &&
	       (n < REG_MIN_REPS || now() - t0 < REG_MIN_SECS)) {
		t = now();
		off = scif_register(epd, buf, len, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
		if (off == SCIF_REGISTER_FAILED)
			die("scif_register");
		if (scif_unregister(epd, off, len))
			die("scif_unregister");
		v[n++] = (now() - t) * 1e6;
	}
	t = median(v, n);
	printf("scif_register %zu %.3f us_per_reg_unreg=%.1f reps=%d\n", len, t / mib, t, n);
	free(buf);
}

static int client(unsigned short node, unsigned short port, const struct opts *o)
{
	struct scif_port_id dst = { .node = node, .port = port };
	uint64_t win_len = 0, bye = MSG_BYE;
	double t0 = now(), t_conn, t_win, t_meas, t_bye, t_unreg;
	off_t loff, roff;
	scif_epd_t epd;
	void *win;
	int i, ret;

	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > win_len)
			win_len = o->sizes[i];
	if (!win_len)
		win_len = 4096;
	epd = scif_open();
	if (epd < 0)
		die("scif_open");
	for (i = 0; i < 100; i++) {
		ret = scif_connect(epd, &dst);
		if (ret >= 0 || errno != ECONNREFUSED)
			break;
		usleep(100000);	/* the server is not listening yet */
	}
	if (ret < 0)
		die("scif_connect");
	t_conn = now();
	xsend(epd, &win_len, sizeof(win_len));
	win = xbuffer(win_len);
	loff = scif_register(epd, win, win_len, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (loff == SCIF_REGISTER_FAILED)
		die("scif_register of the window");
	xrecv(epd, &roff, sizeof(roff));
	t_win = now();

	if (o->lat_iters > 0)
		lat(epd, o->lat_iters);
	for (i = 0; i < o->nsizes; i++) {
		if (o->kinds & 1)
			rma_bw(epd, loff, roff, win_len, o->sizes[i], o->secs, o->ops, 1);
		if (o->kinds & 2)
			rma_bw(epd, loff, roff, win_len, o->sizes[i], o->secs, o->ops, 0);
	}
	for (i = 0; i < o->nreg; i++)
		reg_cost(epd, o->reg_mib[i]);

	/* Our window first: once the server has the goodbye, it closes. */
	t_meas = now();
	if (scif_unregister(epd, loff, win_len))
		die("scif_unregister of the window");
	t_unreg = now();
	xsend(epd, &bye, sizeof(bye));
	xrecv(epd, &bye, sizeof(bye));
	t_bye = now();
	scif_close(epd);
	free(win);
	printf("scif_bench_setup 0 %.1f connect_ms=%.1f windows_ms=%.1f bye_ms=%.1f unregister_ms=%.1f close_ms=%.1f\n",
	       (t_win - t0 + now() - t_meas) * 1e3, (t_conn - t0) * 1e3, (t_win - t_conn) * 1e3,
	       (t_bye - t_unreg) * 1e3, (t_unreg - t_meas) * 1e3, (now() - t_bye) * 1e3);
	return 0;
}

/* --- arguments --------------------------------------------------------------- */

static int parse_list(const char *arg, size_t *v, int max, size_t unit, int *n)
{
	char *s = strdup(arg), *tok, *save, *end;
	unsigned long long x;

	if (!s)
		return -1;
	*n = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		x = strtoull(tok, &end, 0);
		if (*end == 'K' || *end == 'k')
			x <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			x <<= 20, end++;
		if (errno || *end || *n == max)
			goto bad;
		if (x)
			v[(*n)++] = x * unit;
	}
	free(s);
	return 0;
bad:
	free(s);
	return -1;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s server PORT\n"
		"       %s client NODE PORT [-s SIZES] [-t SECS | -N OPS] [-k KINDS] [-n ITERS] [-r MIBS]\n"
		"       %s loop [-p PORT] [-s SIZES] [-t SECS | -N OPS] [-k KINDS] [-n ITERS] [-r MIBS]\n",
		argv0, argv0, argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .secs = 1, .kinds = 3, .lat_iters = 1000 };
	unsigned short port = 2300, node = 0;
	const char *mode;
	int rc, c, i;
	uint16_t self;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage(argv[0]);
	mode = argv[1];
	if (!strcmp(mode, "server")) {
		if (argc != 3)
			usage(argv[0]);
		return server(atoi(argv[2]), -1);
	}
	parse_list("4K,64K,1M,16M", o.sizes, MAX_LIST, 1, &o.nsizes);
	parse_list("1,16,64", o.reg_mib, MAX_LIST, 1, &o.nreg);
	i = 2;
	if (!strcmp(mode, "client")) {
		if (argc < 4)
			usage(argv[0]);
		node = atoi(argv[2]);
		port = atoi(argv[3]);
		i = 4;
	} else if (strcmp(mode, "loop")) {
		usage(argv[0]);
	}
	optind = i;
	while ((c = getopt(argc, argv, "s:t:N:k:n:r:p:")) != -1) {
		switch (c) {
		case 's':
			if (parse_list(optarg, o.sizes, MAX_LIST, 1, &o.nsizes))
				usage(argv[0]);
			break;
		case 't':
			o.secs = atof(optarg);
			break;
		case 'N':
			o.ops = atol(optarg);
			if (o.ops <= 0)
				usage(argv[0]);
			break;
		case 'k':
			if (!strcmp(optarg, "writeto"))
				o.kinds = 1;
			else if (!strcmp(optarg, "readfrom"))
				o.kinds = 2;
			else if (!strcmp(optarg, "both"))
				o.kinds = 3;
			else
				usage(argv[0]);
			break;
		case 'n':
			o.lat_iters = atoi(optarg);
			break;
		case 'r':
			if (parse_list(optarg, o.reg_mib, MAX_LIST, 1, &o.nreg))
				usage(argv[0]);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || o.secs <= 0)
		usage(argv[0]);
	if (!strcmp(mode, "client"))
		return client(node, port, &o);

	if (scif_get_nodeIDs(NULL, 0, &self) < 0) {
		perror("scif_get_nodeIDs");
		return errno == ENOENT ? 77 : 1;
	}
	pid = start_server(server, port);
	rc = client(self, port, &o);
	return reap_server(pid) ? 1 : rc;
}
