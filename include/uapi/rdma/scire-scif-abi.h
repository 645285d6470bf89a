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

#include <linux/ioctl.h>
#include <linux/types.h>

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

/*
 * scire's extension of /dev/scif (MPSS has nothing like it): the receive
 * ring of a connected endpoint, mapped so that a reader takes what has
 * arrived without a system call. Our libscif does this for scif_recv();
 * programs that only use the ioctls never see it.
 *
 *	mmap(NULL, SCIRE_SCIF_RX_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
 *	     fd, SCIRE_SCIF_RX_RING_OFFSET)
 *
 * maps a struct scire_scif_rx_ring, and the stream's data at
 * SCIRE_SCIF_RX_DATA_OFFSET: byte n of the stream is at data[n %
 * SCIRE_SCIF_RX_RING_SIZE] while head - tail bytes are unread. It fails
 * with ENOTCONN before the endpoint has connected, EBUSY while another
 * process has it mapped, and EINVAL for another length, a private or an
 * executable mapping. fork() does not copy it.
 *
 * Every reader of the stream, a thread of the mapping process or the
 * kernel's scif_recv() on behalf of any file of the endpoint, holds @lock
 * while it reads: it sets @lock from 0 to SCIRE_SCIF_RX_LOCK_USER (or the
 * kernel to SCIRE_SCIF_RX_LOCK_KERNEL) with an atomic compare-and-swap,
 * reads @head with acquire semantics, copies, stores the new @tail with
 * release semantics, then stores 0 into @lock with release semantics.
 * Holders keep it for one copy only, never across a system call; when
 * the mapping goes, the kernel frees a lock its holder left.
 *
 * SCIRE_SCIF_RX_RELEASE tells the peer how much has been read, so that a
 * writer waiting for room goes on; a reader calls it once @tail is a
 * quarter of the ring past @reported. The kernel never trusts @tail: a
 * value behind its last one or past @head is ignored.
 */
#define SCIRE_SCIF_RX_RING_SIZE		(64 * 1024)	/* a power of 2 */
#define SCIRE_SCIF_RX_DATA_OFFSET	4096
#define SCIRE_SCIF_RX_MAP_LEN		(SCIRE_SCIF_RX_DATA_OFFSET + SCIRE_SCIF_RX_RING_SIZE)
/* /dev/scif maps no window, so no window offset can mean this. */
#define SCIRE_SCIF_RX_RING_OFFSET	0x7ffffffffff00000ULL

#define SCIRE_SCIF_RX_LOCK_USER		1
#define SCIRE_SCIF_RX_LOCK_KERNEL	2

/**
 * struct scire_scif_rx_ring - the shared state of an endpoint's receive ring
 * @lock: 0, SCIRE_SCIF_RX_LOCK_USER or SCIRE_SCIF_RX_LOCK_KERNEL (above)
 * @reserved: 0
 * @reported: @tail as last told to the peer (written by the kernel)
 * @pad0: keeps @head on a cache line of its own
 * @head: stream bytes ever received (written by the kernel, release)
 * @pad1: keeps @tail on a cache line of its own
 * @tail: stream bytes ever read (written by the holder of @lock, release)
 * @pad2: to a whole cache line
 */
struct scire_scif_rx_ring {
	__u32 lock;
	__u32 reserved;
	__aligned_u64 reported;
	__u8 pad0[48];
	__aligned_u64 head;
	__u8 pad1[56];
	__aligned_u64 tail;
	__u8 pad2[56];
};

/* Tell the peer how much of the stream has been read (no argument). */
#define SCIRE_SCIF_RX_RELEASE		_IO('s', 0x80)

#endif /* _UAPI_RDMA_SCIRE_SCIF_ABI_H */
