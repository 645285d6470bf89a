/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * scire: the one kernel <-> user ABI.
 *
 * Everything the kernel module and the user provider (libscire) exchange is
 * declared here and nowhere else: UHW request/response payloads of the core
 * verbs, the layout of the rings shared through mmap, and the ids of scire's
 * own uverbs objects, methods and attributes.
 *
 * Ring rule, written once: the side that produces entries writes the entry,
 * then publishes the new producer index with a store-release; the side that
 * consumes reads the producer index with a load-acquire before reading any
 * entry, and publishes its consumer index with a store-release once it is done
 * with the entries. Indices are free-running 32-bit counters; the slot of
 * index i is (i & (num_entries - 1)), num_entries being a power of two.
 * The kernel never trusts an index user space wrote: it clamps and checks it.
 */
#ifndef SCIRE_ABI_USER_H
#define SCIRE_ABI_USER_H

#include <linux/types.h>

/* uverbs ABI version (ib_device_ops.uverbs_abi_ver); bump on any change here. */
#define SCIRE_UVERBS_ABI_VERSION	3

/*
 * sysfs attribute of every scire ib_device
 * (/sys/class/infiniband/<ibdev>/scire_abi_version): holds
 * SCIRE_UVERBS_ABI_VERSION in decimal. The provider matches devices on it,
 * so any device name works.
 */
#define SCIRE_SYSFS_ABI_ATTR		"scire_abi_version"

/* Size of the lines that separate producer and consumer indices. */
#define SCIRE_RING_LINE			64

/*
 * struct scire_alloc_ucontext_resp - UHW response of GET_CONTEXT.
 * @abi_version:	SCIRE_UVERBS_ABI_VERSION of the running module.
 * @comp_mask:		reserved, 0.
 * @cqe_size:		bytes per CQE in a CQ ring (sizeof(struct scire_cqe)).
 * @cq_ring_hdr_size:	bytes from the start of a CQ mapping to CQE slot 0.
 * @max_cqe:		largest num_entries a CQ ring may have.
 * @reserved:		0.
 */
struct scire_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 comp_mask;
	__u32 cqe_size;
	__u32 cq_ring_hdr_size;
	__u32 max_cqe;
	__u32 reserved;
};

/*
 * struct scire_create_cq_resp - UHW response of CREATE_CQ and RESIZE_CQ.
 * @mmap_offset:	offset to pass to mmap(2) on the uverbs fd for the ring.
 * @mmap_size:		length of that mapping in bytes.
 * @cqn:		CQ number (device-unique, for debugging and tracing).
 * @num_entries:	slots in the ring, a power of two >= the requested cqe and
 *		<= the context's max_cqe.
 *
 * CREATE_CQ and RESIZE_CQ take no UHW request; any request bytes sent must
 * be zero. After RESIZE_CQ the old mapping no longer receives CQEs: the
 * kernel has moved every unconsumed CQE and the arm bits to the new ring, in
 * order, and the new ring's producer and consumer indices equal the old
 * ones.
 */
struct scire_create_cq_resp {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 cqn;
	__u32 num_entries;
};

/* CQ arm requests (struct scire_cq_ring.arm). */
enum scire_cq_arm {
	SCIRE_CQ_ARM_NEXT	= 1 << 0,	/* event on the next CQE */
	SCIRE_CQ_ARM_SOLICITED	= 1 << 1,	/* event on the next solicited or error CQE */
};

/* CQ state flags the kernel reports (struct scire_cq_ring.flags). */
enum scire_cq_flags {
	SCIRE_CQ_F_OVERFLOW	= 1 << 0,	/* a CQE was lost; the CQ is in error */
};

