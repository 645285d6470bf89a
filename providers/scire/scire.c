// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: device matching, context and the verbs that are plain commands
 * (query, MR). PDs, parent and thread domains are in scire_pd.c. The data path lives in scire_cq.c (CQs), scire_qp.c
 * (QPs, posting, ibv_wr_*), scire_srq.c (SRQs) and scire_mw.c (windows);
 * address handles and multicast in scire_ah.c.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scire.h"

/*
 * SCIRE_DRIVER_ID is RDMA_DRIVER_UNKNOWN (scire.h); libibverbs never
 * matches 0 against a table. Device names are free-form (eth0_scire,
 * roce0, ...), so the name is no use either: match_device reads the ABI
 * attribute every scire device exports in its sysfs directory.
 */

static bool scire_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[16];
	unsigned long ver;
	char *end;
	int len;

	len = ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev, "%s",
					SCIRE_SYSFS_ABI_ATTR);
	if (len <= 0)
		return false;	/* not a scire device */

	errno = 0;
	ver = strtoul(buf, &end, 10);
	if (errno || end == buf || *end != '\0')
		return false;
	if (ver != SCIRE_UVERBS_ABI_VERSION) {
		/*
		 * A scire device, but a module built from another ABI: say so,
		 * since libibverbs will otherwise hide the device in silence.
		 */
		fprintf(stderr,
			"libscire: %s speaks scire ABI %lu, this provider ABI %u; device ignored\n",
			sysfs_dev->ibdev_name, ver, SCIRE_UVERBS_ABI_VERSION);
		return false;
	}
	return true;
}

static struct verbs_device *scire_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct scire_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void scire_uninit_device(struct verbs_device *vdev)
{
	free((struct scire_device *)((char *)vdev - offsetof(struct scire_device, vdev)));
}

static int scire_query_device_ex(struct ibv_context *ibctx,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp = {};
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	/* The core leaves fw_ver text to providers; scire packs it 16.16.16. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

/*
 * ibv_query_rt_values_ex(): the completion clock's value now, without a
 * system call. The clock ticks at 1 GHz (hca_core_clock 1000000 kHz) and is
 * CLOCK_MONOTONIC, so the timespec is that clock's time: its nanoseconds
 * (tv_sec * 10^9 + tv_nsec) are the ticks a completion timestamp counts.
 */
static int scire_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values)
{
	uint32_t asked = values->comp_mask;

	/* comp_mask in: the values asked for; out: those filled in. */
	values->comp_mask = 0;
	if (asked & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(CLOCK_MONOTONIC, &values->raw_clock))
			return errno;
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}

static int scire_query_port(struct ibv_context *ibctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_mr *scire_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	/*
	 * Access flags, length and address are the kernel's to judge (it pins
	 * the pages and checks the flags); REG_MR has no scire payload.
	 */
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_advise_mr(): prefetch ranges of ODP MRs (IBV_ACCESS_ON_DEMAND). The
 * kernel faults the pages in, before returning with
 * IBV_ADVISE_MR_FLAG_FLUSH and without it too; it checks the lkeys, ranges
 * and advice.
 */
static int scire_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			   uint32_t flags, struct ibv_sge *sg_list,
			   uint32_t num_sges)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sges);
}

/*
 * ibv_reg_dmabuf_mr(): bytes [offset, offset + length) of the dma-buf fd,
 * known by iova. The kernel maps the buffer and checks everything (the
 * range against the buffer, the access flags); the method carries no
 * scire payload.
 */
static struct ibv_mr *scire_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					  size_t length, uint64_t iova, int fd,
					  int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = scire_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access,
				      vmr);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_rereg_mr(): the kernel reregisters the MR in place, keeping its lkey
 * and rkey (which ibv_cmd_rereg_mr() copies back from the response); it
 * refuses while memory windows are bound (EBUSY). The new virtual address
 * is also the iova, as for ibv_reg_mr(). Flags other than translation, PD
 * and access (IBV_REREG_MR_KEEP_VALID: keep the old registration valid on
 * failure) are not offered. REREG_MR has no scire payload.
 */
static int scire_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	if (flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
		      IBV_REREG_MR_CHANGE_ACCESS))
		return EOPNOTSUPP;
	return ibv_cmd_rereg_mr(vmr, (uint32_t)flags, addr, length,
				(uintptr_t)addr, access, pd, &cmd, sizeof(cmd),
				&resp, sizeof(resp));
}

static int scire_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

