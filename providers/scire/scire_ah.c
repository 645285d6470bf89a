// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libscire: address handles and multicast groups, for UD QPs.
 *
 * The kernel keeps the address vector (it resolves the destination MAC
 * and checks the GID index against the port's table); user space only
 * learns the number a UD WQE names the AH by (struct
 * scire_create_ah_resp.ah_num). ibv_create_ah_from_wc() is libibverbs'
 * own code: it reads the GRH the kernel put in front of a UD receive
 * (SCIRE_UD_GRH_LEN bytes) and ends up in scire_create_ah() like any AH.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <errno.h>
#include <stdlib.h>

#include "scire.h"

struct ibv_ah *scire_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct scire_create_ah_cmd_resp resp = {};
	struct scire_ah *ah;
	int ret;

	/* libibverbs hands the caller's pointer straight through. */
	if (!attr) {
		errno = EINVAL;
		return NULL;
	}

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	/*
	 * CREATE_AH takes no scire request payload; the kernel refuses an
	 * attribute set RoCE cannot route (no GRH, a GID index it does not
	 * hold, a port out of range) with EINVAL.
	 */
	ret = ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv_payload.ah_num;
	return &ah->ibah;
}

int scire_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;	/* the AH stays usable */
	free(to_scire_ah(ibah));
	return 0;
}

/*
 * The core checks the rest (a UD QP, a multicast GID) and answers EINVAL;
 * the group lives in the kernel, which delivers its messages to every
 * attached QP.
 */
int scire_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		       uint16_t lid)
{
	if (!gid)
		return EINVAL;
	return ibv_cmd_attach_mcast(ibqp, gid, lid);
}

int scire_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid,
		       uint16_t lid)
{
	if (!gid)
		return EINVAL;
	return ibv_cmd_detach_mcast(ibqp, gid, lid);
}
