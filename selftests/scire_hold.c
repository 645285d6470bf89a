// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_hold -d DEV: hold DEV open with live objects while it is deleted.
 *
 * Allocates a PD, an MR, a completion channel and an armed CQ on it, prints
 * "ready", then waits (60 s at most) for IBV_EVENT_DEVICE_FATAL, which the
 * core raises when it disassociates the context from a device being
 * unregistered. After that no new verb may succeed, and the old objects
 * must be safe to poll and destroy: the destroy calls may fail (EIO unless
 * RDMAV_ALLOW_DISASSOC_DESTROY is set), but nothing may crash or hang.
 * Exit 0 after a clean close, 1 on timeout or if a new verb succeeded.
 *
 * Copyright (c) 2026 The scire authors.
 */

#include "scire_events.h"

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	enum ibv_event_type got;
	struct ibv_wc wc[4];
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	double deadline;
	char *buf;
	int ret;

	ctx = t_open_from_args("scire_hold", argc, argv, &dev);
	t_async_nonblock(ctx);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));
	buf = calloc(1, 1 << 16);
	if (!buf)
		t_fatal("calloc: out of memory");
	mr = ibv_reg_mr(pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		t_fatal("reg_mr: %s", t_errname(errno));
	ch = ibv_create_comp_channel(ctx);
	if (!ch)
		t_fatal("create_comp_channel: %s", t_errname(errno));
	cq = ibv_create_cq(ctx, 64, NULL, ch, 0);
	if (!cq)
		t_fatal("create_cq: %s", t_errname(errno));
	ret = ibv_req_notify_cq(cq, 0);
	if (ret)
		t_fatal("req_notify_cq: %s", t_errname(ret));

	printf("ready\n");
	fflush(stdout);

	deadline = t_now() + 60;
	do {
		if (!t_next_async_event(ctx, deadline, &got)) {
			fprintf(stderr, "FAIL: %s: no DEVICE_FATAL on %s within 60 s\n",
				t_name, dev);
			return T_EXIT_FAIL;
		}
	} while (got != IBV_EVENT_DEVICE_FATAL);

	/* The context is disassociated: new verbs must fail, and say how. */
	errno = 0;
	pd2 = ibv_alloc_pd(ctx);
	if (pd2) {
		fprintf(stderr, "FAIL: %s: alloc_pd succeeded after DEVICE_FATAL\n", t_name);
		return T_EXIT_FAIL;
	}
	printf("alloc_pd after DEVICE_FATAL: %s\n", t_errname(errno));

	/* The CQ ring mapping was revoked; polling must not crash. */
	ret = ibv_poll_cq(cq, 4, wc);
	printf("poll_cq after DEVICE_FATAL: %d\n", ret);

	printf("destroy_cq: %s\n", t_errname(ibv_destroy_cq(cq)));
	printf("destroy_comp_channel: %s\n", t_errname(ibv_destroy_comp_channel(ch)));
	printf("dereg_mr: %s\n", t_errname(ibv_dereg_mr(mr)));
	printf("dealloc_pd: %s\n", t_errname(ibv_dealloc_pd(pd)));
	printf("close_device: %s\n", t_errname(ibv_close_device(ctx)));
	free(buf);
	printf("PASS: %s: %s went away while held\n", t_name, dev);
	return T_EXIT_PASS;
}
