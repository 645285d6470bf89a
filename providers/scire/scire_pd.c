// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: protection domains, XRC domains (ibv_open_xrcd(3)), and the
 * parent and thread domains of ibv_alloc_parent_domain(3) and
 * ibv_alloc_td(3), which are the provider's
 * alone: the kernel only ever sees the PD a parent domain wraps (its handle
 * is that PD's). What they change is in scire_qp.c and scire_cq.c: a QP or
 * CQ created with a parent domain that has a TD takes no spinlock, and one
 * whose parent domain has allocators gets its heap memory from them.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>

#include "scire.h"

struct ibv_pd *scire_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct scire_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	/* ALLOC_PD has no scire payload either way. */
	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibpd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibpd;
}

int scire_dealloc_pd(struct ibv_pd *ibpd)
{
	struct scire_pd *pd = to_scire_pd(ibpd);
	int ret;

	/* A parent domain or a PD in use by parent domains: EBUSY. */
	if (__atomic_load_n(&pd->users, __ATOMIC_RELAXED))
		return EBUSY;

	if (pd->real) {
		/* A parent domain: no kernel object, only our references. */
		if (pd->td)
			__atomic_sub_fetch(&pd->td->users, 1, __ATOMIC_RELAXED);
		scire_pd_put(pd->real);
		free(pd);
		return 0;
	}

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;	/* EBUSY while an MR, QP, ... uses it */
	free(pd);
	return 0;
}

#define SCIRE_PARENT_DOMAIN_MASK					\
	(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |			\
	 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

/*
 * ibv_alloc_parent_domain(): attr->pd must be a PD of this context (not a
 * parent domain), attr->td NULL or a TD of this context, and with
 * IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS both callbacks set: EINVAL
 * otherwise. comp_mask bits beyond those two: EOPNOTSUPP.
 */
struct ibv_pd *scire_alloc_parent_domain(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr)
{
	struct scire_pd *real, *pd;

	if (attr->comp_mask & ~(uint32_t)SCIRE_PARENT_DOMAIN_MASK) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != ibctx ||
	    to_scire_pd(attr->pd)->real ||
	    (attr->td && attr->td->context != ibctx) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	real = to_scire_pd(attr->pd);

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibpd.context = ibctx;
	pd->ibpd.handle = real->ibpd.handle;
	pd->real = real;
	if (attr->td) {
		pd->td = to_scire_td(attr->td);
		__atomic_add_fetch(&pd->td->users, 1, __ATOMIC_RELAXED);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	scire_pd_get(real);
	return &pd->ibpd;
}

/* ibv_alloc_td(): no comp_mask bits are defined (EOPNOTSUPP for any). */
struct ibv_td *scire_alloc_td(struct ibv_context *ibctx,
			      struct ibv_td_init_attr *attr)
{
	struct scire_td *td;

	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibtd.context = ibctx;
	return &td->ibtd;
}

/* ibv_dealloc_td(): EBUSY while a parent domain carries the TD. */
int scire_dealloc_td(struct ibv_td *ibtd)
{
	struct scire_td *td = to_scire_td(ibtd);

	if (__atomic_load_n(&td->users, __ATOMIC_RELAXED))
		return EBUSY;
	free(td);
	return 0;
}

/*
 * ibv_open_xrcd(): an XRC domain, shared by the processes that open the
 * same file (the kernel keys it by the inode of the fd passed; O_CREAT
 * makes a domain for a file that has none). Who may open the file may
 * open the domain. No scire payload.
 */
struct ibv_xrcd *scire_open_xrcd(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

int scire_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	/* xrcd is the first member of struct verbs_xrcd. */
	struct verbs_xrcd *xrcd = (struct verbs_xrcd *)ibxrcd;
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;	/* still in use: SRQs or QPs of it remain */
	free(xrcd);
	return 0;
}
