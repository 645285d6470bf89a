/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: software RoCEv2 device. Internal object definitions.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_H
#define SCIRE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/sizes.h>
#include <linux/completion.h>
#include <linux/error-injection.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/iosys-map.h>
#include <linux/smp.h>
#include <net/dst_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include <rdma/scire-abi.h>

#include "scire_compat.h"
#include "scire_hdr.h"

/*
 * Fault injection: the setup steps that the debug lane's fail_function
 * makes fail (selftests/98-fault-inject.sh), to exercise the unwinding
 * around them, are marked ALLOW_ERROR_INJECTION(fn, ERRNO) after their
 * definition; a static one is also noinline, or its callers would inline
 * it past the probe.
 */

/*
 * Device limits. They bound the kernel memory one process can pin or
 * allocate through one device; the rdma cgroup bounds the object counts
 * further where an administrator sets it, and the memory cgroup of the
 * process that creates a queue pays for its ring (scire_mmap_alloc()).
 *
 * SCIRE_MAX_CQE: libfabric's verbs;ofi_rxm asks for 196,608 CQEs and MPI
 * libraries size CQs from max_cqe, so it must be well above 64K. mlx5's
 * 4,194,303 would be a 256 MiB ring; 1M entries (a power of two, as ring
 * sizes are) covers what middleware asks for at 64 MiB.
 */
#define SCIRE_MAX_PD		BIT(16)
#define SCIRE_MAX_CQ		BIT(16)
#define SCIRE_MAX_CQE		BIT(20)	/* ring: 64 MiB of CQEs */
#define SCIRE_MAX_MR		BIT(20)
#define SCIRE_MAX_MR_SIZE	BIT_ULL(40)
/* Device memory (ibv_alloc_dm) of all contexts together, in bytes. */
#define SCIRE_MAX_DM_SIZE	(16ULL << 20)
#define SCIRE_MAX_QP		BIT(16)
#define SCIRE_MAX_QP_WR		BIT(14)	/* per SQ/RQ, power of two */
#define SCIRE_MAX_SRQ		BIT(16)
#define SCIRE_MAX_SRQ_WR	BIT(14)
#define SCIRE_MAX_SGE		32
#define SCIRE_MAX_INLINE	512
#define SCIRE_MAX_RD_ATOMIC	128	/* max_qp_rd_atom, max_qp_init_rd_atom */
#define SCIRE_MAX_MR_PAGES	BIT(16)	/* fast-registration page list */
#define SCIRE_GID_TBL_LEN	128
#define SCIRE_PKEY_TBL_LEN	1
#define SCIRE_IB_PKEY_TBL_LEN	16	/* scire_ib: NodeInfo PartitionCap */
#define SCIRE_IB_WIDTH_SUPPORTED 3	/* scire_ib PortInfo: 1X and 4X */
#define SCIRE_IB_SPEED_SUPPORTED 7	/* scire_ib PortInfo: 2.5, 5, 10 Gb/s */
#define SCIRE_VENDOR_ID		0xffffff	/* no IEEE OUI: software device */
#define SCIRE_MAX_AH		BIT(16)
#define SCIRE_MAX_MCG		1024	/* multicast groups per device */
#define SCIRE_MAX_MCG_QP	56	/* QPs attached to one group */
#define SCIRE_MAX_MCG_ATTACH	(SCIRE_MAX_MCG * SCIRE_MAX_MCG_QP)

/*
 * Largest RoCEv2 header stack around a payload: IPv6 (40) + UDP (8) +
 * BTH (12) + 28 bytes of extended headers (an AtomicETH; a packet with
 * payload carries at most 24, an XRC WRITE ONLY with immediate; an XRC
 * atomic's 32 come without payload) + ICRC (4). The active path MTU is
 * the largest IB MTU that fits the netdev MTU after these.
 */
#define SCIRE_MAX_HDR_LEN	(40 + 8 + 12 + 28 + 4)

/**
 * enum scire_counter - the port's hw counters (rdma statistic), one table
 * of names in scire_stats.c.
 * @SCIRE_CNT_RX_PACKETS:	RoCEv2 packets that passed the header and ICRC
 *				checks (some may still find no QP).
 * @SCIRE_CNT_RX_BYTES:		their bytes from the BTH to the ICRC.
 * @SCIRE_CNT_TX_PACKETS:	packets handed to the IP stack or looped back.
 * @SCIRE_CNT_TX_BYTES:		their bytes from the BTH to the ICRC.
 * @SCIRE_CNT_RETRANSMITS:	request packets sent again (timeout, NAK, RNR).
 * @SCIRE_CNT_RETRY_EXCEEDED:	WQEs failed with IB_WC_RETRY_EXC_ERR.
 * @SCIRE_CNT_RNR_RETRY_EXCEEDED: WQEs failed with IB_WC_RNR_RETRY_EXC_ERR.
 * @SCIRE_CNT_SEQ_NAK_SENT:	PSN sequence error NAKs sent.
 * @SCIRE_CNT_SEQ_NAK_RCVD:	PSN sequence error NAKs received.
 * @SCIRE_CNT_RNR_NAK_SENT:	RNR NAKs sent.
 * @SCIRE_CNT_RNR_NAK_RCVD:	RNR NAKs received.
 * @SCIRE_CNT_DUP_REQUEST:	duplicate requests received (PSN < ePSN).
 * @SCIRE_CNT_OOS_REQUEST:	out-of-sequence requests (PSN > ePSN).
 * @SCIRE_CNT_ICRC_ERRORS:	packets dropped for a wrong ICRC.
 * @SCIRE_CNT_RX_DROPS:		other received packets dropped: malformed,
 *				P_Key, GID, QP number or type, path, Q_Key.
 * @SCIRE_CNT_TX_DROPS:		packets not sent: no route, no memory, a bad
 *				AV, or (scire_ib) no link to a neighbour.
 * @SCIRE_CNT_LOCAL_UNITS:	same-host units sent (the fast path; not
 *				counted as packets).
 * @SCIRE_CNT_LOCAL_BYTES:	their bytes from the BTH to the payload end.
 * @SCIRE_CNT_LOCAL_DIRECT:	same-host requests executed by the peer's
 *				responder in the requester's call, with no
 *				unit at all (scire_resp_direct()).
 * @SCIRE_CNT_TRAPS_SENT:	scire_ib: Trap() SMPs the SMA posted, each
 *				repetition counted (ib/scire_ib_trap.c).
 * @SCIRE_CNT_TRAPS_REPRESSED:	scire_ib: traps the SM repressed (a
 *				TrapRepress of the pending trap's TID).
 * @SCIRE_CNT_TRAPS_ABANDONED:	scire_ib: traps given up unrepressed after
 *				SCIRE_IB_TRAP_TRIES sends.
 * @SCIRE_CNT_RESP_REM_ACCESS_ERR: requests the responder refused for
 *				their R_Key, range or rights, on either path:
 *				NAK'd on RC, dropped on UC (mlx5's name).
 * @SCIRE_CNT_ODP_FAULTS:	on-demand paging: accesses that found a page of
 *				an ODP MR missing and faulted it in (or
 *				tried to), prefetches included.
 * @SCIRE_CNT_ODP_INVALIDATIONS: on-demand paging: ranges of ODP MRs the
 *				mm invalidated (munmap, migration, reclaim).
 * @SCIRE_CNT_ODP_PREFETCHES:	on-demand paging: ibv_advise_mr() SGEs
 *				prefetched.
 * @SCIRE_CNT_RAW_RX_FRAMES:	Ethernet frames placed in a raw packet QP's
 *				receive WQE (scire_raw.c).
 * @SCIRE_CNT_RAW_TX_FRAMES:	Ethernet frames raw packet QPs sent.
 * @SCIRE_CNT_GSI_RATE_LIMITED: RoCE: QP1 packets from the wire dropped
 *				because their source address was over the
 *				gsi_rate module parameter (scire_gsi_admit()).
 * @SCIRE_CNT_ERR_RATE_LIMITED: RoCE: packets from the wire dropped unread
 *				because their source had more packets
 *				refused than err_rate allows
 *				(scire_net_src_error()).
 * @SCIRE_CNT_MAX:		number of counters.
 */
enum scire_counter {
	SCIRE_CNT_RX_PACKETS,
	SCIRE_CNT_RX_BYTES,
	SCIRE_CNT_TX_PACKETS,
	SCIRE_CNT_TX_BYTES,
	SCIRE_CNT_RETRANSMITS,
	SCIRE_CNT_RETRY_EXCEEDED,
	SCIRE_CNT_RNR_RETRY_EXCEEDED,
	SCIRE_CNT_SEQ_NAK_SENT,
	SCIRE_CNT_SEQ_NAK_RCVD,
	SCIRE_CNT_RNR_NAK_SENT,
	SCIRE_CNT_RNR_NAK_RCVD,
	SCIRE_CNT_DUP_REQUEST,
	SCIRE_CNT_OOS_REQUEST,
	SCIRE_CNT_ICRC_ERRORS,
	SCIRE_CNT_RX_DROPS,
	SCIRE_CNT_TX_DROPS,
	SCIRE_CNT_LOCAL_UNITS,
	SCIRE_CNT_LOCAL_BYTES,
	SCIRE_CNT_LOCAL_DIRECT,
	SCIRE_CNT_TRAPS_SENT,
	SCIRE_CNT_TRAPS_REPRESSED,
	SCIRE_CNT_TRAPS_ABANDONED,
	SCIRE_CNT_RESP_REM_ACCESS_ERR,
	SCIRE_CNT_ODP_FAULTS,
	SCIRE_CNT_ODP_INVALIDATIONS,
	SCIRE_CNT_ODP_PREFETCHES,
	SCIRE_CNT_RAW_RX_FRAMES,
	SCIRE_CNT_RAW_TX_FRAMES,
	SCIRE_CNT_GSI_RATE_LIMITED,
	SCIRE_CNT_ERR_RATE_LIMITED,
	SCIRE_CNT_MAX,
};

