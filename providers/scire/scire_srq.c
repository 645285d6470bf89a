// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: shared receive queues. An SRQ is one receive ring, mapped like
 * a QP's RQ; posting is a plain memory operation. The kernel takes WQEs
 * from it for any QP attached to it and raises the SRQ limit event itself,
 * so posting never needs a doorbell.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>

#include "scire.h"

struct ibv_srq *scire_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct scire_context *ctx = to_scire_ctx(pd->context);
	struct scire_create_srq_cmd_resp resp = {};
	const struct scire_create_srq_resp *uresp = &resp.drv_payload;
	struct scire_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	/* CREATE_SRQ takes no scire request payload: send none. */
	ret = ibv_cmd_create_srq(pd, &srq->ibsrq, attr, NULL, 0, &resp.ibv_resp,
				 sizeof(resp));
	if (ret)
		goto err_free;

	/* An SRQ always has slots: 0 would be a broken response. */
	if (!uresp->num_entries) {
		verbs_err(&ctx->vctx, "SRQ %u: kernel gave no slots\n", uresp->srqn);
		ret = EPROTO;
		goto err_destroy;
	}
	ret = scire_wq_setup(ctx, &srq->rq, "SRQ", uresp->mmap_offset,
			     uresp->mmap_size, uresp->num_entries,
			     uresp->wqe_size,
			     sizeof(struct scire_recv_wqe) +
			     (uint64_t)uresp->max_sge * sizeof(struct scire_sge));
	if (ret)
		goto err_destroy;
	srq->rq.max_sge = uresp->max_sge;
	srq->srqn = uresp->srqn;
	return &srq->ibsrq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibsrq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int scire_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	/*
	 * Resizing would need a new ring and mapping, which the ABI does not
	 * describe (so the device must not claim IBV_DEVICE_SRQ_RESIZE). Only
	 * the limit (arming the limit event) can change.
	 */
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int scire_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int scire_destroy_srq(struct ibv_srq *ibsrq)
{
	struct scire_srq *srq = to_scire_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;	/* the SRQ stays usable (EBUSY while QPs use it) */

	scire_wq_teardown(&srq->rq);
	free(srq);
	return 0;
}

int scire_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	uint32_t posted;

	return scire_wq_post_recv(&to_scire_srq(ibsrq)->rq, wr, bad_wr, &posted);
}
