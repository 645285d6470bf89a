// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scif_mmap: scif_mmap() of a peer's windows when the peer endpoint is in
 * this kernel, and fences read through such a mapping (issue 53, points 4
 * and 5; selftests/106-scif-mmap.sh).
 *
 *   scif_mmap server PORT        accept one connection on PORT, serve it
 *   scif_mmap client NODE PORT   connect to NODE:PORT and run the checks
 *   scif_mmap loop               both, forked, on this node (loopback); the
 *                                client's endpoint is first refused at
 *                                another port and then connects again
 *
 * The server registers, at fixed offsets: two 2-page windows back to back
 * (W1 at W1_OFF, W2 right after it), a read-only page (RO_OFF), a page
 * that gets unregistered while mapped (UN_OFF), a 4 MiB data window
 * (DATA_OFF) and a flag page (FLAG_OFF). The client registers a 4 MiB data
 * window and a flag page at the same offsets. Then, in steps that the two
 * sides agree on with one-byte syncs over the stream:
 *
 *   1. the client maps all of W1 and W2 with one scif_mmap() and sees the
 *      server's bytes; it writes through the mapping and the server sees
 *      them in its own memory; the server writes and the client sees them
 *      at once; a mapping of one page of each window too;
 *   2. refusals: a range past W2 or running into a hole (ENXIO), PROT_WRITE
 *      of the read-only window and mprotect() to it (EACCES), PROT_EXEC
 *      (EACCES, or EPERM where /dev is noexec), MAP_PRIVATE (EINVAL);
 *      PROT_READ of the read-only window works;
 *   3. fork(): the child does not inherit the mapping (SIGSEGV at its
 *      address, as with upstream's VM_DONTCOPY) but can map the window
 *      itself through the inherited descriptor; the parent's mapping still
 *      works;
 *   4. unregister while mapped: scif_unregister() succeeds at once, RMA
 *      into the window is ENXIO, its offset stays taken (EADDRINUSE) while
 *      the page stays mapped and coherent both ways; after munmap() the
 *      offset is free again (the window was freed);
 *   5. fences (point 5), each round with a fresh pattern over 4 MiB:
 *      a. client writeto (not SYNC) + fence_signal INIT_SELF with
 *         SIGNAL_LOCAL and SIGNAL_REMOTE: the client polls its own flag,
 *         then the server's flag through its mapping of the server's flag
 *         page, and after each reads the data through its mapping of the
 *         server's data window;
 *      b. client readfrom (not SYNC) + fence_signal INIT_SELF|SIGNAL_LOCAL:
 *         the server polls the client's flag page through its mapping of
 *         it, then reads the client's data window through its mapping;
 *      c. client readfrom (not SYNC), then the server marks the client's
 *         RMAs (fence_mark INIT_PEER), waits for the mark and reads the
 *         client's data through its mapping;
 *      d. client writeto (not SYNC), then the server asks for a signal of
 *         the client's RMAs (fence_signal INIT_PEER|SIGNAL_LOCAL): the
 *         server polls its own flag, the client the same flag through its
 *         mapping, and both read the data at once;
 *   6. close orders: the client maps W1; the server writes into it and
 *      closes its endpoint while the mapping stays; the client sees the
 *      close (ECONNRESET), still reads the server's bytes through the
 *      mapping and writes into it; it closes its own endpoint before
 *      munmap() (the mapping holds the file) and reads again, then unmaps.
 *      Every other mapping is unmapped before its endpoint is closed.
 *
 * Output: one line per check, "ok" or "not ok"; exit status 0 when all
 * pass, 1 otherwise.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <scif.h>
#include "scif_check.h"
#include <scif_prog.h>

#define PG		4096UL
#define W1_OFF		0x100000L	/* 2 pages; W2 follows */
#define W2_OFF		(W1_OFF + 2 * PG)
#define RO_OFF		0x200000L
#define UN_OFF		0x300000L
#define DATA_OFF	0x1000000L
#define DATA_LEN	(4UL << 20)
#define FLAG_OFF	0x2000000L
#define ROUNDS		4
#define SPIN_SECS	20.0

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Word i of a pattern with @seed. */
static uint64_t pat(size_t i, unsigned int seed)
{
	return ((uint64_t)seed << 40) ^ (i * 0x9e3779b97f4a7c15ULL) ^ i;
}

static void fill(void *p, size_t len, unsigned int seed)
{
	uint64_t *w = p;

	for (size_t i = 0; i < len / 8; i++)
		w[i] = pat(i, seed);
}

/* 0, or 1 + the index of the first word that differs */
static size_t mismatch(const void *p, size_t len, unsigned int seed)
{
	const volatile uint64_t *w = p;

	for (size_t i = 0; i < len / 8; i++)
		if (w[i] != pat(i, seed))
			return i + 1;
	return 0;
}

static void *xalloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap anonymous");
	return p;
}