/* Completion opcodes (struct scire_cqe.opcode). */
enum scire_cqe_opcode {
	SCIRE_CQE_OP_SEND		= 0,
	SCIRE_CQE_OP_RDMA_WRITE		= 1,
	SCIRE_CQE_OP_RDMA_READ		= 2,
	SCIRE_CQE_OP_COMP_SWAP		= 3,
	SCIRE_CQE_OP_FETCH_ADD		= 4,
	SCIRE_CQE_OP_LOCAL_INV		= 5,
	SCIRE_CQE_OP_REG_MR		= 6,	/* kernel CQs only */
	SCIRE_CQE_OP_BIND_MW		= 7,
	SCIRE_CQE_OP_RECV		= 8,
	SCIRE_CQE_OP_RECV_RDMA_IMM	= 9,
	SCIRE_CQE_OP_ATOMIC_WRITE	= 10,
	SCIRE_CQE_OP_FLUSH		= 11,
	SCIRE_CQE_OP_MAX,
};

/* Completion flags (struct scire_cqe.flags). */
enum scire_cqe_flags {
	SCIRE_CQE_F_GRH		= 1 << 0,	/* a GRH precedes the UD payload */
	SCIRE_CQE_F_IMM		= 1 << 1,	/* imm_data holds immediate data */
	SCIRE_CQE_F_INV		= 1 << 2,	/* imm_data holds an invalidated rkey */
	SCIRE_CQE_F_SOLICITED	= 1 << 3,	/* the SE bit was set (not reported to verbs) */
};

/*
 * The L3 header a UD or GSI receive arrived with (struct
 * scire_cqe.network_hdr_type), numbered as the kernel's enum
 * rdma_network_type.
 */
enum scire_cqe_network {
	SCIRE_CQE_NET_IB	= 0,
	SCIRE_CQE_NET_ROCE_V1	= 1,
	SCIRE_CQE_NET_IPV4	= 2,	/* RoCEv2 over IPv4 */
	SCIRE_CQE_NET_IPV6	= 3,	/* RoCEv2 over IPv6 */
};

/*
 * Completion status (struct scire_cqe.status): the IBA completion status
 * codes (IBA 11.4.2.1), numbered as enum ib_wc_status / enum ibv_wc_status.
 */
#define SCIRE_CQE_STATUS_MAX	22	/* IB_WC_GENERAL_ERR + 1 */

/*
 * struct scire_cqe - one completion queue entry, 64 bytes.
 * @wr_id:	the work request's wr_id.
 * @status:	completion status (IBA numbering, see SCIRE_CQE_STATUS_MAX).
 * @opcode:	enum scire_cqe_opcode.
 * @vendor_err:	scire-specific detail for an error status, else 0.
 * @byte_len:	bytes received (receive completions) or transferred.
 * @imm_data:	with SCIRE_CQE_F_IMM, immediate data in network byte order
 *		(as on the wire); with SCIRE_CQE_F_INV, the invalidated rkey
 *		in host byte order.
 * @qp_num:	local QP number.
 * @src_qp:	remote QP number (UD and GSI receives).
 * @flags:	enum scire_cqe_flags.
 * @pkey_index:	P_Key index (GSI receives).
 * @slid:	source LID (0 on RoCE).
 * @sl:		service level.
 * @dlid_path_bits: 0 on RoCE.
 * @network_hdr_type: enum scire_cqe_network of the received GRH (UD, GSI).
 * @reserved0:	0.
 * @smac:	source MAC (UD and GSI receives).
 * @vlan_id:	VLAN id or 0xffff.
 * @timestamp:	in a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
 *		when the CQE was written: CLOCK_MONOTONIC in nanoseconds, the
 *		device's 1 GHz completion clock (hca_core_clock 1000000 kHz);
 *		else 0. Older kernels of this ABI write 0 here.
 */
struct scire_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;
	__u32 qp_num;
	__u32 src_qp;
	__u32 flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 network_hdr_type;
	__u8 reserved0;
	__u8 smac[6];
	__u16 vlan_id;
	__aligned_u64 timestamp;
};

/*
 * struct scire_cq_ring - the head of a CQ mapping; CQE slot 0 follows at
 * cq_ring_hdr_size (struct scire_alloc_ucontext_resp).
 * @producer:	written by the kernel (store-release) after the CQE.
 * @consumer:	written by user space (store-release) after consuming.
 * @arm:	enum scire_cq_arm; user space sets bits with an atomic OR to arm
 *		the CQ, the kernel clears them with an atomic exchange when it
 *		raises the completion event.
 * @flags:	enum scire_cq_flags, written by the kernel.
 *
 * Producer, consumer and the arm word live on separate SCIRE_RING_LINE lines
 * so the two sides never write the same cache line.
 */