/*
 * Why a packet was not delivered or sent. Receive drops are counted (ICRC
 * errors and packets over a rate per source apart from the rest; reasons from
 * SCIRE_DROP_TX_ROUTE on are of packets being sent); every drop frees the
 * skb with kfree_skb(), so drop monitors see it too, and the tracepoint
 * scire_drop names the reason.
 */
enum scire_drop_reason {
	SCIRE_DROP_NOMEM,	/* receive: pull or trim failed */
	SCIRE_DROP_MALFORMED,	/* UDP/IP shape, lengths, opcode, TVer, pad */
	SCIRE_DROP_PKEY,	/* P_Key not the default partition */
	SCIRE_DROP_DGID,	/* destination IP is not one of our GIDs */
	SCIRE_DROP_ICRC,	/* ICRC mismatch */
	SCIRE_DROP_QPN,		/* QP0, or multicast QPN and GID disagree */
	SCIRE_DROP_NO_QP,	/* no such QP */
	SCIRE_DROP_QP_TYPE,	/* opcode's transport differs from the QP's */
	SCIRE_DROP_QP_PATH,	/* RC/UC packet not from the QP's peer */
	SCIRE_DROP_NOT_NEIGHBOUR, /* scire_ib: not from the link's neighbour */
	SCIRE_DROP_PORT_STATE,	/* scire_ib: data for a port not ARMED/ACTIVE */
	SCIRE_DROP_RXQ_FULL,	/* the QP's receive queue is full */
	SCIRE_DROP_BACKLOG,	/* the requests held behind a READ are too many */
	SCIRE_DROP_STALE,	/* a duplicate READ or atomic no resource knows */
	SCIRE_DROP_GSI_RATE,	/* QP1 packet from a source over gsi_rate */
	SCIRE_DROP_ERR_RATE,	/* from a source over err_rate's refusals */
	SCIRE_DROP_TX_ROUTE,	/* no route, no socket, no target device */
	SCIRE_DROP_TX_INVALID,	/* bad AV or packet from the caller */
	SCIRE_DROP_TX_NOMEM,	/* headroom or clone for sending failed */
	SCIRE_DROP_TX_NO_LINK,	/* scire_ib: no wire yet; RoCE: port not ACTIVE */
};

/*
 * Why the requester sends again from an earlier PSN (IBA 9.7.5.2, 9.7.6.1.3):
 * the tracepoint scire_rewind names it.
 */
enum scire_rewind_reason {
	SCIRE_REWIND_TIMEOUT,	/* the transport timer expired */
	SCIRE_REWIND_SEQ_NAK,	/* a PSN sequence error NAK */
	SCIRE_REWIND_RNR_NAK,	/* an RNR NAK, after its timer */
	SCIRE_REWIND_READ_GAP,	/* a READ or atomic response broke off */
};

/**
 * struct scire_dgid_cache - one CPU's memory of the last destination GID
 * the port's GID table held, so that a stream of packets to one address
 * looks it up once. Read and written by the receive path with BHs off.
 * @gid:	the GID.
 * @ifindex:	the interface the packet came in on.
 * @gen:	scire_dev.gid_gen when it was looked up; a GID added or deleted
 *		since makes the entry stale.
 * @valid:	@gid holds a GID that was found.
 */
struct scire_dgid_cache {
	union ib_gid gid;
	int ifindex;
	u32 gen;
	bool valid;
};

/**
 * struct scire_stats - one CPU's share of a device's counters.
 * @cnt: indexed by enum scire_counter.
 */
struct scire_stats {
	u64 cnt[SCIRE_CNT_MAX];
};

/**
 * enum scire_link - the link layer a scire device presents.
 * @SCIRE_LINK_ROCE:	RoCEv2 over the netdev ("rdma link add ... type scire").
 * @SCIRE_LINK_IB:	an InfiniBand port managed by a subnet manager
 *			("... type scire_ib"; docs/scire_ib.md).
 */
enum scire_link {
	SCIRE_LINK_ROCE,
	SCIRE_LINK_IB,
};

/**
 * struct scire_ib_port - what the subnet manager sets and reads on a
 * scire_ib port: the PortInfo, P_KeyTable and SLtoVLMappingTable
 * attributes of IBA 14.2.5 that are not derived from the netdev. All of it
 * is protected by scire_dev.port_lock; ib/scire_mad.c is the SMA that changes it.
 * @mkey:		M_Key (IBA 14.2.4), big endian as on the wire.
 * @gid_prefix:		GID prefix (subnet prefix), big endian.
 * @lid:		base LID; 0 until the SM assigns one.
 * @sm_lid:		LID of the master SM.
 * @lmc:		LID mask control, 0..7.
 * @sm_sl:		MasterSMSL.
 * @mkey_protect:	M_KeyProtectBits, 0..3.
 * @mkey_lease_period:	M_KeyLeasePeriod in seconds; 0: the lease never
 *			expires.
 * @mkey_lease_end:	jiffies at which the running lease expires; 0 when
 *			no lease timer runs.
 * @mkey_violations:	M_KeyViolations (saturating).
 * @pkey_violations:	P_KeyViolations (saturating).
 * @qkey_violations:	Q_KeyViolations (saturating).
 * @cap_mask:		CapabilityMask (IB_PORT_*), host order.
 * @phys_state:		PortPhysicalState (IB_PORT_PHYS_STATE_*).
 * @link_down_default:	LinkDownDefaultState: 1 sleep, 2 polling.
 * @neighbor_mtu:	NeighborMTU (enum ib_mtu).
 * @op_vls:		OperationalVLs: 1, data VL0 only.
 * @init_type:		InitType from modify_port(); reported as InitTypeReply
 *			when the port becomes ACTIVE.
 * @init_type_reply:	InitTypeReply.
 * @subnet_timeout:	SubnetTimeOut, 0..31.
 * @resp_time:		RespTimeValue, 0..31.
 * @vl_high_limit:	VLHighLimit.
 * @hoq_life:		HOQLife.
 * @phy_err_threshold:	LocalPhyErrors threshold, 0..15.
 * @overrun_threshold:	OverrunErrors threshold, 0..15.
 * @link_width_enabled:	LinkWidthEnabled.
 * @link_speed_enabled:	LinkSpeedEnabled.
 * @pkeys:		the P_Key table; entry 0 starts as the default
 *			partition's full member key, the rest as 0 (invalid).
 * @sl2vl:		SLtoVLMappingTable, two SLs per byte as on the wire.
 * @sm_disabled:	the SM set PortPhysicalState Disabled; the port stays
 *			DOWN until it sets Polling.
 * @learn:		learn mode: without a live neighbour, greet the
 *			broadcast address and take the sender of the first
 *			HELLO heard as the neighbour (a new port's mode).
 * @peer:		the neighbour's IPv4 address (ports/1/scire_ib_peer,
 *			or learned), 0 for none.
 * @peer_port:		the neighbour's UDP port when one was written with
 *			the address (ADDR:PORT, a scire-ibswitch); 0 for the
 *			module's ib_udp_port, a scire_ib port's own.
 * @hello_seen:		jiffies (| 1) of the neighbour's last HELLO, 0 for none.
 * @peer_guid:		the port GUID the neighbour's HELLO named.
 */
struct scire_ib_port {
	__be64 mkey;
	__be64 gid_prefix;
	u16 lid;
	u16 sm_lid;
	u8 lmc;
	u8 sm_sl;
	u8 mkey_protect;
	u16 mkey_lease_period;
	unsigned long mkey_lease_end;
	u16 mkey_violations;
	u16 pkey_violations;
	u16 qkey_violations;
	u32 cap_mask;
	u8 phys_state;
	u8 link_down_default;
	u8 neighbor_mtu;
	u8 op_vls;
	u8 init_type;
	u8 init_type_reply;
	u8 subnet_timeout;
	u8 resp_time;
	u8 vl_high_limit;
	u8 hoq_life;
	u8 phy_err_threshold;
	u8 overrun_threshold;
	u8 link_width_enabled;
	u8 link_speed_enabled;
	u16 pkeys[SCIRE_IB_PKEY_TBL_LEN];
	u8 sl2vl[8];
	bool sm_disabled;
	bool learn;
	__be32 peer;
	u16 peer_port;
	unsigned long hello_seen;
	__be64 peer_guid;
};

/**
 * enum scire_ib_trap_kind - the traps a scire_ib port's SMA can have
 * pending at once, one of each kind (ib/scire_ib_trap.c).
 * @SCIRE_IB_TRAP_LOCAL:	trap 144, local changes.
 * @SCIRE_IB_TRAP_SECURITY:	traps 256, 257 and 258: a bad M_Key, P_Key or
 *				Q_Key (IBA 14.2.5.1).
 * @SCIRE_IB_TRAP_KINDS:	number of kinds.
 */
enum scire_ib_trap_kind {
	SCIRE_IB_TRAP_LOCAL,
	SCIRE_IB_TRAP_SECURITY,
	SCIRE_IB_TRAP_KINDS,
};

/**
 * struct scire_ib_trap_slot - one pending trap, repeated until the SM
 * represses it.
 * @work:	sends the trap, and again after each resend interval.
 * @tid:	TransactionID of the pending trap; 0 when none is pending.
 * @tries:	times the pending trap has been sent.
 */
