/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: what differs between the kernels scire builds for (Debian
 * bookworm's 6.1 and 6.12, trixie's 6.12, the newest Debian kernel: see
 * scripts/kabi --list), in one place. The code is written against the
 * newer API; this header supplies it on kernels that lack it. Which
 * kernel has what is decided by feature tests on its headers
 * (kernel/scire_compat_probe, run by Kbuild: the SCIRE_HAVE_* macros),
 * never by version numbers. scire.ko and scire_scif.ko both include it.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_COMPAT_H
#define SCIRE_COMPAT_H

#include <linux/mm.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/udp_tunnel.h>
#include <linux/hmm.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* 6.12 moved the unaligned accessors to <linux/unaligned.h>. */
#ifdef SCIRE_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#ifndef SCIRE_HAVE_WQ_PERCPU
/* Before WQ_PERCPU a workqueue not WQ_UNBOUND is per-CPU without saying so. */
#define WQ_PERCPU 0
#endif

#ifdef SCIRE_HAVE_ZAP_SPECIAL_VMA_RANGE
/* zap_vma_ptes() is zap_special_vma_range() from 7.x on. */
static inline void zap_vma_ptes(struct vm_area_struct *vma,
				unsigned long address, unsigned long size)
{
	zap_special_vma_range(vma, address, size);
}
#endif

#ifndef SCIRE_HAVE_TIMER_DELETE
/* Before 6.2 (and its backport to 6.1.y) timers were deleted with del_timer(). */
static inline int timer_delete(struct timer_list *timer)
{
	return del_timer(timer);
}

static inline int timer_delete_sync(struct timer_list *timer)
{
	return del_timer_sync(timer);
}
#endif

#ifndef SCIRE_HAVE_TIMER_CONTAINER_OF
/* Before timer_container_of() a timer callback used from_timer(). */
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

#ifndef SCIRE_HAVE_VM_FLAGS_SET
/*
 * Before 6.3 a driver's mmap handler writes vma->vm_flags itself, under
 * the mmap lock its caller holds; vm_flags_set() and vm_flags_clear() are
 * what later kernels require for the same change.
 */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#ifndef SCIRE_HAVE_IB_UMEM_GET_VA
/*
 * Pinning user memory by address: ib_umem_get() until the umem getters
 * for uverbs buffer attributes came (Debian's 7.3) and it was renamed.
 */
static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}
#endif

/*
 * IPv6 from a module: through ipv6_stub while IPv6 could be a module of
 * its own (its functions absent until it loads), directly since it
 * cannot (after 6.12, Debian's 7.3: <net/ipv6_stubs.h> is gone).
 */
#ifdef SCIRE_HAVE_IPV6_STUBS
#include <net/ipv6_stubs.h>

static inline int scire_ipv6_mc_join(struct sock *sk, int ifindex,
				     const struct in6_addr *addr)
{
	return ipv6_stub->ipv6_sock_mc_join(sk, ifindex, addr);
}

static inline int scire_ipv6_mc_drop(struct sock *sk, int ifindex,
				     const struct in6_addr *addr)
{
	return ipv6_stub->ipv6_sock_mc_drop(sk, ifindex, addr);
}

static inline struct net_device *
scire_ipv6_dev_find(struct net *net, const struct in6_addr *addr,
		    struct net_device *dev)
{
	return ipv6_stub->ipv6_dev_find(net, addr, dev);
}

static inline struct dst_entry *
scire_ip6_dst_lookup_flow(struct net *net, const struct sock *sk,
			  struct flowi6 *fl6, const struct in6_addr *final_dst)
{
	return ipv6_stub->ipv6_dst_lookup_flow(net, sk, fl6, final_dst);
}
#else
static inline int scire_ipv6_mc_join(struct sock *sk, int ifindex,
				     const struct in6_addr *addr)
{
	return IS_ENABLED(CONFIG_IPV6) ?
		ipv6_sock_mc_join(sk, ifindex, addr) : -EAFNOSUPPORT;
}

static inline int scire_ipv6_mc_drop(struct sock *sk, int ifindex,
				     const struct in6_addr *addr)
{
	return IS_ENABLED(CONFIG_IPV6) ?
		ipv6_sock_mc_drop(sk, ifindex, addr) : -EAFNOSUPPORT;
}