struct scire_cq_ring {
	__u32 producer;
	__u32 pad0[SCIRE_RING_LINE / 4 - 1];
	__u32 consumer;
	__u32 pad1[SCIRE_RING_LINE / 4 - 1];
	__u32 arm;
	__u32 flags;
	__u32 pad2[SCIRE_RING_LINE / 4 - 2];
	struct scire_cqe cqe[];
};

/*
 * Work queues: SQ, RQ and SRQ rings.
 *
 * A work queue mapping starts with a struct scire_wq_ring; WQE slot 0
 * follows at SCIRE_WQ_RING_HDR_SIZE and each slot is wqe_size bytes (a power
 * of two given in the create response). User space is the producer: it
 * writes a WQE, then publishes the producer index with a store-release. The
 * kernel is the consumer:
 *  - SQ: consumer counts WQEs the kernel has retired (completed, signalled or
 *    not). A slot may be reused once consumer has passed it; the consumer
 *    is published before the WQE's CQE, so the room a completion implies
 *    is always there when the CQE is seen. The kernel
 *    copies each WQE once into its own memory when it starts on it, and
 *    never reads the slot again.
 *  - RQ/SRQ: consumer counts WQEs the kernel has taken (copied) for an
 *    incoming message.
 * After posting to an SQ, user space calls the SCIRE_METHOD_QP_DOORBELL
 * method. After posting to the RQ of a QP whose ring flags carry
 * SCIRE_WQ_F_ERROR, it calls the doorbell with SCIRE_DOORBELL_RQ so the
 * kernel flushes the new WQEs.
 */
#define SCIRE_WQ_RING_HDR_SIZE		(3 * SCIRE_RING_LINE)

/* Work queue state flags the kernel reports (struct scire_wq_ring.flags). */
enum scire_wq_flags {
	SCIRE_WQ_F_ERROR	= 1 << 0,	/* QP in ERR: new WQEs are flushed */
};

/*
 * struct scire_wq_ring - the head of an SQ, RQ or SRQ mapping.
 * @producer:	written by user space (store-release) after the WQE.
 * @consumer:	written by the kernel (store-release), see above.
 * @flags:	enum scire_wq_flags, written by the kernel.
 */
struct scire_wq_ring {
	__u32 producer;
	__u32 pad0[SCIRE_RING_LINE / 4 - 1];
	__u32 consumer;
	__u32 pad1[SCIRE_RING_LINE / 4 - 1];
	__u32 flags;
	__u32 pad2[SCIRE_RING_LINE / 4 - 1];
};

/* struct scire_sge - one scatter/gather element, 16 bytes. */
struct scire_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Send WQE opcodes (struct scire_send_wqe.opcode). */
enum scire_wqe_opcode {
	SCIRE_WQE_OP_SEND		= 0,
	SCIRE_WQE_OP_SEND_IMM		= 1,
	SCIRE_WQE_OP_SEND_INV		= 2,
	SCIRE_WQE_OP_RDMA_WRITE		= 3,
	SCIRE_WQE_OP_RDMA_WRITE_IMM	= 4,
	SCIRE_WQE_OP_RDMA_READ		= 5,
	SCIRE_WQE_OP_ATOMIC_CMP_SWP	= 6,
	SCIRE_WQE_OP_ATOMIC_FETCH_ADD	= 7,
	SCIRE_WQE_OP_LOCAL_INV		= 8,
	SCIRE_WQE_OP_BIND_MW		= 9,
	SCIRE_WQE_OP_REG_MR		= 10,	/* kernel QPs only */
	SCIRE_WQE_OP_ATOMIC_WRITE	= 11,	/* RC only (IBA 1.5) */
	SCIRE_WQE_OP_FLUSH		= 12,	/* RC only (IBA 1.5) */
	SCIRE_WQE_OP_MAX,
};

