// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscif: the SCIF user API as ioctls on /dev/scif (scire_scif.ko's
 * kernel/scif/scif_fd.c). Every call is a thin translation; the semantics
 * and errnos are the kernel API's (include/linux/scif.h, kernel/scif/).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scif.h"

/* SCIF_DEV overrides the device path (tests, containers). */
static const char *scif_dev_path(void)
{
	const char *p = getenv("SCIF_DEV");

	return p && *p ? p : "/dev/scif";
}

scif_epd_t scif_open(void)
{
	return open(scif_dev_path(), O_RDWR | O_CLOEXEC);
}

int scif_close(scif_epd_t epd)
{
	return close(epd);
}

int scif_get_fd(scif_epd_t epd)
{
	return epd;
}

int scif_bind(scif_epd_t epd, uint16_t pn)
{
	__u64 port = pn;

	if (ioctl(epd, SCIF_BIND, &port) < 0)
		return -1;
	return (int)port;
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
	return scif_msg(epd, SCIF_RECV, msg, len, flags);
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
	/* /dev/scif has no mmap over RDMA: the kernel answers ENODEV. */
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
