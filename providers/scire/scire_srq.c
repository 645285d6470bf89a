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
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma-core/cmd_ioctl.h>

#include "scire.h"

/* Map the ring the kernel made for a new SRQ. Returns 0 or an errno. */
static int scire_srq_setup(struct scire_context *ctx, struct scire_srq *srq,
			   const struct scire_create_srq_resp *uresp)
{
	int ret;

	/* An SRQ always has slots: 0 would be a broken response. */
	if (!uresp->num_entries) {
		verbs_err(&ctx->vctx, "SRQ %u: kernel gave no slots\n", uresp->srqn);
		return EPROTO;
	}
	ret = scire_wq_setup(ctx, &srq->rq, "SRQ", uresp->mmap_offset,
			     uresp->mmap_size, uresp->num_entries,
			     uresp->wqe_size,
			     sizeof(struct scire_recv_wqe) +
			     (uint64_t)uresp->max_sge * sizeof(struct scire_sge));
	if (ret)
		return ret;
	srq->rq.max_sge = uresp->max_sge;
	srq->srqn = uresp->srqn;
	return 0;
}

struct ibv_srq *scire_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct scire_context *ctx = to_scire_ctx(pd->context);
	struct scire_create_srq_cmd_resp resp = {};
	struct scire_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	/* CREATE_SRQ takes no scire request payload: send none. */
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, NULL, 0,
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = scire_srq_setup(ctx, srq, &resp.drv_payload);
	if (ret)
		goto err_destroy;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/* What create_srq_ex can honour; tag matching is not offered. */
#define SCIRE_SRQ_INIT_ATTR_MASK					\
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |		\
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

/*
 * ibv_create_srq_ex(): a basic SRQ, or an XRC SRQ (IBV_SRQT_XRC, with an
 * XRC domain and a CQ) whose number ibv_get_srq_num() gives the senders.
 * Same ring as any SRQ.
 */
struct ibv_srq *scire_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);
	struct scire_create_srq_cmd_resp resp = {};
	struct ibv_create_xsrq cmd = {};
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	struct scire_srq *srq;
	int ret;

	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	if ((attr->comp_mask & ~(uint32_t)SCIRE_SRQ_INIT_ATTR_MASK) ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	/* No scire request payload; libibverbs checks PD, domain and CQ. */
	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = scire_srq_setup(ctx, srq, &resp.drv_payload);
	if (ret)
		goto err_destroy;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/* ibv_get_srq_num(): what a sender puts in its XRC work requests. */
int scire_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct scire_srq *srq = to_scire_srq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->srqn;
	return 0;
}

/*
 * A new ring of at least max_wr slots (SCIRE_METHOD_SRQ_RESIZE). Posting
 * is held off across the call: the kernel moves the WQEs posted up to our
 * producer index, which must not move while it does. The indices carry
 * on in the new ring, so rq.prod stands.
 */
static int scire_srq_resize(struct scire_srq *srq, uint32_t max_wr)
{
	struct scire_context *ctx = to_scire_ctx(srq->vsrq.srq.context);
	DECLARE_VERBS_CMD(cmd, UVERBS_OBJECT_SRQ, SCIRE_METHOD_SRQ_RESIZE, 3);
	struct scire_create_srq_resp resp = {};
	struct scire_wq rq = {};
	int ret;

	fill_attr_in_obj(cmd, SCIRE_ATTR_SRQ_RESIZE_HANDLE, srq->vsrq.srq.handle);
	fill_attr_in_uint32(cmd, SCIRE_ATTR_SRQ_RESIZE_MAX_WR, max_wr);
	fill_attr_out_ptr(cmd, SCIRE_ATTR_SRQ_RESIZE_RESP, &resp);

	scire_wq_lock(&srq->rq);
	ret = execute_ioctl(&ctx->vctx.context, cmd);
	if (ret)
		goto out;
	/*
	 * The kernel has switched rings. If the new one cannot be mapped the
	 * SRQ is lost to us either way; keep the old mapping so posters
	 * write valid memory (the kernel just never reads it again).
	 */
	ret = scire_wq_setup(ctx, &rq, "SRQ", resp.mmap_offset, resp.mmap_size,
			     resp.num_entries, resp.wqe_size,
			     sizeof(struct scire_recv_wqe) +
			     (uint64_t)srq->rq.max_sge * sizeof(struct scire_sge));
	if (ret)
		goto out;
	if (resp.max_sge != srq->rq.max_sge || resp.srqn != srq->srqn) {
		verbs_err(&ctx->vctx, "SRQ %u: resized to %u SGEs, SRQ %u\n",
			  srq->srqn, resp.max_sge, resp.srqn);
		scire_wq_teardown(&rq);
		ret = EPROTO;
		goto out;
	}
	munmap(srq->rq.ring, srq->rq.map_size);
	srq->rq.ring = rq.ring;
	srq->rq.map_size = rq.map_size;
	srq->rq.num_entries = rq.num_entries;
	/* The SRQ keeps its own lock; the one setup made is not needed. */
	pthread_spin_destroy(&rq.lock);
out:
	scire_wq_unlock(&srq->rq);
	return ret;
}

int scire_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct scire_srq *srq = to_scire_srq(ibsrq);
	struct ibv_modify_srq cmd = {};
	int ret;

	if (attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (attr_mask & IBV_SRQ_MAX_WR) {
		ret = scire_srq_resize(srq, attr->max_wr);
		if (ret)
			return ret;
		attr->max_wr = srq->rq.num_entries;
		attr_mask &= ~IBV_SRQ_MAX_WR;
		if (!attr_mask)
			return 0;
	}
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
