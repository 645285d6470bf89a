// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: memory windows. scire has type 2 windows only: they are
 * allocated here and bound by a BIND_MW work request on a QP
 * (ibv_post_send() with IBV_WR_BIND_MW, or ibv_wr_bind_mw()), which
 * scire_wqe.h encodes; invalidation is LOCAL_INV or SEND_WITH_INV.
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

	/*
	 * A type 1 window is bound by ibv_bind_mw(), which scire does not
	 * offer: refuse it as unsupported. Any other number is no type.
	 */
	if (type != IBV_MW_TYPE_2) {
		errno = type == IBV_MW_TYPE_1 ? EOPNOTSUPP : EINVAL;
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
 * ibv_bind_mw() is the type 1 bind: libibverbs hands us only windows of
 * type 1 and alloc_mw makes none, and for a type 2 window the call is not
 * valid at all (ibv_bind_mw(3)): EINVAL, as rdma-core's providers answer
 * for type 2.
 */
int scire_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	return EINVAL;
}