struct scire_ib_trap_slot {
	struct delayed_work work;
	u64 tid;
	u8 tries;
};

/**
 * struct scire_ib_trap - the traps the SMA of a scire_ib port repeats until
 * the SM represses them (IBA 13.4.9, 14.2.5.1; ib/scire_ib_trap.c). All
 * but the slots' work is under scire_dev.port_lock.
 * @agent:	the QP0 send agent the traps go out through; NULL before the
 *		MAD layer has the port and again once teardown has begun.
 * @slot:	the pending trap of each kind (enum scire_ib_trap_kind).
 * @last_tid:	the last TransactionID given to a trap.
 * @change_flags: trap 144's ChangeFlags for the pending trap
 *		(IB_NOTICE_TRAP_*_CHG; 0 for a CapabilityMask change alone).
 * @security:	the Notice of the pending security trap, as the violation
 *		filled it.
 * @security_next: jiffies before which no new security trap starts.
 */
struct scire_ib_trap {
	struct ib_mad_agent *agent;
	struct scire_ib_trap_slot slot[SCIRE_IB_TRAP_KINDS];
	u64 last_tid;
	u16 change_flags;
	struct ib_mad_notice_attr security;
	unsigned long security_next;
};

/**
 * enum scire_pma_counter - the PMA's counters (IBA 16.1.3.5), each derived
 * from the device's hw counters in ib/scire_mad.c.
 * @SCIRE_PMA_XMIT_DATA:	PortXmitData, 4-byte words.
 * @SCIRE_PMA_RCV_DATA:		PortRcvData, 4-byte words.
 * @SCIRE_PMA_XMIT_PKTS:	PortXmitPkts.
 * @SCIRE_PMA_RCV_PKTS:		PortRcvPkts.
 * @SCIRE_PMA_RCV_ERRORS:	PortRcvErrors.
 * @SCIRE_PMA_XMIT_DISCARDS:	PortXmitDiscards.
 * @SCIRE_PMA_NUM:		number of counters.
 */
enum scire_pma_counter {
	SCIRE_PMA_XMIT_DATA,
	SCIRE_PMA_RCV_DATA,
	SCIRE_PMA_XMIT_PKTS,
	SCIRE_PMA_RCV_PKTS,
	SCIRE_PMA_RCV_ERRORS,
	SCIRE_PMA_XMIT_DISCARDS,
	SCIRE_PMA_NUM,
};

/**
 * struct scire_ib_pma_base - what the PMA's counters read when a Set of
 * PortCounters or PortCountersExtended last cleared them; the PMA reports
 * the device's counters minus these (ib/scire_mad.c). Under
 * scire_dev.port_lock.
 * @cnt:	indexed by enum scire_pma_counter.
 */
struct scire_ib_pma_base {
	u64 cnt[SCIRE_PMA_NUM];
};

/**
 * struct scire_raw_frame - the headers of a received or sent Ethernet
 * frame, parsed once (scire_raw.c) for the flow specs and the RSS hash.
 * The fields are in the layout of the core's flow filters, so that a
 * spec's value and mask compare with them byte for byte.
 * @eth:	MACs, EtherType of the L3 header, VLAN tag.
 * @vlan:	the frame is tagged.
 * @ipv4:	@ip4 holds its IPv4 header's fields.
 * @ipv6:	@ip6 holds its IPv6 header's fields.
 * @l4:		IPPROTO_TCP or IPPROTO_UDP when @ports holds that header's
 *		ports (not of a later IPv4 fragment), else 0.
 * @ip4:	IPv4 addresses, protocol, TOS, TTL, flags.
 * @ip6:	IPv6 addresses, flow label, next header, class, hop limit.
 * @ports:	TCP or UDP ports.
 */
struct scire_raw_frame {
	struct ib_flow_eth_filter eth;
	bool vlan;
	bool ipv4;
	bool ipv6;
	u8 l4;
	struct ib_flow_ipv4_filter ip4;
	struct ib_flow_ipv6_filter ip6;
	struct ib_flow_tcp_udp_filter ports;
};

/**
 * struct scire_raw - a RoCE device's raw Ethernet flow steering.
 * @lock:	serialises flow creation and destruction (process context).
 * @flows:	struct scire_flow of every flow, in priority order; changed
 *		under @lock, read under RCU by the packet handler.
 * @num_flows:	flows on @flows; the packet handler @tap is installed on
 *		the netdev while it is non-zero.
 * @tap:	the ETH_P_ALL packet handler.
 */
struct scire_raw {
	struct mutex lock;	/* see above */
	struct list_head flows;
	u32 num_flows;
	struct packet_type tap;
};

/* A device's limits per source: buckets, in sets sources hash into. */
#define SCIRE_SRC_SLOTS		64
#define SCIRE_SRC_WAYS		4

/**
 * struct scire_src_bucket - one source address's token bucket.
 * @addr:	the source address; IPv4 as IPv4-mapped IPv6.
 * @tokens:	packets it may still send, times HZ.
 * @stamp:	jiffies when @tokens was last refilled.
 * @used:	the slot holds a source.
 */
struct scire_src_bucket {
	struct in6_addr addr;
	u64 tokens;
	unsigned long stamp;
	bool used;
};

/**
 * struct scire_src_limit - a device's rate limit of something per source
 * address (scire_src_take()).
 * @lock:	protects @slot.
 * @secret:	random key of the hash that picks a source's set, so that a
 *		sender cannot choose addresses that land on another's.
 * @slot:	the buckets, SCIRE_SRC_WAYS to a set.
 */
struct scire_src_limit {
	spinlock_t lock;	/* protects slot[] */
	siphash_key_t secret;
	struct scire_src_bucket slot[SCIRE_SRC_SLOTS];
};

/**
 * struct scire_dev - one scire ib_device, bound to one Ethernet netdev.
 * @ibdev:	the core device; must stay first (ib_alloc_device).
 * @netdev:	the netdev this device speaks RoCEv2 on; referenced by the core
 *		through ib_device_set_netdev() for the device's lifetime.
 * @list:	entry in the module's device list (scire_main.c).
 * @link:	the link layer, fixed at creation.
 * @port_lock:	protects @port_state, @ib and @ib_trap (but its work).
 * @port_state:	RoCE: IB_PORT_ACTIVE when the netdev is running with
 *		carrier, else IB_PORT_DOWN. scire_ib: the logical PortState,
 *		DOWN without carrier, then INIT and what the SM sets.
 * @ib:		scire_ib only: the port's subnet management state.
 * @ib_pma:	scire_ib only: the PMA's counter baselines.
 * @ib_sock:	scire_ib only: the device's UDP socket (ib/scire_ib_net.c).
 * @ib_route:	scire_ib only: each CPU's route to the neighbour (or the
 *		switch), as the tunnel drivers keep theirs.
 * @ib_route_daddr: scire_ib only: the address each CPU's @ib_route entry
 *		leads to (the neighbour changes at run time).
 * @ib_hello:	scire_ib only: the once-a-second HELLO and link check.
 * @ib_trap:	scire_ib only: the SMA's pending trap.
 * @mr_xa:	MRs and memory windows by key index (lkey/rkey >> 8).
 * @key_secret:	random at device creation: keys the permutation that turns
 *		@key_count into a key index and the key byte of each index
 *		(scire_key_reserve()), so that keys cannot be guessed from
 *		other keys of the device.
 * @key_count:	keys handed out so far; changed under @mr_xa's lock.
 * @cq_xa:	CQs by CQ number.
 * @cq_next:	cyclic allocation cursor for @cq_xa.
 * @qp_xa:	QPs by QP number (2..2^24-1; QP1 is the GSI QP; each new
 *		one the first free from a random number). Readers from the
 *		wire look up under RCU and take a reference.
 * @srq_xa:	SRQs by SRQ number.
 * @srq_next:	cyclic allocation cursor for @srq_xa.
 * @ah_xa:	address handles by ah_num (1..2^32-1); changed and read
 *		under its lock with interrupts off (AHs are created and
 *		destroyed in atomic context too).
 * @ah_next:	cyclic allocation cursor for @ah_xa.
 * @mcg_lock:	serialises multicast attach and detach.
 * @mcg_list:	struct scire_mcg of each joined multicast group; changed
 *		under @mcg_lock, read under RCU by the receive path.
 * @num_mcg:	groups on @mcg_list.
 * @num_mcg_attach: QP attachments over all groups.
 * @net:	this device's share of the per-namespace UDP socket
 *		(scire_net.c).
 * @num_pd:	live PDs, bounded by SCIRE_MAX_PD.
 * @num_cq:	live CQs, bounded by SCIRE_MAX_CQ.
 * @num_mr:	live MRs and memory windows, bounded by SCIRE_MAX_MR.
 * @num_qp:	live QPs, bounded by SCIRE_MAX_QP.
 * @num_srq:	live SRQs, bounded by SCIRE_MAX_SRQ.
 * @num_ah:	live AHs, bounded by SCIRE_MAX_AH.
 * @dm_bytes:	bytes of device memory that exists, bounded by
 *		SCIRE_MAX_DM_SIZE: allocated and not freed, or freed while a
 *		process still maps it (on @dm_freed).
 * @dm_lock:	protects @dm_freed.
 * @dm_freed:	struct scire_dm_freed of DMs freed while still mapped.
 * @stats:	per-CPU counters (scire_stats.c).
 * @gid_gen:	RoCE: bumped by every GID the core adds to or deletes from
 *		the port's table (scire_add_gid(), scire_del_gid()).
 * @dgid_cache:	RoCE: per CPU, the last destination GID found in the table
 *		for a received packet (scire_net.c).
 * @raw:	RoCE: the flows of raw packet QPs (scire_raw.c).
 * @num_wq:	live receive WQs, bounded by SCIRE_MAX_SRQ.
 * @wq_next:	numbers of WQs and indirection tables.
 * @gsi_limit:	RoCE: QP1 packets admitted per source address
 *		(scire_gsi_admit()).
 * @err_limit:	RoCE: refused packets per source address
 *		(scire_net_src_error()).
 * @err_limit_until: RoCE: jiffies until which some source may be over
 *		its refusals, so received packets are looked up in
 *		@err_limit (0: none has been).
 */
