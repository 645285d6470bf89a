// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscif: the SCIF user API as ioctls on /dev/scif (scire_scif.ko's
 * kernel/scif/scif_fd.c). Every call is a thin translation; the semantics
 * and errnos are the kernel API's (include/linux/scif.h, kernel/scif/).
 * One exception: scif_recv() reads what has arrived from the endpoint's
 * receive ring, mapped into the process, without a system call.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "scif.h"

/* SCIF_DEV overrides the device path (tests, containers). */
static const char *scif_dev_path(void)
{
	const char *p = getenv("SCIF_DEV");

	return p && *p ? p : "/dev/scif";
}

/* ---- the mapped receive ring ---------------------------------------------- */

/*
 * The receive ring of a connected endpoint, mapped on its first
 * scif_recv() in this process (struct scire_scif_rx_ring and the protocol
 * in <rdma/scire-scif-abi.h>). Readers hold the ring's lock for one copy,
 * as the kernel's own scif_recv() does, so the threads of this process,
 * a forked child (which does not inherit the mapping and reads through
 * the kernel) and the kernel never read the same bytes. What the ring
 * cannot answer (nothing has arrived, the connection is gone, a kernel
 * without the ring) goes to SCIF_RECV.
 */
struct scif_rx {
	struct scire_scif_rx_ring *ctl;
	unsigned char *data;
};

/* A blocking scif_recv() watches the ring this long before SCIF_RECV. */
#define SCIF_RX_SPIN_NS		50000
/* An fd whose ring cannot be mapped: SCIF_RECV only. */
#define SCIF_RX_NONE		((struct scif_rx *)1)
#define SCIF_RX_MASK		(SCIRE_SCIF_RX_RING_SIZE - 1)

static pthread_mutex_t scif_rx_tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct scif_rx **scif_rx_tab;	/* by fd */
static int scif_rx_tab_len;

/* Under scif_rx_tab_lock: the entry of @fd, or NULL if it is out of range. */
static struct scif_rx **scif_rx_slot(int fd, bool grow)
{
	struct scif_rx **tab;
	int len;

	if (fd < scif_rx_tab_len)
		return &scif_rx_tab[fd];
	if (!grow)
		return NULL;
	len = fd < 64 ? 64 : fd * 2;
	tab = realloc(scif_rx_tab, len * sizeof(*tab));
	if (!tab)
		return NULL;
	memset(tab + scif_rx_tab_len, 0, (len - scif_rx_tab_len) * sizeof(*tab));
	scif_rx_tab = tab;
	scif_rx_tab_len = len;
	return &scif_rx_tab[fd];
}

static void scif_rx_free(struct scif_rx *rx)
{
	if (rx && rx != SCIF_RX_NONE) {
		munmap(rx->ctl, SCIRE_SCIF_RX_MAP_LEN);
		free(rx);
	}
}

/* @fd is new, or about to be closed: drop what was mapped for it. */
static void scif_rx_forget(int fd)
{
	struct scif_rx **slot, *rx = NULL;
	int err = errno;

	pthread_mutex_lock(&scif_rx_tab_lock);
	slot = fd >= 0 ? scif_rx_slot(fd, false) : NULL;
	if (slot) {
		rx = *slot;
		*slot = NULL;
	}
	pthread_mutex_unlock(&scif_rx_tab_lock);
	scif_rx_free(rx);
	errno = err;
}

/* The ring of @fd, mapped now if need be; NULL: use SCIF_RECV. */
static struct scif_rx *scif_rx_get(int fd)
{
	struct scif_rx **slot, *rx = NULL, *mine;
	int err = errno;
	void *p;

	pthread_mutex_lock(&scif_rx_tab_lock);
	slot = scif_rx_slot(fd, false);
	if (slot)
		rx = *slot;
	pthread_mutex_unlock(&scif_rx_tab_lock);
	if (rx)
		return rx == SCIF_RX_NONE ? NULL : rx;

