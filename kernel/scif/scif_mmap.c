// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: scif_mmap() and scif_get_pages() of a peer window whose
 * pages are this kernel's memory.
 *
 * Over RDMA a peer's window is reached through its rkeys only. But when
 * the peer endpoint lives in this kernel (SCIF loopback on one node, or
 * another node that is a network namespace of this kernel), its window's
 * pages are pinned memory here, and a mapping of them is the real thing:
 * the same physical pages, coherent both ways. Windows of another host
 * stay refused (mmap: ENODEV; get_pages: EOPNOTSUPP).
 *
 * Finding the peer: every connected endpoint is in a table keyed by its
 * own port id, from scif_conn_established() until scif_conn_teardown()
 * starts. The peer of @ep is the entry whose port id is @ep's peer and
 * whose peer is @ep, whose connection's addresses (rdma_cm source and
 * destination, port included) are @ep's mirrored, and whose QP is the
 * destination of @ep's QP and the other way round (an endpoint of an
 * earlier connection between the same ports may not have gone yet); an
 * endpoint of another host is never in the table, so nothing there can
 * stand for it.
 *
 * A mapping (struct scif_map) holds the peer endpoint, a reference and a
 * count (@nmaps) on each window it covers, and a reference on each page.
 * The count defers the freeing of an unregistered window (its pins, MRs
 * and offsets) until the last mapping of it goes, as upstream SCIF did;
 * the page references keep the memory itself whatever happens to the
 * window (the peer's close tears its windows down at once). One struct
 * serves a whole mmap() and every VMA split or moved from it; it goes
 * with the last of them (unmapping part of a mapping releases nothing,
 * where upstream released the windows of the part unmapped). Its release
 * takes the peer's rma.lock, which must not nest in the mapper's mmap lock
 * of a munmap(), so a workqueue does it.
 *
 * The pages are mapped with remap_pfn_range() (they may be anonymous
 * memory, which vm_insert_page() refuses). As upstream did, the mapping
 * is not copied into a child by fork() (VM_DONTCOPY), cannot grow with
 * mremap(), and has exactly the window's rights: PROT_WRITE only over
 * writable windows (and mprotect() cannot add it later), nothing over a
 * window that is not readable (a CPU mapping is always readable), never
 * PROT_EXEC, and only MAP_SHARED.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/hashtable.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>

#include "scif_main.h"

#define SCIF_LOCAL_BITS		8
#define SCIF_MAP_MAGIC		0x5c1f00005c1f0002ULL

/* Connected endpoints of this kernel by their own port id (ep->local). */
static DEFINE_HASHTABLE(scif_local, SCIF_LOCAL_BITS);
static DEFINE_MUTEX(scif_local_lock);

/* Releases mappings (struct scif_map) away from the mapper's mmap lock. */
static struct workqueue_struct *scif_map_wq;

/**
 * struct scif_map - pages of a peer's windows held by a mapping or a range
 * @ref: the VMAs that map it (a scif_get_pages() range: one)
 * @magic: SCIF_MAP_MAGIC while a scif_get_pages() range refers to it
 * @work: the release, on scif_map_wq
 * @pep: the peer endpoint whose windows these are (a reference)
 * @nr_wins: entries of @wins
 * @wins: the windows covered, each with a reference and one of its @nmaps
 * @nr_pages: entries of @pages
 * @pages: the pages, in offset order, each with a reference
 * @range: the scif_get_pages() range handed out, or NULL
 */
struct scif_map {
	struct kref ref;
	u64 magic;
	struct work_struct work;
	struct scif_endpt *pep;
	u32 nr_wins;
	struct scif_window **wins;
	u32 nr_pages;
	struct page **pages;
	struct scif_range *range;
};

static u32 scif_local_key(const struct scif_port_id *id)
{
	return (u32)id->node << 16 | id->port;
}

static bool scif_id_same(const struct scif_port_id *a, const struct scif_port_id *b)
{
	return a->node == b->node && a->port == b->port;
}

/* Same address and port (the rdma_cm service port of a connection). */
static bool scif_sa_same(const struct sockaddr *a, const struct sockaddr *b)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (a->sa_family != b->sa_family)
		return false;
	switch (a->sa_family) {
	case AF_INET:
		return a4->sin_port == b4->sin_port &&
		       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	case AF_INET6:
		return a6->sin6_port == b6->sin6_port &&
		       ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr);
	default:
		return false;
	}
}

