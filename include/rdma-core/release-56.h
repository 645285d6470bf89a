/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: what rdma-core 56 (private ABI 34) lays out differently from
 * the other releases in include/rdma-core/releases, in our own words:
 * the figures of struct verbs_qp (which embeds the public ibv_qp_ex), the
 * context ops table, the name of the registration symbol and the command
 * helpers whose arguments changed. Included by driver.h only, when Meson
 * found libibverbs-dev of rdma-core 56.x. Figures measured against
 * Debian trixie's rdma-core 56.1-1 source (libibverbs/driver.h; its
 * patches touch only the mana provider) and pinned against the release's
 * public verbs.h by the static assertions below (x86_64, LP64). Its
 * driver.h differs from 44's in ibv_cmd_reg_dmabuf_mr's driver argument
 * (below) and in ibv_cmd_create_cq_ex2, which libscire does not call.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_RDMA_CORE_RELEASE_H
#define SCIRE_RDMA_CORE_RELEASE_H

/* IBVERBS_PABI_VERSION of rdma-core 56's CMakeLists.txt. */
#define RDMA_CORE_PABI_VERSION	34

/* ---- struct verbs_qp: the embedded public ibv_qp_ex sets the offsets ---- */

/*
 * rdma-core 45 appended wr_flush to ibv_qp_ex (56 still ends there): 360
 * bytes, so verbs_qp.comp_mask moved from 352 to 360 within private ABI 34.
 * A provider built with 44's figures would set VERBS_QP_EX in what libibverbs
 * 56 takes for wr_flush, and libibverbs would write comp_mask over the
 * provider's xrcd pointer.
 */
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex.qp_base");
_Static_assert(sizeof(struct ibv_qp) == 160, "ibv_qp size");
_Static_assert(offsetof(struct ibv_qp_ex, wr_id) == 168, "ibv_qp_ex.wr_id");
_Static_assert(offsetof(struct ibv_qp_ex, wr_start) == 320, "ibv_qp_ex.wr_start");
_Static_assert(offsetof(struct ibv_qp_ex, wr_atomic_write) == 344,
	       "ibv_qp_ex.wr_atomic_write");
_Static_assert(offsetof(struct ibv_qp_ex, wr_flush) == 352, "ibv_qp_ex.wr_flush");
_Static_assert(sizeof(struct ibv_qp_ex) == 360, "ibv_qp_ex size");
_Static_assert(offsetof(struct verbs_qp, qp) == 0, "verbs_qp.qp");
_Static_assert(offsetof(struct verbs_qp, qp_ex) == 0, "verbs_qp.qp_ex");
_Static_assert(offsetof(struct verbs_qp, comp_mask) == 360, "verbs_qp.comp_mask");
_Static_assert(offsetof(struct verbs_qp, xrcd) == 360 + 8, "verbs_qp.xrcd");
_Static_assert(sizeof(struct verbs_qp) == 360 + 16, "verbs_qp size");

/* verbs_context is public (verbs.h); pin what we assume of it anyway. */
_Static_assert(offsetof(struct verbs_context, context) == 320, "verbs_context.context");
_Static_assert(sizeof(struct verbs_context) == 648, "verbs_context size");

#include "abi34-ops.h"

#include "dmabuf-54.h"

#endif /* SCIRE_RDMA_CORE_RELEASE_H */