	p = mmap(NULL, SCIRE_SCIF_RX_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, SCIRE_SCIF_RX_RING_OFFSET);
	if (p == MAP_FAILED) {
		/* Not connected yet: again next time. Else (EBUSY, ENODEV) never. */
		mine = errno == ENOTCONN ? NULL : SCIF_RX_NONE;
	} else {
		mine = malloc(sizeof(*mine));
		if (mine) {
			mine->ctl = p;
			mine->data = (unsigned char *)p + SCIRE_SCIF_RX_DATA_OFFSET;
		} else {
			munmap(p, SCIRE_SCIF_RX_MAP_LEN);
		}
	}
	pthread_mutex_lock(&scif_rx_tab_lock);
	slot = mine ? scif_rx_slot(fd, true) : NULL;
	if (slot && !*slot) {
		*slot = mine;
		rx = mine;
		mine = NULL;
	} else if (slot) {
		rx = *slot;	/* another thread mapped it first */
	}
	pthread_mutex_unlock(&scif_rx_tab_lock);
	scif_rx_free(mine);
	errno = err;
	return rx == SCIF_RX_NONE ? NULL : rx;
}

/* fork(): the child has no mappings (the kernel does not copy them). */
static void scif_rx_prefork(void)
{
	pthread_mutex_lock(&scif_rx_tab_lock);
}

static void scif_rx_postfork_parent(void)
{
	pthread_mutex_unlock(&scif_rx_tab_lock);
}

static void scif_rx_postfork_child(void)
{
	int i;

	for (i = 0; i < scif_rx_tab_len; i++) {
		if (scif_rx_tab[i] != SCIF_RX_NONE)
			free(scif_rx_tab[i]);
		scif_rx_tab[i] = NULL;
	}
	pthread_mutex_init(&scif_rx_tab_lock, NULL);
}

__attribute__((constructor)) static void scif_rx_init(void)
{
	pthread_atfork(scif_rx_prefork, scif_rx_postfork_parent,
		       scif_rx_postfork_child);
}