static void xregister(scif_epd_t epd, void *p, size_t len, long off, int prot)
{
	off_t r = scif_register(epd, p, len, off, prot, SCIF_MAP_FIXED);

	check(r == off, "register %zu bytes at %#lx", len, off);
	if (r != off)
		exit(1);
}

static void *xmap(scif_epd_t epd, size_t len, int prot, long off)
{
	void *p = scif_mmap(NULL, len, prot, 0, epd, off);

	check(p != SCIF_MMAP_FAILED, "scif_mmap %zu bytes at %#lx", len, off);
	if (p == SCIF_MMAP_FAILED)
		exit(1);
	return p;
}

/* Both sides call it with the same @step: neither goes on before both are there. */
static void sync_step(scif_epd_t epd, char step)
{
	char c;

	xsend(epd, &step, 1);
	xrecv(epd, &c, 1);
	if (c != step) {
		errno = EPROTO;
		die("out of step");
	}
}

/* Wait until the u64 at @p is @val; 0 if it did not come within SPIN_SECS. */
static int spin_for(const void *p, uint64_t val)
{
	double end = now() + SPIN_SECS;

	while (__atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE) != val)
		if (now() > end)
			return 0;
	return 1;
}

static int map_fails(scif_epd_t epd, size_t len, int prot, int flags, long off, int err,
		     int err2)
{
	void *p;

	errno = 0;
	p = mmap(NULL, len, prot, flags, epd, off);
	if (p != MAP_FAILED) {
		munmap(p, len);
		errno = 0;
		return 0;
	}
	return errno == err || errno == err2;
}

/* --- server ------------------------------------------------------------------ */