struct scire_dev {
	struct ib_device ibdev;
	struct net_device *netdev;
	struct list_head list;
	enum scire_link link;

	spinlock_t port_lock;	/* protects port_state, ib, ib_trap */
	enum ib_port_state port_state;
	struct scire_ib_port ib;
	struct scire_ib_pma_base ib_pma;
	struct socket __rcu *ib_sock;
	struct dst_cache ib_route;
	__be32 __percpu *ib_route_daddr;
	struct delayed_work ib_hello;
	struct scire_ib_trap ib_trap;

	struct xarray mr_xa;
	siphash_key_t key_secret;
	u64 key_count;
	struct xarray cq_xa;
	u32 cq_next;
	struct xarray qp_xa;
	struct xarray srq_xa;
	u32 srq_next;
	struct xarray ah_xa;
	u32 ah_next;
	struct mutex mcg_lock;	/* see above */
	struct list_head mcg_list;
	u32 num_mcg;
	u32 num_mcg_attach;
	struct scire_net *net;

	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_mr;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_ah;
	atomic64_t dm_bytes;
	struct mutex dm_lock;	/* see above */
	struct list_head dm_freed;
	struct scire_stats __percpu *stats;
	atomic_t gid_gen;
	struct scire_dgid_cache __percpu *dgid_cache;
	struct scire_raw raw;
	atomic_t num_wq;
	atomic_t wq_next;
	struct scire_src_limit gsi_limit;
	struct scire_src_limit err_limit;
	unsigned long err_limit_until;
};

/*
 * Count @n events of @c on @sdev. this_cpu_add() is safe with preemption
 * on, so the data path needs no lock for it.
 */
static inline void scire_count(struct scire_dev *sdev, enum scire_counter c,
			       u64 n)
{
	this_cpu_add(sdev->stats->cnt[c], n);
}

/**
 * struct scire_ucontext - a user process's context on a scire device.
 * @ibuc: the core context; must stay first.
 */
struct scire_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct scire_pd - protection domain.
 * @ibpd: the core PD; must stay first.
 * @num_odp_mr: ODP MRs of the PD. While there are any, its QPs never run
 *	in softirq context (scire_qp_bh_ok()): faulting pages in sleeps.
 */
struct scire_pd {
	struct ib_pd ibpd;
	atomic_t num_odp_mr;
};

/**
 * struct scire_xrcd - an XRC domain (IBA annex A19). The core
 * shares it between processes by inode and counts its users; scire keeps
 * nothing of its own in it: an XRC SRQ and an XRC TGT QP belong together
 * when the core gave both the same domain.
 * @ibxrcd:	the core's domain; must stay first.
 */
struct scire_xrcd {
	struct ib_xrcd ibxrcd;
};

/**
 * struct scire_mmap_entry - memory a user context may mmap(2).
 * @rdma: the core's entry; its offset is what user space passes to mmap.
 * @addr: vmalloc_user() memory, freed by scire_mmap_free() once both the
 *	  driver and every VMA have let go of it.
 */
struct scire_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *addr;
};

/**
 * struct scire_dm - device memory (ibv_alloc_dm): kernel memory the process
 * maps and copies to and from itself; MRs over it (ibv_reg_dm_mr) are
 * page lists over the same pages.
 * @ibdm:	the core's DM; must stay first.
 * @mmap:	the memory and the mmap offset user space maps it at.
 * @size:	bytes charged to scire_dev.dm_bytes (whole pages).
 */
struct scire_dm {
	struct ib_dm ibdm;
	struct scire_mmap_entry *mmap;
	u64 size;
};

/**
 * struct scire_cq - completion queue over a struct scire_cq_ring.
 * @ibcq:	the core CQ; must stay first.
 * @lock:	serialises producers, kernel pollers and resize.
 * @ring:	the ring (vmalloc_user memory; shared with user space for a
 *		user CQ, so every index read from it is untrusted).
 * @qps:	kernel CQs only: the ib_qp of each slot, for ib_wc.qp.
 * @mmap:	user CQs only: the mmap entry owning @ring.
 * @num_entries: slots in @ring, a power of two.
 * @producer:	the kernel's own producer index; @ring->producer is a copy
 *		published for the consumer and never read back.
 * @cqn:	CQ number, the index in scire_dev.cq_xa.
 * @overflowed: a CQE was lost; the CQ is in error for good (IBA C11-32)
 *		and takes no more CQEs.
 * @timestamp:	created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION: each
 *		CQE carries its completion time (struct scire_cqe.timestamp).
 * @event_cpu:	kernel CQs: the CPU of the completion vector, where events
 *		of a CQ polled from the core's workqueue are raised
 *		(scire_cq_event()); -1 for a user CQ.
 * @event_queued: an event is queued for @event_cpu and has not started.
 * @event_inflight: events sent to @event_cpu whose handler has not
 *		returned; the CQ and its QPs wait for them before they go.
 * @event_csd:	the IPI that carries an event to @event_cpu.
 */
struct scire_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* ring, qps, producer, resize */
	struct scire_cq_ring *ring;
	struct ib_qp **qps;
	struct scire_mmap_entry *mmap;
	u32 num_entries;
	u32 producer;
	u32 cqn;
	bool overflowed;
	bool timestamp;
	int event_cpu;
	atomic_t event_queued;
	atomic_t event_inflight;
	call_single_data_t event_csd;
};

/**
 * enum scire_mr_type - what an MR's page list describes.
 * @SCIRE_MR_USER:	pinned user pages (ib_umem).
 * @SCIRE_MR_DMA:	all of kernel memory, addressed by kernel virtual
 *			address (the DMA MR; virtual DMA).
 * @SCIRE_MR_FAST:	a fast-registration MR (alloc_mr): kernel virtual
 *			addresses of pages, staged by map_mr_sg and made live
 *			by a REG_MR WQE.
 */
enum scire_mr_type {
	SCIRE_MR_USER,
	SCIRE_MR_DMA,
	SCIRE_MR_FAST,
};

/**
 * enum scire_mr_state - whether an MR's key resolves.
 * @SCIRE_MR_FREE:	fast-reg MR allocated or invalidated: no access.
 * @SCIRE_MR_BUSY:	a REG_MR is rewriting it: no access.
 * @SCIRE_MR_VALID:	registered; user and DMA MRs are always valid.
 */
enum scire_mr_state {
	SCIRE_MR_FREE,
	SCIRE_MR_BUSY,
	SCIRE_MR_VALID,
};

struct scire_odp_implicit;

/**
 * struct scire_mr - memory region.
 * @ibmr:	the core MR. For a fast-reg MR its lkey, rkey, iova and
 *		length belong to the kernel ULP (ib_update_fast_reg_key,
 *		ib_map_mr_sg write them at any time); the device's view is
 *		the key in @state, @iova and @length, fixed at registration.
 * @type:	what the page list describes.
 * @state:	the key (upper 32 bits: the lkey and rkey the key table
 *		resolves to this MR; its index bits never change) and enum
 *		scire_mr_state (lower 32 bits) in one word, so that checking
 *		"this key, valid" and invalidating are single atomic steps.
 *		A VALID word is published with a release.
 * @access:	IB_ACCESS_* granted.
 * @iova:	first byte of the region in its own address space.
 * @length:	bytes in the region.
 * @umem:	SCIRE_MR_USER: the pinned user memory; NULL for a device
 *		memory MR (@dm set).
 * @dm:		device memory MR (ibv_reg_dm_mr): the DM's mmap entry, a
 *		reference held so that @pages outlive the MR.
 * @odp:	ODP MR (IB_ACCESS_ON_DEMAND): the core's ib_umem_odp (also
 *		@umem); no @pages: the pages are looked up, and faulted in,
 *		at each access (kernel/scire_odp.c).
 * @odp_va:	ODP MR: the user virtual address of byte 0 of the region.
 * @odp_imp:	implicit ODP MR: its children (@odp is the implicit root).
 * @dmabuf:	dma-buf MR (ibv_reg_dmabuf_mr): the buffer, a reference
 *		held, mapped into the kernel (@dmabuf_map) for the MR's life
 *		so that @pages stay the buffer's.
 * @dmabuf_map:	the kernel mapping of all of @dmabuf (dma_buf_vmap).
 * @pages:	SCIRE_MR_USER: one struct page per PAGE_SIZE of the region,
 *		starting at the page holding @iova (of the DM for a DM MR).
 * @page_va:	SCIRE_MR_FAST: kernel virtual addresses of the live pages,
 *		each 2^@page_shift bytes; @max_pages entries allocated.
 * @npages:	live entries in @pages or @page_va.
 * @offset:	byte offset of @iova within the first page.
 * @page_shift:	log2 of the page size: PAGE_SHIFT, or for SCIRE_MR_FAST
 *		the page size of its first map_mr_sg, kept for its life.
 * @map_va:	SCIRE_MR_FAST: the list map_mr_sg fills; REG_MR swaps it
 *		with @page_va, so a valid registration is never rewritten.
 * @max_pages:	SCIRE_MR_FAST: entries in @page_va and @map_va.
 * @map_npages:	entries filled in @map_va.
 * @map_offset:	byte offset of the mapped iova within map_va[0].
 * @num_mw:	memory windows bound to this MR; -1 once dereg has begun.
 * @ref:	held by the key table, by every bound window and by every
 *		data-path user.
 * @released:	completed when @ref drops to zero.
 * @rcu:	defers the free past key-table readers.
 */
