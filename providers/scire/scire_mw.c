// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: memory windows of type 1 and 2, allocated here. A type 2 window
 * is bound by a BIND_MW work request on a QP (ibv_post_send() with
 * IBV_WR_BIND_MW, or ibv_wr_bind_mw()) and invalidated by LOCAL_INV or
 * SEND_WITH_INV. A type 1 window is bound by ibv_bind_mw(), which posts a
 * BIND_MW WQE flagged for type 1 (scire_wqe.h), and unbound by a bind of
 * length 0; it cannot be invalidated.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>

#include "scire.h"

struct ibv_mw *scire_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	/* Any other number is no type. */
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	/* ALLOC_MW has no scire payload; the kernel returns the first rkey. */
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int scire_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw(): the Bind Memory Window verb of a type 1 window (IBA
 * 10.6.7.1). libibverbs has already refused other types and an MR of
 * another PD than the window's. For a type 2 window the call is not valid
 * (ibv_bind_mw(3)): EINVAL, also when called past libibverbs' check.
 */
int scire_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	if (!mw || !mw_bind || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	return scire_post_bind_mw1(ibqp, mw, mw_bind);
}