static inline struct net_device *
scire_ipv6_dev_find(struct net *net, const struct in6_addr *addr,
		    struct net_device *dev)
{
	return IS_ENABLED(CONFIG_IPV6) ? ipv6_dev_find(net, addr, dev) : NULL;
}

static inline struct dst_entry *
scire_ip6_dst_lookup_flow(struct net *net, const struct sock *sk,
			  struct flowi6 *fl6, const struct in6_addr *final_dst)
{
	return ip6_dst_lookup_flow(net, sk, fl6, final_dst);
}
#endif

/**
 * scire_setup_udp_tunnel_sock() - make a UDP socket an encapsulation socket.
 * @net: its namespace.
 * @sock: a socket of udp_sock_create().
 * @cfg: the receive hook and its data.
 *
 * setup_udp_tunnel_sock() takes the struct sock after 6.12 (7.3), the struct
 * socket before.
 */
static inline void scire_setup_udp_tunnel_sock(struct net *net,
					       struct socket *sock,
					       struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SCIRE_HAVE_SETUP_UDP_TUNNEL_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

/**
 * scire_udp_tunnel_sock_release() - release an encapsulation socket.
 * @sock: the socket; gone on return.
 *
 * udp_tunnel_sock_release() takes the struct sock after 6.12 (7.3), the struct
 * socket before.
 */
static inline void scire_udp_tunnel_sock_release(struct socket *sock)
{
#ifdef SCIRE_HAVE_UDP_TUNNEL_RELEASE_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/**
 * scire_udp_tunnel_xmit_skb() - send an skb in UDP over IPv4.
 * @rt: the route.
 * @sk: the sending socket.
 * @skb: the UDP payload.
 * @src: source address.
 * @dst: destination address.
 * @tos: TOS byte.
 * @ttl: TTL.
 * @df: htons(IP_DF) or 0.
 * @src_port: UDP source port.
 * @dst_port: UDP destination port.
 * @xnet: crossing namespaces.
 * @nocheck: no UDP checksum.
 *
 * udp_tunnel_xmit_skb() with no IP control block flags, a last argument
 * it takes in kernels after 6.12 (Debian's 7.3).
 */
static inline void scire_udp_tunnel_xmit_skb(struct rtable *rt,
					     struct sock *sk,
					     struct sk_buff *skb, __be32 src,
					     __be32 dst, __u8 tos, __u8 ttl,
					     __be16 df, __be16 src_port,
					     __be16 dst_port, bool xnet,
					     bool nocheck)
{
#ifdef SCIRE_HAVE_UDP_TUNNEL_XMIT_IPCB_FLAGS
	udp_tunnel_xmit_skb(rt, sk, skb, src, dst, tos, ttl, df, src_port,
			    dst_port, xnet, nocheck, 0);
#else
	udp_tunnel_xmit_skb(rt, sk, skb, src, dst, tos, ttl, df, src_port,
			    dst_port, xnet, nocheck);
#endif
}

/**
 * scire_sk_set_mc_loop() - loop multicast sent on @sk back to this host.
 * @sk: an IPv4 UDP socket.
 *
 * The flag is a bit field of inet_sock before 6.6 and a bit of
 * inet_flags after.
 */
static inline void scire_sk_set_mc_loop(struct sock *sk)
{
#ifdef SCIRE_HAVE_INET_FLAGS_MC_LOOP
	inet_set_bit(MC_LOOP, sk);
#else
	inet_sk(sk)->mc_loop = 1;
#endif
}

/*
 * create_cq's last argument: since 6.11 the uverbs attribute bundle, whose
 * driver_udata is the udata that 6.1 passes; a kernel caller passes NULL
 * for either. The op takes a struct scire_cq_uarg pointer and finds its
 * udata with scire_cq_udata().
 */
/*
 * 6.2: a device says it executes RDMA ATOMIC WRITE (IBA 1.5) with
 * IB_DEVICE_ATOMIC_WRITE. 6.1 has no such bit: scire executes the
 * operation there too, it just cannot say so.
 */
#ifdef SCIRE_HAVE_IB_DEVICE_ATOMIC_WRITE
#define SCIRE_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SCIRE_DEVICE_ATOMIC_WRITE	0
#endif

/*
 * 6.2: the RDMA FLUSH rights (IBA 1.5) a QP and an MR may grant, and the
 * device bits that say it executes a FLUSH for global visibility and for
 * persistence. A QP may grant both placement types (rdma-core's tests set
 * both on every RC QP). An MR grants persistence only over persistent
 * memory (scire_mr_persistent_ok()): scire announces
 * IB_DEVICE_FLUSH_PERSISTENT where the architecture can write CPU caches
 * back to such memory (CONFIG_ARCH_HAS_PMEM_API, arch_wb_cache_pmem()).
 * 6.1 has none of these: its core refuses the rights in reg_mr, so a
 * FLUSH reaching scire there finds no MR to grant it (NAK).
 */
#ifdef SCIRE_HAVE_IB_ACCESS_FLUSH
#define SCIRE_ACCESS_FLUSH	(IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT)
#define SCIRE_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define SCIRE_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#ifdef CONFIG_ARCH_HAS_PMEM_API
#define SCIRE_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#define SCIRE_DEVICE_FLUSH_PERSISTENT	IB_DEVICE_FLUSH_PERSISTENT
#else
#define SCIRE_ACCESS_FLUSH_PERSISTENT	0
#define SCIRE_DEVICE_FLUSH_PERSISTENT	0
#endif
#else
#define SCIRE_ACCESS_FLUSH	0
#define SCIRE_ACCESS_FLUSH_GLOBAL	0
#define SCIRE_ACCESS_FLUSH_PERSISTENT	0
#define SCIRE_DEVICE_FLUSH_GLOBAL	0
#define SCIRE_DEVICE_FLUSH_PERSISTENT	0
#endif

#ifdef SCIRE_HAVE_CREATE_CQ_ATTRS
#define scire_cq_uarg uverbs_attr_bundle

/**
 * scire_cq_udata() - the UHW of a create_cq call.
 * @attrs: create_cq's attribute bundle, NULL for a kernel caller.
 *
 * Return: the udata in @attrs, or NULL.
 */
static inline struct ib_udata *scire_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define scire_cq_uarg ib_udata

/**
 * scire_cq_udata() - the UHW of a create_cq call.
 * @udata: create_cq's udata, NULL for a kernel caller.
 *
 * Return: @udata.
 */
static inline struct ib_udata *scire_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * The CQ ops of the device's ops table. Since the split of user and
 * kernel CQs (Debian's 7.3 has it), uverbs calls create_user_cq and
 * resize_user_cq, the kernel verbs create_cq; before, create_cq and
 * resize_cq serve both, a NULL udata telling a kernel caller.
 */
#ifdef SCIRE_HAVE_CREATE_USER_CQ
int scire_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct scire_cq_uarg *uarg);

/**
 * scire_create_kernel_cq() - create_cq: a CQ of a kernel consumer.
 * @ibcq: the core-allocated CQ.
 * @attr: as for scire_create_cq().
 * @attrs: unused: a kernel CQ has no UHW.
 *
 * Return: as scire_create_cq().
 */
static inline int scire_create_kernel_cq(struct ib_cq *ibcq,
					 const struct ib_cq_init_attr *attr,
					 struct uverbs_attr_bundle *attrs)
{
	return scire_create_cq(ibcq, attr, NULL);
}

#define SCIRE_CREATE_CQ_OPS \
	.create_cq = scire_create_kernel_cq, .create_user_cq = scire_create_cq
#else
#define SCIRE_CREATE_CQ_OPS .create_cq = scire_create_cq
#endif

#ifdef SCIRE_HAVE_RESIZE_USER_CQ
int scire_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);

/**
 * scire_resize_user_cq() - resize_user_cq: scire_resize_cq() for uverbs.
 * @ibcq: the CQ.
 * @cqe: requested entries.
 * @udata: as for scire_resize_cq().
 *
 * Return: as scire_resize_cq(); -EINVAL for a count beyond INT_MAX.
 */
static inline int scire_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe,
				       struct ib_udata *udata)
{
	if (cqe > INT_MAX)
		return -EINVAL;
	return scire_resize_cq(ibcq, cqe, udata);
}

#define SCIRE_RESIZE_CQ_OP .resize_user_cq = scire_resize_user_cq
#else
#define SCIRE_RESIZE_CQ_OP .resize_cq = scire_resize_cq
#endif

/*
 * reg_user_mr: after 6.12 (Debian's 7.3) with a DMA handle (TPH steering
 * hints of alloc_dmah). scire has no alloc_dmah, so the core passes none;
 * one that came anyway is refused rather than ignored.
 */
#ifdef SCIRE_HAVE_REG_USER_MR_DMAH
struct ib_mr *scire_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);