/**
 * scif_local_add() - a connected endpoint becomes findable as a peer
 * @ep: the endpoint, its port ids and rdma_cm ID set
 *
 * Idempotent; does nothing once scif_local_del() has run (a connection
 * torn down before its connect or accept returned).
 *
 * Context: process; takes scif_local_lock.
 */
void scif_local_add(struct scif_endpt *ep)
{
	mutex_lock(&scif_local_lock);
	if (hlist_unhashed(&ep->local) && !ep->local_gone && ep->cm_id)
		hash_add(scif_local, &ep->local, scif_local_key(&ep->port));
	mutex_unlock(&scif_local_lock);
}

/**
 * scif_local_del() - an endpoint stops being findable as a peer
 * @ep: the endpoint
 *
 * Once this returns nobody is comparing @ep's rdma_cm ID any more, no new
 * mapping of its windows can start, and scif_local_add() will not add it
 * again. Idempotent.
 *
 * Context: process; takes scif_local_lock.
 */
void scif_local_del(struct scif_endpt *ep)
{
	mutex_lock(&scif_local_lock);
	hash_del(&ep->local);
	ep->local_gone = true;
	mutex_unlock(&scif_local_lock);
}

/**
 * scif_local_rearm() - a new connection attempt of an endpoint may be found
 * @ep: the endpoint, about to connect again after an attempt that failed;
 *	that attempt's teardown is over and no handler of its rdma_cm ID runs
 *
 * A failed scif_connect() tears its attempt down (scif_local_del() marks
 * the endpoint gone) and leaves the endpoint SCIFEP_BOUND, from which SCIF
 * lets it connect again; without this, that next connection would never
 * enter the table and scif_mmap() of its peer's windows would fail with
 * ENODEV although the peer is in this kernel.
 *
 * Context: process; takes scif_local_lock.
 */
void scif_local_rearm(struct scif_endpt *ep)
{
	mutex_lock(&scif_local_lock);
	ep->local_gone = false;
	mutex_unlock(&scif_local_lock);
}

/**
 * scif_local_qpn() - remember the QP a newly connected endpoint sends to
 * @ep: the endpoint, connected, before scif_local_add()
 *
 * scif_local_peer() compares it without asking the QP then: that runs
 * under the mmap lock and scif_local_lock, which must not nest outside
 * the QP's own lock.
 *
 * Context: process; takes the QP's lock (ib_query_qp()).
 */
void scif_local_qpn(struct scif_endpt *ep)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	ep->peer_qpn = 0;
	if (ep->qp && !ib_query_qp(ep->qp, &attr, IB_QP_DEST_QPN, &init))
		ep->peer_qpn = attr.dest_qp_num;
}

/*
 * The peer endpoint of @ep if it is in this kernel, with a reference;
 * NULL if it is not (another host) or not connected.
 */
static struct scif_endpt *scif_local_peer(struct scif_endpt *ep)
{
	struct scif_endpt *pep, *found = NULL;
	struct rdma_addr *a, *b;

	mutex_lock(&scif_local_lock);
	/* Hashed: connected; its rdma_cm ID and QP stay while the lock is held. */
	if (hlist_unhashed(&ep->local))
		goto out;
	a = &ep->cm_id->route.addr;
	hash_for_each_possible(scif_local, pep, local, scif_local_key(&ep->peer)) {
		if (pep == ep || !scif_id_same(&pep->port, &ep->peer) ||
		    !scif_id_same(&pep->peer, &ep->port))
			continue;
		b = &pep->cm_id->route.addr;
		if (!scif_sa_same((struct sockaddr *)&a->src_addr,
				  (struct sockaddr *)&b->dst_addr) ||
		    !scif_sa_same((struct sockaddr *)&a->dst_addr,
				  (struct sockaddr *)&b->src_addr))
			continue;
		/*
		 * An endpoint of an earlier connection between the same two
		 * ports (a client that binds a fixed port and connects again)
		 * may still be here, even still connected until its close
		 * comes. The bucket's order (newest first) would usually pick
		 * the right one; the two QPs, each the other's destination,
		 * say which it is (scif_local_qpn()).
		 */
		if (!pep->qp || !ep->qp || pep->qp->qp_num != ep->peer_qpn ||
		    pep->peer_qpn != ep->qp->qp_num)
			continue;
		if (READ_ONCE(pep->state) == SCIFEP_CONNECTED &&
		    kref_get_unless_zero(&pep->ref))
			found = pep;
		break;
	}
out:
	mutex_unlock(&scif_local_lock);
	return found;
}