/* Send WQE flags (struct scire_send_wqe.flags). */
enum scire_wqe_flags {
	SCIRE_WQE_F_SIGNALED	= 1 << 0,	/* always post a CQE */
	SCIRE_WQE_F_SOLICITED	= 1 << 1,	/* set SE on the last packet */
	SCIRE_WQE_F_INLINE	= 1 << 2,	/* inline_len bytes follow the header */
	SCIRE_WQE_F_FENCE	= 1 << 3,	/* wait for earlier READs/atomics */
	SCIRE_WQE_F_MW_TYPE1	= 1 << 4,	/* BIND_MW: ibv_bind_mw() of a type 1 window */
};

/*
 * struct scire_send_wqe - an SQ WQE: a 64-byte header followed by num_sge
 * struct scire_sge or, with SCIRE_WQE_F_INLINE, inline_len bytes of data.
 * @wr_id:	returned in the CQE.
 * @opcode:	enum scire_wqe_opcode.
 * @flags:	enum scire_wqe_flags.
 * @num_sge:	SGEs following the header (0..max_send_sge); 0 with INLINE.
 * @inline_len:	bytes of inline data (0..max_inline_data).
 * @imm_data:	SEND_IMM, RDMA_WRITE_IMM: immediate data in network byte
 *		order; SEND_INV, LOCAL_INV: the rkey to invalidate.
 * @xrc_srqn:	XRC_INI QPs: the XRC SRQ number (24 bits) at the target
 *		the request goes to, carried in every packet's XRCETH
 *		(annex A19); 0 on other QPs (it was reserved before).
 * @rdma:	RDMA_WRITE*, RDMA_READ: remote address and rkey.
 * @atomic:	ATOMIC_*: remote address (8-byte aligned), rkey, compare or
 *		add operand and swap operand.
 * @atomic_write: ATOMIC_WRITE: remote address and rkey (where @rdma has
 *		them) and the 8 bytes to store, in memory order, taken when
 *		the work request was posted; num_sge and inline_len are 0.
 *		The responder checks the address's alignment (IBA 1.5,
 *		RDMA ATOMIC WRITE).
 * @flush:	FLUSH: remote address and rkey (where @rdma has them), the
 *		length of the range, the placement type (IB_FLUSH_GLOBAL 1,
 *		IB_FLUSH_PERSISTENT 2, or both) and the selectivity level
 *		(IB_FLUSH_RANGE 0: the range; IB_FLUSH_MR 1: the whole MR
 *		the rkey names, address and length then unchecked);
 *		num_sge and inline_len are 0 (IBA 1.5, RDMA FLUSH).
 * @bind:	BIND_MW: the window's handle-side rkey and new rkey, the MR
 *		(lkey) it is bound to, range and access. With
 *		SCIRE_WQE_F_MW_TYPE1 it is the Bind Memory Window verb on a
 *		type 1 window (length 0 unbinds it, mr_lkey is then ignored);
 *		without, the bind work request on a type 2 window. The flag
 *		must match the window's type.
 * @reg:	REG_MR (kernel only): the struct scire_mr, its new key and
 *		access.
 * @ud:		UD and GSI QPs (SEND and SEND_IMM only; the message must fit
 *		the port's active MTU): the address handle's ah_num (struct
 *		scire_create_ah_resp), the destination QP (0xffffff for a
 *		multicast GID) and its Q_Key. A Q_Key with the high-order bit
 *		set stands for the sending QP's own Q_Key (IBA 10.2.5).
 */
struct scire_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u8 num_sge;
	__u8 reserved0;
	__u32 inline_len;
	__u32 imm_data;
	__u32 xrc_srqn;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
			__u8 value[8];
		} atomic_write;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;
			__u8 type;
			__u8 level;
			__u8 reserved[6];
		} flush;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mw_rkey;
			__u32 new_rkey;
			__u32 mr_lkey;
			__u32 access;
		} bind;
		struct {
			__aligned_u64 mr;
			__u32 key;
			__u32 access;
		} reg;
		struct {
			__u32 ah_num;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 pkey_index;	/* GSI (kernel) only; 0 */
		} ud;
		__u8 reserved2[40];
	};
	__u8 data[];	/* struct scire_sge[num_sge] or inline data */
};