/**
 * scire_reg_user_mr_op() - reg_user_mr with a DMA handle.
 * @ibpd: the PD.
 * @start: user virtual address of the region.
 * @length: bytes.
 * @iova: the address the region is known by.
 * @access: IB_ACCESS_* rights.
 * @dmah: a DMA handle: must be NULL.
 * @udata: REG_MR UHW.
 *
 * Return: as scire_reg_user_mr(); ERR_PTR(-EOPNOTSUPP) for a DMA handle.
 */
static inline struct ib_mr *scire_reg_user_mr_op(struct ib_pd *ibpd,
						 u64 start, u64 length,
						 u64 iova, int access,
						 struct ib_dmah *dmah,
						 struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return scire_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#else
#define scire_reg_user_mr_op scire_reg_user_mr
#endif

/* Importing the DMA_BUF symbol namespace (dma_buf_get() and the rest). */
#ifdef SCIRE_HAVE_IMPORT_NS_STRING
#define SCIRE_IMPORT_NS_DMA_BUF MODULE_IMPORT_NS("DMA_BUF")
#else
#define SCIRE_IMPORT_NS_DMA_BUF MODULE_IMPORT_NS(DMA_BUF)
#endif

/*
 * A kernel mapping of a whole dma-buf for an importer that holds no
 * reservation lock: from 6.2 dma_buf_vmap() expects it held, and
 * dma_buf_vmap_unlocked() takes it; 6.1's dma_buf_vmap() locks itself.
 */
#ifdef SCIRE_HAVE_DMA_BUF_VMAP_UNLOCKED
#define scire_dma_buf_vmap dma_buf_vmap_unlocked
#define scire_dma_buf_vunmap dma_buf_vunmap_unlocked
#else
#define scire_dma_buf_vmap dma_buf_vmap
#define scire_dma_buf_vunmap dma_buf_vunmap
#endif

/*
 * reg_user_mr_dmabuf: 6.1 passes the method's udata, 6.11 on the
 * attribute bundle (its driver_udata is the same UHW), after 6.12 also a
 * DMA handle, refused as for reg_user_mr.
 */
struct ib_mr *scire_reg_dmabuf_mr(struct ib_pd *ibpd, u64 offset, u64 length,
				  u64 iova, int fd, int access,
				  struct ib_udata *udata);

#if defined(SCIRE_HAVE_REG_DMABUF_MR_DMAH)
/**
 * scire_reg_dmabuf_mr_op() - reg_user_mr_dmabuf with a DMA handle.
 * @ibpd: the PD.
 * @offset: bytes into the dma-buf.
 * @length: bytes.
 * @iova: the address the region is known by.
 * @fd: the dma-buf's file descriptor.
 * @access: IB_ACCESS_* rights.
 * @dmah: a DMA handle: must be NULL.
 * @attrs: the method's attributes (UHW in driver_udata).
 *
 * Return: as scire_reg_dmabuf_mr(); ERR_PTR(-EOPNOTSUPP) for a DMA handle.
 */
static inline struct ib_mr *
scire_reg_dmabuf_mr_op(struct ib_pd *ibpd, u64 offset, u64 length, u64 iova,
		       int fd, int access, struct ib_dmah *dmah,
		       struct uverbs_attr_bundle *attrs)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return scire_reg_dmabuf_mr(ibpd, offset, length, iova, fd, access,
				   &attrs->driver_udata);
}
#elif defined(SCIRE_HAVE_REG_DMABUF_MR_ATTRS)
/**
 * scire_reg_dmabuf_mr_op() - reg_user_mr_dmabuf with the attribute bundle.
 * @ibpd: the PD.
 * @offset: bytes into the dma-buf.
 * @length: bytes.
 * @iova: the address the region is known by.
 * @fd: the dma-buf's file descriptor.
 * @access: IB_ACCESS_* rights.
 * @attrs: the method's attributes (UHW in driver_udata).
 *
 * Return: as scire_reg_dmabuf_mr().
 */