struct scire_mr {
	struct ib_mr ibmr;
	enum scire_mr_type type;
	atomic64_t state;
	int access;
	u64 iova;
	u64 length;
	struct ib_umem *umem;
	struct scire_mmap_entry *dm;
	struct ib_umem_odp *odp;
	u64 odp_va;
	struct scire_odp_implicit *odp_imp;
	struct dma_buf *dmabuf;
	struct iosys_map dmabuf_map;
	struct page **pages;
	u64 *page_va;
	unsigned long npages;
	unsigned int offset;
	unsigned int page_shift;
	u64 *map_va;
	u32 max_pages;
	u32 map_npages;
	unsigned int map_offset;
	atomic_t num_mw;
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;
};

/**
 * struct scire_wq - an SQ, RQ or SRQ ring as the kernel sees it.
 * @ring:	the ring head; slots follow at SCIRE_WQ_RING_HDR_SIZE. User
 *		space may write any of it at any time: the kernel reads
 *		ring->producer and the slots as untrusted input.
 * @mmap:	user queues only: the mmap entry owning @ring.
 * @num_entries: slots, a power of two.
 * @wqe_size:	bytes per slot, a power of two.
 * @max_sge:	SGEs a WQE may carry.
 * @max_inline:	SQ only: inline bytes a WQE may carry.
 * @consumer:	the kernel's own consumer index (see scire-abi.h); the
 *		ring's copy is published from it and never read back.
 * @lock:	kernel queues: serialises posters (ring->producer is then the
 *		kernel's own). SRQ: also serialises the QPs that take WQEs.
 */
struct scire_wq {
	struct scire_wq_ring *ring;
	struct scire_mmap_entry *mmap;
	u32 num_entries;
	u32 wqe_size;
	u32 max_sge;
	u32 max_inline;
	u32 consumer;
	spinlock_t lock;	/* see above */
};

static inline void *scire_wq_slot(struct scire_wq *wq, u32 index)
{
	return (u8 *)wq->ring + SCIRE_WQ_RING_HDR_SIZE +
	       (size_t)(index & (wq->num_entries - 1)) * wq->wqe_size;
}

/**
 * struct scire_srq - shared receive queue.
 * @ibsrq:	the core SRQ; must stay first.
 * @rq:		the ring.
 * @srqn:	index in scire_dev.srq_xa.
 * @limit:	SRQ limit (IBA 10.2.9.4); 0 when disarmed. Read and written
 *		under @rq.lock.
 * @users:	an XRC SRQ is found by number from the wire, not through a
 *		QP the core ties to it: one count for the SRQ itself and one
 *		per responder run using it (scire_xsrq_get()); destroy drops
 *		its own and waits on @gone for the rest.
 * @gone:	completed when @users reaches zero.
 */
struct scire_srq {
	struct ib_srq ibsrq;
	struct scire_wq rq;
	u32 srqn;
	u32 limit;
	refcount_t users;
	struct completion gone;
};

/**
 * struct scire_av - a resolved address vector: what a packet to the peer
 * needs in its Ethernet, IP and UDP headers (RoCEv2), or in its LRH and
 * GRH (scire_ib).
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6 (RoCEv2);
 *		RDMA_NETWORK_IB on a scire_ib port.
 * @sgid:	source GID (IPv4-mapped for IPv4).
 * @dgid:	destination GID.
 * @saddr:	@sgid as a socket address, for routing.
 * @daddr:	@dgid as a socket address.
 * @smac:	source Ethernet address.
 * @dmac:	destination Ethernet address.
 * @vlan_id:	VLAN id, or 0xffff for none.
 * @traffic_class: GRH traffic class (DSCP and ECN).
 * @hop_limit:	GRH hop limit (IPv4 TTL).
 * @flow_label:	GRH flow label (IPv6).
 * @sl:		service level.
 * @sgid_index:	index of @sgid in the port's GID table.
 * @dlid:	scire_ib: destination LID.
 * @src_path_bits: scire_ib: source path bits (the low LMC bits of the SLID).
 * @ib_grh:	scire_ib: the packet carries a GRH (@sgid, @dgid, ...).
 */
struct scire_av {
	enum rdma_network_type network_type;
	union ib_gid sgid;
	union ib_gid dgid;
	union {
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} saddr, daddr;
	u8 smac[ETH_ALEN];
	u8 dmac[ETH_ALEN];
	u16 vlan_id;
	u8 traffic_class;
	u8 hop_limit;
	u32 flow_label;
	u8 sl;
	u8 sgid_index;
	u16 dlid;
	u8 src_path_bits;
	bool ib_grh;
};

/**
 * struct scire_ah - address handle (IBA 10.2.2): where a UD send goes.
 * @ibah:	the core AH; must stay first.
 * @av:		the resolved destination, copied out by each send.
 * @ah_num:	index in scire_dev.ah_xa; what a UD WQE names it by.
 */
struct scire_ah {
	struct ib_ah ibah;
	struct scire_av av;
	u32 ah_num;
};

/**
 * struct scire_mcg - a multicast group QPs of one device are attached to.
 * Replaced, never changed, once published (copy on update, RCU).
 * @node:	entry in scire_dev.mcg_list.
 * @mgid:	the group's GID (RoCEv2: an IPv4-mapped or IPv6 multicast
 *		address, joined on the device's netdev).
 * @mlid:	scire_ib: the group's multicast LID, given by the SA with
 *		the MGID (IBA 15.2.5.17); 0 on RoCE.
 * @num_qp:	entries in @qp.
 * @qp:		the attached QPs' reference counts. A QP is detached before
 *		it is destroyed (the core holds a use count per attachment),
 *		but a receiver under RCU may still read an older copy of the
 *		group: it takes a reference with refcount_inc_not_zero()
 *		before it touches the QP (struct scire_qp_ref).
 * @rcu:	defers the free past receivers.
 */
struct scire_mcg {
	struct list_head node;
	union ib_gid mgid;
	u16 mlid;
	u32 num_qp;
	struct scire_qp_ref *qp[SCIRE_MAX_MCG_QP];
	struct rcu_head rcu;
};

/**
 * struct scire_pkt - what the receive path parsed from a RoCEv2 packet,
 * kept in skb->cb. skb->data points at the BTH; the payload starts at
 * scire_opcode[opcode].hdr_len and is @paylen bytes (pad and ICRC already
 * excluded).
 * @sdev:	device the packet arrived on.
 * @mask:	scire_opcode[opcode].mask.
 * @psn:	BTH PSN.
 * @qpn:	BTH destination QP.
 * @paylen:	payload bytes.
 * @opcode:	BTH opcode.
 * @ackreq:	BTH AckReq.
 * @se:		BTH SE.
 * @local:	a same-host unit (see scire_pkt_send()): no UDP, IP or ICRC,
 *		the payload may sit in page fragments of the sender's MR,
 *		and a message is segmented by SCIRE_LOCAL_MTU, not the path
 *		MTU. Set by the sender before scire_pkt_send().
 * @wire:	a RoCE packet from another host: the source address of
 *		its IP header is its sender's, and its refusal counts
 *		against that source (scire_net_src_error()).
 * @ib:		a scire_ib packet: no IP header; @slid, @sl and
 *		@dlid_path_bits stand for its LRH.
 * @ib_grh:	a scire_ib packet with a GRH, at the skb's network header.
 * @sl:		LRH SL (scire_ib).
 * @slid:	LRH SLID (scire_ib).
 * @dlid_path_bits: the DLID's bits below the port's LMC (scire_ib).
 * @pkey_index:	the P_Key table entry the BTH's P_Key matched (scire_ib;
 *		a GSI receive's wc.pkey_index).
 */
struct scire_pkt {
	struct scire_dev *sdev;
	u32 mask;
	u32 psn;
	u32 qpn;
	u32 paylen;
	u8 opcode;
	bool ackreq;
	bool se;
	bool local;
	bool wire;
	bool ib;
	bool ib_grh;
	u8 sl;
	u16 slid;
	u8 dlid_path_bits;
	u8 pkey_index;
};

static inline struct scire_pkt *scire_pkt(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct scire_pkt) > sizeof(skb->cb));
	return (struct scire_pkt *)skb->cb;
}

static inline void *scire_pkt_hdr(struct sk_buff *skb, enum scire_hdr_index h)
{
	return skb->data + scire_opcode[scire_pkt(skb)->opcode].offset[h];
}

/*
 * Payload bytes per PSN of a same-host unit. 32 KiB fits in page fragments
 * at any alignment (9 of MAX_SKB_FRAGS), and, where the bytes must be
 * copied instead (kernel memory, scattered SGEs), in one linear skb below
 * SCIRE_PKT_MAX_LEN.
 */
#define SCIRE_LOCAL_MTU		SZ_32K

/* Send same-host traffic as whole units and run receivers inline. */
extern bool scire_fast_path;

#define SCIRE_RUNSET_SIZE	8
#define SCIRE_RUNSET_MAX_RUNS	16

/**
 * struct scire_runset - QPs a run delivered same-host packets to, to be run
 * next in the same context instead of in their work items.
 * @qp:		held QPs, a FIFO from @head to @tail (free-running).
 * @head:	next to run.
 * @tail:	next free slot.
 * @runs:	runs done so far; bounded by SCIRE_RUNSET_MAX_RUNS.
 */