static void scire_free_context(struct ibv_context *ibctx)
{
	struct scire_context *ctx = to_scire_ctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops scire_ctx_ops = {
	.advise_mr = scire_advise_mr,
	.alloc_dm = scire_alloc_dm,
	.alloc_mw = scire_alloc_mw,
	.alloc_parent_domain = scire_alloc_parent_domain,
	.alloc_pd = scire_alloc_pd,
	.alloc_td = scire_alloc_td,
	.close_xrcd = scire_close_xrcd,
	.attach_mcast = scire_attach_mcast,
	.bind_mw = scire_bind_mw,
	.create_ah = scire_create_ah,
	.create_cq = scire_create_cq,
	.create_cq_ex = scire_create_cq_ex,
	.create_flow = scire_create_flow,
	.create_qp = scire_create_qp,
	.create_qp_ex = scire_create_qp_ex,
	.create_rwq_ind_table = scire_create_rwq_ind_table,
	.create_srq = scire_create_srq,
	.create_srq_ex = scire_create_srq_ex,
	.create_wq = scire_create_wq,
	.dealloc_mw = scire_dealloc_mw,
	.dealloc_pd = scire_dealloc_pd,
	.dealloc_td = scire_dealloc_td,
	.dereg_mr = scire_dereg_mr,
	.destroy_ah = scire_destroy_ah,
	.destroy_cq = scire_destroy_cq,
	.destroy_flow = scire_destroy_flow,
	.destroy_qp = scire_destroy_qp,
	.destroy_rwq_ind_table = scire_destroy_rwq_ind_table,
	.destroy_srq = scire_destroy_srq,
	.destroy_wq = scire_destroy_wq,
	.detach_mcast = scire_detach_mcast,
	.free_context = scire_free_context,
	.free_dm = scire_free_dm,
	.get_srq_num = scire_get_srq_num,
	.modify_qp = scire_modify_qp,
	.modify_srq = scire_modify_srq,
	.modify_wq = scire_modify_wq,
	.open_qp = scire_open_qp,
	.open_xrcd = scire_open_xrcd,
	.poll_cq = scire_poll_cq,
	.post_recv = scire_post_recv,
	.post_send = scire_post_send,
	.post_srq_recv = scire_post_srq_recv,
	.query_device_ex = scire_query_device_ex,
	.query_rt_values = scire_query_rt_values,
	.query_port = scire_query_port,
	.query_qp = scire_query_qp,
	.query_srq = scire_query_srq,
	.reg_dm_mr = scire_reg_dm_mr,
	.reg_dmabuf_mr = scire_reg_dmabuf_mr,
	.reg_mr = scire_reg_mr,
	.req_notify_cq = scire_req_notify_cq,
	.rereg_mr = scire_rereg_mr,
	.resize_cq = scire_resize_cq,
};

/*
 * Check what GET_CONTEXT told us about the rings before any is mapped: a
 * module whose CQE or ring layout differs from ours would otherwise be read
 * as garbage. Returns 0 or EPROTO.
 */
static int scire_check_ucontext(struct scire_context *ctx,
				const struct scire_alloc_ucontext_resp *uresp)
{
	if (uresp->abi_version != SCIRE_UVERBS_ABI_VERSION) {
		verbs_err(&ctx->vctx, "kernel scire ABI %u, provider ABI %u\n",
			  uresp->abi_version, SCIRE_UVERBS_ABI_VERSION);
		return EPROTO;
	}
	if (uresp->cqe_size != sizeof(struct scire_cqe)) {
		verbs_err(&ctx->vctx, "kernel CQE is %u bytes, provider's %zu\n",
			  uresp->cqe_size, sizeof(struct scire_cqe));
		return EPROTO;
	}
	if (uresp->cq_ring_hdr_size < sizeof(struct scire_cq_ring) ||
	    uresp->cq_ring_hdr_size % sizeof(struct scire_cqe)) {
		verbs_err(&ctx->vctx, "kernel CQ ring header of %u bytes is unusable\n",
			  uresp->cq_ring_hdr_size);
		return EPROTO;
	}
	if (!uresp->max_cqe) {
		verbs_err(&ctx->vctx, "kernel reports max_cqe 0\n");
		return EPROTO;
	}
	return 0;
}

static struct verbs_context *scire_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd, void *private_data)
{
	struct scire_get_context_resp resp = {};
	struct ibv_get_context cmd;
	struct scire_context *ctx;
	int ret;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
					    &((struct scire_context *)NULL)->vctx,
					    SCIRE_DRIVER_ID);
	if (!ctx)
		return NULL;	/* cmd_fd already closed */

	/* No request payload: GET_CONTEXT defines none. */
	ret = scire_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err;

	/*
	 * resp was zeroed: a kernel that wrote no payload shows abi_version 0
	 * and is refused below.
	 */
	ret = scire_check_ucontext(ctx, &resp.drv_payload);
	if (ret)
		goto err;

	ctx->cq_ring_hdr_size = resp.drv_payload.cq_ring_hdr_size;
	ctx->max_cqe = resp.drv_payload.max_cqe;
	verbs_set_ops(&ctx->vctx, &scire_ctx_ops);
	return &ctx->vctx;

err:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static const struct verbs_match_ent scire_match_table[] = {
	{},	/* matching is scire_match_device's job */
};

static const struct verbs_device_ops scire_dev_ops = {
	.name = "scire",
	.match_min_abi_version = SCIRE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SCIRE_UVERBS_ABI_VERSION,
	.match_table = scire_match_table,
	.match_device = scire_match_device,
	.alloc_device = scire_alloc_device,
	.uninit_device = scire_uninit_device,
	.alloc_context = scire_alloc_context,
};

/* Runs at dlopen time, as rdma-core's PROVIDER_DRIVER() constructor does. */
static void __attribute__((constructor)) scire_register_driver(void)
{
	scire_verbs_register_driver(&scire_dev_ops);
}
