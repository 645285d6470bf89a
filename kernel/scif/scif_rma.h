/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire_scif: registered windows, RMA and fences of an endpoint.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIF_RMA_H
#define SCIF_RMA_H

#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/types.h>
#include <linux/wait.h>

struct scif_endpt;

/**
 * struct scif_rma_info - an endpoint's registered address space
 * @lock: guards the window trees and counters
 * @self: the endpoint's own windows, by offset
 * @peer: the peer's windows as it announced them, by offset
 * @wq: RMA completions, fence waits, deferred unregisters
 * @issued: sequence number of the last RMA posted (fence marks are these)
 * @done: sequence number of the last RMA completed; RC completes in order
 */
struct scif_rma_info {
	struct mutex lock;	/* see above */
	struct rb_root_cached self;
	struct rb_root_cached peer;
	wait_queue_head_t wq;
	u32 issued;
	u32 done;
};

void scif_rma_ep_init(struct scif_endpt *ep);
void scif_rma_ep_disconnected(struct scif_endpt *ep);
void scif_rma_ep_teardown(struct scif_endpt *ep);
void scif_rma_handle_msg(struct scif_endpt *ep, u16 type, u64 cookie,
			 const void *payload, u32 len);
int scif_rma_vcopy(struct scif_endpt *ep, u64 addr, size_t len, off_t roffset,
		   int flags, bool to_remote, bool user);

#endif /* SCIF_RMA_H */