static struct scif_map *scif_map_alloc(struct scif_endpt *pep)
{
	struct scif_map *m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);

	if (!m)
		return NULL;
	kref_init(&m->ref);
	m->pep = pep;
	return m;
}

/*
 * Give back what @m holds: the windows' counts (an unregistered window
 * whose last mapping this was is freed now), the window and page
 * references, the peer endpoint. Process context, no mmap lock held.
 */
static void scif_map_free(struct scif_map *m)
{
	struct scif_endpt *pep = m->pep;
	u32 i;

	if (m->nr_wins) {
		mutex_lock(&pep->rma.lock);
		for (i = 0; i < m->nr_wins; i++)
			m->wins[i]->nmaps--;
		scif_rma_reap_locked(pep);
		mutex_unlock(&pep->rma.lock);
		for (i = 0; i < m->nr_wins; i++)
			scif_win_put(m->wins[i]);
	}
	for (i = 0; i < m->nr_pages; i++)
		put_page(m->pages[i]);
	kfree(m->wins);
	kvfree(m->pages);
	scif_ep_put(pep);
	kfree(m);
}

static void scif_map_work(struct work_struct *work)
{
	scif_map_free(container_of(work, struct scif_map, work));
}

/* The last VMA of a mapping went: release it away from the mmap lock. */
static void scif_map_release(struct kref *ref)
{
	struct scif_map *m = container_of(ref, struct scif_map, ref);

	INIT_WORK(&m->work, scif_map_work);
	queue_work(scif_map_wq, &m->work);
}

/*
 * Take [@off, @off + @len) of @m->pep's windows into @m: live windows,
 * contiguous, each allowing @prot (and the range inside one window if
 * @single). Sets *@wprot to the rights every window covered grants.
 * Return: 0; -ENXIO (a byte in no live window, or more than one window
 * when @single); -EACCES; -ENOMEM. On error @m holds what it took so far,
 * for scif_map_free().
 */
static int scif_map_take(struct scif_map *m, u64 off, u64 len, int prot,
			 bool single, int *wprot)
{
	struct scif_rma_info *rma = &m->pep->rma;
	struct scif_window *first, *win;
	u64 end = off + len, at;
	u32 n = 0, i;
	int ret = 0;

	if (len >> PAGE_SHIFT > INT_MAX)
		return -ENXIO;
	mutex_lock(&rma->lock);
	first = scif_win_find(&rma->self, off, len, prot, &ret);
	if (!first)
		goto out;
	for (win = first; ; win = scif_win_next(win)) {
		n++;
		if ((u64)win->it.last >= end - 1)
			break;
	}
	if (single && n > 1) {
		ret = -ENXIO;
		goto out;
	}
	/* The caller's memory cgroup pays: a process may map a window often. */
	m->wins = kcalloc(n, sizeof(*m->wins), GFP_KERNEL_ACCOUNT);
	m->pages = kvcalloc(len >> PAGE_SHIFT, sizeof(*m->pages), GFP_KERNEL_ACCOUNT);
	if (!m->wins || !m->pages) {
		ret = -ENOMEM;
		goto out;
	}
	*wprot = SCIF_PROT_READ | SCIF_PROT_WRITE;
	at = off;
	for (i = 0, win = first; i < n; i++, win = scif_win_next(win)) {
		u64 stop = min_t(u64, end, (u64)win->it.last + 1);

		scif_win_get(win);
		win->nmaps++;
		m->wins[m->nr_wins++] = win;
		*wprot &= win->prot;
		for (; at < stop; at += PAGE_SIZE) {
			struct page *page = win->pages[(at - win->it.start) >> PAGE_SHIFT];

			get_page(page);
			m->pages[m->nr_pages++] = page;
		}
	}
out:
	mutex_unlock(&rma->lock);
	return ret;
}

