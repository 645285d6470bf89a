// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: device, port, user context, mmap and PD verbs.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "scire.h"

/**
 * scire_udata_in_ok() - check a UHW request scire defines no fields for.
 * @udata: the core's udata, or NULL for a kernel caller.
 *
 * A request that carries bytes must carry zeros only: a non-zero byte is a
 * field a newer provider expects this module to understand, and ignoring it
 * silently would change the meaning of the call.
 *
 * Return: true if the request may be served.
 */
bool scire_udata_in_ok(struct ib_udata *udata)
{
	return !udata || !udata->inlen ||
	       ib_is_udata_cleared(udata, 0, udata->inlen);
}

/**
 * scire_query_device() - report the device's attributes and limits.
 * @ibdev: the device.
 * @attr: filled in.
 * @udata: UHW of QUERY_DEVICE_EX; scire defines none, so it must be empty.
 *
 * The limits are the SCIRE_MAX_* bounds of scire.h. Atomics are reported
 * as IB_ATOMIC_HCA, as mlx5 and rxe report them, although they are
 * stronger: the responder performs them on the target memory with CPU
 * atomic instructions, so they are atomic against the CPU too, which is
 * what IB_ATOMIC_GLOB promises. UCX before 1.16 (bookworm has 1.13)
 * enables verbs atomics only when atomic_cap equals IBV_ATOMIC_HCA and
 * took GLOB for no atomics at all; HCA's promise (atomic among the
 * device's own atomics) is one scire keeps.
 *
 * Return: 0, or -EINVAL for a non-empty UHW.
 */
int scire_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = SCIRE_UVERBS_ABI_VERSION;
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->max_mr_size = SCIRE_MAX_MR_SIZE;
	attr->max_dm_size = SCIRE_MAX_DM_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SCIRE_VENDOR_ID;
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	attr->max_cq = SCIRE_MAX_CQ;
	attr->max_cqe = SCIRE_MAX_CQE;
	attr->max_mr = SCIRE_MAX_MR;
	attr->max_pd = SCIRE_MAX_PD;
	attr->max_pkeys = scire_pkey_tbl_len(sdev);
	attr->max_qp = SCIRE_MAX_QP;
	attr->max_qp_wr = SCIRE_MAX_QP_WR;
	attr->max_send_sge = SCIRE_MAX_SGE;
	attr->max_recv_sge = SCIRE_MAX_SGE;
	attr->max_sge_rd = SCIRE_MAX_SGE;
	attr->max_qp_rd_atom = SCIRE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SCIRE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SCIRE_MAX_RD_ATOMIC * SCIRE_MAX_QP;
	attr->max_srq = SCIRE_MAX_SRQ;
	attr->max_srq_wr = SCIRE_MAX_SRQ_WR;
	attr->max_srq_sge = SCIRE_MAX_SGE;
	attr->max_fast_reg_page_list_len = SCIRE_MAX_MR_PAGES;
	attr->max_pi_fast_reg_page_list_len = 0;
	attr->max_mw = SCIRE_MAX_MR;
	attr->max_ah = SCIRE_MAX_AH;
	attr->max_mcast_grp = SCIRE_MAX_MCG;
	attr->max_mcast_qp_attach = SCIRE_MAX_MCG_QP;
	attr->max_total_mcast_qp_attach = SCIRE_MAX_MCG_ATTACH;
	attr->atomic_cap = IB_ATOMIC_HCA;
	/*
	 * Completion timestamps count CLOCK_MONOTONIC nanoseconds: a 1 GHz
	 * "HCA clock" (hca_core_clock is in kHz) that never wraps, and the
	 * clock user space reads without a system call, so the provider's
	 * ibv_query_rt_values_ex() and its wallclock conversion need none.
	 */
	attr->hca_core_clock = 1000000;
	attr->timestamp_mask = U64_MAX;
	/*
	 * MEM_WINDOW: type 1 windows (IBA 10.6.7.1). Not MEM_WINDOW_TYPE_2A
	 * or _2B: scire's type 2 windows are bound by a work request but
	 * belong to the PD only; the responder does not tie them to the QP
	 * that bound them, as 2A and 2B windows are (IBA 10.6.7.2).
	 */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_XRC |
				 SCIRE_DEVICE_ATOMIC_WRITE |
				 SCIRE_DEVICE_FLUSH_GLOBAL |
				 SCIRE_DEVICE_FLUSH_PERSISTENT;
	/*
	 * No IBK_LOCAL_DMA_LKEY: the core gives each kernel PD a DMA MR of
	 * its own, so the PD check covers local_dma_lkey too.
	 */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	/* Raw Ethernet QPs and their flows (scire_raw.c): RoCE ports only. */
	if (sdev->link == SCIRE_LINK_ROCE) {
		attr->device_cap_flags |= IB_DEVICE_MANAGED_FLOW_STEERING;
		attr->max_raw_ethy_qp = SCIRE_MAX_QP;
		/* RSS over receive WQs (scire_rwq.c). */
		attr->max_wq_type_rq = SCIRE_MAX_SRQ;
		attr->rss_caps.supported_qpts = BIT(IB_QPT_RAW_PACKET);
		attr->rss_caps.max_rwq_indirection_tables = SCIRE_MAX_SRQ;
		attr->rss_caps.max_rwq_indirection_table_size =
			1U << SCIRE_RSS_MAX_LOG_TABLE;
	}
	/*
	 * ODP MRs (kernel/scire_odp.c), explicit and implicit (the whole
	 * address space), serve every access of every transport on both
	 * paths.
	 */
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV |
		SCIRE_ODP_SUPPORT_FLUSH | SCIRE_ODP_SUPPORT_ATOMIC_WRITE;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
	/*
	 * XRC is RC's transport; its receive QP always runs in process
	 * context (scire_qp_bh_ok()), where a fault may sleep.
	 */
	attr->odp_caps.per_transport_caps.xrc_odp_caps =
		attr->odp_caps.per_transport_caps.rc_odp_caps;
	return 0;
}