static int server(int port, int ready_fd)
{
	unsigned char *w, *ro, *un, *data, *flag, *cdata, *cflag;
	struct scif_port_id peer;
	scif_epd_t lep, epd;
	uint64_t mark_val;
	double end;
	off_t r;
	int mark;

	who = "server";
	lep = xlisten(port, 1, ready_fd);
	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC))
		die("scif_accept");
	scif_close(lep);

	w = xalloc(4 * PG);
	ro = xalloc(PG);
	un = xalloc(PG);
	data = xalloc(DATA_LEN);
	flag = xalloc(PG);
	fill(w, 4 * PG, 1);
	fill(ro, PG, 2);
	memset(un, 0x5a, PG);
	xregister(epd, w, 2 * PG, W1_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE);
	xregister(epd, w + 2 * PG, 2 * PG, W2_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE);
	xregister(epd, ro, PG, RO_OFF, SCIF_PROT_READ);
	xregister(epd, un, PG, UN_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE);
	xregister(epd, data, DATA_LEN, DATA_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE);
	xregister(epd, flag, PG, FLAG_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE);
	sync_step(epd, 'R');

	/* 1: the client reads, writes; we check, write; it checks. */
	sync_step(epd, '1');
	check(!mismatch(w, 4 * PG, 3), "the client's writes through its mapping are in our memory");
	fill(w, 4 * PG, 4);
	sync_step(epd, 'a');
	sync_step(epd, 'b');

	/* 3: fork on the client's side. */
	sync_step(epd, '3');

	/* 4: unregister while the client maps the page. */
	sync_step(epd, '4');
	check(!scif_unregister(epd, UN_OFF, PG), "unregister of a mapped window succeeds");
	errno = 0;
	r = scif_register(epd, un, PG, UN_OFF, SCIF_PROT_READ, SCIF_MAP_FIXED);
	check(r == SCIF_REGISTER_FAILED && errno == EADDRINUSE,
	      "its offset stays taken while mapped (EADDRINUSE)");
	memset(un, 0x6b, PG);
	sync_step(epd, 'u');
	sync_step(epd, 'v');	/* the client wrote 0x7c, then unmapped */
	check(un[0] == 0x7c && un[PG - 1] == 0x7c,
	      "the client's write through the unregistered window's mapping is in our memory");
	end = now() + 10;
	do {
		r = scif_register(epd, un, PG, UN_OFF, SCIF_PROT_READ, SCIF_MAP_FIXED);
		if (r == UN_OFF)
			break;
		usleep(10000);
	} while (errno == EADDRINUSE && now() < end);
	check(r == UN_OFF, "after munmap the offset is free again (the window was freed)");
	sync_step(epd, 'w');

	/* 5: fences. The client's windows through our mappings. */
	cdata = xmap(epd, DATA_LEN, PROT_READ, DATA_OFF);
	cflag = xmap(epd, PG, PROT_READ, FLAG_OFF);
	for (unsigned int k = 1; k <= ROUNDS; k++) {
		/* a: the client polls our flag through its mapping. */
		sync_step(epd, 'A');
		/* b: the client reads our data, signals its local flag. */
		fill(data, DATA_LEN, 100 + k);
		sync_step(epd, 'B');
		check(spin_for(cflag, 200 + k), "round %u: local signal seen through our mapping", k);
		check(!mismatch(cdata, DATA_LEN, 100 + k),
		      "round %u: the client's readfrom data is in our mapping when its signal is", k);
		/* c: mark and wait for the client's RMAs. */
		fill(data, DATA_LEN, 300 + k);
		sync_step(epd, 'C');
		sync_step(epd, 'c');	/* its readfrom is posted */
		/* Bit 31 of a mark: the peer's RMAs (SCIF_REMOTE_FENCE in the kernel). */
		check(!scif_fence_mark(epd, SCIF_FENCE_INIT_PEER, &mark) &&
		      ((unsigned int)mark & 0x80000000u), "round %u: fence_mark INIT_PEER", k);
		check(!scif_fence_wait(epd, mark), "round %u: fence_wait of the peer's mark", k);
		check(!mismatch(cdata, DATA_LEN, 300 + k),
		      "round %u: after the peer's mark, its readfrom data is in our mapping", k);
		sync_step(epd, 'e');	/* the client may refill its window */
		/* d: a signal of the client's RMAs into our flag. */
		sync_step(epd, 'D');	/* its writeto is posted */
		mark_val = 400 + k;
		check(!scif_fence_signal(epd, FLAG_OFF + 8, mark_val, 0, 0,
					 SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL),
		      "round %u: fence_signal INIT_PEER|SIGNAL_LOCAL", k);
		check(spin_for(flag + 8, mark_val), "round %u: the peer's signal arrives", k);
		check(!mismatch(data, DATA_LEN, 400 + k),
		      "round %u: the peer's writeto data is in our memory when its signal is", k);
		sync_step(epd, 'd');
	}
	check(!scif_munmap(cdata, DATA_LEN) && !scif_munmap(cflag, PG), "munmap");

	/* 6: we close first, while the client maps W1. */
	sync_step(epd, '6');
	memset(w, 0x33, 2 * PG);
	scif_close(epd);
	return failures ? 1 : 0;
}

/* --- client ------------------------------------------------------------------ */

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	siglongjmp(segv_jmp, 1);
}

/* Does reading @p fault? */
static int faults(const volatile unsigned char *p)
{
	struct sigaction sa = { .sa_handler = on_segv }, old;
	int ret;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(segv_jmp, 1)) {
		ret = 1;
	} else {
		(void)*p;
		ret = 0;
	}
	sigaction(SIGSEGV, &old, NULL);
	return ret;
}

static void client_fork(scif_epd_t epd, unsigned char *m)
{
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		unsigned char *c;
		int bad = 0;

		who = "child";
		check(faults(m), "fork: the child has no copy of the mapping");
		c = scif_mmap(NULL, 4 * PG, PROT_READ, 0, epd, W1_OFF);
		check(c != SCIF_MMAP_FAILED, "fork: the child maps the windows itself");
		if (c != SCIF_MMAP_FAILED) {
			check(!mismatch(c, 4 * PG, 4), "fork: the child reads the server's bytes");
			scif_munmap(c, 4 * PG);
		}
		bad = failures;
		_exit(bad ? 1 : 0);
	}
	check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "fork: the child's checks passed");
	check(!mismatch(m, 4 * PG, 4), "fork: the parent's mapping still works");
}

/*
 * The client. With refused_port, its endpoint first connects to that port,
 * where nobody listens, and must be refused (ECONNREFUSED); the same
 * endpoint then connects to PORT, and every mapping below must work on
 * that second connection as on a first (a failed attempt once left the
 * endpoint out of the kernel's table of local peers, and scif_mmap()
 * failed with ENODEV).
 */