static void scif_map_vma_open(struct vm_area_struct *vma)
{
	struct scif_map *m = vma->vm_private_data;

	/* A split or a move: the new VMA shares the mapping. */
	kref_get(&m->ref);
}

static void scif_map_vma_close(struct vm_area_struct *vma)
{
	struct scif_map *m = vma->vm_private_data;

	kref_put(&m->ref, scif_map_release);
}

static const struct vm_operations_struct scif_map_vm_ops = {
	.open = scif_map_vma_open,
	.close = scif_map_vma_close,
};

/**
 * scif_mmap_peer() - mmap() of /dev/scif: map a range of the peer's windows
 * @ep: the file's endpoint (the caller's reference)
 * @vma: the new mapping; @vma->vm_pgoff is the range's first page in the
 *	peer's registered address space, its length the range's
 *
 * The range may span several windows, which must be live and contiguous;
 * their pages are mapped in place (see the top of this file for the
 * rights, fork() and mremap()). (SCIF header: scif_mmap, the user call
 * that libscif turns into this mmap().)
 *
 * Context: process, from f_op->mmap (the caller's mmap lock held for
 * writing); sleeps.
 * Return: 0; -EINVAL for a private mapping; -EACCES for PROT_EXEC, for
 * PROT_WRITE over a window that is not writable, or for any mapping of a
 * window that is not readable; -ENOTCONN; -ECONNRESET; -ENODEV when the
 * peer is not in this kernel (a window of another host: no memory to
 * map); -ENXIO when a byte of the range is in no window of the peer;
 * -ENOMEM; the errno of remap_pfn_range().
 */
int scif_mmap_peer(struct scif_endpt *ep, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	int prot = SCIF_PROT_READ, wprot = 0, ret;
	struct scif_endpt *pep;
	struct scif_map *m;
	u32 i, run;

	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EACCES;
	if (vma->vm_flags & VM_WRITE)
		prot |= SCIF_PROT_WRITE;
	ret = scif_ep_verify(ep);
	if (ret)
		return ret;
	pep = scif_local_peer(ep);
	if (!pep)
		return scif_ep_verify(ep) ?: -ENODEV;
	m = scif_map_alloc(pep);
	if (!m) {
		scif_ep_put(pep);
		return -ENOMEM;
	}
	ret = scif_map_take(m, off, len, prot, false, &wprot);
	if (ret)
		goto err;

	if (!(wprot & SCIF_PROT_WRITE))
		vm_flags_clear(vma, VM_MAYWRITE);
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	for (i = 0; i < m->nr_pages; i += run) {
		unsigned long pfn = page_to_pfn(m->pages[i]);

		/* Physically contiguous pages in one call. */
		for (run = 1; i + run < m->nr_pages &&
		     page_to_pfn(m->pages[i + run]) == pfn + run; run++)
			;
		ret = remap_pfn_range(vma, vma->vm_start + ((unsigned long)i << PAGE_SHIFT),
				      pfn, (unsigned long)run << PAGE_SHIFT,
				      vma->vm_page_prot);
		if (ret) {
			/* Nothing may stay mapped past the references. */
			if (i)
				zap_vma_ptes(vma, vma->vm_start,
					     (unsigned long)i << PAGE_SHIFT);
			goto err;
		}
	}
	vma->vm_private_data = m;
	vma->vm_ops = &scif_map_vm_ops;
	return 0;

err:
	/* The mmap lock is held: released as a munmap() would. */
	kref_put(&m->ref, scif_map_release);
	return ret;
}

/**
 * scif_get_pages() - the pages of a range of a peer's window
 * @epd: a connected endpoint
 * @offset: first byte in the peer's windows, page aligned, >= 0
 * @len: bytes, a non-zero multiple of the page size; the range must lie
 *	in one window of the peer
 * @pages: set to the range: @nr_pages entries of @phys_addr (the pages'
 *	physical addresses) and @va (their kernel addresses), @prot_flags
 *	of the window; valid until scif_put_pages()
 *
 * Only when the peer endpoint is in this kernel (see the top of this
 * file): its pages are then memory of this host. The pages stay, and an
 * unregister of the window is deferred, until scif_put_pages().
 * (SCIF header: scif_get_pages.)
 *
 * Context: process; sleeps.
 * Return: 0; -EINVAL for bad alignment or length or a NULL @pages;
 * -ENOTCONN; -ECONNRESET; -ENXIO when the range is not inside one window
 * of the peer; -EOPNOTSUPP when the peer is on another host (no physical
 * addresses of its memory here); -ENOMEM.
 */
