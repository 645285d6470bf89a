// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: hw counters of the port, as `rdma statistic show link DEV/1` and
 * /sys/class/infiniband/DEV/ports/1/hw_counters/ show them.
 *
 * The data path counts per CPU (scire_count()); a read sums the CPUs, so a
 * value read while traffic flows is a snapshot, never torn per CPU.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <rdma/ib_verbs.h>

#include "scire.h"

/* Names, indexed by enum scire_counter. */
static const struct rdma_stat_desc scire_counter_desc[SCIRE_CNT_MAX] = {
	[SCIRE_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[SCIRE_CNT_RX_BYTES] = { .name = "rx_bytes" },
	[SCIRE_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[SCIRE_CNT_TX_BYTES] = { .name = "tx_bytes" },
	[SCIRE_CNT_RETRANSMITS] = { .name = "retransmits" },
	[SCIRE_CNT_RETRY_EXCEEDED] = { .name = "retry_exceeded" },
	[SCIRE_CNT_RNR_RETRY_EXCEEDED] = { .name = "rnr_retry_exceeded" },
	[SCIRE_CNT_SEQ_NAK_SENT] = { .name = "seq_nak_sent" },
	[SCIRE_CNT_SEQ_NAK_RCVD] = { .name = "seq_nak_rcvd" },
	[SCIRE_CNT_RNR_NAK_SENT] = { .name = "rnr_nak_sent" },
	[SCIRE_CNT_RNR_NAK_RCVD] = { .name = "rnr_nak_rcvd" },
	[SCIRE_CNT_DUP_REQUEST] = { .name = "duplicate_request" },
	[SCIRE_CNT_OOS_REQUEST] = { .name = "out_of_seq_request" },
	[SCIRE_CNT_ICRC_ERRORS] = { .name = "icrc_errors" },
	[SCIRE_CNT_RX_DROPS] = { .name = "rx_drops" },
	[SCIRE_CNT_TX_DROPS] = { .name = "tx_drops" },
	[SCIRE_CNT_LOCAL_UNITS] = { .name = "local_units" },
	[SCIRE_CNT_LOCAL_BYTES] = { .name = "local_bytes" },
	[SCIRE_CNT_LOCAL_DIRECT] = { .name = "local_direct" },
	[SCIRE_CNT_TRAPS_SENT] = { .name = "traps_sent" },
	[SCIRE_CNT_TRAPS_REPRESSED] = { .name = "traps_repressed" },
	[SCIRE_CNT_TRAPS_ABANDONED] = { .name = "traps_abandoned" },
	[SCIRE_CNT_RESP_REM_ACCESS_ERR] = { .name = "resp_remote_access_errors" },
	[SCIRE_CNT_ODP_FAULTS] = { .name = "odp_page_faults" },
	[SCIRE_CNT_ODP_INVALIDATIONS] = { .name = "odp_invalidations" },
	[SCIRE_CNT_ODP_PREFETCHES] = { .name = "odp_prefetches" },
	[SCIRE_CNT_RAW_RX_FRAMES] = { .name = "raw_rx_frames" },
	[SCIRE_CNT_RAW_TX_FRAMES] = { .name = "raw_tx_frames" },
	[SCIRE_CNT_GSI_RATE_LIMITED] = { .name = "gsi_rate_limited" },
	[SCIRE_CNT_ERR_RATE_LIMITED] = { .name = "err_rate_limited" },
};

/**
 * scire_alloc_hw_port_stats() - describe port 1's counters to the core.
 * @ibdev: the device.
 * @port: the port, 1.
 *
 * The core reads them through scire_get_hw_stats() at most every 10 ms.
 *
 * Context: process context (device registration).
 * Return: the stats struct, or NULL if out of memory.
 */
struct rdma_hw_stats *scire_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	BUILD_BUG_ON(ARRAY_SIZE(scire_counter_desc) != SCIRE_CNT_MAX);
	return rdma_alloc_hw_stats_struct(scire_counter_desc, SCIRE_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * scire_get_hw_stats() - read the counters.
 * @ibdev: the device.
 * @stats: filled with the current values, indexed by enum scire_counter.
 * @port: the port, 1.
 * @index: the counter the core asked for; all are read.
 *
 * Context: process context; the core serialises readers of @stats.
 * Return: the number of counters filled in, SCIRE_CNT_MAX.
 */
int scire_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct scire_dev *sdev = to_sdev(ibdev);
	int cpu, c;

	for (c = 0; c < SCIRE_CNT_MAX; c++)
		stats->value[c] = 0;
	for_each_possible_cpu(cpu) {
		const struct scire_stats *s = per_cpu_ptr(sdev->stats, cpu);

		for (c = 0; c < SCIRE_CNT_MAX; c++)
			stats->value[c] += READ_ONCE(s->cnt[c]);
	}
	return SCIRE_CNT_MAX;
}