/**
 * scire_active_mtu() - the largest IB MTU whose RoCEv2 packet fits the
 * netdev MTU.
 * @sdev: the device.
 *
 * The one definition of the port's active MTU: query_port reports it and
 * modify_qp bounds the path MTU by it. A scire_ib port's is its MTUCap
 * (scire_ib_mtu_cap()).
 *
 * Context: any.
 * Return: IB_MTU_256..IB_MTU_4096.
 */
enum ib_mtu scire_active_mtu(struct scire_dev *sdev)
{
	int payload;

	if (sdev->link == SCIRE_LINK_IB)
		return scire_ib_mtu_cap(sdev);
	payload = READ_ONCE(sdev->netdev->mtu) - SCIRE_MAX_HDR_LEN;
	return min(ib_mtu_int_to_enum(payload), IB_MTU_4096);
}

/**
 * scire_query_port() - report port 1's attributes.
 * @ibdev: the device.
 * @port: port number; the core only passes valid ones (1).
 * @attr: filled in; the core zeroed it.
 *
 * State follows the netdev (running with carrier: ACTIVE). The active MTU
 * is the largest IB MTU whose RoCEv2 packet fits the netdev MTU.
 *
 * Return: 0.
 */
int scire_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	unsigned long flags;

	spin_lock_irqsave(&sdev->port_lock, flags);
	attr->state = sdev->port_state;
	spin_unlock_irqrestore(&sdev->port_lock, flags);

	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
		IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = scire_active_mtu(sdev);
	attr->gid_tbl_len = SCIRE_GID_TBL_LEN;
	attr->pkey_tbl_len = SCIRE_PKEY_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 31;
	attr->max_vl_num = 1;
	return ib_get_eth_speed(ibdev, port, &attr->active_speed,
				&attr->active_width);
}

/**
 * scire_query_pkey() - read the P_Key table (one entry: the default P_Key).
 * @ibdev: the device.
 * @port: port number.
 * @index: table index.
 * @pkey: filled in.
 *
 * Return: 0, or -EINVAL for an index past the table.
 */
int scire_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= SCIRE_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/**
 * scire_get_port_immutable() - port properties fixed for the device's life.
 * @ibdev: the device.
 * @port: port number.
 * @immutable: filled in.
 *
 * The port speaks RoCEv2 (RoCE over UDP, IBA Annex A17); the core then builds
 * the GID table from the netdev's IP addresses.
 *
 * Return: 0, or an error from ib_query_port().
 */
int scire_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int ret;

	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/**
 * scire_get_link_layer() - the link layer of a port.
 * @ibdev: the device.
 * @port: port number.
 *
 * Return: IB_LINK_LAYER_ETHERNET.
 */
enum rdma_link_layer scire_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/**
 * scire_alloc_ucontext() - set up a user process's context.
 * @ibuc: the core-allocated context.
 * @udata: GET_CONTEXT UHW: no request fields; the response is
 *	   struct scire_alloc_ucontext_resp and must fit whole.
 *
 * Return: 0, -EINVAL for a non-zero request or a short response buffer,
 * -EFAULT if the response cannot be written.
 */