struct scire_runset {
	struct scire_qp *qp[SCIRE_RUNSET_SIZE];
	unsigned int head;
	unsigned int tail;
	unsigned int runs;
};

#include "scire_req.h"
#include "scire_resp.h"

/* Bits of struct scire_qp.pending: why the worker must run. */
enum scire_qp_pending {
	SCIRE_QP_P_RETRANSMIT,	/* retransmit timer fired */
	SCIRE_QP_P_RNR,		/* RNR timer fired */
	SCIRE_QP_P_FLUSH_RQ,	/* RQ posted to while in ERR */
	SCIRE_QP_P_KICK,	/* a run was asked for since the last began */
};

/**
 * struct scire_qp_ref - the reference count of a QP, in memory of its own.
 * @count:	held by the QP table and by every packet or timer in flight
 *		that looked the QP up; destroy_qp waits for it to reach
 *		zero, and it never rises again from there.
 * @qp:		the QP; only to be used while holding a reference.
 * @rcu:	frees this a grace period after destroy_qp.
 *
 * The core frees a QP as soon as destroy_qp returns, without waiting for
 * RCU readers. The QP table (qp_xa) and multicast groups are read under
 * RCU, so what they hold is this and not the QP: a reader may still find
 * it after the QP is gone, sees @count at zero, and leaves @qp alone.
 * (destroy_qp would otherwise wait for a grace period: 17 ms each under
 * TCG, a minute for 4,096 QPs.)
 */
struct scire_qp_ref {
	refcount_t count;
	struct scire_qp *qp;
	struct rcu_head rcu;
};

/**
 * struct scire_qp - queue pair.
 * @ibqp:	the core QP; must stay first.
 * @sdev:	the device.
 * @ref:	the QP's reference count (struct scire_qp_ref); destroy
 *		waits for @released.
 * @released:	completed when @ref's count drops to zero.
 * @mutex:	serialises modify_qp, query_qp and destroy_qp (process
 *		context).
 * @work_mutex:	held by @work for each run, and by modify_qp while it
 *		changes the attributes (@av to @sq_sig_all, which the data
 *		path reads without locks) or starts/resets the requester and
 *		responder: a run never sees them change. Whoever holds it
 *		also owns @exec.
 * @exec:	bit 0 is the QP's execution context itself: held for every
 *		run and attribute change. Process context takes it right
 *		after @work_mutex; a wire packet's softirq takes only the bit
 *		(never waits for it) to run the QP at once (scire_qp_rcv()).
 *		So a @work_mutex holder that finds it taken waits for a
 *		softirq run, which is short and never sleeps.
 * @run_atomic:	the run holding @exec is such a softirq run: it must not
 *		sleep and allocates with GFP_ATOMIC (scire_qp_gfp()).
 * @state_lock:	serialises state changes (modify_qp and the data path's
 *		moves to ERR) and guards @sq_draining and @sqd_notify; any
 *		context, interrupts saved.
 * @state:	enum ib_qp_state; written under @state_lock, read by the data
 *		path with READ_ONCE().
 * @sq_draining: SQD entered and the SQ not yet drained.
 * @sqd_notify:	raise IB_EVENT_SQ_DRAINED when drained (en_sqd_async_notify
 *		of the move to SQD).
 * @av:		the primary path (IB_QP_AV).
 * @ah_attr:	the rdma_ah_attr given with IB_QP_AV, for query_qp (no GID
 *		attribute reference kept).
 * @mtu:	path MTU in bytes (256..4096).
 * @path_mtu:	the same as enum ib_mtu.
 * @dest_qpn:	remote QP number.
 * @sq_psn:	starting send PSN given by modify_qp (RTR->RTS).
 * @rq_psn:	expected receive PSN given by modify_qp (INIT->RTR).
 * @qkey:	Q_Key (UD/GSI).
 * @qp_access:	IB_ACCESS_REMOTE_* the responder allows.
 * @pkey_index:	P_Key index.
 * @timeout:	local ACK timeout code (IBA 11.2.4.2: 4.096 us * 2^timeout;
 *		0 = infinite).
 * @retry_cnt:	retries on timeout and sequence errors (0..7).
 * @rnr_retry:	retries on RNR NAK (0..6, 7 = infinite).
 * @min_rnr_timer: RNR NAK timer code this QP sends as a responder.
 * @max_rd_atomic: READs/atomics in flight as requester.
 * @max_dest_rd_atomic: READs/atomics accepted in flight as responder.
 * @sq_sig_all:	every SQ WQE is signalled.
 * @sq:		the send queue ring.
 * @rq:		the receive queue ring (unused with @srq).
 * @srq:	the SRQ, or NULL.
 * @rss:	an RSS QP's hash and indirection table (scire_rwq.c), or NULL.
 * @scq:	send CQ.
 * @rcq:	receive CQ.
 * @work:	the QP's one execution context: receive processing,
 *		completer and requester all run here, serialised.
 * @rxq:	received packets waiting for @work.
 * @pending:	enum scire_qp_pending bits.
 * @resp_live:	the responder was started (INIT->RTR) since the last
 *		RESET: @resp holds the live ePSN. Under @mutex.
 * @req_live:	the requester was started (RTR->RTS) since the last RESET:
 *		@req holds the live PSNs. Under @mutex.
 * @last_wqe_reached: IB_EVENT_QP_LAST_WQE_REACHED raised since the QP
 *		entered ERR (QPs on an SRQ); touched by @work only.
 * @req:	requester and completer state (scire_req.c, scire_comp.c).
 * @resp:	responder state (scire_resp.c).
 * @src_port:	UDP source port of this QP's packets.
 * @runset:	while a run of this QP holds @work_mutex with the fast path
 *		on: where its same-host deliveries go (scire_qp_rcv()).
 * @run_task:	the task doing that run; only it may use @runset.
 * @run_for_peer: that run is another QP's context running this one, or
 *		a direct request of a peer holds @work_mutex (either is
 *		short: a doorbell waits for it rather than hand over).
 */
struct scire_qp {
	struct ib_qp ibqp;
	struct scire_dev *sdev;
	struct scire_qp_ref *ref;
	struct completion released;
	struct mutex mutex;	/* see above */
	struct mutex work_mutex;	/* see above */

	spinlock_t state_lock;	/* see above */
	enum ib_qp_state state;
	bool sq_draining;
	bool sqd_notify;
	struct scire_av av;
	struct rdma_ah_attr ah_attr;
	u32 mtu;
	enum ib_mtu path_mtu;
	u32 dest_qpn;
	u32 sq_psn;
	u32 rq_psn;
	u32 qkey;
	int qp_access;
	u16 pkey_index;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	bool sq_sig_all;

	struct scire_wq sq;
	struct scire_wq rq;
	struct scire_srq *srq;
	struct scire_rss *rss;
	struct scire_cq *scq;
	struct scire_cq *rcq;

	struct work_struct work;
	struct sk_buff_head rxq;
	unsigned long pending;
	unsigned long exec;
	bool run_atomic;
	bool resp_live;
	bool req_live;
	bool last_wqe_reached;

	struct scire_req req;
	struct scire_resp resp;
	u16 src_port;

	struct scire_runset *runset;
	struct task_struct *run_task;
	bool run_for_peer;
};

/* Allocation flags for the run of @qp in progress (caller holds @exec). */
static inline gfp_t scire_qp_gfp(const struct scire_qp *qp)
{
	return qp->run_atomic ? GFP_ATOMIC : GFP_KERNEL;
}

/* Payload bytes per PSN of a request or READ response @pkt belongs to. */
static inline u32 scire_pkt_mtu(const struct scire_qp *qp,
				const struct scire_pkt *pkt)
{
	return pkt->local ? SCIRE_LOCAL_MTU : qp->mtu;
}

/**
 * enum scire_mw_state - binding state of a memory window.
 * @SCIRE_MW_FREE:	allocated, invalidated (type 2) or bound with length 0
 *			(type 1): may be bound.
 * @SCIRE_MW_BOUND:	bound: its rkey resolves. A type 1 window may be
 *			bound again from here; a type 2 window only after an
 *			invalidation.
 * @SCIRE_MW_DEAD:	deallocated; only RCU readers may still see it.
 */
enum scire_mw_state {
	SCIRE_MW_FREE,
	SCIRE_MW_BOUND,
	SCIRE_MW_DEAD,
};

/**
 * struct scire_mw_entry - a memory window as the key table holds it. It
 * lives apart from struct scire_mw because the core frees that one as
 * soon as dealloc_mw returns, while key-table readers may still look at
 * this one until an RCU grace period has passed.
 * @lock:	serialises bind, invalidate, dealloc and lookups.
 * @state:	enum scire_mw_state.
 * @type:	IB_MW_TYPE_1 or IB_MW_TYPE_2, fixed at allocation.
 * @rkey:	the window's current rkey; the index bits never change.
 * @pd:		the window's PD (compared, never dereferenced).
 * @mr:		BOUND: the MR it is bound to (held), else NULL.
 * @addr:	BOUND: first byte of the window, in the MR's address space.
 * @length:	BOUND: bytes in the window, at least 1.
 * @access:	BOUND: IB_ACCESS_REMOTE_* granted through the window.
 * @rcu:	defers the free past key-table readers.
 */
struct scire_mw_entry {
	spinlock_t lock;	/* see above */
	enum scire_mw_state state;
	enum ib_mw_type type;
	u32 rkey;
	struct scire_pd *pd;
	struct scire_mr *mr;
	u64 addr;
	u64 length;
	int access;
	struct rcu_head rcu;
};

/**
 * struct scire_mw - memory window (type 1 or 2, bound by a BIND_MW WQE).
 * @ibmw:	the core MW; must stay first.
 * @entry:	its key-table entry.
 */