static inline struct ib_mr *
scire_reg_dmabuf_mr_op(struct ib_pd *ibpd, u64 offset, u64 length, u64 iova,
		       int fd, int access, struct uverbs_attr_bundle *attrs)
{
	return scire_reg_dmabuf_mr(ibpd, offset, length, iova, fd, access,
				   &attrs->driver_udata);
}
#else
#define scire_reg_dmabuf_mr_op scire_reg_dmabuf_mr
#endif

/* odp_caps bits for RDMA FLUSH and ATOMIC WRITE, where the kernel has them. */
#ifdef SCIRE_HAVE_ODP_SUPPORT_ATOMIC_WRITE
#define SCIRE_ODP_SUPPORT_FLUSH		IB_ODP_SUPPORT_FLUSH
#define SCIRE_ODP_SUPPORT_ATOMIC_WRITE	IB_ODP_SUPPORT_ATOMIC_WRITE
#else
#define SCIRE_ODP_SUPPORT_FLUSH		0
#define SCIRE_ODP_SUPPORT_ATOMIC_WRITE	0
#endif

/*
 * ODP MRs (kernel/scire_odp.c): the access masks of
 * ib_umem_odp_map_dma_and_lock() and where a mapped page is found. Before
 * the hmm_dma_map (6.12 and older) dma_list[idx] is non-zero while page
 * idx is mapped, with ODP_WRITE_ALLOWED_BIT if writable, and the page is
 * in pfn_list; after it, map.pfn_list[idx] has HMM_PFN_VALID (and
 * HMM_PFN_WRITE) while mapped.
 */
