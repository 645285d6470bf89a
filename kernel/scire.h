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
#include <linux/completion.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>

#include <rdma/scire-abi.h>

/*
 * Device limits. They bound the kernel memory one process can pin or
 * allocate through one device; the rdma cgroup bounds the object counts
 * further where an administrator sets it.
 */
#define SCIRE_MAX_PD		BIT(16)
#define SCIRE_MAX_CQ		BIT(16)
#define SCIRE_MAX_CQE		BIT(16)	/* ring: 4 MiB of CQEs */
#define SCIRE_MAX_MR		BIT(20)
#define SCIRE_MAX_MR_SIZE	BIT_ULL(40)
#define SCIRE_GID_TBL_LEN	128
#define SCIRE_PKEY_TBL_LEN	1
#define SCIRE_VENDOR_ID		0xffffff	/* no IEEE OUI: software device */

/*
 * Largest RoCEv2 header stack around a payload: IPv6 (40) + UDP (8) +
 * BTH (12) + AtomicETH (28, the largest extended header) + ICRC (4).
 * The active path MTU is the largest IB MTU that fits the netdev MTU
 * after these.
 */
#define SCIRE_MAX_HDR_LEN	(40 + 8 + 12 + 28 + 4)

/**
 * struct scire_dev - one scire ib_device, bound to one Ethernet netdev.
 * @ibdev:	the core device; must stay first (ib_alloc_device).
 * @netdev:	the netdev this device speaks RoCEv2 on; referenced by the core
 *		through ib_device_set_netdev() for the device's lifetime.
 * @list:	entry in the module's device list (scire_main.c).
 * @port_lock:	protects @port_state.
 * @port_state:	IB_PORT_ACTIVE when the netdev is running with carrier,
 *		else IB_PORT_DOWN.
 * @mr_xa:	MRs by key index (lkey/rkey >> 8).
 * @mr_next:	cyclic allocation cursor for @mr_xa.
 * @key_gen:	low byte of the next key, so a recycled index gets a new key.
 * @cq_xa:	CQs by CQ number.
 * @cq_next:	cyclic allocation cursor for @cq_xa.
 * @num_pd:	live PDs, bounded by SCIRE_MAX_PD.
 * @num_cq:	live CQs, bounded by SCIRE_MAX_CQ.
 * @num_mr:	live MRs, bounded by SCIRE_MAX_MR.
 */
struct scire_dev {
	struct ib_device ibdev;
	struct net_device *netdev;
	struct list_head list;

	spinlock_t port_lock;	/* protects port_state */
	enum ib_port_state port_state;

	struct xarray mr_xa;
	u32 mr_next;
	u8 key_gen;
	struct xarray cq_xa;
	u32 cq_next;

	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_mr;
};

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
 */
struct scire_pd {
	struct ib_pd ibpd;
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
};

/**
 * enum scire_mr_type - what an MR's page list describes.
 * @SCIRE_MR_USER:	pinned user pages (ib_umem).
 * @SCIRE_MR_DMA:	all of kernel memory, addressed by kernel virtual
 *			address (the DMA MR; virtual DMA).
 */
enum scire_mr_type {
	SCIRE_MR_USER,
	SCIRE_MR_DMA,
};

/**
 * struct scire_mr - memory region.
 * @ibmr:	the core MR (lkey, rkey, iova, length live there).
 * @type:	what the page list describes.
 * @access:	IB_ACCESS_* granted.
 * @umem:	SCIRE_MR_USER: the pinned user memory.
 * @pages:	SCIRE_MR_USER: one struct page per PAGE_SIZE of the region,
 *		starting at the page holding @ibmr.iova.
 * @npages:	entries in @pages.
 * @offset:	byte offset of @ibmr.iova within pages[0].
 * @ref:	held by the key table and by every data-path user.
 * @released:	completed when @ref drops to zero.
 * @rcu:	defers the free past key-table readers.
 */
struct scire_mr {
	struct ib_mr ibmr;
	enum scire_mr_type type;
	int access;
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	unsigned int offset;
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;
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

static inline struct scire_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct scire_ucontext, ibuc);
}

/* scire_main.c */
void scire_port_update(struct scire_dev *sdev);

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

/* scire_cq.c */
int scire_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int scire_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int scire_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int scire_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int scire_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int scire_cq_post(struct scire_cq *cq, const struct scire_cqe *cqe,
		  struct ib_qp *qp, bool solicited);

/* scire_mr.c */
struct ib_mr *scire_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *scire_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int scire_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct scire_mr *scire_mr_get(struct scire_dev *sdev, u32 key);
void scire_mr_put(struct scire_mr *mr);

#endif /* SCIRE_H */