static void scif_rx_lock(struct scif_rx *rx)
{
	unsigned int spins = 0;
	__u32 free_ = 0;

	/* The holder (a thread here, or the kernel) copies, then lets go. */
	while (!__atomic_compare_exchange_n(&rx->ctl->lock, &free_,
					    SCIRE_SCIF_RX_LOCK_USER, false,
					    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		free_ = 0;
		if (++spins % 64 == 0)
			sched_yield();
	}
}

/*
 * Bytes that have arrived and are unread. A tail past the ring (written
 * by a buggy reader) counts as nothing: not ours to sort out, SCIF_RECV
 * will. The acquire pairs with the kernel's release: the bytes are there
 * before head.
 */
static __u64 scif_rx_avail(const struct scire_scif_rx_ring *ctl)
{
	__u64 n = __atomic_load_n(&ctl->head, __ATOMIC_ACQUIRE) -
		  __atomic_load_n(&ctl->tail, __ATOMIC_RELAXED);

	return n > SCIRE_SCIF_RX_RING_SIZE ? 0 : n;
}

/* Copy up to @len bytes that have arrived into @buf; return how many. */
static int scif_rx_read(int fd, struct scif_rx *rx, unsigned char *buf, int len)
{
	struct scire_scif_rx_ring *ctl = rx->ctl;
	__u64 tail, n;
	__u32 at, first;
	int err;

	scif_rx_lock(rx);
	n = scif_rx_avail(ctl);
	tail = __atomic_load_n(&ctl->tail, __ATOMIC_RELAXED);
	if (n > (__u64)len)
		n = len;
	if (n) {
		at = tail & SCIF_RX_MASK;
		first = n < SCIRE_SCIF_RX_RING_SIZE - at ? n : SCIRE_SCIF_RX_RING_SIZE - at;
		memcpy(buf, rx->data + at, first);
		memcpy(buf + first, rx->data, n - first);
		/* The kernel reuses the bytes only after it sees this. */
		__atomic_store_n(&ctl->tail, tail + n, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&ctl->lock, 0, __ATOMIC_RELEASE);
	/* A writer may wait for the room: tell the peer now and then. */
	if (n && tail + n - __atomic_load_n(&ctl->reported, __ATOMIC_RELAXED) >=
	    SCIRE_SCIF_RX_RING_SIZE / 4) {
		err = errno;
		ioctl(fd, SCIRE_SCIF_RX_RELEASE);
		errno = err;
	}
	return (int)n;
}

static long long scif_rx_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/*
 * A blocking reader watches the ring for up to SCIF_RX_SPIN_NS before it
 * lets the kernel wait (which polls a while longer, then sleeps): a
 * message that comes within it costs no system call. It yields now and
 * then, for a peer that waits for this CPU.
 */
static int scif_rx_spin(int fd, struct scif_rx *rx, unsigned char *buf, int len)
{
	long long end = scif_rx_ns() + SCIF_RX_SPIN_NS;
	unsigned int i = 0;
	int got = 0;

	while (got < len) {
		if (scif_rx_avail(rx->ctl)) {
			got += scif_rx_read(fd, rx, buf + got, len - got);
			continue;
		}
		if (++i % 256)
			continue;
		if (scif_rx_ns() > end)
			break;
		if (!(i % 4096))
			sched_yield();
	}
	return got;
}

/* ---- the calls ------------------------------------------------------------- */

scif_epd_t scif_open(void)
{
	int fd = open(scif_dev_path(), O_RDWR | O_CLOEXEC);

	/* Its number may be that of an endpoint close()d without us. */
	if (fd >= 0)
		scif_rx_forget(fd);
	return fd;
}

int scif_close(scif_epd_t epd)
{
	scif_rx_forget(epd);
	return close(epd);
}

int scif_get_fd(scif_epd_t epd)
{
	return epd;
}

/*
 * SCIF_BIND reads the port from the first two bytes its argument points
 * at and writes the bound port back into them alone (scif(7), The ioctl
 * ABI). Those two bytes are a __u16 at the start of a zeroed __u64: right
 * on any CPU for this kernel, and on a little-endian one also for a
 * kernel that read and wrote the whole __u64, as scire's did before.
 */
int scif_bind(scif_epd_t epd, uint16_t pn)
{
	union {
		__u64 wide;
		__u16 port;
	} arg = { .wide = 0 };

	arg.port = pn;
	if (ioctl(epd, SCIF_BIND, &arg) < 0)
		return -1;
	return arg.port;
}

int scif_listen(scif_epd_t epd, int backlog)
{
	return ioctl(epd, SCIF_LISTEN, backlog);
}

int scif_connect(scif_epd_t epd, struct scif_port_id *dst)
{
	struct scifioctl_connect req = {};

	if (!dst) {
		errno = EINVAL;
		return -1;
	}
	req.peer = *dst;
	if (ioctl(epd, SCIF_CONNECT, &req) < 0)
		return -1;
	return req.self.port;
}

/*
 * Accept in the two steps of the ABI: SCIF_ACCEPTREQ on the listener hands
 * out a token for the new connection, SCIF_ACCEPTREG on a new file claims it.
 */
int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd,
		int flags)
{
	struct scifioctl_accept req = { .flags = flags };
	__u64 token;
	int fd, err;

	if (!peer || !newepd) {
		errno = EINVAL;
		return -1;
	}
	fd = scif_open();
	if (fd < 0)
		return -1;
	if (ioctl(epd, SCIF_ACCEPTREQ, &req) < 0)
		goto err;
	token = req.endpt;
	if (ioctl(fd, SCIF_ACCEPTREG, &token) < 0)
		goto err;
	*peer = req.peer;
	*newepd = fd;
	return 0;

err:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

static int scif_msg(scif_epd_t epd, unsigned long cmd, void *msg, int len,
		    int flags)
{
	struct scifioctl_msg req = {
		.msg = (__u64)(uintptr_t)msg,
		.len = len,
		.flags = flags,
	};

	if (ioctl(epd, cmd, &req) < 0)
		return -1;
	return req.out_len;
}

int scif_send(scif_epd_t epd, void *msg, int len, int flags)
{
	return scif_msg(epd, SCIF_SEND, msg, len, flags);
}

int scif_recv(scif_epd_t epd, void *msg, int len, int flags)
{
	struct scif_rx *rx;
	int got, ret;

	/* Bad arguments and empty reads are the kernel's to answer. */
	if (len <= 0 || !msg || flags & ~SCIF_RECV_BLOCK)
		return scif_msg(epd, SCIF_RECV, msg, len, flags);
	rx = scif_rx_get(epd);
	if (!rx)
		return scif_msg(epd, SCIF_RECV, msg, len, flags);
	got = scif_rx_read(epd, rx, msg, len);
	if (got && !(flags & SCIF_RECV_BLOCK))
		return got;
	if (flags & SCIF_RECV_BLOCK)
		got += scif_rx_spin(epd, rx, (unsigned char *)msg + got, len - got);
	if (got == len)
		return got;
	/* The kernel waits, or says why nothing comes (ECONNRESET, ...). */
	ret = scif_msg(epd, SCIF_RECV, (unsigned char *)msg + got, len - got, flags);
	if (ret < 0)
		return got ? got : -1;
	return got + ret;
}

off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags)
{
	struct scifioctl_reg req = {
		.addr = (__u64)(uintptr_t)addr,
		.len = len,
		.offset = offset,
		.prot = prot_flags,
		.flags = map_flags,
	};

	if (ioctl(epd, SCIF_REG, &req) < 0)
		return SCIF_REGISTER_FAILED;
	return req.out_offset;
}

int scif_unregister(scif_epd_t epd, off_t offset, size_t len)
{
	struct scifioctl_unreg req = { .offset = offset, .len = len };

	return ioctl(epd, SCIF_UNREG, &req);
}

void *scif_mmap(void *addr, size_t len, int prot_flags, int map_flags,
		scif_epd_t epd, off_t offset)
{
	/* A peer in this kernel: mapped; on another host: ENODEV (scif(7)). */
	return mmap(addr, len, prot_flags, map_flags | MAP_SHARED, epd, offset);
}

int scif_munmap(void *addr, size_t len)
{
	return munmap(addr, len);
}

static int scif_copy(scif_epd_t epd, unsigned long cmd, off_t loffset,
		     void *addr, size_t len, off_t roffset, int rma_flags)
{
	struct scifioctl_copy req = {
		.loffset = loffset,
		.len = len,
		.roffset = roffset,
		.addr = (__u64)(uintptr_t)addr,
		.flags = rma_flags,
	};

	return ioctl(epd, cmd, &req);
}

int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		  int rma_flags)
{
	return scif_copy(epd, SCIF_READFROM, loffset, NULL, len, roffset, rma_flags);
}