#ifdef SCIRE_HAVE_ODP_HMM_DMA_MAP
#define SCIRE_ODP_READ	0
#define SCIRE_ODP_WRITE	HMM_PFN_WRITE

/* The page at user address @va of @odp: one pfn entry per PAGE_SIZE. */
static inline struct page *scire_odp_page(struct ib_umem_odp *odp, u64 va,
					  bool write)
{
	unsigned long pfn;

	pfn = odp->map.pfn_list[(va - ib_umem_start(odp)) >> PAGE_SHIFT];
	if (!(pfn & HMM_PFN_VALID) || (write && !(pfn & HMM_PFN_WRITE)))
		return NULL;
	return hmm_pfn_to_page(pfn);
}
#else
#define SCIRE_ODP_READ	ODP_READ_ALLOWED_BIT
#define SCIRE_ODP_WRITE	(ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT)

/*
 * The page at user address @va of @odp: dma_list has an entry per
 * 2^page_shift bytes (a huge page with IB_ACCESS_HUGETLB), pfn_list one
 * per PAGE_SIZE.
 */
static inline struct page *scire_odp_page(struct ib_umem_odp *odp, u64 va,
					  bool write)
{
	u64 off = va - ib_umem_start(odp);
	dma_addr_t dma = odp->dma_list[off >> odp->page_shift];

	if (!dma || (write && !(dma & ODP_WRITE_ALLOWED_BIT)))
		return NULL;
	return hmm_pfn_to_page(odp->pfn_list[off >> PAGE_SHIFT]);
}
#endif

/**
 * scire_vmalloc_insert_pages() - map vmalloc()ed memory into all of a VMA.
 * @vma: the VMA; its size is the caller's to check against the memory.
 * @addr: the memory, page aligned, at least as long as @vma.
 *
 * remap_vmalloc_range() takes only vmalloc_user() memory, which cannot be
 * charged to a memory cgroup; scire's rings and SCIF's receive rings are
 * __vmalloc(GFP_KERNEL_ACCOUNT) memory, inserted page by page instead.
 *
 * Context: the mmap handler (mmap_lock held for writing).
 * Return: 0 or the error of vm_insert_page().
 */
static inline int scire_vmalloc_insert_pages(struct vm_area_struct *vma,
					     void *addr)
{
	unsigned long uaddr;
	int ret;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (uaddr = vma->vm_start; uaddr < vma->vm_end; uaddr += PAGE_SIZE) {
		ret = vm_insert_page(vma, uaddr, vmalloc_to_page(addr));
		if (ret)
			return ret;
		addr += PAGE_SIZE;
	}
	return 0;
}

#endif /* SCIRE_COMPAT_H */
