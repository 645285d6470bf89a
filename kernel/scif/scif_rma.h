/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire_scif: registered windows, RMA and fences of an endpoint.
 *
 * A window of this endpoint (a "self" window) is a range of its
 * registered address space backed by pinned pages and covered by one or
 * more fast-registered MRs of the connection's PD (an MR covers at most
 * the device's max_fast_reg_page_list_len pages). The peer learns each
 * MR's (iova, length, rkey) from SCIF_MSG_REGISTER and keeps a "peer"
 * window with the same extents. An RMA is RDMA READ/WRITE WRs on the
 * endpoint's RC QP between the extents of a local window and those of a
 * peer window.
 *
 * Completion and fences: a batch of RMA WRs that someone will wait for
 * ends with one signaled WR whose completion advances @done to the
 * batch's sequence number; RC completes the send queue in order, so
 * @done >= n means every RMA WR up to batch n has completed. Batches
 * nobody waits for yet go unsignaled (at most SCIF_RMA_UNSIG_MAX WRs in a
 * row); whoever needs one of them to complete posts a message behind it
 * whose completion stands for it (scif_rma_cover(), which scif_rma_wait()
 * calls). A fence mark is @issued at the time of the mark. A window
 * remembers the last batch that used it (@last_seq): it is freed after an
 * unregister only once @done reaches that, which is how an unregister is
 * deferred while RMAs use the window.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIF_RMA_H
#define SCIF_RMA_H

#include <linux/interval_tree.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct scif_endpt;
struct scif_rma_ctx;
struct ib_umem;
struct scif_pinned_pages;

/**
 * struct scif_rma_info - an endpoint's registered address space
 * @lock: guards the window trees, window states, @reap_list and @issued
 *	(every poster of RMA WRs holds it, so batches get sequence numbers in
 *	posting order)
 * @slock: guards @done, @broken and @signals; taken in completion handlers
 * @self: the endpoint's own windows, by offset (struct scif_window)
 * @peer: the peer's windows as it announced them, by offset
 * @wq: RMA completions, fence waits, deferred unregisters
 * @issued: sequence number of the last batch of RMA WRs posted
 * @signaled: the last batch posted with a completion of its own, or
 *	followed by a message that stands for it (scif_rma_cover()); under @lock
 * @unsig: RMA WRs posted unsignaled after @signaled, whose send queue slots
 *	are still taken; under @lock
 * @done: sequence number of the last batch completed successfully
 * @broken: an RMA WR completed in error: the connection is gone and
 *	batches after @done never complete
 * @signals: local fence signals waiting for @done to reach their mark
 *	(struct scif_signal), in mark order
 * @reap_list: windows unregistered (or temporary) waiting for @done to
 *	reach their last use
 * @nreap: entries on @reap_list (read without @lock by completions)
 * @reap_work: frees what @reap_list holds once it is idle
 * @err_cqe: completion of unsignaled RMA WRs, which only ever complete in
 *	error
 * @max_wr: bytes of one RDMA WR at most: the port's max_msg_sz, and no
 *	more than 1 MiB (0 until the first RMA asks the port)
 * @ctx: the WR builder, allocated by the first RMA and kept (under @lock)
 *	until the endpoint is freed
 */
struct scif_rma_info {
	struct mutex lock;	/* see above */
	spinlock_t slock;	/* see above */
	struct rb_root_cached self;
	struct rb_root_cached peer;
	wait_queue_head_t wq;
	u64 issued;
	u64 signaled;
	int unsig;
	u64 done;
	bool broken;
	struct list_head signals;
	struct list_head reap_list;
	int nreap;
	struct work_struct reap_work;
	struct ib_cqe err_cqe;
	u32 max_wr;
	struct scif_rma_ctx *ctx;
};

/* --- internal to scif_rma.c and scif_fence.c ----------------------------------- */

enum scif_win_state {
	SCIF_WIN_REGISTERING,	/* offset reserved, MRs or the peer not ready */
	SCIF_WIN_LIVE,		/* usable */
	SCIF_WIN_UNREG,		/* unregistered, freed once idle */
	SCIF_WIN_DEAD,		/* out of every tree, resources gone */
};

/**
 * struct scif_ext - a run of a window that one key covers
 * @start: its first byte, as an offset into the window
 * @addr: its first byte as the device addresses it (MR iova or DMA address)
 * @len: bytes
 * @lkey: local key (self and temporary windows)
 * @rkey: remote key (self windows: announced; peer windows: used)
 */
struct scif_ext {
	u64 start;
	u64 addr;
	u32 len;
	u32 lkey;
	u32 rkey;
};