int scif_get_pages(scif_epd_t epd, off_t offset, size_t len,
		   struct scif_range **pages)
{
	struct scif_endpt *ep = epd, *pep;
	struct scif_range *r = NULL;
	struct scif_window *win;
	struct scif_map *m;
	int ret, wprot = 0;
	u32 i;

	if (!pages || offset < 0 || !PAGE_ALIGNED(offset) || !len || !PAGE_ALIGNED(len))
		return -EINVAL;
	ret = scif_ep_verify(ep);
	if (ret)
		return ret;
	pep = scif_local_peer(ep);
	if (!pep) {
		/* Another host: the arguments checked as SCIF does, then no. */
		mutex_lock(&ep->rma.lock);
		win = scif_win_find(&ep->rma.peer, offset, len, 0, &ret);
		if (win && offset + len - 1 > win->it.last)
			win = NULL;
		mutex_unlock(&ep->rma.lock);
		return win ? -EOPNOTSUPP : scif_ep_verify(ep) ?: -ENXIO;
	}
	m = scif_map_alloc(pep);
	if (!m) {
		scif_ep_put(pep);
		return -ENOMEM;
	}
	ret = scif_map_take(m, offset, len, 0, true, &wprot);
	if (ret)
		goto err;
	ret = -ENOMEM;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto err;
	r->phys_addr = kvcalloc(m->nr_pages, sizeof(*r->phys_addr), GFP_KERNEL);
	r->va = kvcalloc(m->nr_pages, sizeof(*r->va), GFP_KERNEL);
	if (!r->phys_addr || !r->va)
		goto err;
	for (i = 0; i < m->nr_pages; i++) {
		r->phys_addr[i] = page_to_phys(m->pages[i]);
		r->va[i] = (void __force __iomem *)page_address(m->pages[i]);
	}
	r->nr_pages = m->nr_pages;
	r->prot_flags = m->wins[0]->prot;
	r->cookie = m;
	m->range = r;
	m->magic = SCIF_MAP_MAGIC;
	*pages = r;
	return 0;

err:
	if (r) {
		kvfree(r->phys_addr);
		kvfree(r->va);
		kfree(r);
	}
	scif_map_free(m);
	return ret;
}
EXPORT_SYMBOL_GPL(scif_get_pages);

/**
 * scif_put_pages() - give back a range of scif_get_pages()
 * @pages: the range, unmodified
 *
 * The pages must not be used afterwards; a window unregistered meanwhile
 * is freed now if this was its last range or mapping. Valid also after
 * the endpoint lost its connection. (SCIF header: scif_put_pages.)
 *
 * Context: process; sleeps.
 * Return: 0; -EINVAL for NULL or a range that scif_get_pages() did not
 * hand out (as far as can be told: a range given back already is freed
 * memory).
 */
int scif_put_pages(struct scif_range *pages)
{
	struct scif_map *m;

	if (!pages || !pages->cookie)
		return -EINVAL;
	m = pages->cookie;
	if (m->magic != SCIF_MAP_MAGIC || m->range != pages)
		return -EINVAL;
	m->magic = 0;
	kvfree(pages->phys_addr);
	kvfree(pages->va);
	kfree(pages);
	scif_map_free(m);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_put_pages);

/**
 * scif_mmap_init() - set up the release of mappings
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int scif_mmap_init(void)
{
	scif_map_wq = alloc_workqueue("scif_mmap", WQ_UNBOUND, 0);
	return scif_map_wq ? 0 : -ENOMEM;
}

/**
 * scif_mmap_exit() - wait for the releases of mappings, then stop
 *
 * Every mapping is gone (each held /dev/scif open, and so the module);
 * their releases may still be queued.
 *
 * Context: module exit.
 */
void scif_mmap_exit(void)
{
	destroy_workqueue(scif_map_wq);
	WARN_ON(!hash_empty(scif_local));
}
