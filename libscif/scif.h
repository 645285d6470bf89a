/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libscif: the SCIF user API of Intel's MPSS, over scire_scif's /dev/scif.
 *
 * Each call is one ioctl of <linux/scif_ioctl.h> on the endpoint's file
 * descriptor; an endpoint descriptor is that file descriptor. Errors are
 * reported the user-space way: -1 (or SCIF_REGISTER_FAILED, SCIF_OPEN_FAILED)
 * with errno set to the errno the kernel API documents.
 *
 * scif_mmap() maps the peer's windows when the peer endpoint is in the same
 * kernel (loopback, or a node that is another network namespace of this
 * host); a window of another host fails with ENODEV (over RDMA there is no
 * peer memory for the CPU to map): use scif_readfrom()/scif_writeto().
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef _SCIF_H
#define _SCIF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/scif_ioctl.h>	/* struct scif_port_id */
#include <rdma/scire-scif-abi.h>	/* flags and port rules */

#ifdef __cplusplus
extern "C" {
#endif

typedef int scif_epd_t;

#define SCIF_OPEN_FAILED	((scif_epd_t)-1)
#define SCIF_REGISTER_FAILED	((off_t)-1)
#define SCIF_MMAP_FAILED	((void *)-1)

/* Events of scif_poll(): those of poll(2). */
#define SCIF_POLLIN		0x0001
#define SCIF_POLLOUT		0x0004
#define SCIF_POLLERR		0x0008
#define SCIF_POLLHUP		0x0010
#define SCIF_POLLNVAL		0x0020

/**
 * struct scif_pollepd - one endpoint of scif_poll()
 * @epd: the endpoint
 * @events: SCIF_POLLIN and/or SCIF_POLLOUT asked for
 * @revents: what was found
 */
struct scif_pollepd {
	scif_epd_t epd;
	short events;
	short revents;
};

scif_epd_t scif_open(void);
int scif_close(scif_epd_t epd);
int scif_bind(scif_epd_t epd, uint16_t pn);
int scif_listen(scif_epd_t epd, int backlog);
int scif_connect(scif_epd_t epd, struct scif_port_id *dst);
int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd,
		int flags);
int scif_send(scif_epd_t epd, void *msg, int len, int flags);
int scif_recv(scif_epd_t epd, void *msg, int len, int flags);
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags);
int scif_unregister(scif_epd_t epd, off_t offset, size_t len);
void *scif_mmap(void *addr, size_t len, int prot_flags, int map_flags,
		scif_epd_t epd, off_t offset);
int scif_munmap(void *addr, size_t len);
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		  int rma_flags);
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		 int rma_flags);
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		   int rma_flags);
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		  int rma_flags);
int scif_fence_mark(scif_epd_t epd, int flags, int *mark);
int scif_fence_wait(scif_epd_t epd, int mark);
int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff,
		      uint64_t rval, int flags);
int scif_get_nodeIDs(uint16_t *nodes, int len, uint16_t *self);
int scif_get_node_ids(uint16_t *nodes, int len, uint16_t *self);
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout);
int scif_get_fd(scif_epd_t epd);

#ifdef __cplusplus
}
#endif

#endif /* _SCIF_H */