int scire_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct scire_alloc_ucontext_resp resp = {
		.abi_version = SCIRE_UVERBS_ABI_VERSION,
		.cqe_size = sizeof(struct scire_cqe),
		.cq_ring_hdr_size = offsetof(struct scire_cq_ring, cqe),
		.max_cqe = SCIRE_MAX_CQE,
	};

	if (!scire_udata_in_ok(udata) || udata->outlen < sizeof(resp))
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/**
 * scire_dealloc_ucontext() - release a user context.
 * @ibuc: the context; every object in it has been destroyed by the core.
 */
void scire_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * scire_disassociate_ucontext() - cut a live context off its device.
 * @ibuc: the context of a process that still holds the device open.
 *
 * Called when the device goes away under a running process. Providing it
 * lets the core destroy the process's objects, zap its mappings and send it
 * IB_EVENT_DEVICE_FATAL instead of blocking "rdma link delete" until the
 * process exits. Every scire resource of a context is an object the core
 * destroys or an mmap entry it zaps, so nothing is left to do here.
 */
void scire_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * scire_mmap_alloc() - allocate memory a user context can map.
 * @ibuc: the context.
 * @size: bytes; rounded up to whole pages.
 *
 * The memory is zeroed vmalloc memory charged to the caller's memory
 * cgroup: a ring is as big as the process asks (a CQ of max_cqe entries
 * is 64 MiB), so the process pays for it as for its own memory, and a
 * cgroup at its limit gets -ENOMEM rather than an OOM kill. It belongs to
 * the returned entry: scire_mmap_remove() withdraws it from the driver,
 * and it is freed once no VMA maps it either.
 *
 * Context: process context, may sleep.
 * Return: the entry, or an ERR_PTR: -ENOMEM, or an error of
 * rdma_user_mmap_entry_insert().
 */
struct scire_mmap_entry *scire_mmap_alloc(struct ib_ucontext *ibuc,
					  size_t size)
{
	struct scire_mmap_entry *entry;
	int ret;

	size = PAGE_ALIGN(size);
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	/* Not vmalloc_user(): it cannot charge. scire_mmap() maps by page. */
	entry->addr = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				__GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!entry->addr) {
		kfree(entry);
		return ERR_PTR(-ENOMEM);
	}
	ret = rdma_user_mmap_entry_insert(ibuc, &entry->rdma, size);
	if (ret) {
		vfree(entry->addr);
		kfree(entry);
		return ERR_PTR(ret);
	}
	return entry;
}

ALLOW_ERROR_INJECTION(scire_mmap_alloc, ERRNO);

/**
 * scire_mmap_remove() - withdraw mmap-able memory from its context.
 * @entry: from scire_mmap_alloc().
 *
 * New mmap(2) calls on the entry's offset fail; existing mappings stay
 * valid until unmapped, and the memory is freed after the last one.
 */
void scire_mmap_remove(struct scire_mmap_entry *entry)
{
	rdma_user_mmap_entry_remove(&entry->rdma);
}

/**
 * scire_mmap() - map a ring into a user process.
 * @ibuc: the context owning the mmap offset.
 * @vma: the caller's mapping; must cover the entry exactly and be shared.
 *
 * Return: 0, -EINVAL for an unknown offset, a size mismatch or a private
 * mapping, -EPERM for an executable mapping.
 */
int scire_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct scire_mmap_entry *entry;
	int ret;

	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	/* Checks the VMA's size against the entry's. */
	rdma = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma)
		return -EINVAL;
	entry = container_of(rdma, struct scire_mmap_entry, rdma);
	vm_flags_clear(vma, VM_MAYEXEC);
	ret = scire_vmalloc_insert_pages(vma, entry->addr);
	rdma_user_mmap_entry_put(rdma);
	return ret;
}

/**
 * scire_mmap_free() - free mmap-able memory once nothing refers to it.
 * @rdma: the core's entry, with no references left.
 */
void scire_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct scire_mmap_entry *entry =
		container_of(rdma, struct scire_mmap_entry, rdma);

	vfree(entry->addr);
	kfree(entry);
}

/**
 * scire_alloc_pd() - create a protection domain.
 * @ibpd: the core-allocated PD.
 * @udata: ALLOC_PD UHW (no fields), or NULL for a kernel caller.
 *
 * Return: 0, -EINVAL for a non-zero UHW request, -ENOMEM past max_pd.
 */
int scire_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibpd->device);

	if (!scire_udata_in_ok(udata))
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_pd) > SCIRE_MAX_PD) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

/**
 * scire_dealloc_pd() - destroy a protection domain.
 * @ibpd: the PD; the core has checked that no object uses it.
 * @udata: unused.
 *
 * Return: 0.
 */
int scire_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pd);
	return 0;
}