struct scire_mw {
	struct ib_mw ibmw;
	struct scire_mw_entry *entry;
};

static inline struct scire_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct scire_dev, ibdev);
}

static inline struct scire_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct scire_cq, ibcq);
}

static inline struct scire_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct scire_mr, ibmr);
}

static inline struct scire_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct scire_qp, ibqp);
}

static inline struct scire_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct scire_srq, ibsrq);
}

static inline struct scire_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct scire_pd, ibpd);
}

static inline struct scire_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct scire_ah, ibah);
}

static inline struct scire_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct scire_ucontext, ibuc);
}

/*
 * UD, and the special QPs of the MAD layer (SMI: QP0, GSI: QP1): datagram
 * QPs, whose sends are never acknowledged (IBA 9.8.2).
 */
static inline bool scire_qp_is_datagram(const struct scire_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD ||
	       qp->ibqp.qp_type == IB_QPT_GSI ||
	       qp->ibqp.qp_type == IB_QPT_SMI;
}

/*
 * Reliable connected: RC, and XRC's two halves (annex A19): the initiator
 * (XRC_INI, a send queue only) and the target (XRC_TGT, no queues; its
 * receives come from the XRC SRQ each request names). Same PSNs, ACKs and
 * retries as RC.
 */
static inline bool scire_qp_is_rc(const struct scire_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

static inline bool scire_qp_is_xrc(const struct scire_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* The transport bits of the BTH opcodes a connected QP sends. */
static inline u8 scire_qp_transport(const struct scire_qp *qp)
{
	if (scire_qp_is_xrc(qp))
		return SCIRE_OP_XRC;
	return qp->ibqp.qp_type == IB_QPT_UC ? SCIRE_OP_UC : SCIRE_OP_RC;
}

/* scire_main.c */
void scire_port_update(struct scire_dev *sdev);

/*
 * Is a RoCE port ACTIVE (its netdev running, with carrier)? A lockless
 * snapshot for the data path, which drops what a port without link would
 * neither send nor receive (scire_pkt_send()). Always true for scire_ib,
 * whose port state has rules of its own (scire_ib_loopback_ok()).
 */
static inline bool scire_port_up(struct scire_dev *sdev)
{
	return sdev->link == SCIRE_LINK_IB ||
	       READ_ONCE(sdev->port_state) == IB_PORT_ACTIVE;
}

int scire_dev_add(const char *ibdev_name, struct net_device *ndev,
		  enum scire_link link);

/* ib/scire_ib.c */
extern const struct ib_device_ops scire_ib_dev_ops;
void scire_ib_port_init(struct scire_dev *sdev);
void scire_ib_port_update(struct scire_dev *sdev);
void scire_ib_set_port_state(struct scire_dev *sdev,
			     enum ib_port_state state, u8 phys_state,
			     u32 *events);
void scire_ib_dispatch(struct scire_dev *sdev, u32 events);
u16 scire_pkey_tbl_len(const struct scire_dev *sdev);
__be64 scire_ib_port_guid(const struct scire_dev *sdev);
enum ib_mtu scire_ib_mtu_cap(const struct scire_dev *sdev);
int scire_ib_register_link(void);
void scire_ib_unregister_link(void);

/* ib/scire_ib_net.c */
extern const struct attribute_group *scire_ib_port_groups[];
unsigned int scire_ib_headroom(void);
u8 scire_ib_link_phys_state(const struct scire_dev *sdev);
void scire_ib_grh_fill(struct scire_dev *sdev, const struct scire_av *av,
		       struct ib_grh *grh, u32 paylen);
int scire_ib_xmit(struct scire_qp *qp, const struct scire_av *av,
		  struct sk_buff *skb);
void scire_ib_net_init(struct scire_dev *sdev);
int scire_ib_net_open(struct scire_dev *sdev);
void scire_ib_net_start(struct scire_dev *sdev);
void scire_ib_net_close(struct scire_dev *sdev);

void scire_ib_qkey_violation(struct scire_qp *qp, struct sk_buff *skb,
			     u32 qkey, u32 src_qpn);
bool scire_ib_qp_pkey_ok(struct scire_qp *qp, struct sk_buff *skb);
bool scire_ib_pkey_match(u16 mine, u16 pkey);
u16 scire_qp_bth_pkey(const struct scire_qp *qp, u16 pkey_index);
/* ib/scire_ib_trap.c */
struct ib_smp;
void scire_ib_trap_init(struct scire_dev *sdev);
void scire_ib_trap_local_changes(struct scire_dev *sdev, u16 change_flags);
void scire_ib_trap_repress(struct scire_dev *sdev, const struct ib_smp *smp);
void scire_ib_trap_security(struct scire_dev *sdev,
			    struct ib_mad_notice_attr *ntc);
int scire_ib_trap_register(void);
void scire_ib_trap_unregister(void);

/* ib/scire_mad.c */
int scire_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index);

/* scire_verbs.c */
int scire_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int scire_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int scire_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int scire_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer scire_get_link_layer(struct ib_device *ibdev, u32 port);
int scire_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void scire_dealloc_ucontext(struct ib_ucontext *ibuc);
void scire_disassociate_ucontext(struct ib_ucontext *ibuc);
int scire_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void scire_mmap_free(struct rdma_user_mmap_entry *entry);
struct scire_mmap_entry *scire_mmap_alloc(struct ib_ucontext *ibuc,
					  size_t size);
void scire_mmap_remove(struct scire_mmap_entry *entry);
int scire_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int scire_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
bool scire_udata_in_ok(struct ib_udata *udata);
enum ib_mtu scire_active_mtu(struct scire_dev *sdev);

/* scire_cq.c */
int scire_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct scire_cq_uarg *uarg);
int scire_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int scire_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int scire_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int scire_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void scire_cq_event_sync(struct scire_cq *cq);
int scire_cq_post(struct scire_cq *cq, const struct scire_cqe *cqe,
		  struct ib_qp *qp, bool solicited);

/* scire_mr.c */
struct ib_mr *scire_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_dm *scire_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs);
int scire_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
void scire_dm_release_freed(struct scire_dev *sdev);
struct ib_mr *scire_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs);
int scire_odp_reg(struct scire_mr *mr, u64 start, u64 length, int access);
void scire_odp_unreg(struct scire_mr *mr);
void scire_mr_persist(struct scire_mr *mr, u64 iova, u64 len);
void scire_copy_in_page(struct page *page, unsigned int in_page, u8 *buf,
			unsigned int n, bool to_mr);
int scire_odp_copy(struct scire_mr *mr, u64 off, u8 *buf, u32 len,
		   bool to_mr);
struct page *scire_odp_word_get(struct scire_mr *mr, u64 off,
				unsigned int *in_page, struct ib_umem_odp **held);
void scire_odp_word_put(struct ib_umem_odp *held);
int scire_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);
struct ib_mr *scire_reg_dmabuf_mr(struct ib_pd *ibpd, u64 offset, u64 length,
				  u64 iova, int fd, int access,
				  struct ib_udata *udata);
struct ib_mr *scire_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int scire_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct scire_mr *scire_mr_get(struct scire_dev *sdev, u32 key);
void scire_mr_put(struct scire_mr *mr);
struct ib_mr *scire_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *scire_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int scire_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int scire_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int scire_dealloc_mw(struct ib_mw *ibmw);
struct scire_mr *scire_mr_lookup(struct scire_pd *pd, u32 key, bool remote,
				 u64 iova, u64 len, int access);
struct scire_mr *scire_mr_lookup_region(struct scire_pd *pd, u32 rkey,
					int access);
int scire_mr_copy(struct scire_mr *mr, u64 iova, void *buf, u32 len,
		  bool to_mr);
int scire_mr_atomic(struct scire_mr *mr, u64 iova, bool cmp_swp,
		    u64 compare_add, u64 swap, u64 *orig);
int scire_mr_atomic_write(struct scire_mr *mr, u64 iova, const u8 *value);
int scire_mr_invalidate(struct scire_pd *pd, u32 key, bool remote);
int scire_mr_fast_reg(struct scire_pd *pd, struct scire_mr *mr, u32 key,
		      int access);
int scire_mw_bind(struct scire_pd *pd, const struct scire_send_wqe *wqe);

/**
 * struct scire_sgl - a cursor over a WQE's local SGE list.
 * @pd:		the PD every lkey must belong to.
 * @sge:	the SGEs (a kernel copy of the WQE's).
 * @num_sge:	entries in @sge.
 * @index:	current SGE.
 * @offset:	bytes of sge[index] already consumed.
 * @mr:		held MR of sge[index] once resolved, or NULL.
 * @mr_write:	@mr was resolved with IB_ACCESS_LOCAL_WRITE.
 */
struct scire_sgl {
	struct scire_pd *pd;
	const struct scire_sge *sge;
	u32 num_sge;
	u32 index;
	u32 offset;
	struct scire_mr *mr;
	bool mr_write;
};

void scire_sgl_init(struct scire_sgl *sgl, struct scire_pd *pd,
		    const struct scire_sge *sge, u32 num_sge);
int scire_sgl_copy(struct scire_sgl *sgl, void *buf, u32 len, bool to_sgl);
int scire_sgl_seek(struct scire_sgl *sgl, u64 offset);
void scire_sgl_release(struct scire_sgl *sgl);
u64 scire_sgl_length(const struct scire_sge *sge, u32 num_sge);
/*
 * A wire packet with this much payload or more (a request's, or a READ
 * response's) carries it as fragments of the MR's pages, not copied into
 * the skb. A smaller payload is copied into the head, which saves the
 * fragments' page references and the tail fragment for pad and ICRC.
 */