/**
 * struct scif_chunk - one MR of a self window and the pages it maps
 * @sgt: the chunk's pages, DMA mapped (@nents entries mapped)
 * @nents: mapped entries; 0 when not mapped
 * @mr: the fast-registered MR, or NULL
 */
struct scif_chunk {
	struct sg_table sgt;
	int nents;
	struct ib_mr *mr;
};

/**
 * struct scif_window - a window: self, peer or temporary
 * @it: in @rma.self or @rma.peer: [offset, offset + len - 1]
 * @ref: the tree holds one, so does a caller working on it unlocked
 * @ep: the owning endpoint (no reference: windows die before it)
 * @reap: on @rma.reap_list
 * @ulist: on the list of an scif_unregister() call
 * @len: bytes
 * @prot: SCIF_PROT_READ / SCIF_PROT_WRITE
 * @state: enum scif_win_state (under @rma.lock)
 * @peer: a copy of a window of the peer
 * @temp: a temporary registration of a v* call (in no tree)
 * @last_seq: the last batch of RMA WRs that used the window
 * @nmaps: self windows: user mappings and scif_get_pages() ranges of its
 *	pages held by a peer endpoint of this kernel (scif_mmap.c); under
 *	@rma.lock. An unregistered window is freed only once this is 0
 * @nr_ext: entries of @ext (peer windows: as announced)
 * @filled: peer windows: @ext entries received so far
 * @ext: the runs, in window order, contiguous
 * @nr_pages: entries of @pages
 * @pages: self and temporary windows: the pages, in order
 * @umem: pinned user memory, or NULL
 * @pinned: the pinned set the pages come from, or NULL
 * @nr_chunks: entries of @chunks
 * @chunks: self windows: the MRs
 * @sgt: temporary windows of kernel memory: the pages, DMA mapped
 * @sg_nents: @sgt entries mapped; 0 when not mapped
 */
struct scif_window {
	struct interval_tree_node it;
	struct kref ref;
	struct scif_endpt *ep;
	struct list_head reap;
	struct list_head ulist;
	u64 len;
	int prot;
	int state;
	bool peer;
	bool temp;
	u64 last_seq;
	int nmaps;
	u32 nr_ext;
	u32 filled;
	struct scif_ext *ext;
	u32 nr_pages;
	struct page **pages;
	struct ib_umem *umem;
	struct scif_pinned_pages *pinned;
	u32 nr_chunks;
	struct scif_chunk *chunks;
	struct sg_table sgt;
	int sg_nents;
};

/**
 * struct scif_signal - a local fence signal waiting for its mark
 * @list: on @rma.signals
 * @win: the self window written (kept by its @last_seq >= @seq)
 * @off: offset of the u64 in @win
 * @val: the value
 * @seq: written once @done reaches this
 */
struct scif_signal {
	struct list_head list;
	struct scif_window *win;
	u64 off;
	u64 val;
	u64 seq;
};

/* scif_rma.c */
struct scif_window *scif_win_find(struct rb_root_cached *root, u64 off, u64 len,
				  int prot, int *err);
struct scif_window *scif_win_next(struct scif_window *win);
void scif_win_get(struct scif_window *win);
void scif_win_put(struct scif_window *win);
void scif_rma_conn_init(struct scif_endpt *ep);
void scif_rma_reap_locked(struct scif_endpt *ep);
void scif_rma_batch_done(struct scif_endpt *ep, u64 seq, int nwr, bool ok);
int scif_rma_cover(struct scif_endpt *ep, u64 seq);
void scif_rma_cover_unlocked(struct scif_endpt *ep, u64 seq);
int scif_rma_wait(struct scif_endpt *ep, u64 seq, bool intr, long timeout);
int scif_rma_post_signal(struct scif_endpt *ep, struct scif_window *rwin,
			 u64 roff, u64 val);
void scif_win_write(struct scif_window *win, u64 off, u64 val);

/* scif_fence.c */
void scif_fence_complete(struct scif_endpt *ep);
void scif_fence_handle_msg(struct scif_endpt *ep, u16 type, u64 cookie,
			   const void *payload, u32 len);
void scif_fence_ep_teardown(struct scif_endpt *ep);

/* called by the rest of scire_scif */
void scif_rma_ep_init(struct scif_endpt *ep);
void scif_rma_ep_disconnected(struct scif_endpt *ep);
void scif_rma_ep_teardown(struct scif_endpt *ep);
void scif_rma_handle_msg(struct scif_endpt *ep, u16 type, u64 cookie,
			 const void *payload, u32 len);
int scif_rma_vcopy(struct scif_endpt *ep, u64 addr, size_t len, off_t roffset,
		   int flags, bool to_remote, bool user);

#endif /* SCIF_RMA_H */
