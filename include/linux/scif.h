/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The SCIF kernel API as scire_scif.ko exports it: endpoints, ports,
 * connections, messages, registered windows, RMA and fences, with the
 * semantics of the original Intel SCIF kernel header (MPSS 4 / Linux
 * 4.4-5.9), carried over RDMA. Declarations only: each call's kernel-doc
 * (arguments, units, errnos, context) is at its definition in
 * kernel/scif/.
 *
 * Differences from SCIF over PCIe, all refusals rather than pretence:
 * scif_get_pages() of a window of a peer on another host fails with
 * EOPNOTSUPP (there are no bus addresses of remote memory to hand out;
 * a peer endpoint in this kernel gets its pages), and SCIF_RMA_USECPU is
 * accepted but moves data by RDMA like every other RMA.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef _LINUX_SCIF_H
#define _LINUX_SCIF_H

#include <linux/types.h>
#include <linux/poll.h>
#include <linux/scif_ioctl.h>	/* struct scif_port_id */
#include <rdma/scire-scif-abi.h>	/* flags and port rules */

/* Bit 31 of a mark: the RMAs it marks were initiated by the peer. */
#define SCIF_REMOTE_FENCE	(1U << 31)

typedef struct scif_endpt *scif_epd_t;
typedef struct scif_pinned_pages *scif_pinned_pages_t;

/**
 * struct scif_range - pages of a window, from scif_get_pages()
 * @cookie: the window; scif_put_pages() gives it back
 * @nr_pages: number of pages
 * @prot_flags: SCIF_PROT_READ and/or SCIF_PROT_WRITE of the window
 * @phys_addr: physical address of each page
 * @va: kernel virtual address of each page
 */
struct scif_range {
	void *cookie;
	int nr_pages;
	int prot_flags;
	dma_addr_t *phys_addr;
	void __iomem **va;
};

/**
 * struct scif_pollepd - one endpoint of a scif_poll() call
 * @epd: the endpoint
 * @events: EPOLLIN, EPOLLOUT, ... asked for
 * @revents: what scif_poll() found (EPOLLERR, EPOLLHUP and EPOLLNVAL too)
 */
struct scif_pollepd {
	scif_epd_t epd;
	__poll_t events;
	__poll_t revents;
};

/**
 * struct scif_peer_dev - a node a SCIF client is told about
 * @dnode: the node's id
 */
struct scif_peer_dev {
	u16 dnode;
};

/**
 * struct scif_client - a kernel user of SCIF that follows nodes
 * @name: for messages
 * @probe: a node became reachable (configured, or present at registration)
 * @remove: a node went away; the client must stop using its endpoints to it
 *	and put back every scif_get_pages() range of it before returning
 * @node: private to scire_scif
 */
struct scif_client {
	const char *name;
	void (*probe)(struct scif_peer_dev *spdev);
	void (*remove)(struct scif_peer_dev *spdev);
	struct list_head node;
};

scif_epd_t scif_open(void);
int scif_bind(scif_epd_t epd, u16 pn);
int scif_listen(scif_epd_t epd, int backlog);
int scif_connect(scif_epd_t epd, struct scif_port_id *dst);
int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd,
		int flags);
int scif_close(scif_epd_t epd);
int scif_send(scif_epd_t epd, void *msg, int len, int flags);
int scif_recv(scif_epd_t epd, void *msg, int len, int flags);
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags);
int scif_unregister(scif_epd_t epd, off_t offset, size_t len);
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
int scif_fence_signal(scif_epd_t epd, off_t loff, u64 lval, off_t roff,
		      u64 rval, int flags);
int scif_get_node_ids(u16 *nodes, int len, u16 *self);
int scif_pin_pages(void *addr, size_t len, int prot_flags, int map_flags,
		   scif_pinned_pages_t *pinned_pages);
int scif_unpin_pages(scif_pinned_pages_t pinned_pages);
off_t scif_register_pinned_pages(scif_epd_t epd,
				 scif_pinned_pages_t pinned_pages,
				 off_t offset, int map_flags);
int scif_get_pages(scif_epd_t epd, off_t offset, size_t len,
		   struct scif_range **pages);
int scif_put_pages(struct scif_range *pages);
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout);
int scif_client_register(struct scif_client *client);
void scif_client_unregister(struct scif_client *client);

#endif /* _LINUX_SCIF_H */