int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		 int rma_flags)
{
	return scif_copy(epd, SCIF_WRITETO, loffset, NULL, len, roffset, rma_flags);
}

int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		   int rma_flags)
{
	return scif_copy(epd, SCIF_VREADFROM, 0, addr, len, roffset, rma_flags);
}

int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		  int rma_flags)
{
	return scif_copy(epd, SCIF_VWRITETO, 0, addr, len, roffset, rma_flags);
}

int scif_fence_mark(scif_epd_t epd, int flags, int *mark)
{
	struct scifioctl_fence_mark req = {
		.flags = flags,
		.mark = (__u64)(uintptr_t)mark,
	};

	if (!mark) {
		errno = EINVAL;
		return -1;
	}
	return ioctl(epd, SCIF_FENCE_MARK, &req);
}

int scif_fence_wait(scif_epd_t epd, int mark)
{
	return ioctl(epd, SCIF_FENCE_WAIT, mark);
}

int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff,
		      uint64_t rval, int flags)
{
	struct scifioctl_fence_signal req = {
		.loff = loff,
		.lval = lval,
		.roff = roff,
		.rval = rval,
		.flags = flags,
	};

	return ioctl(epd, SCIF_FENCE_SIGNAL, &req);
}

/* The node list needs no endpoint: a short-lived file asks for it. */
int scif_get_nodeIDs(uint16_t *nodes, int len, uint16_t *self)
{
	struct scifioctl_node_ids req = {
		.nodes = (__u64)(uintptr_t)nodes,
		.self = (__u64)(uintptr_t)self,
		.len = len,
	};
	int fd, ret, err;

	fd = scif_open();
	if (fd < 0)
		return -1;
	ret = ioctl(fd, SCIF_GET_NODEIDS, &req);
	err = errno;
	close(fd);
	if (ret < 0) {
		errno = err;
		return -1;
	}
	return req.len;
}

int scif_get_node_ids(uint16_t *nodes, int len, uint16_t *self)
{
	return scif_get_nodeIDs(nodes, len, self);
}

/* Endpoints are file descriptors: poll(2) does it. */
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout)
{
	struct pollfd stack[16], *fds = stack;
	unsigned int i;
	int ret, err;

	if (nepds > 16) {
		fds = calloc(nepds, sizeof(*fds));
		if (!fds)
			return -1;
	}
	for (i = 0; i < nepds; i++) {
		fds[i].fd = epds[i].epd;
		fds[i].events = epds[i].events;
		fds[i].revents = 0;
	}
	if (timeout < 0 || timeout > INT_MAX)
		timeout = -1;
	ret = poll(fds, nepds, (int)timeout);
	err = errno;
	for (i = 0; ret >= 0 && i < nepds; i++)
		epds[i].revents = fds[i].revents;
	if (fds != stack)
		free(fds);
	errno = err;
	return ret;
}