/*
 * UD and GSI receives: the first SCIRE_UD_GRH_LEN bytes of the receive
 * buffer take the message's GRH as IBA 11.4.1.2 lays it out for RoCE: for
 * IPv6 the 40-byte IPv6 header; for IPv4, 20 bytes of zeroes and then the
 * 20-byte IPv4 header (what libibverbs' ibv_create_ah_from_wc() parses).
 * The CQE's byte_len counts those 40 bytes and flags carry SCIRE_CQE_F_GRH.
 */
#define SCIRE_UD_GRH_LEN		40

/*
 * struct scire_create_ah_resp - UHW response of CREATE_AH.
 * @ah_num:	what a UD send WQE names the address handle by; valid while
 *		the AH exists, for QPs of the AH's PD.
 * @reserved:	0.
 */
struct scire_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/*
 * struct scire_recv_wqe - an RQ or SRQ WQE: a 16-byte header followed by
 * num_sge struct scire_sge.
 */
struct scire_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct scire_sge sge[];
};

/*
 * struct scire_create_qp_resp - UHW response of CREATE_QP.
 * @sq_mmap_offset, @sq_mmap_size:	the SQ mapping.
 * @rq_mmap_offset, @rq_mmap_size:	the RQ mapping; both 0 with an SRQ.
 * @qpn:		the QP number.
 * @sq_entries:		SQ slots (power of two, >= max_send_wr).
 * @sq_wqe_size:	bytes per SQ slot (power of two).
 * @rq_entries:		RQ slots, 0 with an SRQ.
 * @rq_wqe_size:	bytes per RQ slot.
 * @max_send_sge, @max_recv_sge, @max_inline_data: what the QP got.
 * @reserved:		0.
 *
 * CREATE_QP takes no UHW request; any request bytes must be zero.
 */
struct scire_create_qp_resp {
	__aligned_u64 sq_mmap_offset;
	__aligned_u64 sq_mmap_size;
	__aligned_u64 rq_mmap_offset;
	__aligned_u64 rq_mmap_size;
	__u32 qpn;
	__u32 sq_entries;
	__u32 sq_wqe_size;
	__u32 rq_entries;
	__u32 rq_wqe_size;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
};

/*
 * struct scire_create_srq_resp - UHW response of CREATE_SRQ.
 * @mmap_offset, @mmap_size:	the SRQ mapping.
 * @srqn:		SRQ number.
 * @num_entries:	slots (power of two, >= max_wr).
 * @wqe_size:		bytes per slot (power of two).
 * @max_sge:		SGEs per WQE.
 */
struct scire_create_srq_resp {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 srqn;
	__u32 num_entries;
	__u32 wqe_size;
	__u32 max_sge;
};

/*
 * struct scire_create_wq_resp - UHW response of CREATE_WQ (a receive work
 * queue for RSS; no request).
 * @mmap_offset, @mmap_size:	the WQ's ring mapping (an RQ ring).
 * @wq_num:		the WQ's number (qp_num of its completions).
 * @num_entries:	slots (power of two, >= max_wr).
 * @wqe_size:		bytes per slot (power of two).
 * @max_sge:		SGEs per WQE.
 */
struct scire_create_wq_resp {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 wq_num;
	__u32 num_entries;
	__u32 wqe_size;
	__u32 max_sge;
};

/* RSS: the Toeplitz hash over a 40-byte key (IBV_RX_HASH_FUNC_TOEPLITZ). */
#define SCIRE_RX_HASH_FUNC_TOEPLITZ	1
#define SCIRE_RSS_KEY_LEN		40
/* The fields it can hash: enum ibv_rx_hash_fields' values. */
#define SCIRE_RX_HASH_SRC_IPV4		(1ULL << 0)
#define SCIRE_RX_HASH_DST_IPV4		(1ULL << 1)
#define SCIRE_RX_HASH_SRC_IPV6		(1ULL << 2)
#define SCIRE_RX_HASH_DST_IPV6		(1ULL << 3)
#define SCIRE_RX_HASH_SRC_PORT_TCP	(1ULL << 4)
#define SCIRE_RX_HASH_DST_PORT_TCP	(1ULL << 5)
#define SCIRE_RX_HASH_SRC_PORT_UDP	(1ULL << 6)
#define SCIRE_RX_HASH_DST_PORT_UDP	(1ULL << 7)
#define SCIRE_RX_HASH_FIELDS		0xffULL

