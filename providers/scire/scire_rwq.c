// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: receive work queues (ibv_create_wq) and their indirection
 * tables, for receive-side scaling over raw packet QPs. A WQ is a receive
 * ring of its own, posted like an SRQ; the kernel places the frames an RSS
 * QP's hash sends it (kernel/scire_rwq.c).
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma-core/driver.h>
#include <rdma-core/cmd.h>

#include "scire.h"

static struct scire_rwq *to_scire_rwq(struct ibv_wq *ibwq)
{
	return (struct scire_rwq *)((char *)ibwq - offsetof(struct scire_rwq, ibwq));
}

static int scire_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	uint32_t posted;

	return scire_wq_post_recv(&to_scire_rwq(ibwq)->rq, wr, bad_wr, &posted);
}

struct ibv_wq *scire_create_wq(struct ibv_context *ibctx,
			       struct ibv_wq_init_attr *attr)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);
	struct scire_create_wq_cmd_resp resp = {};
	struct ibv_create_wq cmd = {};
	struct scire_create_wq_resp *u = &resp.drv_payload;
	struct scire_rwq *rwq;
	int ret;

	if (attr->wq_type != IBV_WQT_RQ) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || !attr->cq) {
		errno = EINVAL;
		return NULL;
	}
	rwq = calloc(1, sizeof(*rwq));
	if (!rwq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_wq(ibctx, attr, &rwq->ibwq, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	/* A WQ always has slots: 0 would be a broken response. */
	if (!u->num_entries) {
		verbs_err(&ctx->vctx, "WQ %u: kernel gave no slots\n", u->wq_num);
		ret = EPROTO;
		goto err_destroy;
	}
	ret = scire_wq_setup(ctx, &rwq->rq, "WQ", u->mmap_offset, u->mmap_size,
			     u->num_entries, u->wqe_size,
			     sizeof(struct scire_recv_wqe) +
			     (uint64_t)u->max_sge * sizeof(struct scire_sge));
	if (ret)
		goto err_destroy;
	rwq->rq.max_sge = u->max_sge;
	rwq->ibwq.state = IBV_WQS_RESET;
	rwq->ibwq.post_recv = scire_post_wq_recv;
	return &rwq->ibwq;

err_destroy:
	ibv_cmd_destroy_wq(&rwq->ibwq);
err_free:
	free(rwq);
	errno = ret;
	return NULL;
}

int scire_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct ibv_modify_wq cmd = {};

	return ibv_cmd_modify_wq(ibwq, attr, &cmd, sizeof(cmd));
}

int scire_destroy_wq(struct ibv_wq *ibwq)
{
	struct scire_rwq *rwq = to_scire_rwq(ibwq);
	int ret;

	ret = ibv_cmd_destroy_wq(ibwq);
	if (ret)
		return ret;	/* EBUSY while a table holds it */
	scire_wq_teardown(&rwq->rq);
	free(rwq);
	return 0;
}

struct ibv_rwq_ind_table *
scire_create_rwq_ind_table(struct ibv_context *ibctx,
			   struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp = {};
	struct ibv_rwq_ind_table *tbl;
	int ret;

	tbl = calloc(1, sizeof(*tbl));
	if (!tbl) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_rwq_ind_table(ibctx, attr, tbl, &resp,
					   sizeof(resp));
	if (ret) {
		free(tbl);
		errno = ret;
		return NULL;
	}
	return tbl;
}

int scire_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl)
{
	int ret = ibv_cmd_destroy_rwq_ind_table(tbl);

	if (ret)
		return ret;	/* EBUSY while a QP holds it */
	free(tbl);
	return 0;
}
