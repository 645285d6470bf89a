// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the driver's own uverbs methods (ib_device.driver_def).
 *
 * User space posts to the mapped SQ and RQ rings without system calls; the
 * one call it makes is the doorbell, a driver method added to the core's QP
 * object, so the core looks up and locks the QP handle for us. Ids come
 * from include/uapi/rdma/scire-abi.h.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include "scire.h"

#define UVERBS_MODULE_NAME scire_ib
#include <rdma/uverbs_named_ioctl.h>

static int UVERBS_HANDLER(SCIRE_METHOD_QP_DOORBELL)(struct uverbs_attr_bundle *attrs)
{
	struct ib_qp *ibqp = uverbs_attr_get_obj(attrs,
						 SCIRE_ATTR_DOORBELL_QP_HANDLE);
	u32 flags;
	int ret;

	if (IS_ERR(ibqp))
		return PTR_ERR(ibqp);
	/* An XRC target's handle is the core's, and it has no queue. */
	if (ibqp->qp_type == IB_QPT_XRC_TGT)
		return -EINVAL;
	/* scire_qp_doorbell() decides which bits are known. */
	ret = uverbs_get_flags32(&flags, attrs, SCIRE_ATTR_DOORBELL_FLAGS,
				 U32_MAX);
	if (ret)
		return ret;
	return scire_qp_doorbell(to_sqp(ibqp), flags);
}

/*
 * READ access: the core holds the QP handle shared for the call, so a
 * concurrent destroy (which takes it exclusively) waits for the doorbell.
 */
DECLARE_UVERBS_NAMED_METHOD(SCIRE_METHOD_QP_DOORBELL,
			    UVERBS_ATTR_IDR(SCIRE_ATTR_DOORBELL_QP_HANDLE,
					    UVERBS_OBJECT_QP,
					    UVERBS_ACCESS_READ,
					    UA_MANDATORY),
			    UVERBS_ATTR_FLAGS_IN(SCIRE_ATTR_DOORBELL_FLAGS,
						 enum scire_doorbell_flags,
						 UA_MANDATORY));

ADD_UVERBS_METHODS(scire_qp_methods, UVERBS_OBJECT_QP,
		   &UVERBS_METHOD(SCIRE_METHOD_QP_DOORBELL));

static int UVERBS_HANDLER(SCIRE_METHOD_SRQ_RESIZE)(struct uverbs_attr_bundle *attrs)
{
	struct ib_srq *ibsrq = uverbs_attr_get_obj(attrs,
						   SCIRE_ATTR_SRQ_RESIZE_HANDLE);
	struct scire_create_srq_resp resp;
	struct scire_srq *srq;
	u32 max_wr;
	int ret;

	if (IS_ERR(ibsrq))
		return PTR_ERR(ibsrq);
	srq = to_ssrq(ibsrq);
	/* A kernel SRQ has no handle; an XRC SRQ is not scire's. */
	if (!srq->rq.mmap)
		return -EINVAL;
	ret = uverbs_copy_from(&max_wr, attrs, SCIRE_ATTR_SRQ_RESIZE_MAX_WR);
	if (ret)
		return ret;
	ret = scire_srq_resize(srq, max_wr, &attrs->driver_udata);
	if (ret)
		return ret;
	scire_srq_resp(srq, &resp);
	return uverbs_copy_to(attrs, SCIRE_ATTR_SRQ_RESIZE_RESP, &resp,
			      sizeof(resp));
}

/*
 * WRITE access: the core holds the SRQ handle exclusively, so no other
 * resize, modify or destroy of it runs meanwhile.
 */
DECLARE_UVERBS_NAMED_METHOD(SCIRE_METHOD_SRQ_RESIZE,
			    UVERBS_ATTR_IDR(SCIRE_ATTR_SRQ_RESIZE_HANDLE,
					    UVERBS_OBJECT_SRQ,
					    UVERBS_ACCESS_WRITE,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(SCIRE_ATTR_SRQ_RESIZE_MAX_WR,
					       UVERBS_ATTR_TYPE(u32),
					       UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SCIRE_ATTR_SRQ_RESIZE_RESP,
						UVERBS_ATTR_STRUCT(struct scire_create_srq_resp,
								   max_sge),
						UA_MANDATORY));

ADD_UVERBS_METHODS(scire_srq_methods, UVERBS_OBJECT_SRQ,
		   &UVERBS_METHOD(SCIRE_METHOD_SRQ_RESIZE));

/* ibv_alloc_dm: where to mmap the memory (scire_alloc_dm()). */
ADD_UVERBS_ATTRIBUTES_SIMPLE(scire_dm_alloc_attrs, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(SCIRE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

const struct uapi_definition scire_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_QP, &scire_qp_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_SRQ, &scire_srq_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &scire_dm_alloc_attrs),
	{},
};