static int client(int node, int port, int refused_port)
{
	unsigned char *m, *m1, *m2, *ro, *un, *data, *flag, *sdata, *sflag;
	struct scif_port_id dst = { .node = node, .port = port };
	unsigned char c;
	scif_epd_t epd;
	off_t r;

	epd = scif_open();
	if (epd < 0)
		die("scif_open");
	if (refused_port) {
		struct scif_port_id none = { .node = node, .port = refused_port };

		errno = 0;
		check(scif_connect(epd, &none) < 0 && errno == ECONNREFUSED,
		      "connect to port %d, where nobody listens, is refused (ECONNREFUSED)",
		      refused_port);
	}
	for (int i = 0; scif_connect(epd, &dst) < 0; i++) {
		/* The server (another namespace's program) may not listen yet. */
		if (errno != ECONNREFUSED || i == 100)
			die("scif_connect");
		usleep(100000);
	}
	data = xalloc(DATA_LEN);
	flag = xalloc(PG);
	xregister(epd, data, DATA_LEN, DATA_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE);
	xregister(epd, flag, PG, FLAG_OFF, SCIF_PROT_READ | SCIF_PROT_WRITE);
	sync_step(epd, 'R');

	/* 1: one mapping over two windows. */
	m = xmap(epd, 4 * PG, PROT_READ | PROT_WRITE, W1_OFF);
	check(!mismatch(m, 4 * PG, 1), "the mapping over two windows shows the server's bytes");
	fill(m, 4 * PG, 3);
	sync_step(epd, '1');
	sync_step(epd, 'a');	/* the server wrote seed 4 */
	check(!mismatch(m, 4 * PG, 4), "the server's writes are in our mapping at once");
	m1 = xmap(epd, 2 * PG, PROT_READ, W1_OFF + PG);
	check(!memcmp(m1, m + PG, 2 * PG), "a mapping of a page of each window");
	check(!scif_munmap(m1, 2 * PG), "munmap");
	sync_step(epd, 'b');

	/* 2: refusals. */
	check(map_fails(epd, PG, PROT_READ, MAP_SHARED, W2_OFF + 2 * PG, ENXIO, ENXIO),
	      "a range past the last window is ENXIO");
	check(map_fails(epd, 5 * PG, PROT_READ, MAP_SHARED, W1_OFF, ENXIO, ENXIO),
	      "a range running into a hole is ENXIO");
	check(map_fails(epd, PG, PROT_READ, MAP_SHARED, 0x7000, ENXIO, ENXIO),
	      "a range in no window is ENXIO");
	check(map_fails(epd, PG, PROT_READ | PROT_WRITE, MAP_SHARED, RO_OFF, EACCES, EACCES),
	      "PROT_WRITE of a read-only window is EACCES");
	check(map_fails(epd, PG, PROT_READ | PROT_EXEC, MAP_SHARED, W1_OFF, EACCES, EPERM),
	      "PROT_EXEC is refused");
	check(map_fails(epd, PG, PROT_READ, MAP_PRIVATE, W1_OFF, EINVAL, EINVAL),
	      "MAP_PRIVATE is EINVAL");
	ro = xmap(epd, PG, PROT_READ, RO_OFF);
	check(!mismatch(ro, PG, 2), "PROT_READ of the read-only window shows its bytes");
	errno = 0;
	check(mprotect(ro, PG, PROT_READ | PROT_WRITE) && errno == EACCES,
	      "mprotect() cannot make it writable (EACCES)");
	check(!scif_munmap(ro, PG), "munmap");

	/* 3: fork. */
	sync_step(epd, '3');
	client_fork(epd, m);
	check(!scif_munmap(m, 4 * PG), "munmap");

	/* 4: unregister while mapped. */
	un = xmap(epd, PG, PROT_READ | PROT_WRITE, UN_OFF);
	check(un[0] == 0x5a, "the page to be unregistered is mapped");
	sync_step(epd, '4');
	sync_step(epd, 'u');	/* unregistered; the server wrote 0x6b */
	check(un[0] == 0x6b && un[PG - 1] == 0x6b,
	      "after the unregister the mapping still shows the server's writes");
	errno = 0;
	check(scif_readfrom(epd, FLAG_OFF, 8, UN_OFF, SCIF_RMA_SYNC) && errno == ENXIO,
	      "RMA into the unregistered window is ENXIO");
	memset(un, 0x7c, PG);
	check(!scif_munmap(un, PG), "munmap of the unregistered window");
	sync_step(epd, 'v');
	sync_step(epd, 'w');

	/* 5: fences. */
	sdata = xmap(epd, DATA_LEN, PROT_READ, DATA_OFF);
	sflag = xmap(epd, PG, PROT_READ, FLAG_OFF);
	for (unsigned int k = 1; k <= ROUNDS; k++) {
		/* a */
		fill(data, DATA_LEN, 500 + k);
		check(!scif_writeto(epd, DATA_OFF, DATA_LEN, DATA_OFF, 0), "round %u: writeto", k);
		check(!scif_fence_signal(epd, FLAG_OFF + 8, 700 + k, FLAG_OFF, 600 + k,
					 SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL |
					 SCIF_SIGNAL_REMOTE),
		      "round %u: fence_signal INIT_SELF|SIGNAL_LOCAL|SIGNAL_REMOTE", k);
		check(spin_for(flag + 8, 700 + k), "round %u: local signal in our memory", k);
		check(!mismatch(sdata, DATA_LEN, 500 + k),
		      "round %u: our writeto data is in our mapping of the server's window when the local signal is", k);
		check(spin_for(sflag, 600 + k), "round %u: remote signal seen through our mapping", k);
		check(!mismatch(sdata, DATA_LEN, 500 + k),
		      "round %u: our writeto data is in our mapping of the server's window when the remote signal is", k);
		sync_step(epd, 'A');
		/* b */
		sync_step(epd, 'B');
		check(!scif_readfrom(epd, DATA_OFF, DATA_LEN, DATA_OFF, 0), "round %u: readfrom", k);
		check(!scif_fence_signal(epd, FLAG_OFF, 200 + k, 0, 0,
					 SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL),
		      "round %u: fence_signal INIT_SELF|SIGNAL_LOCAL", k);
		/* c */
		sync_step(epd, 'C');
		check(!scif_readfrom(epd, DATA_OFF, DATA_LEN, DATA_OFF, 0), "round %u: readfrom", k);
		sync_step(epd, 'c');
		sync_step(epd, 'e');
		/* d */
		fill(data, DATA_LEN, 400 + k);
		check(!scif_writeto(epd, DATA_OFF, DATA_LEN, DATA_OFF, 0), "round %u: writeto", k);
		sync_step(epd, 'D');
		check(spin_for(sflag + 8, 400 + k),
		      "round %u: the signal the server asked of our RMAs, through our mapping", k);
		check(!mismatch(sdata, DATA_LEN, 400 + k),
		      "round %u: our writeto data is in our mapping when that signal is", k);
		sync_step(epd, 'd');
	}
	check(!scif_munmap(sdata, DATA_LEN) && !scif_munmap(sflag, PG), "munmap");

	/* 6: the server closes first while we map W1. */
	m2 = xmap(epd, 2 * PG, PROT_READ | PROT_WRITE, W1_OFF);
	sync_step(epd, '6');
	errno = 0;
	r = scif_recv(epd, &c, 1, SCIF_RECV_BLOCK);
	check(r < 0 && errno == ECONNRESET, "the server's close is seen (ECONNRESET)");
	check(m2[0] == 0x33 && m2[2 * PG - 1] == 0x33,
	      "after the peer's close the mapping shows what it wrote before");
	memset(m2, 0x44, 2 * PG);
	check(m2[PG] == 0x44, "and can still be written");
	check(!scif_close(epd), "close our endpoint while mapped");
	check(m2[0] == 0x44, "the mapping outlives the close of its endpoint");
	check(!scif_munmap(m2, 2 * PG), "munmap after the close");
	return failures ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: scif_mmap server PORT | client NODE PORT | loop\n");
	return 2;
}

int main(int argc, char **argv)
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]), -1);
	if (argc == 4 && !strcmp(argv[1], "client")) {
		ret = client(atoi(argv[2]), atoi(argv[3]), 0);
		printf("# %s: %d checks, %d failed\n", who, checks, failures);
		return ret;
	}
	if (argc == 2 && !strcmp(argv[1], "loop")) {
		uint16_t self;
		pid_t pid;

		if (scif_get_node_ids(&self, 1, &self) < 0)
			die("scif_get_node_ids");
		pid = start_server(server, 2600);
		ret = client(self, 2600, 2601);
		printf("# %s: %d checks, %d failed\n", who, checks, failures);
		if (reap_server(pid)) {
			printf("not ok the server failed\n");
			ret = 1;
		}
		return ret;
	}
	return usage();
}