#define SCIRE_WIRE_ZC_MIN	1024

/**
 * scire_pkt_zc() - whether a packet's payload goes as the MR's own pages
 * @local: the packet is a same-host unit, which always takes them: its
 *	   receiver reads them in place
 * @len: payload bytes, 0 to the MTU
 *
 * The one rule for requests (scire_req_xmit()) and READ responses
 * (scire_resp_read_pump()): fragments of the MR's pages for a unit with
 * any payload and for a wire packet of SCIRE_WIRE_ZC_MIN bytes or more,
 * a copy into the linear head otherwise. The caller falls back to the copy
 * where the MR cannot lend its pages.
 *
 * Return: true to build the payload from the MR's pages.
 */
static inline bool scire_pkt_zc(bool local, u32 len)
{
	return len && (local || len >= SCIRE_WIRE_ZC_MIN);
}

int scire_sgl_frags(struct scire_sgl *sgl, struct sk_buff *skb, u32 len);
int scire_mr_frags(struct scire_mr *mr, u64 iova, struct sk_buff *skb,
		   u32 len);
int scire_skb_walk(struct sk_buff *skb, u32 off, u32 len,
		   int (*fn)(void *arg, u8 *buf, u32 n), void *arg);
int scire_pkt_to_sgl(struct sk_buff *skb, u32 off, u32 len,
		     struct scire_sgl *sgl);
int scire_pkt_to_mr(struct sk_buff *skb, u32 off, u32 len,
		    struct scire_mr *mr, u64 iova);

/* scire_qp.c */
int scire_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int scire_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int scire_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int scire_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int scire_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int scire_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int scire_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
struct scire_qp *scire_qp_get(struct scire_dev *sdev, u32 qpn);
void scire_qp_put(struct scire_qp *qp);
void scire_qp_rcv(struct scire_qp *qp, struct sk_buff *skb,
		  struct scire_runset *rs, bool bh);
void scire_qp_kick(struct scire_qp *qp);
bool scire_qp_direct_lock(struct scire_qp *qp, bool atomic);
void scire_qp_direct_unlock(struct scire_qp *qp, bool atomic);
void scire_qp_error(struct scire_qp *qp);
void scire_qp_sq_drained(struct scire_qp *qp);
void scire_qp_sq_error(struct scire_qp *qp);
int scire_qp_doorbell(struct scire_qp *qp, u32 flags);
int scire_rq_take(struct scire_qp *qp, struct scire_recv_wqe *rwqe);
int scire_wq_take(struct scire_wq *wq, struct scire_recv_wqe *rwqe, u32 *left);
void scire_rq_flush(struct scire_qp *qp);
void scire_rq_shape(struct scire_wq *wq, u32 max_wr, u32 max_sge);
int scire_wq_alloc(struct scire_wq *wq, struct ib_udata *udata);
void scire_wq_free(struct scire_wq *wq);
int scire_wq_post_recv(struct scire_wq *wq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
/* Room scire_rq_take() needs: a receive WQE with SCIRE_MAX_SGE SGEs. */
#define SCIRE_RECV_WQE_MAX_SIZE	(sizeof(struct scire_recv_wqe) + \
				 SCIRE_MAX_SGE * sizeof(struct scire_sge))
extern struct workqueue_struct *scire_wq;

/* scire_srq.c */
int scire_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int scire_srq_resize(struct scire_srq *srq, u32 max_wr, struct ib_udata *udata);
void scire_srq_resp(const struct scire_srq *srq,
		    struct scire_create_srq_resp *resp);
int scire_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int scire_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int scire_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int scire_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
struct scire_srq *scire_xsrq_get(struct scire_dev *sdev,
				 const struct ib_xrcd *xrcd, u32 srqn);
void scire_xsrq_put(struct scire_srq *srq);
int scire_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int scire_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

/* scire_ah.c */
int scire_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int scire_destroy_ah(struct ib_ah *ibah, u32 flags);
int scire_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int scire_ah_av(struct scire_qp *qp, u32 ah_num, struct scire_av *av);

/* scire_mcast.c */
int scire_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int scire_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void scire_mcast_rcv(struct scire_dev *sdev, struct sk_buff *skb,
		     const union ib_gid *mgid, u16 mlid);
bool scire_mcast_member(struct scire_dev *sdev, const union ib_gid *mgid,
			u16 mlid);

/* Is @lid a multicast LID (IBA 4.1.1: 0xC000 to 0xFFFE)? */
static inline bool scire_lid_is_mcast(u16 lid)
{
	return lid >= be16_to_cpu(IB_MULTICAST_LID_BASE) &&
	       lid != be16_to_cpu(IB_LID_PERMISSIVE);
}

/* scire_raw.c */
struct ib_flow *scire_create_flow(struct ib_qp *ibqp,
				  struct ib_flow_attr *attr,
				  struct ib_udata *udata);
int scire_destroy_flow(struct ib_flow *ibflow);
int scire_raw_send(struct scire_qp *qp, struct sk_buff *skb);
void scire_raw_init(struct scire_dev *sdev);
void scire_raw_cleanup(struct scire_dev *sdev);

/* scire_rwq.c */
/* Indirection tables hold at most 2^this WQs. */
#define SCIRE_RSS_MAX_LOG_TABLE	8

/**
 * struct scire_rwq - a receive work queue (ibv_create_wq()).
 * @ibwq:	the core's WQ; the core fills in its PD and CQ.
 * @rq:		its receive ring; rq.lock serialises taking WQEs.
 * @sdev:	the device.
 * @state:	enum ib_wq_state; frames are placed only in IB_WQS_RDY.
 * @mutex:	serialises the work item and state changes.
 * @rxq:	frames the RSS hash sent here, waiting for @work.
 * @work:	places @rxq's frames (process context: ODP MRs may fault).
 * @wqe:	kernel copy of the WQE being filled (SCIRE_RECV_WQE_MAX_SIZE).
 */
struct scire_rwq {
	struct ib_wq ibwq;
	struct scire_wq rq;
	struct scire_dev *sdev;
	enum ib_wq_state state;
	struct mutex mutex;	/* see above */
	struct sk_buff_head rxq;
	struct work_struct work;
	struct scire_recv_wqe *wqe;
};

/**
 * struct scire_rwq_ind_table - an indirection table of WQs; the core's
 * object holds all there is (the WQs, their number).
 * @ibtbl:	the core's table.
 */
struct scire_rwq_ind_table {
	struct ib_rwq_ind_table ibtbl;
};

/**
 * struct scire_rss - the hash of an RSS QP (a raw packet QP over an
 * indirection table).
 * @key:	the Toeplitz key.
 * @fields:	SCIRE_RX_HASH_* to hash.
 * @tbl:	the indirection table; the core holds it for the QP.
 */
struct scire_rss {
	u8 key[SCIRE_RSS_KEY_LEN];
	u64 fields;
	struct ib_rwq_ind_table *tbl;
};

struct ib_wq *scire_create_wq(struct ib_pd *ibpd, struct ib_wq_init_attr *attr,
			      struct ib_udata *udata);
int scire_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata);
int scire_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask,
		    struct ib_udata *udata);
int scire_create_rwq_ind_table(struct ib_rwq_ind_table *ibtbl,
			       struct ib_rwq_ind_table_init_attr *attr,
			       struct ib_udata *udata);
int scire_destroy_rwq_ind_table(struct ib_rwq_ind_table *ibtbl);
void scire_rwq_flush(struct scire_rwq *rwq);
int scire_rss_parse(struct scire_qp *qp, struct ib_rwq_ind_table *tbl,
		    struct ib_udata *udata);
u32 scire_rss_hash(const struct scire_rss *rss,
		   const struct scire_raw_frame *f);
void scire_rss_deliver(struct scire_qp *qp, struct sk_buff *skb,
		       const struct scire_raw_frame *f);

/* scire_stats.c */
struct rdma_hw_stats *scire_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int scire_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* scire_uapi.c */
extern const struct uapi_definition scire_uapi_defs[];

/* scire_net.c */
int scire_net_init(void);
void scire_net_exit(void);
int scire_net_dev_open(struct scire_dev *sdev);
void scire_net_dev_close(struct scire_dev *sdev);
int scire_av_init(struct scire_dev *sdev, struct scire_av *av,
		  const struct rdma_ah_attr *attr);
struct sk_buff *scire_pkt_alloc(struct scire_qp *qp, const struct scire_av *av,
				u32 len, gfp_t gfp);
bool scire_net_av_local(struct scire_dev *sdev, const struct scire_av *av);
void scire_src_limit_init(struct scire_src_limit *lim);
void scire_net_src_error(struct scire_dev *sdev, const struct in6_addr *src);
void scire_net_av_error(struct scire_dev *sdev, const struct scire_av *av);
struct scire_qp *scire_net_direct_peer(struct scire_qp *qp);
void scire_net_drop(struct scire_dev *sdev, struct sk_buff *skb,
		    enum scire_drop_reason why);
struct scire_pkt *scire_net_pkt_fill(struct sk_buff *skb,
				     struct scire_dev *sdev,
				     const struct scire_bth *bth, u32 paylen);
void scire_net_rcv_qp(struct scire_dev *sdev, struct sk_buff *skb);
u32 scire_crc32(u32 crc, const void *buf, size_t len);
int scire_net_crc_piece(void *arg, u8 *buf, u32 n);
int scire_pkt_send(struct scire_qp *qp, const struct scire_av *av,
		   struct sk_buff *skb);
int scire_net_mc_join(struct scire_dev *sdev, const union ib_gid *mgid,
		      bool join);

#endif /* SCIRE_H */
