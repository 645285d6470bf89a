/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * The SCIF constants user space and scire_scif.ko share: flags of the
 * calls that /dev/scif's ioctls carry unchanged, and the port rules. The
 * values are those of Intel's SCIF header (MPSS 4), so programs built
 * against it run unchanged. The one source of truth for both
 * <linux/scif.h> (the kernel API) and libscif's <scif.h>.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef _UAPI_RDMA_SCIRE_SCIF_ABI_H
#define _UAPI_RDMA_SCIRE_SCIF_ABI_H

/* scif_accept(): wait for a connection request. */
#define SCIF_ACCEPT_SYNC	1
/* scif_send()/scif_recv(): wait until the whole message has moved. */
#define SCIF_SEND_BLOCK		1
#define SCIF_RECV_BLOCK		1

/* Access of a window (scif_register()) and of a mapping. */
enum {
	SCIF_PROT_READ		= 1 << 0,
	SCIF_PROT_WRITE		= 1 << 1,
};

/* scif_register() flags. */
enum {
	SCIF_MAP_FIXED		= 0x10,	/* exactly the offset asked for */
	SCIF_MAP_KERNEL		= 0x20,	/* kernel callers only: addr is a kernel address */
};

/* scif_fence_mark() and scif_fence_signal() flags. */
enum {
	SCIF_FENCE_INIT_SELF	= 1 << 0,
	SCIF_FENCE_INIT_PEER	= 1 << 1,
	SCIF_SIGNAL_LOCAL	= 1 << 4,
	SCIF_SIGNAL_REMOTE	= 1 << 5,
};

/* scif_readfrom()/scif_writeto()/scif_v*() flags. */
enum {
	SCIF_RMA_USECPU		= 1 << 0,
	SCIF_RMA_USECACHE	= 1 << 1,
	SCIF_RMA_SYNC		= 1 << 2,
	SCIF_RMA_ORDERED	= 1 << 3,
};

/* Ports below this need CAP_SYS_ADMIN. */
#define SCIF_ADMIN_PORT_END	1024
/* Ports below this are never handed out by scif_bind(epd, 0). */
#define SCIF_PORT_RSVD		1088

#endif /* _UAPI_RDMA_SCIRE_SCIF_ABI_H */
