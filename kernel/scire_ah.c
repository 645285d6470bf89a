// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: address handles (IBA 10.2.2, 11.2.2).
 *
 * An AH is a resolved RoCEv2 (on scire_ib: InfiniBand, LID-addressed)
 * address vector in the device's AH table. A UD
 * send WQE names its AH by number (user space cannot hand the kernel a
 * pointer), and the requester copies the address vector out under the
 * table's lock, so an AH destroyed while WQEs naming it are queued only
 * makes those WQEs fail; nothing ever reads a freed AH.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <rdma/uverbs_ioctl.h>

#include "scire.h"

/*
 * Forget AH number @num. Interrupts saved: ib_sa destroys its SM's AH
 * holding a spinlock with them off (free_sm_ah() under ah_lock).
 */
static void scire_ah_erase(struct scire_dev *sdev, u32 num)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_erase(&sdev->ah_xa, num);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
}

/**
 * scire_create_ah() - create an address handle (IBA 11.2.2.1).
 * @ibah: the core-allocated AH (PD set).
 * @init: the address: a RoCE AH attribute on port 1 with a GRH whose
 *	  source GID is a RoCE v2 GID of this device (the core holds it and
 *	  has resolved the destination MAC), or on a scire_ib device an IB
 *	  one (DLID, SL, optional GRH); RDMA_CREATE_AH_SLEEPABLE in
 *	  @init->flags when the caller may sleep.
 * @udata: CREATE_AH UHW for a user AH: no request fields; the response is
 *	   struct scire_create_ah_resp. NULL for a kernel AH.
 *
 * Context: process context, or atomic context for a kernel caller without
 * RDMA_CREATE_AH_SLEEPABLE (ib_create_ah_from_wc() in a MAD handler).
 * Return: 0; -EINVAL for an attribute scire_av_init() refuses, a port
 * other than 1, a non-zero UHW request or a short response buffer;
 * -ENOMEM, also past SCIRE_MAX_AH; -EBUSY if no AH number is free;
 * -EFAULT if the response cannot be written.
 */
int scire_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct scire_dev *sdev = to_sdev(ibah->device);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							      GFP_ATOMIC;
	struct scire_ah *ah = to_sah(ibah);
	struct scire_create_ah_resp resp = {};
	unsigned long flags;
	int ret;

	if (udata && (!scire_udata_in_ok(udata) ||
		      udata->outlen < sizeof(resp)))
		return -EINVAL;
	if (rdma_ah_get_port_num(init->ah_attr) != 1)
		return -EINVAL;
	ret = scire_av_init(sdev, &ah->av, init->ah_attr);
	if (ret)
		return ret;

	if (atomic_inc_return(&sdev->num_ah) > SCIRE_MAX_AH) {
		ret = -ENOMEM;
		goto err_count;
	}
	/*
	 * Interrupts saved, not enabled: a non-sleepable caller may hold a
	 * spinlock with them off. A sleepable one has them on, so the
	 * allocation may drop the lock to sleep.
	 */
	xa_lock_irqsave(&sdev->ah_xa, flags);
	ret = __xa_alloc_cyclic(&sdev->ah_xa, &ah->ah_num, ah, xa_limit_32b,
				&sdev->ah_next, gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (ret < 0)
		goto err_count;

	if (udata) {
		resp.ah_num = ah->ah_num;
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_xa;
	}
	return 0;

err_xa:
	scire_ah_erase(sdev, ah->ah_num);
err_count:
	atomic_dec(&sdev->num_ah);
	return ret;
}

/**
 * scire_query_ah() - read an address handle back (IBA 11.2.2.2).
 * @ibah: the AH.
 * @attr: filled in whole, type included: callers (the MAD layer's
 *	  rcv_has_same_gid()) pass it uninitialised.
 *
 * The MAD layer matches a response to its request by comparing the
 * request's AH with the response's work completion, so this is what lets
 * a management response reach the agent that asked.
 *
 * Context: any.
 * Return: 0.
 */
int scire_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct scire_av *av = &to_sah(ibah)->av;

	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	if (av->network_type == RDMA_NETWORK_IB) {
		rdma_ah_set_dlid(attr, av->dlid);
		rdma_ah_set_path_bits(attr, av->src_path_bits);
		if (!av->ib_grh)
			return 0;
	} else {
		memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
	}
	rdma_ah_set_grh(attr, &av->dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	return 0;
}

/**
 * scire_destroy_ah() - destroy an address handle (IBA 11.2.2.3).
 * @ibah: the AH.
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0; scire never sleeps here.
 *
 * The AH number stops resolving before this returns; a queued UD WQE that
 * still names it completes with IB_WC_LOC_QP_OP_ERR.
 *
 * Context: any.
 * Return: 0.
 */
int scire_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct scire_dev *sdev = to_sdev(ibah->device);

	scire_ah_erase(sdev, to_sah(ibah)->ah_num);
	atomic_dec(&sdev->num_ah);
	return 0;
}

/**
 * scire_ah_av() - the address vector of the AH a UD WQE names.
 * @qp: the sending QP; the AH must belong to its PD (IBA 10.2.2).
 * @ah_num: the WQE's AH number (untrusted for a user QP).
 * @av: filled with a copy of the AH's address vector.
 *
 * Context: any; takes the AH table's lock with interrupts saved.
 * Return: 0, or -EINVAL if no AH of @qp's PD has that number.
 */
int scire_ah_av(struct scire_qp *qp, u32 ah_num, struct scire_av *av)
{
	struct xarray *xa = &qp->sdev->ah_xa;
	struct scire_ah *ah;
	unsigned long flags;
	int ret = -EINVAL;

	xa_lock_irqsave(xa, flags);
	ah = xa_load(xa, ah_num);
	if (ah && ah->ibah.pd == qp->ibqp.pd) {
		*av = ah->av;
		ret = 0;
	}
	xa_unlock_irqrestore(xa, flags);
	return ret;
}