/*
 * struct scire_create_qp_rss - UHW request of CREATE_QP for a raw packet
 * QP over an indirection table (ibv_create_qp_ex() with
 * IBV_QP_INIT_ATTR_RX_HASH and IBV_QP_INIT_ATTR_IND_TABLE): its hash. Any
 * other QP takes no request.
 * @rx_hash_fields_mask:	SCIRE_RX_HASH_* (IBV_RX_HASH_*).
 * @rx_hash_function:		SCIRE_RX_HASH_FUNC_TOEPLITZ.
 * @rx_hash_key_len:		SCIRE_RSS_KEY_LEN.
 * @reserved:			zero.
 * @rx_hash_key:		the key.
 */
struct scire_create_qp_rss {
	__aligned_u64 rx_hash_fields_mask;
	__u8 rx_hash_function;
	__u8 rx_hash_key_len;
	__u8 reserved[6];
	__u8 rx_hash_key[SCIRE_RSS_KEY_LEN];
};

/*
 * scire's own uverbs tree (ib_device.driver_def). Ids live in the driver
 * namespace (UVERBS_ID_NS_SHIFT is 12 in <rdma/ib_user_ioctl_cmds.h>).
 */
#define SCIRE_UVERBS_ID_DRIVER_NS	(1U << 12)

/* Methods added to the core's UVERBS_OBJECT_QP. */
enum scire_qp_methods {
	SCIRE_METHOD_QP_DOORBELL = SCIRE_UVERBS_ID_DRIVER_NS,
};

/* Attributes of SCIRE_METHOD_QP_DOORBELL. */
enum scire_qp_doorbell_attrs {
	/* IDR handle of the QP (UVERBS_OBJECT_QP), mandatory. */
	SCIRE_ATTR_DOORBELL_QP_HANDLE = SCIRE_UVERBS_ID_DRIVER_NS,
	/* __u32 enum scire_doorbell_flags, mandatory. */
	SCIRE_ATTR_DOORBELL_FLAGS,
};

/* Methods added to the core's UVERBS_OBJECT_SRQ. */
enum scire_srq_methods {
	/*
	 * ibv_modify_srq() with IBV_SRQ_MAX_WR: a new ring of at least
	 * max_wr slots takes the posted, untaken WQEs at the same indices;
	 * the old mapping is no longer read. The response says where to map
	 * the new ring, as at creation.
	 */
	SCIRE_METHOD_SRQ_RESIZE = SCIRE_UVERBS_ID_DRIVER_NS,
};

/* Attributes of SCIRE_METHOD_SRQ_RESIZE. */
enum scire_srq_resize_attrs {
	/* IDR handle of the SRQ (UVERBS_OBJECT_SRQ), mandatory. */
	SCIRE_ATTR_SRQ_RESIZE_HANDLE = SCIRE_UVERBS_ID_DRIVER_NS,
	/* __u32 in, mandatory: the WQEs the SRQ must hold, 1..max_srq_wr. */
	SCIRE_ATTR_SRQ_RESIZE_MAX_WR,
	/* struct scire_create_srq_resp out, mandatory: the new ring. */
	SCIRE_ATTR_SRQ_RESIZE_RESP,
};

/*
 * Attributes scire adds to the core's UVERBS_METHOD_DM_ALLOC
 * (UVERBS_OBJECT_DM).
 */
enum scire_alloc_dm_attrs {
	/*
	 * __u64 out, mandatory: the offset to mmap(2) the device memory at,
	 * MAP_SHARED, its length rounded up to whole pages.
	 */
	SCIRE_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = SCIRE_UVERBS_ID_DRIVER_NS,
};

/* Which queues a doorbell is for. */
enum scire_doorbell_flags {
	SCIRE_DOORBELL_SQ	= 1 << 0,	/* new SQ WQEs */
	SCIRE_DOORBELL_RQ	= 1 << 1,	/* new RQ WQEs on a QP in ERR */
};

#endif /* SCIRE_ABI_USER_H */
