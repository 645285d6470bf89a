// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: registered windows and RMA. The layout (windows as MRs,
 * sequence numbers of batches of RMA WRs, deferred unregister) is
 * described in scif_rma.h; fences are in scif_fence.c.
 *
 * Offsets: SCIF_MAP_FIXED takes the offset given (page aligned, never
 * over an existing window, EADDRINUSE otherwise). Otherwise the offset is
 * taken top-down from just below 2^63, as upstream SCIF's IOVA allocator
 * does, so a fresh endpoint's first window always gets the same offset and
 * automatic offsets stay far from FIXED schemes such as offset == address;
 * a non-zero hint is ignored.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>

#include "scif_main.h"

#define SCIF_AUTO_TOP		(BIT_ULL(63) - PAGE_SIZE)	/* automatic windows end below */
#define SCIF_AUTO_BASE		BIT_ULL(62)	/* ... and start at or above */
#define SCIF_OFF_LIMIT		BIT_ULL(63)	/* offsets are off_t: below 2^63 */
#define SCIF_MR_MAX_PAGES	65536		/* pages of one MR at most */
#define SCIF_RMA_WR_MAX		SZ_1M		/* bytes of one RDMA WR at most */
#define SCIF_RMA_BATCH		16		/* WRs posted at once */
#define SCIF_RMA_SGE		4		/* SGEs of one WR at most */
/* Unsignaled RMA WRs in a row at most; their slots return with the next. */
#define SCIF_RMA_UNSIG_MAX	(SCIF_SQ_DEPTH / 4)
#define SCIF_RMA_FLAGS		(SCIF_RMA_USECPU | SCIF_RMA_USECACHE | \
				 SCIF_RMA_SYNC | SCIF_RMA_ORDERED)
#define SCIF_PROT_ALL		(SCIF_PROT_READ | SCIF_PROT_WRITE)
#define SCIF_PINNED_MAGIC	0x5c1f00005c1f0001ULL

static unsigned int scif_mr_pages;
module_param_named(mr_pages, scif_mr_pages, uint, 0644);
MODULE_PARM_DESC(mr_pages,
		 "most pages of one MR of a window (default 0: as many as the device allows); small values split windows into many MRs and RMAs into many WRs");

/**
 * struct scif_pinned_pages - pages pinned by scif_pin_pages()
 * @magic: SCIF_PINNED_MAGIC while valid
 * @ref: the owner's (until scif_unpin_pages()) and one per window
 * @nr_pages: entries of @pages
 * @prot: SCIF_PROT_* it was pinned for
 * @map_flags: 0 or SCIF_MAP_KERNEL
 * @unpinned: scif_unpin_pages() was called: no new windows
 * @pages: the pages
 * @mm: user memory: the mm whose locked_vm counts them
 */
struct scif_pinned_pages {
	u64 magic;
	struct kref ref;
	u32 nr_pages;
	int prot;
	int map_flags;
	bool unpinned;
	struct page **pages;
	struct mm_struct *mm;
};

/* --- wire formats ---------------------------------------------------------------- */

/**
 * struct scif_reg_ext - one MR of a window, as SCIF_MSG_REGISTER carries it
 * @addr: iova of its first byte
 * @len: bytes (a multiple of the page size)
 * @rkey: its rkey
 */
struct scif_reg_ext {
	__le64 addr;
	__le32 len;
	__le32 rkey;
};

/**
 * struct scif_reg_msg - SCIF_MSG_REGISTER: (part of) a window's MR list
 * @offset: the window's offset
 * @len: its bytes
 * @prot: SCIF_PROT_*
 * @nr_ext: MRs of the whole window
 * @first: index of @ext[0] among them; 0 starts a new window
 * @count: entries of @ext
 * @ext: the MRs
 */
struct scif_reg_msg {
	__le64 offset;
	__le64 len;
	__le32 prot;
	__le32 nr_ext;
	__le32 first;
	__le32 count;
	struct scif_reg_ext ext[];
};

#define SCIF_REG_EXT_MAX \
	((SCIF_MSG_PAYLOAD - sizeof(struct scif_reg_msg)) / sizeof(struct scif_reg_ext))

/**
 * struct scif_unreg_msg - SCIF_MSG_UNREGISTER: the window at @offset goes
 * @offset: its offset
 */
struct scif_unreg_msg {
	__le64 offset;
};

/* --- pinned pages ----------------------------------------------------------------- */

/* Pages of kernel memory: vmalloc or the linear map, page by page. */
static int scif_kernel_pages(unsigned long addr, u32 nr, struct page **pages)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		void *p = (void *)(addr + ((unsigned long)i << PAGE_SHIFT));

		if (is_vmalloc_addr(p))
			pages[i] = vmalloc_to_page(p);
		else if (virt_addr_valid(p))
			pages[i] = virt_to_page(p);
		else
			pages[i] = NULL;
		if (!pages[i])
			return -EFAULT;
	}
	return 0;
}

static void scif_pinned_release(struct kref *ref)
{
	struct scif_pinned_pages *pp = container_of(ref, struct scif_pinned_pages, ref);

	if (pp->mm) {
		unpin_user_pages_dirty_lock(pp->pages, pp->nr_pages,
					    pp->prot & SCIF_PROT_WRITE);
		account_locked_vm(pp->mm, pp->nr_pages, false);
		mmdrop(pp->mm);
	}
	pp->magic = 0;
	kvfree(pp->pages);
	kfree(pp);
}

static void scif_pinned_put(struct scif_pinned_pages *pp)
{
	kref_put(&pp->ref, scif_pinned_release);
}

/**
 * scif_pin_pages() - pin pages for scif_register_pinned_pages()
 * @addr: first byte, page aligned; a user address of the calling task, or
 *	with SCIF_MAP_KERNEL a kernel address (vmalloc or the linear map;
 *	the caller keeps that memory until every window of it is gone)
 * @len: bytes, a non-zero multiple of the page size
 * @prot_flags: SCIF_PROT_READ and/or SCIF_PROT_WRITE
 * @map_flags: 0 or SCIF_MAP_KERNEL
 * @pinned_pages: set to the handle
 *
 * User pages count against RLIMIT_MEMLOCK. (SCIF header: scif_pin_pages.)
 *
 * Context: process; sleeps.
 * Return: 0; -EINVAL for bad flags, alignment, length or a NULL handle;
 * -EFAULT when the range is not mapped (or not kernel memory);
 * -ENOMEM, also when RLIMIT_MEMLOCK would be exceeded.
 */
int scif_pin_pages(void *addr, size_t len, int prot_flags, int map_flags,
		   scif_pinned_pages_t *pinned_pages)
{
	unsigned long uaddr = (unsigned long)addr;
	struct scif_pinned_pages *pp;
	u32 nr, got = 0;
	int ret;

	if (!pinned_pages || !prot_flags || prot_flags & ~SCIF_PROT_ALL ||
	    map_flags & ~SCIF_MAP_KERNEL || !len || !PAGE_ALIGNED(len) ||
	    !PAGE_ALIGNED(uaddr) || len >> PAGE_SHIFT > INT_MAX ||
	    uaddr + len < uaddr)
		return -EINVAL;
	nr = len >> PAGE_SHIFT;
	pp = kzalloc(sizeof(*pp), GFP_KERNEL);
	if (!pp)
		return -ENOMEM;
	pp->pages = kvcalloc(nr, sizeof(*pp->pages), GFP_KERNEL);
	if (!pp->pages) {
		kfree(pp);
		return -ENOMEM;
	}
	pp->nr_pages = nr;
	pp->prot = prot_flags;
	pp->map_flags = map_flags;
	kref_init(&pp->ref);
	if (map_flags & SCIF_MAP_KERNEL) {
		ret = scif_kernel_pages(uaddr, nr, pp->pages);
		if (ret)
			goto err;
	} else {
		if (!current->mm) {
			ret = -EFAULT;
			goto err;
		}
		ret = account_locked_vm(current->mm, nr, true);
		if (ret)
			goto err;
		while (got < nr) {
			ret = pin_user_pages_fast(uaddr + ((unsigned long)got << PAGE_SHIFT),
						  nr - got, FOLL_LONGTERM |
						  (prot_flags & SCIF_PROT_WRITE ? FOLL_WRITE : 0),
						  pp->pages + got);
			if (ret <= 0)
				break;
			got += ret;
		}
		if (got < nr) {
			unpin_user_pages(pp->pages, got);
			account_locked_vm(current->mm, nr, false);
			ret = ret < 0 ? ret : -EFAULT;
			goto err;
		}
		mmgrab(current->mm);
		pp->mm = current->mm;
	}
	pp->magic = SCIF_PINNED_MAGIC;
	*pinned_pages = pp;
	return 0;
err:
	kvfree(pp->pages);
	kfree(pp);
	return ret;
}
EXPORT_SYMBOL_GPL(scif_pin_pages);

/**
 * scif_unpin_pages() - give up a handle of scif_pin_pages()
 * @pinned_pages: the handle
 *
 * No window can be registered with it afterwards; the pages stay pinned
 * until the last window registered with it is gone. (SCIF header:
 * scif_unpin_pages.)
 *
 * Context: process.
 * Return: 0; -EINVAL for a NULL handle, or one already unpinned whose
 * windows still hold it (once its last window is gone too, the handle is
 * freed and must not be passed again).
 */
int scif_unpin_pages(scif_pinned_pages_t pinned_pages)
{
	struct scif_pinned_pages *pp = pinned_pages;

	if (!pp || pp->magic != SCIF_PINNED_MAGIC || READ_ONCE(pp->unpinned))
		return -EINVAL;
	WRITE_ONCE(pp->unpinned, true);
	scif_pinned_put(pp);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_unpin_pages);

/* --- windows -------------------------------------------------------------------- */

static struct scif_window *scif_win_alloc(struct scif_endpt *ep, u64 len, int prot)
{
	struct scif_window *win = kzalloc(sizeof(*win), GFP_KERNEL);

	if (!win)
		return NULL;
	kref_init(&win->ref);
	INIT_LIST_HEAD(&win->reap);
	win->ep = ep;
	win->len = len;
	win->prot = prot;
	win->state = SCIF_WIN_REGISTERING;
	return win;
}

static void scif_win_release(struct kref *ref)
{
	struct scif_window *win = container_of(ref, struct scif_window, ref);

	kvfree(win->ext);
	kfree(win);
}

/**
 * scif_win_get() - take a reference on a window
 * @win: the window; the caller holds a reference or @win->ep->rma.lock
 *	with @win in a tree or on the reap list
 *
 * A reference keeps the structure, not its pages or MRs: scif_win_kill()
 * frees those whatever the references.
 *
 * Context: any.
 */
void scif_win_get(struct scif_window *win)
{
	kref_get(&win->ref);
}

/**
 * scif_win_put() - drop a reference on a window; the last frees it
 * @win: the window
 *
 * Context: any.
 */
void scif_win_put(struct scif_window *win)
{
	kref_put(&win->ref, scif_win_release);
}

/*
 * Give back what a window holds: MRs, DMA mappings, pins. The PD and its
 * device are alive: callers hold ep->rma.lock with the window not yet
 * DEAD (teardown frees the PD only after it has freed every window), or
 * own the window outright under res_sem.
 */
static void scif_win_free_res(struct scif_window *win)
{
	struct ib_device *dev = win->ep->pd->device;
	u32 i;

	for (i = 0; i < win->nr_chunks; i++) {
		struct scif_chunk *c = &win->chunks[i];

		if (c->mr)
			ib_dereg_mr(c->mr);
		if (c->nents)
			ib_dma_unmap_sg(dev, c->sgt.sgl, c->sgt.orig_nents,
					DMA_BIDIRECTIONAL);
		sg_free_table(&c->sgt);
	}
	kfree(win->chunks);
	win->chunks = NULL;
	win->nr_chunks = 0;
	if (win->sg_nents)
		ib_dma_unmap_sg(dev, win->sgt.sgl, win->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
	win->sg_nents = 0;
	sg_free_table(&win->sgt);
	if (win->umem)
		ib_umem_release(win->umem);
	win->umem = NULL;
	if (win->pinned)
		scif_pinned_put(win->pinned);
	else
		kvfree(win->pages);
	win->pinned = NULL;
	win->pages = NULL;
}

/* Take a window out of its tree (if in one) for good. Caller holds rma.lock. */
static void scif_win_kill(struct scif_window *win)
{
	struct scif_rma_info *rma = &win->ep->rma;

	if (win->state == SCIF_WIN_DEAD)
		return;
	if (!win->temp)
		interval_tree_remove(&win->it, win->peer ? &rma->peer : &rma->self);
	if (!list_empty(&win->reap)) {
		list_del_init(&win->reap);
		rma->nreap--;
	}
	win->state = SCIF_WIN_DEAD;
	if (!win->peer)
		scif_win_free_res(win);
	scif_win_put(win);
}

/* Does anything in @root overlap [@start, @last]? */
static bool scif_overlaps(struct rb_root_cached *root, u64 start, u64 last)
{
	return interval_tree_iter_first(root, start, last);
}

/*
 * The highest free range of @len bytes in [SCIF_AUTO_BASE, SCIF_AUTO_TOP).
 * Caller holds rma.lock.
 */
static int scif_auto_offset(struct rb_root_cached *root, u64 len, u64 *offset)
{
	u64 end = SCIF_AUTO_TOP;

	while (end >= SCIF_AUTO_BASE + len) {
		struct interval_tree_node *it;
		u64 start = end - len, low = start;

		it = interval_tree_iter_first(root, start, end - 1);
		if (!it) {
			*offset = start;
			return 0;
		}
		for (; it; it = interval_tree_iter_next(it, start, end - 1))
			low = min_t(u64, low, it->start);
		end = low;
	}
	return -ENOMEM;
}

static int scif_ext_at(const struct scif_window *win, u64 off)
{
	int lo = 0, hi = win->nr_ext - 1;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (win->ext[mid].start <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/**
 * scif_win_find() - the window at an offset, for a range that must be
 *	covered by live windows contiguous in offset
 * @root: &rma.self or &rma.peer
 * @off: first byte of the range
 * @len: bytes, > 0
 * @prot: SCIF_PROT_* every window of the range must allow
 * @err: set to -ENXIO (a byte of the range in no live window) or -EACCES
 *
 * Context: caller holds rma.lock.
 * Return: the window holding @off, or NULL with @err set.
 */
struct scif_window *scif_win_find(struct rb_root_cached *root, u64 off, u64 len,
				  int prot, int *err)
{
	struct scif_window *first = NULL, *win;
	struct interval_tree_node *it;
	u64 at = off, end;

	if (off >= SCIF_OFF_LIMIT || len > SCIF_OFF_LIMIT - off) {
		*err = -ENXIO;
		return NULL;
	}
	end = off + len;
	while (at < end) {
		it = interval_tree_iter_first(root, at, at);
		win = it ? container_of(it, struct scif_window, it) : NULL;
		if (!win || win->state != SCIF_WIN_LIVE) {
			*err = -ENXIO;
			return NULL;
		}
		if ((win->prot & prot) != prot) {
			*err = -EACCES;
			return NULL;
		}
		if (!first)
			first = win;
		at = (u64)win->it.last + 1;
	}
	return first;
}

/**
 * scif_win_next() - the window that starts right after another in its tree
 * @win: a window in &rma.self or &rma.peer
 *
 * Context: caller holds rma.lock.
 * Return: the window holding the byte after @win's last, or NULL.
 */
struct scif_window *scif_win_next(struct scif_window *win)
{
	struct scif_rma_info *rma = &win->ep->rma;
	struct interval_tree_node *it;
	u64 at = (u64)win->it.last + 1;

	it = interval_tree_iter_first(win->peer ? &rma->peer : &rma->self, at, at);
	return it ? container_of(it, struct scif_window, it) : NULL;
}

/* --- self windows: MRs ------------------------------------------------------------ */

/**
 * struct scif_regwait - fast registrations in flight
 * @cqe: their completion
 * @ep: the endpoint
 * @pending: WRs not completed, plus one for the poster
 * @status: the first error
 * @done: all completed
 */
struct scif_regwait {
	struct ib_cqe cqe;
	struct scif_endpt *ep;
	atomic_t pending;
	int status;
	struct completion done;
};

static void scif_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scif_regwait *rw = container_of(wc->wr_cqe, struct scif_regwait, cqe);
	struct scif_endpt *ep = rw->ep;

	if (wc->status != IB_WC_SUCCESS) {
		WRITE_ONCE(rw->status, -ECONNRESET);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			scif_conn_lost(ep);
	}
	scif_sq_put(ep, 1);
	if (atomic_dec_and_test(&rw->pending))
		complete(&rw->done);
}

/*
 * Map @win's pages with MRs of at most @per pages each and register them
 * with fast-registration WRs on the endpoint's QP. Caller holds res_sem
 * (read) with the QP alive.
 */
static int scif_win_map_mrs(struct scif_endpt *ep, struct scif_window *win)
{
	struct ib_device *dev = ep->pd->device;
	struct scif_regwait rw = { .ep = ep };
	u32 per, i, n;
	int access = 0, ret = 0;

	/*
	 * Each MR gets one page list entry more than it maps: rdma_rxe of
	 * 6.1 reads a pointer past its page list when a transfer ends at
	 * the end of a list filled to a multiple of 256 entries
	 * (rxe_mr_copy(); gone with the xarray page lists of 6.2).
	 */
	per = min_t(u32, dev->attrs.max_fast_reg_page_list_len, SCIF_MR_MAX_PAGES + 1);
	if (per < 2 || !(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	per--;
	if (READ_ONCE(scif_mr_pages))
		per = min(per, READ_ONCE(scif_mr_pages));
	if (win->prot & SCIF_PROT_WRITE)
		access |= IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	if (win->prot & SCIF_PROT_READ)
		access |= IB_ACCESS_REMOTE_READ;

	n = DIV_ROUND_UP(win->nr_pages, per);
	win->chunks = kcalloc(n, sizeof(*win->chunks), GFP_KERNEL);
	win->ext = kvcalloc(n, sizeof(*win->ext), GFP_KERNEL);
	if (!win->chunks || !win->ext)
		return -ENOMEM;
	win->nr_chunks = n;
	win->nr_ext = n;
	for (i = 0; i < n; i++) {
		struct scif_chunk *c = &win->chunks[i];
		u32 first = i * per, cnt = min(per, win->nr_pages - first);
		int mapped;

		ret = sg_alloc_table_from_pages(&c->sgt, win->pages + first, cnt, 0,
						(unsigned long)cnt << PAGE_SHIFT,
						GFP_KERNEL);
		if (ret)
			return ret;
		c->nents = ib_dma_map_sg(dev, c->sgt.sgl, c->sgt.orig_nents,
					 DMA_BIDIRECTIONAL);
		if (!c->nents)
			return -ENOMEM;
		c->mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, cnt + 1);
		if (IS_ERR(c->mr)) {
			ret = PTR_ERR(c->mr);
			c->mr = NULL;
			return ret;
		}
		mapped = ib_map_mr_sg(c->mr, c->sgt.sgl, c->nents, NULL, PAGE_SIZE);
		if (mapped != c->nents ||
		    c->mr->length != (u64)cnt << PAGE_SHIFT)
			return mapped < 0 ? mapped : -EINVAL;
		win->ext[i].start = (u64)first << PAGE_SHIFT;
		win->ext[i].addr = c->mr->iova;
		win->ext[i].len = c->mr->length;
		win->ext[i].lkey = c->mr->lkey;
		win->ext[i].rkey = c->mr->rkey;
	}

	/* Register them; wait, so a failed registration is this call's error. */
	atomic_set(&rw.pending, 1);
	init_completion(&rw.done);
	rw.cqe.done = scif_reg_done;
	for (i = 0; i < n && !ret; i++) {
		struct ib_reg_wr wr = {};

		ret = scif_sq_get(ep, 1);
		if (ret)
			break;
		wr.wr.opcode = IB_WR_REG_MR;
		wr.wr.send_flags = IB_SEND_SIGNALED;
		wr.wr.wr_cqe = &rw.cqe;
		wr.mr = win->chunks[i].mr;
		wr.key = wr.mr->rkey;
		wr.access = access;
		atomic_inc(&rw.pending);
		ret = ib_post_send(ep->qp, &wr.wr, NULL);
		if (ret) {
			atomic_dec(&rw.pending);
			scif_sq_put(ep, 1);
		}
	}
	if (!atomic_dec_and_test(&rw.pending))
		wait_for_completion(&rw.done);
	return ret ? ret : READ_ONCE(rw.status);
}

/* Tell the peer about a self window: its MRs, in as many messages as needed. */
static int scif_win_announce(struct scif_endpt *ep, struct scif_window *win)
{
	struct scif_reg_msg *msg;
	u32 first, count, i;
	int ret = 0;

	msg = kzalloc(SCIF_MSG_PAYLOAD, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	for (first = 0; first < win->nr_ext && !ret; first += count) {
		count = min_t(u32, win->nr_ext - first, SCIF_REG_EXT_MAX);
		msg->offset = cpu_to_le64(win->it.start);
		msg->len = cpu_to_le64(win->len);
		msg->prot = cpu_to_le32(win->prot);
		msg->nr_ext = cpu_to_le32(win->nr_ext);
		msg->first = cpu_to_le32(first);
		msg->count = cpu_to_le32(count);
		for (i = 0; i < count; i++) {
			const struct scif_ext *e = &win->ext[first + i];

			msg->ext[i].addr = cpu_to_le64(e->addr);
			msg->ext[i].len = cpu_to_le32(e->len);
			msg->ext[i].rkey = cpu_to_le32(e->rkey);
		}
		ret = scif_msg_call(ep, SCIF_MSG_REGISTER, msg,
				    struct_size(msg, ext, count), NULL, 0, SCIF_TIMEOUT);
	}
	kfree(msg);
	return ret;
}

static void scif_win_tell_unreg(struct scif_endpt *ep, u64 offset)
{
	struct scif_unreg_msg msg = { .offset = cpu_to_le64(offset) };

	/*
	 * The peer itself waits up to SCIF_TIMEOUT for its RMAs into the
	 * window before it answers: waiting only as long here would free the
	 * MRs under an RMA the peer still counts as running.
	 */
	scif_msg_call(ep, SCIF_MSG_UNREGISTER, &msg, sizeof(msg), NULL, 0,
		      2 * SCIF_TIMEOUT);
}

/**
 * scif_rma_reap_locked() - free the unregistered and temporary windows
 *	that no RMA and no mapping (@nmaps) uses any more
 * @ep: the endpoint
 *
 * Context: caller holds @ep->rma.lock; the windows on the reap list are
 * not dead, which keeps the PD (teardown kills them before freeing it).
 */
void scif_rma_reap_locked(struct scif_endpt *ep)
{
	struct scif_rma_info *rma = &ep->rma;
	struct scif_window *win, *tmp;
	u64 done;

	spin_lock_irq(&rma->slock);
	done = rma->done;
	spin_unlock_irq(&rma->slock);
	list_for_each_entry_safe(win, tmp, &rma->reap_list, reap)
		if (win->last_seq <= done && !win->nmaps)
			scif_win_kill(win);
}

static void scif_rma_reap(struct scif_endpt *ep)
{
	mutex_lock(&ep->rma.lock);
	scif_rma_reap_locked(ep);
	mutex_unlock(&ep->rma.lock);
}

/*
 * Register @win (its pages set) at @offset: reserve the offset, register
 * the MRs, announce them, make the window live. The caller holds res_sem
 * (read) with the QP alive; this releases it. Consumes the caller's
 * reference on @win (freeing it on failure).
 */
static off_t scif_win_register(struct scif_endpt *ep, struct scif_window *win,
			       off_t offset, int map_flags)
{
	struct scif_rma_info *rma = &ep->rma;
	u64 off = offset;
	int ret;

	mutex_lock(&rma->lock);
	/* Offsets of windows whose last RMA has completed are free again. */
	scif_rma_reap_locked(ep);
	if (map_flags & SCIF_MAP_FIXED) {
		if (scif_overlaps(&rma->self, off, off + win->len - 1))
			ret = -EADDRINUSE;
		else
			ret = 0;
	} else {
		ret = scif_auto_offset(&rma->self, win->len, &off);
	}
	if (ret) {
		mutex_unlock(&rma->lock);
		goto err_unlocked;
	}
	win->it.start = off;
	win->it.last = off + win->len - 1;
	interval_tree_insert(&win->it, &rma->self);
	kref_get(&win->ref);		/* the tree's */
	mutex_unlock(&rma->lock);

	ret = scif_win_map_mrs(ep, win);
	up_read(&ep->res_sem);
	if (!ret)
		ret = scif_win_announce(ep, win);

	mutex_lock(&rma->lock);
	if (!ret && win->state == SCIF_WIN_REGISTERING)
		win->state = SCIF_WIN_LIVE;
	else if (!ret)
		ret = -ECONNRESET;	/* torn down meanwhile */
	else
		scif_win_kill(win);
	mutex_unlock(&rma->lock);
	if (ret && ret != -ECONNRESET && ret != -ETIMEDOUT && win->nr_ext > SCIF_REG_EXT_MAX)
		scif_win_tell_unreg(ep, off);	/* the peer may hold a part */
	scif_win_put(win);
	return ret ? ret : (off_t)off;

err_unlocked:
	/* Nothing is mapped yet: the pin and the page array only. */
	if (win->umem)
		ib_umem_release(win->umem);
	up_read(&ep->res_sem);
	if (win->pinned)
		scif_pinned_put(win->pinned);
	else
		kvfree(win->pages);
	scif_win_put(win);
	return ret;
}

static int scif_reg_check(struct scif_endpt *ep, size_t len, off_t offset,
			  int prot_flags, int map_flags, int allowed)
{
	if (!prot_flags || prot_flags & ~SCIF_PROT_ALL || map_flags & ~allowed)
		return -EINVAL;
	if (map_flags & SCIF_MAP_FIXED &&
	    (offset < 0 || !PAGE_ALIGNED(offset) || len > SCIF_OFF_LIMIT - offset))
		return -EINVAL;
	if (!len || !PAGE_ALIGNED(len) || len > SCIF_OFF_LIMIT ||
	    len >> PAGE_SHIFT > INT_MAX)
		return -EINVAL;
	return scif_ep_verify(ep);
}

/**
 * scif_register() - open a window of an endpoint's registered address space
 * @epd: a connected endpoint
 * @addr: first byte of the memory, page aligned: a user address of the
 *	calling task (pinned with ib_umem_get_va(), counted in RLIMIT_MEMLOCK),
 *	or with SCIF_MAP_KERNEL a kernel address (vmalloc or the linear map),
 *	which the caller keeps until the window is unregistered
 * @len: bytes, a non-zero multiple of the page size
 * @offset: with SCIF_MAP_FIXED the window's offset (page aligned, >= 0);
 *	otherwise ignored: the offset is chosen top-down below 2^63
 * @prot_flags: SCIF_PROT_READ and/or SCIF_PROT_WRITE: what the peer's RMAs
 *	(and this side's RMAs into the window) may do
 * @map_flags: SCIF_MAP_FIXED, SCIF_MAP_KERNEL
 *
 * The window is one or more MRs of the connection, and the peer learns
 * their keys before this returns. (SCIF header: scif_register.)
 *
 * Context: process; sleeps.
 * Return: the window's offset; -EINVAL for bad flags, alignment or
 * length; -EADDRINUSE when a FIXED window would overlap another;
 * -ENOTCONN; -ECONNRESET; -EFAULT when the memory is not mapped;
 * -ENOMEM (no memory, no free offset range, RLIMIT_MEMLOCK);
 * -EOPNOTSUPP when the device cannot fast-register MRs.
 */
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags)
{
	struct scif_endpt *ep = epd;
	scif_pinned_pages_t pp;
	struct scif_window *win;
	struct sg_page_iter pi;
	u32 i = 0;
	off_t ret;

	ret = scif_reg_check(ep, len, offset, prot_flags, map_flags,
			     SCIF_MAP_FIXED | SCIF_MAP_KERNEL);
	if (ret)
		return ret;
	if (!PAGE_ALIGNED((unsigned long)addr))
		return -EINVAL;
	if (map_flags & SCIF_MAP_KERNEL) {
		ret = scif_pin_pages(addr, len, prot_flags, SCIF_MAP_KERNEL, &pp);
		if (ret)
			return ret;
		ret = scif_register_pinned_pages(epd, pp, offset, map_flags & SCIF_MAP_FIXED);
		scif_unpin_pages(pp);
		return ret;
	}

	win = scif_win_alloc(ep, len, prot_flags);
	if (!win)
		return -ENOMEM;
	win->nr_pages = len >> PAGE_SHIFT;
	win->pages = kvcalloc(win->nr_pages, sizeof(*win->pages), GFP_KERNEL);
	if (!win->pages) {
		scif_win_put(win);
		return -ENOMEM;
	}
	if (!current->mm) {
		ret = -EFAULT;
		goto err_free;
	}
	down_read(&ep->res_sem);
	if (ep->qp_dead || !ep->qp) {
		ret = scif_ep_verify(ep) ?: -ECONNRESET;
		goto err;
	}
	win->umem = ib_umem_get_va(ep->pd->device, (unsigned long)addr, len,
				   prot_flags & SCIF_PROT_WRITE ? IB_ACCESS_LOCAL_WRITE : 0);
	if (IS_ERR(win->umem)) {
		ret = PTR_ERR(win->umem);
		win->umem = NULL;
		goto err;
	}
	for_each_sgtable_page(&win->umem->sgt_append.sgt, &pi, 0) {
		if (i == win->nr_pages)
			break;
		win->pages[i++] = sg_page_iter_page(&pi);
	}
	if (i != win->nr_pages) {
		ret = -EFAULT;
		goto err;
	}
	return scif_win_register(ep, win, offset, map_flags);
err:
	/* Nothing is mapped yet: the umem and the page array only. */
	if (win->umem)
		ib_umem_release(win->umem);
	up_read(&ep->res_sem);
err_free:
	kvfree(win->pages);
	scif_win_put(win);
	return ret;
}
EXPORT_SYMBOL_GPL(scif_register);

/**
 * scif_register_pinned_pages() - open a window over pages of scif_pin_pages()
 * @epd: a connected endpoint
 * @pinned_pages: the pages (not yet given to scif_unpin_pages()); the
 *	window holds them until it is gone
 * @offset: with SCIF_MAP_FIXED the window's offset (page aligned, >= 0);
 *	otherwise ignored
 * @map_flags: 0 or SCIF_MAP_FIXED
 *
 * (SCIF header: scif_register_pinned_pages.)
 *
 * Context: process; sleeps.
 * Return: the window's offset; -EINVAL for bad flags or offset or an
 * invalid or unpinned handle; -EADDRINUSE; -ENOTCONN; -ECONNRESET;
 * -ENOMEM; -EOPNOTSUPP as scif_register().
 */
off_t scif_register_pinned_pages(scif_epd_t epd, scif_pinned_pages_t pinned_pages,
				 off_t offset, int map_flags)
{
	struct scif_pinned_pages *pp = pinned_pages;
	struct scif_endpt *ep = epd;
	struct scif_window *win;
	int ret;

	if (!pp || pp->magic != SCIF_PINNED_MAGIC || READ_ONCE(pp->unpinned))
		return -EINVAL;
	ret = scif_reg_check(ep, (size_t)pp->nr_pages << PAGE_SHIFT, offset, pp->prot,
			     map_flags, SCIF_MAP_FIXED);
	if (ret)
		return ret;
	win = scif_win_alloc(ep, (u64)pp->nr_pages << PAGE_SHIFT, pp->prot);
	if (!win)
		return -ENOMEM;
	kref_get(&pp->ref);
	win->pinned = pp;
	win->pages = pp->pages;
	win->nr_pages = pp->nr_pages;
	down_read(&ep->res_sem);
	if (ep->qp_dead || !ep->qp) {
		up_read(&ep->res_sem);
		scif_pinned_put(pp);
		scif_win_put(win);
		return scif_ep_verify(ep) ?: -ECONNRESET;
	}
	return scif_win_register(ep, win, offset, map_flags);
}
EXPORT_SYMBOL_GPL(scif_register_pinned_pages);

static void scif_rma_reap_work(struct work_struct *work)
{
	scif_rma_reap(container_of(work, struct scif_endpt, rma.reap_work));
}

/**
 * scif_unregister() - close the windows within a range
 * @epd: a connected endpoint
 * @offset: first byte of the range (>= 0)
 * @len: bytes
 *
 * Every window entirely within [@offset, @offset + @len) is closed: no
 * new RMA, signal or get_pages may name it, the peer drops its copy after
 * its own RMAs into it have completed, and the window's MRs, pages and
 * offsets are freed once this side's RMAs that use it have completed and
 * no scif_mmap() mapping or scif_get_pages() range of a peer in this
 * kernel holds it any more (maybe after this returns; scif_mmap.c).
 * (SCIF header: scif_unregister.)
 *
 * Context: process; sleeps.
 * Return: 0; -EINVAL when the range covers only part of a window or
 * @offset is negative or unaligned; -ENXIO when it holds no window;
 * -ENOTCONN; -ECONNRESET. On error nothing is unregistered.
 */
int scif_unregister(scif_epd_t epd, off_t offset, size_t len)
{
	struct scif_endpt *ep = epd;
	struct scif_rma_info *rma = &ep->rma;
	struct interval_tree_node *it;
	struct scif_window *win, *tmp;
	LIST_HEAD(list);
	u64 last, used = 0;
	int ret;

	if (offset < 0 || !PAGE_ALIGNED(offset))
		return -EINVAL;
	ret = scif_ep_verify(ep);
	if (ret)
		return ret;
	if (!len || len > SCIF_OFF_LIMIT - offset)
		return -ENXIO;
	last = offset + len - 1;

	mutex_lock(&rma->lock);
	for (it = interval_tree_iter_first(&rma->self, offset, last); it;
	     it = interval_tree_iter_next(it, offset, last)) {
		win = container_of(it, struct scif_window, it);
		if (win->state != SCIF_WIN_LIVE)
			continue;
		if (it->start < offset || it->last > last) {
			ret = -EINVAL;
			break;
		}
		list_add_tail(&win->ulist, &list);
	}
	if (!ret && list_empty(&list))
		ret = -ENXIO;
	list_for_each_entry_safe(win, tmp, &list, ulist) {
		if (ret) {
			list_del(&win->ulist);
			continue;
		}
		win->state = SCIF_WIN_UNREG;
		used = max(used, win->last_seq);
		kref_get(&win->ref);
	}
	mutex_unlock(&rma->lock);
	if (ret)
		return ret;

	/* Our own RMAs that used the windows complete visibly. */
	scif_rma_cover_unlocked(ep, used);
	list_for_each_entry_safe(win, tmp, &list, ulist) {
		/* The peer answers once its RMAs into the window are done. */
		scif_win_tell_unreg(ep, win->it.start);
		mutex_lock(&rma->lock);
		list_del(&win->ulist);
		if (win->state == SCIF_WIN_UNREG) {
			list_add_tail(&win->reap, &rma->reap_list);
			rma->nreap++;
		}
		mutex_unlock(&rma->lock);
		scif_win_put(win);
	}
	scif_rma_reap(ep);
	return 0;
}
EXPORT_SYMBOL_GPL(scif_unregister);

/* --- the peer's windows ----------------------------------------------------------- */

static int scif_recv_register(struct scif_endpt *ep, const void *payload, u32 len)
{
	const struct scif_reg_msg *msg = payload;
	struct scif_rma_info *rma = &ep->rma;
	struct interval_tree_node *it;
	struct scif_window *win;
	u64 off, wlen, at;
	u32 nr, first, count, i;
	int prot, ret = 0;

	if (len < sizeof(*msg))
		return -EPROTO;
	off = le64_to_cpu(msg->offset);
	wlen = le64_to_cpu(msg->len);
	prot = le32_to_cpu(msg->prot);
	nr = le32_to_cpu(msg->nr_ext);
	first = le32_to_cpu(msg->first);
	count = le32_to_cpu(msg->count);
	if (!count || count > SCIF_REG_EXT_MAX || len != struct_size(msg, ext, count) ||
	    !wlen || !PAGE_ALIGNED(off) || !PAGE_ALIGNED(wlen) || off >= SCIF_OFF_LIMIT ||
	    wlen > SCIF_OFF_LIMIT - off || !prot || prot & ~SCIF_PROT_ALL ||
	    !nr || nr > wlen >> PAGE_SHIFT || first >= nr || count > nr - first)
		return -EINVAL;

	mutex_lock(&rma->lock);
	if (!first) {
		if (scif_overlaps(&rma->peer, off, off + wlen - 1)) {
			ret = -EADDRINUSE;
			goto out;
		}
		win = scif_win_alloc(ep, wlen, prot);
		if (win)
			win->ext = kvcalloc(nr, sizeof(*win->ext), GFP_KERNEL);
		if (!win || !win->ext) {
			if (win)
				scif_win_put(win);
			ret = -ENOMEM;
			goto out;
		}
		win->peer = true;
		win->nr_ext = nr;
		win->it.start = off;
		win->it.last = off + wlen - 1;
		interval_tree_insert(&win->it, &rma->peer);
	} else {
		it = interval_tree_iter_first(&rma->peer, off, off);
		win = it ? container_of(it, struct scif_window, it) : NULL;
		if (!win || it->start != off || win->len != wlen || win->prot != prot ||
		    win->nr_ext != nr || win->filled != first ||
		    win->state != SCIF_WIN_REGISTERING) {
			ret = -EINVAL;
			goto out;
		}
	}
	at = first ? win->ext[first - 1].start + win->ext[first - 1].len : 0;
	for (i = 0; i < count; i++) {
		struct scif_ext *e = &win->ext[first + i];

		e->start = at;
		e->addr = le64_to_cpu(msg->ext[i].addr);
		e->len = le32_to_cpu(msg->ext[i].len);
		e->rkey = le32_to_cpu(msg->ext[i].rkey);
		if (!e->len || !PAGE_ALIGNED(e->len) || e->len > wlen - at) {
			ret = -EINVAL;
			break;
		}
		at += e->len;
	}
	win->filled = first + count;
	if (!ret && win->filled == nr) {
		if (at == wlen)
			win->state = SCIF_WIN_LIVE;
		else
			ret = -EINVAL;
	}
	if (ret)
		scif_win_kill(win);
out:
	mutex_unlock(&rma->lock);
	return ret;
}

static int scif_recv_unregister(struct scif_endpt *ep, const void *payload, u32 len)
{
	const struct scif_unreg_msg *msg = payload;
	struct scif_rma_info *rma = &ep->rma;
	struct interval_tree_node *it;
	struct scif_window *win;
	u64 off, used;

	if (len != sizeof(*msg))
		return -EPROTO;
	off = le64_to_cpu(msg->offset);
	mutex_lock(&rma->lock);
	it = interval_tree_iter_first(&rma->peer, off, off);
	win = it ? container_of(it, struct scif_window, it) : NULL;
	if (!win || it->start != off || win->state == SCIF_WIN_UNREG) {
		mutex_unlock(&rma->lock);
		return -ENXIO;
	}
	/* No new RMA finds it; wait for those that use it. */
	win->state = SCIF_WIN_UNREG;
	used = win->last_seq;
	mutex_unlock(&rma->lock);
	scif_rma_wait(ep, used, false, SCIF_TIMEOUT);
	mutex_lock(&rma->lock);
	scif_win_kill(win);
	mutex_unlock(&rma->lock);
	return 0;
}

/* --- RMA ---------------------------------------------------------------------------- */

/**
 * struct scif_rma_req - one posted batch of RMA WRs
 * @cqe: completion of its last (signaled) WR
 * @ep: the endpoint
 * @seq: its sequence number
 * @nwr: WRs in it (send queue slots to give back)
 * @buf: a remote signal's value (the source of its WRITE), or NULL
 * @buf_dma: DMA address of @buf
 */
struct scif_rma_req {
	struct ib_cqe cqe;
	struct scif_endpt *ep;
	u64 seq;
	int nwr;
	u64 *buf;
	u64 buf_dma;
};

/**
 * struct scif_rma_ctx - an RMA being turned into WRs
 * @ep: the endpoint
 * @opcode: IB_WR_RDMA_READ (peer to local) or IB_WR_RDMA_WRITE
 * @lwin: local window at the cursor
 * @loff: cursor, offset in @lwin
 * @rwin: peer window at the cursor
 * @roff: cursor, offset in @rwin
 * @max_sge: SGEs per WR
 * @max_wr: bytes per WR
 * @nwr: WRs built, not yet posted
 * @buf: see struct scif_rma_req
 * @buf_dma: see struct scif_rma_req
 * @wr: the WRs
 * @sge: their SGEs
 */
struct scif_rma_ctx {
	struct scif_endpt *ep;
	enum ib_wr_opcode opcode;
	struct scif_window *lwin;
	u64 loff;
	struct scif_window *rwin;
	u64 roff;
	int max_sge;
	u32 max_wr;
	int nwr;
	u64 *buf;
	u64 buf_dma;
	struct ib_rdma_wr wr[SCIF_RMA_BATCH];
	struct ib_sge sge[SCIF_RMA_BATCH][SCIF_RMA_SGE];
};

/**
 * scif_rma_batch_done() - an RMA batch's signaled completion
 * @ep: the endpoint
 * @seq: the batch; every batch before it has completed too (RC completes
 *	the send queue in order)
 * @nwr: send queue slots to give back: the batch's WRs and the unsignaled
 *	ones before it
 * @ok: it completed successfully; if not, the connection is gone
 *
 * Writes the local fence signals now due, wakes waiters of the batch
 * counter and lets the reaper free what no RMA uses any more.
 *
 * Context: RMA or message completion (softirq).
 */
void scif_rma_batch_done(struct scif_endpt *ep, u64 seq, int nwr, bool ok)
{
	struct scif_rma_info *rma = &ep->rma;
	unsigned long flags;

	spin_lock_irqsave(&rma->slock, flags);
	if (ok) {
		if (seq > rma->done)
			rma->done = seq;
		/* Signals first: reap frees nothing a signal still writes. */
		scif_fence_complete(ep);
	} else {
		rma->broken = true;
	}
	spin_unlock_irqrestore(&rma->slock, flags);
	if (nwr)
		scif_sq_put(ep, nwr);
	if (wq_has_sleeper(&rma->wq))
		wake_up_all(&rma->wq);
	if (READ_ONCE(rma->nreap))
		queue_work(system_wq, &rma->reap_work);
}

static void scif_rma_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scif_rma_req *req = container_of(wc->wr_cqe, struct scif_rma_req, cqe);
	struct scif_endpt *ep = req->ep;

	if (req->buf) {
		ib_dma_unmap_single(ep->pd->device, req->buf_dma, sizeof(u64),
				    DMA_TO_DEVICE);
		kfree(req->buf);
	}
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		pr_debug("scire_scif: RMA failed on port %u: %s\n", ep->port.port,
			 ib_wc_status_msg(wc->status));
		scif_conn_lost(ep);
	}
	scif_rma_batch_done(ep, req->seq, req->nwr, wc->status == IB_WC_SUCCESS);
	kfree(req);
}

/* Unsignaled RMA WRs complete only in error (the signaled one follows). */
static void scif_rma_err_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scif_endpt *ep = container_of(wc->wr_cqe, struct scif_endpt, rma.err_cqe);
	unsigned long flags;

	if (wc->status == IB_WC_SUCCESS)
		return;
	spin_lock_irqsave(&ep->rma.slock, flags);
	ep->rma.broken = true;
	spin_unlock_irqrestore(&ep->rma.slock, flags);
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		scif_conn_lost(ep);
	wake_up_all(&ep->rma.wq);
}

/*
 * Post the WRs built as one batch with the next sequence number. Its last
 * WR is signaled when @sig (a caller will wait for it), when it carries a
 * remote signal's buffer (freed by the completion), or when the send queue
 * slots of unsignaled WRs would exceed SCIF_RMA_UNSIG_MAX; otherwise the
 * batch completes unseen, and whoever later waits for it posts a message
 * behind it first (scif_rma_cover()). A completion per batch cost a
 * 4 KiB scif_writeto() an eighth of its CPU time (bench/profiles.md,
 * scif-rma).
 */
static int scif_rma_flush(struct scif_rma_ctx *ctx, bool sig)
{
	struct scif_endpt *ep = ctx->ep;
	struct scif_rma_info *rma = &ep->rma;
	const struct ib_send_wr *bad = NULL;
	struct scif_rma_req *req = NULL;
	int i, n = ctx->nwr, ret;
	u64 seq;

	if (!n)
		return 0;
	ctx->nwr = 0;
	sig = sig || ctx->buf || rma->unsig + n > SCIF_RMA_UNSIG_MAX;
	for (i = 0; i < n; i++)
		ctx->wr[i].wr.next = i + 1 < n ? &ctx->wr[i + 1].wr : NULL;
	if (sig) {
		req = kzalloc(sizeof(*req), GFP_KERNEL);
		if (!req)
			return -ENOMEM;
		req->ep = ep;
		req->nwr = n + rma->unsig;
		req->cqe.done = scif_rma_done;
		ctx->wr[n - 1].wr.send_flags |= IB_SEND_SIGNALED;
		ctx->wr[n - 1].wr.wr_cqe = &req->cqe;
		req->buf = ctx->buf;
		req->buf_dma = ctx->buf_dma;
	}
	ret = scif_sq_get(ep, n);
	if (ret) {
		kfree(req);
		return ret;
	}
	/* rma->lock is held: nobody else posts, so this is the next number. */
	seq = rma->issued + 1;
	if (req)
		req->seq = seq;
	/* Once posted, @req is the completion's: it may be freed already. */
	ret = ib_post_send(ep->qp, &ctx->wr[0].wr, &bad);
	if (ret) {
		for (i = 0; bad && i < n && &ctx->wr[i].wr != bad; i++)
			;
		/* WRs before @bad went without their signaled last one. */
		scif_sq_put(ep, n - i);
		if (i)
			scif_conn_lost(ep);
		kfree(req);
		return ret;
	}
	if (req) {
		ctx->buf = NULL;
		rma->unsig = 0;
		rma->signaled = seq;
	} else {
		rma->unsig += n;
	}
	spin_lock_irq(&rma->slock);
	rma->issued = seq;
	spin_unlock_irq(&rma->slock);
	return 0;
}

/**
 * scif_rma_cover() - make RMA batch @seq complete visibly
 * @ep: the endpoint
 * @seq: the batch someone needs to see completed; U64_MAX for every batch
 *	posted so far
 *
 * A batch nobody waited for when it was posted went unsignaled
 * (scif_rma_flush()). When @seq is such a batch, posts a message behind the
 * last batch posted whose completion stands for every batch up to it
 * (scif_msg_post_rma_done()). Whatever needs @ep->rma.done to reach a batch
 * comes through here: scif_rma_wait(), and those who need the completion
 * without waiting for it (a queued local fence signal, a temporary window,
 * an unregister, scif_close()).
 *
 * Context: process; the caller holds @ep->res_sem (read) with the QP alive
 * and rma.lock. Sleeps while every message buffer is in use.
 * Return: 0 (also when nothing was needed); -ECONNRESET or -ENOTCONN when
 * the endpoint is not connected; the errno of ib_post_send().
 */
int scif_rma_cover(struct scif_endpt *ep, u64 seq)
{
	struct scif_rma_info *rma = &ep->rma;
	int ret;

	lockdep_assert_held(&rma->lock);
	if (rma->signaled >= min(seq, rma->issued))
		return 0;
	ret = scif_msg_post_rma_done(ep, rma->issued, rma->unsig);
	if (!ret) {
		rma->signaled = rma->issued;
		rma->unsig = 0;
	}
	return ret;
}

/**
 * scif_rma_cover_unlocked() - scif_rma_cover() for a caller holding no lock
 * @ep: the endpoint
 * @seq: as for scif_rma_cover()
 *
 * Does nothing when the QP is gone: whoever waits then hears that from the
 * endpoint's state.
 *
 * Context: process; takes res_sem and rma.lock. Sleeps.
 */
void scif_rma_cover_unlocked(struct scif_endpt *ep, u64 seq)
{
	down_read(&ep->res_sem);
	if (!ep->qp_dead && ep->qp) {
		mutex_lock(&ep->rma.lock);
		scif_rma_cover(ep, seq);
		mutex_unlock(&ep->rma.lock);
	}
	up_read(&ep->res_sem);
}

static bool scif_rma_settled(struct scif_endpt *ep, u64 seq)
{
	return READ_ONCE(ep->rma.done) >= seq || READ_ONCE(ep->rma.broken) ||
	       scif_ep_verify(ep);
}

/**
 * scif_rma_wait() - wait until RMA batch @seq has completed
 * @ep: the endpoint
 * @seq: the batch; every RMA WR posted up to it has completed when it has
 * @intr: any signal ends the wait; otherwise only a fatal one does
 * @timeout: jiffies, or MAX_SCHEDULE_TIMEOUT
 *
 * Covers @seq first (scif_rma_cover()), so no waiter waits for a
 * completion nobody asked for.
 *
 * Context: process, holding none of @ep's locks; sleeps.
 * Return: 0 once the batch has completed; -ECONNRESET when an RMA WR
 * failed or the connection is gone; -ENOTCONN when the endpoint is not
 * connected; -EINTR on a signal; -ETIMEDOUT.
 */
int scif_rma_wait(struct scif_endpt *ep, u64 seq, bool intr, long timeout)
{
	struct scif_rma_info *rma = &ep->rma;
	long left;

	scif_rma_cover_unlocked(ep, seq);
	if (intr)
		left = wait_event_interruptible_timeout(rma->wq,
							scif_rma_settled(ep, seq),
							timeout);
	else
		left = wait_event_killable_timeout(rma->wq, scif_rma_settled(ep, seq),
						   timeout);
	if (READ_ONCE(rma->done) >= seq)
		return 0;
	if (left < 0)
		return -EINTR;
	if (READ_ONCE(rma->broken))
		return -ECONNRESET;
	return scif_ep_verify(ep) ?: -ETIMEDOUT;
}

/*
 * Build WRs for the next @len bytes at the cursors: one WR never crosses
 * an MR of the peer's window, gathers at most max_sge runs of local
 * windows, and carries at most max_wr bytes. @send_flags goes on
 * each WR built (IB_SEND_FENCE). Caller holds rma.lock and res_sem.
 */
static int scif_rma_emit(struct scif_rma_ctx *ctx, u64 len, int send_flags)
{
	u64 seq = ctx->ep->rma.issued + 1;
	int ret;

	while (len) {
		struct ib_rdma_wr *wr = &ctx->wr[ctx->nwr];
		struct ib_sge *sge = ctx->sge[ctx->nwr];
		const struct scif_ext *re;
		u64 rleft, wlen = 0;
		int nsge = 0;

		if (ctx->roff == ctx->rwin->len) {
			ctx->rwin = scif_win_next(ctx->rwin);
			ctx->roff = 0;
			if (WARN_ON_ONCE(!ctx->rwin))
				return -ENXIO;
		}
		ctx->rwin->last_seq = seq;
		re = &ctx->rwin->ext[scif_ext_at(ctx->rwin, ctx->roff)];
		rleft = min3(re->start + re->len - ctx->roff, len, (u64)ctx->max_wr);
		memset(wr, 0, sizeof(*wr));
		wr->remote_addr = re->addr + (ctx->roff - re->start);
		wr->rkey = re->rkey;
		while (wlen < rleft && nsge < ctx->max_sge) {
			const struct scif_ext *le;
			u64 addr, n;

			if (ctx->loff == ctx->lwin->len) {
				ctx->lwin = scif_win_next(ctx->lwin);
				ctx->loff = 0;
				if (WARN_ON_ONCE(!ctx->lwin))
					return -ENXIO;
			}
			ctx->lwin->last_seq = seq;
			le = &ctx->lwin->ext[scif_ext_at(ctx->lwin, ctx->loff)];
			addr = le->addr + (ctx->loff - le->start);
			n = min(le->start + le->len - ctx->loff, rleft - wlen);
			if (nsge && sge[nsge - 1].addr + sge[nsge - 1].length == addr &&
			    sge[nsge - 1].lkey == le->lkey) {
				sge[nsge - 1].length += n;
			} else {
				sge[nsge].addr = addr;
				sge[nsge].length = n;
				sge[nsge].lkey = le->lkey;
				nsge++;
			}
			ctx->loff += n;
			wlen += n;
		}
		ctx->roff += wlen;
		len -= wlen;
		wr->wr.opcode = ctx->opcode;
		wr->wr.sg_list = sge;
		wr->wr.num_sge = nsge;
		wr->wr.send_flags = send_flags;
		wr->wr.wr_cqe = &ctx->ep->rma.err_cqe;
		if (++ctx->nwr == SCIF_RMA_BATCH) {
			ret = scif_rma_flush(ctx, false);
			if (ret)
				return ret;
			seq = ctx->ep->rma.issued + 1;
		}
	}
	return 0;
}

/**
 * scif_rma_conn_init() - size an endpoint's RDMA WRs for its connection.
 * @ep: an endpoint whose rdma_cm ID has its device and port.
 *
 * The most one WR moves: SCIF_RMA_WR_MAX, or the port's max_msg_sz if
 * smaller. Asked when the connection is set up, not when an RMA builds its
 * WRs under rma.lock: ib_query_port() of a RoCE port takes the RTNL
 * (ib_get_eth_speed()), and rma.lock is taken under the mmap lock
 * (scif_mmap_peer()), which a device faulting in ODP pages takes under
 * its own QP locks, which rdma_cm takes under the RTNL.
 *
 * Context: process, no SCIF lock held.
 */
void scif_rma_conn_init(struct scif_endpt *ep)
{
	struct ib_port_attr attr;

	ep->rma.max_wr = SCIF_RMA_WR_MAX;
	if (!ib_query_port(ep->cm_id->device, ep->cm_id->port_num, &attr) &&
	    attr.max_msg_sz)
		ep->rma.max_wr = min_t(u32, SCIF_RMA_WR_MAX, attr.max_msg_sz);
}

/*
 * The endpoint's WR builder, reset for a new RMA. It is kept from one call
 * to the next: with init_on_alloc (Debian's default) a fresh one per call
 * meant zeroing 2 KiB per scif_writeto(), a sixth of a 4 KiB RMA's CPU
 * time. Caller holds rma.lock, which serialises every user of it.
 */
static struct scif_rma_ctx *scif_rma_ctx_get(struct scif_endpt *ep,
					     enum ib_wr_opcode opcode)
{
	struct ib_device *dev = ep->pd->device;
	struct scif_rma_ctx *ctx = ep->rma.ctx;
	int max = min_t(int, dev->attrs.max_send_sge, SCIF_RMA_SGE);

	lockdep_assert_held(&ep->rma.lock);
	if (!ctx) {
		ctx = kmalloc(sizeof(*ctx), GFP_KERNEL);
		if (!ctx)
			return NULL;
		ep->rma.ctx = ctx;
	}
	if (opcode == IB_WR_RDMA_READ)
		max = min_t(int, max, dev->attrs.max_sge_rd);
	/* Everything before wr[]; wr[] and sge[] are written as WRs are built. */
	memset(ctx, 0, offsetof(struct scif_rma_ctx, wr));
	ctx->ep = ep;
	ctx->opcode = opcode;
	ctx->max_sge = max(max, 1);
	ctx->max_wr = ep->rma.max_wr ?: SCIF_RMA_WR_MAX;
	return ctx;
}

/*
 * Move @len bytes between the local window chain at (@lwin, @loff) and the
 * peer's at @roffset. Caller holds res_sem (QP alive) and rma.lock.
 */
static int scif_rma_post(struct scif_endpt *ep, struct scif_window *lwin, u64 loff,
			 u64 roffset, u64 len, int flags, bool to_remote, bool sig)
{
	struct scif_rma_ctx *ctx;
	struct scif_window *rwin;
	u64 dst, tail = 0;
	int ret;

	rwin = scif_win_find(&ep->rma.peer, roffset, len,
			     to_remote ? SCIF_PROT_WRITE : SCIF_PROT_READ, &ret);
	if (!rwin)
		return ret;
	ctx = scif_rma_ctx_get(ep, to_remote ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ);
	if (!ctx)
		return -ENOMEM;
	ctx->lwin = lwin;
	ctx->loff = loff;
	ctx->rwin = rwin;
	ctx->roff = roffset - rwin->it.start;
	if (flags & SCIF_RMA_ORDERED) {
		/*
		 * The last (partial) cache line of the destination goes in a
		 * WR of its own after the rest: RC executes WRITEs in order
		 * at the peer, and IB_SEND_FENCE holds a READ until the
		 * READs before it have completed.
		 */
		dst = to_remote ? roffset : lwin->it.start + loff;
		tail = dst + len - max(ALIGN_DOWN(dst + len - 1, 64), dst);
	}
	ret = scif_rma_emit(ctx, len - tail, 0);
	if (!ret && tail)
		ret = scif_rma_emit(ctx, tail, to_remote ? 0 : IB_SEND_FENCE);
	if (!ret)
		ret = scif_rma_flush(ctx, sig);
	/* The last batch went out whole from scif_rma_emit(), unsignaled. */
	if (!ret && sig)
		ret = scif_rma_cover(ep, ep->rma.issued);
	return ret;
}

/**
 * scif_rma_post_signal() - write a u64 into a peer window after this
 *	endpoint's RMAs posted so far
 * @ep: the endpoint
 * @rwin: the peer window (live, writable, holding the 8 bytes)
 * @roff: offset of the u64 in @rwin
 * @val: the value
 *
 * An RDMA WRITE posted behind every earlier RMA WR, with IB_SEND_FENCE so
 * it waits for earlier READs to complete; RC executes it after the
 * earlier WRITEs.
 *
 * Context: caller holds res_sem (QP alive) and rma.lock.
 * Return: 0 or a negative errno.
 */
int scif_rma_post_signal(struct scif_endpt *ep, struct scif_window *rwin,
			 u64 roff, u64 val)
{
	struct ib_device *dev = ep->pd->device;
	struct scif_window lwin = {};
	struct scif_rma_ctx *ctx;
	struct scif_ext ext = {};
	u64 *buf;
	int ret;

	buf = kmalloc(sizeof(*buf), GFP_KERNEL);
	ctx = scif_rma_ctx_get(ep, IB_WR_RDMA_WRITE);
	if (!buf || !ctx) {
		ret = -ENOMEM;
		goto out;
	}
	*buf = val;
	ctx->buf_dma = ib_dma_map_single(dev, buf, sizeof(*buf), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, ctx->buf_dma)) {
		ret = -ENOMEM;
		goto out;
	}
	ext.addr = ctx->buf_dma;
	ext.len = sizeof(*buf);
	ext.lkey = ep->pd->local_dma_lkey;
	lwin.ep = ep;
	lwin.temp = true;
	lwin.len = sizeof(*buf);
	lwin.nr_ext = 1;
	lwin.ext = &ext;
	ctx->lwin = &lwin;
	ctx->rwin = rwin;
	ctx->roff = roff;
	ctx->buf = buf;
	ret = scif_rma_emit(ctx, sizeof(*buf), IB_SEND_FENCE);
	if (!ret)
		ret = scif_rma_flush(ctx, true);
	ctx->lwin = NULL;	/* on this stack */
	if (ctx->buf) {		/* not handed to a posted batch */
		ib_dma_unmap_single(dev, ctx->buf_dma, sizeof(*buf), DMA_TO_DEVICE);
		ctx->buf = NULL;
		goto out;
	}
	buf = NULL;
out:
	kfree(buf);
	return ret;
}

static int scif_rma_check(struct scif_endpt *ep, int flags)
{
	if (flags & ~SCIF_RMA_FLAGS)
		return -EINVAL;
	return scif_ep_verify(ep);
}

static int scif_rma_copy(struct scif_endpt *ep, off_t loffset, size_t len,
			 off_t roffset, int flags, bool to_remote)
{
	struct scif_rma_info *rma = &ep->rma;
	struct scif_window *lwin;
	u64 seq = 0;
	int ret;

	ret = scif_rma_check(ep, flags);
	if (ret)
		return ret;
	if (loffset < 0 || roffset < 0)
		return -ENXIO;
	if (!len)
		return 0;
	down_read(&ep->res_sem);
	if (ep->qp_dead || !ep->qp) {
		up_read(&ep->res_sem);
		return scif_ep_verify(ep) ?: -ECONNRESET;
	}
	mutex_lock(&rma->lock);
	lwin = scif_win_find(&rma->self, loffset, len,
			     to_remote ? SCIF_PROT_READ : SCIF_PROT_WRITE, &ret);
	if (lwin)
		ret = scif_rma_post(ep, lwin, loffset - lwin->it.start, roffset, len,
				    flags, to_remote, flags & SCIF_RMA_SYNC);
	seq = rma->issued;
	mutex_unlock(&rma->lock);
	up_read(&ep->res_sem);
	if (!ret && flags & SCIF_RMA_SYNC)
		ret = scif_rma_wait(ep, seq, false, MAX_SCHEDULE_TIMEOUT);
	return ret;
}

/**
 * scif_readfrom() - copy from the peer's registered address space into
 *	this endpoint's
 * @epd: a connected endpoint
 * @loffset: first byte of the destination, in this endpoint's windows
 *	(writable, contiguous)
 * @len: bytes (0 copies nothing)
 * @roffset: first byte of the source, in the peer's windows (readable,
 *	contiguous)
 * @rma_flags: SCIF_RMA_SYNC (return after the data has arrived),
 *	SCIF_RMA_ORDERED (the last cache line lands after the rest),
 *	SCIF_RMA_USECPU and SCIF_RMA_USECACHE (accepted; RDMA is used)
 *
 * RDMA READs on the endpoint's QP, split at the MRs of both sides. Without
 * SCIF_RMA_SYNC the call returns once they are posted; fences tell when
 * they complete. (SCIF header: scif_readfrom.)
 *
 * Context: process; sleeps.
 * Return: 0; -EINVAL for bad flags; -ENXIO when a range is not covered by
 * windows (or an offset is negative); -EACCES when a window forbids the
 * access; -ENOTCONN; -ECONNRESET (also when the transfer failed);
 * -ENOMEM; -EINTR when a fatal signal ended the wait of SCIF_RMA_SYNC.
 */
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		  int rma_flags)
{
	return scif_rma_copy(epd, loffset, len, roffset, rma_flags, false);
}
EXPORT_SYMBOL_GPL(scif_readfrom);

/**
 * scif_writeto() - copy from this endpoint's registered address space into
 *	the peer's
 * @epd: a connected endpoint
 * @loffset: first byte of the source, in this endpoint's windows
 *	(readable, contiguous)
 * @len: bytes (0 copies nothing)
 * @roffset: first byte of the destination, in the peer's windows
 *	(writable, contiguous)
 * @rma_flags: as scif_readfrom()
 *
 * RDMA WRITEs on the endpoint's QP. (SCIF header: scif_writeto.)
 *
 * Context: process; sleeps.
 * Return: as scif_readfrom().
 */
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		 int rma_flags)
{
	return scif_rma_copy(epd, loffset, len, roffset, rma_flags, true);
}
EXPORT_SYMBOL_GPL(scif_writeto);

/* A temporary window over [addr, addr + len) for one v* call. */
static int scif_temp_window(struct scif_endpt *ep, u64 addr, size_t len, bool user,
			    bool writable, struct scif_window **out, u64 *base)
{
	struct ib_device *dev = ep->pd->device;
	struct scif_window *win;
	struct sg_table *sgt;
	struct scatterlist *sg;
	u64 first = addr & PAGE_MASK, at = 0;
	int ret, i, nents;

	if (addr + len < addr || PAGE_ALIGN(addr + len) < addr + len)
		return -EINVAL;
	win = scif_win_alloc(ep, 0, writable ? SCIF_PROT_ALL : SCIF_PROT_READ);
	if (!win)
		return -ENOMEM;
	win->temp = true;
	win->nr_pages = (PAGE_ALIGN(addr + len) - first) >> PAGE_SHIFT;
	if (user) {
		if (!current->mm) {
			ret = -EFAULT;
			goto err;
		}
		win->umem = ib_umem_get_va(dev, addr, len, writable ? IB_ACCESS_LOCAL_WRITE : 0);
		if (IS_ERR(win->umem)) {
			ret = PTR_ERR(win->umem);
			win->umem = NULL;
			goto err;
		}
		sgt = &win->umem->sgt_append.sgt;
		nents = sgt->nents;
	} else {
		win->pages = kvcalloc(win->nr_pages, sizeof(*win->pages), GFP_KERNEL);
		if (!win->pages) {
			ret = -ENOMEM;
			goto err;
		}
		ret = scif_kernel_pages(first, win->nr_pages, win->pages);
		if (!ret)
			ret = sg_alloc_table_from_pages(&win->sgt, win->pages, win->nr_pages,
							0, (unsigned long)win->nr_pages
							<< PAGE_SHIFT, GFP_KERNEL);
		if (ret)
			goto err;
		sgt = &win->sgt;
		nents = ib_dma_map_sg(dev, sgt->sgl, sgt->orig_nents, DMA_BIDIRECTIONAL);
		if (!nents) {
			ret = -ENOMEM;
			goto err;
		}
		win->sg_nents = nents;
	}
	win->ext = kvcalloc(nents, sizeof(*win->ext), GFP_KERNEL);
	if (!win->ext) {
		ret = -ENOMEM;
		goto err;
	}
	for_each_sg(sgt->sgl, sg, nents, i) {
		win->ext[i].start = at;
		win->ext[i].addr = sg_dma_address(sg);
		win->ext[i].len = sg_dma_len(sg);
		win->ext[i].lkey = ep->pd->local_dma_lkey;
		at += sg_dma_len(sg);
	}
	win->nr_ext = nents;
	win->len = at;
	if (at < (addr - first) + len) {
		ret = -EFAULT;
		goto err;
	}
	*out = win;
	*base = addr - first;
	return 0;
err:
	scif_win_free_res(win);
	scif_win_put(win);
	return ret;
}

/**
 * scif_rma_vcopy() - scif_vreadfrom() and scif_vwriteto(), for the API and
 *	the /dev/scif ioctls
 * @ep: the endpoint
 * @addr: first byte of the local memory: a user address of the calling
 *	task if @user, else a kernel address (vmalloc or the linear map); any
 *	alignment
 * @len: bytes
 * @roffset: first byte in the peer's windows
 * @flags: SCIF_RMA_*
 * @to_remote: write to the peer (vwriteto), else read from it
 * @user: @addr is a user address
 *
 * The memory is pinned and DMA mapped for the call (a temporary window the
 * peer never hears of, accessed with the PD's local DMA lkey) and given
 * back once the RMA has completed.
 *
 * Context: process; sleeps.
 * Return: as scif_readfrom(); -EFAULT when the memory is not mapped.
 */
int scif_rma_vcopy(struct scif_endpt *ep, u64 addr, size_t len, off_t roffset,
		   int flags, bool to_remote, bool user)
{
	struct scif_rma_info *rma = &ep->rma;
	struct scif_window *win = NULL;
	u64 base, seq;
	int ret;

	ret = scif_rma_check(ep, flags);
	if (ret)
		return ret;
	if (roffset < 0)
		return -ENXIO;
	if (!len)
		return 0;
	/* Refuse a bad peer range before pinning anything. */
	mutex_lock(&rma->lock);
	if (!scif_win_find(&rma->peer, roffset, len,
			   to_remote ? SCIF_PROT_WRITE : SCIF_PROT_READ, &ret)) {
		mutex_unlock(&rma->lock);
		return ret;
	}
	mutex_unlock(&rma->lock);
	down_read(&ep->res_sem);
	if (ep->qp_dead || !ep->qp) {
		up_read(&ep->res_sem);
		return scif_ep_verify(ep) ?: -ECONNRESET;
	}
	ret = scif_temp_window(ep, addr, len, user, !to_remote, &win, &base);
	if (ret) {
		up_read(&ep->res_sem);
		return ret;
	}
	mutex_lock(&rma->lock);
	/* Signaled: the temporary window is freed once it completes. */
	ret = scif_rma_post(ep, win, base, roffset, len, flags, to_remote, true);
	seq = rma->issued;
	/* Freed by the reaper once what was posted has completed. */
	win->last_seq = seq;
	list_add_tail(&win->reap, &rma->reap_list);
	rma->nreap++;
	mutex_unlock(&rma->lock);
	up_read(&ep->res_sem);
	if (!ret && flags & SCIF_RMA_SYNC)
		ret = scif_rma_wait(ep, seq, false, MAX_SCHEDULE_TIMEOUT);
	scif_rma_reap(ep);
	return ret;
}

/**
 * scif_vreadfrom() - copy from the peer's registered address space into
 *	kernel memory
 * @epd: a connected endpoint
 * @addr: destination: kernel memory (vmalloc or the linear map), any
 *	alignment
 * @len: bytes (0 copies nothing)
 * @roffset: first byte of the source, in the peer's windows (readable)
 * @rma_flags: as scif_readfrom()
 *
 * (SCIF header: scif_vreadfrom.)
 *
 * Context: process; sleeps.
 * Return: as scif_readfrom(); -EFAULT when @addr is not kernel memory.
 */
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		   int rma_flags)
{
	return scif_rma_vcopy(epd, (unsigned long)addr, len, roffset, rma_flags,
			      false, false);
}
EXPORT_SYMBOL_GPL(scif_vreadfrom);

/**
 * scif_vwriteto() - copy kernel memory into the peer's registered address
 *	space
 * @epd: a connected endpoint
 * @addr: source: kernel memory (vmalloc or the linear map), any alignment
 * @len: bytes (0 copies nothing)
 * @roffset: first byte of the destination, in the peer's windows (writable)
 * @rma_flags: as scif_readfrom()
 *
 * (SCIF header: scif_vwriteto.)
 *
 * Context: process; sleeps.
 * Return: as scif_readfrom(); -EFAULT when @addr is not kernel memory.
 */
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		  int rma_flags)
{
	return scif_rma_vcopy(epd, (unsigned long)addr, len, roffset, rma_flags,
			      true, false);
}
EXPORT_SYMBOL_GPL(scif_vwriteto);

/* --- the endpoint's hooks --------------------------------------------------------------- */

/**
 * scif_rma_ep_init() - the RMA part of a new endpoint
 * @ep: the endpoint being allocated
 */
void scif_rma_ep_init(struct scif_endpt *ep)
{
	struct scif_rma_info *rma = &ep->rma;

	/* Offsets are 63 bits; the interval tree keys are unsigned long. */
	BUILD_BUG_ON(sizeof(unsigned long) < sizeof(u64));
	mutex_init(&rma->lock);
	spin_lock_init(&rma->slock);
	rma->self = RB_ROOT_CACHED;
	rma->peer = RB_ROOT_CACHED;
	init_waitqueue_head(&rma->wq);
	INIT_LIST_HEAD(&rma->signals);
	INIT_LIST_HEAD(&rma->reap_list);
	INIT_WORK(&rma->reap_work, scif_rma_reap_work);
	rma->err_cqe.done = scif_rma_err_done;
}

/**
 * scif_rma_ep_disconnected() - the connection is gone: wake RMA waiters
 * @ep: the endpoint
 *
 * Context: any; does not sleep.
 */
void scif_rma_ep_disconnected(struct scif_endpt *ep)
{
	wake_up_all(&ep->rma.wq);
}

/**
 * scif_rma_ep_teardown() - free every window of a connection going away
 * @ep: the endpoint; its QP is drained (every RMA completion has run) and
 *	its control work is stopped; the PD is still there
 *
 * Context: process; the caller holds @ep->res_sem for writing.
 */
void scif_rma_ep_teardown(struct scif_endpt *ep)
{
	struct scif_rma_info *rma = &ep->rma;
	struct interval_tree_node *it;
	struct scif_window *win, *tmp;

	cancel_work_sync(&rma->reap_work);
	mutex_lock(&rma->lock);
	scif_fence_ep_teardown(ep);
	list_for_each_entry_safe(win, tmp, &rma->reap_list, reap)
		scif_win_kill(win);
	while ((it = interval_tree_iter_first(&rma->self, 0, ULONG_MAX)))
		scif_win_kill(container_of(it, struct scif_window, it));
	while ((it = interval_tree_iter_first(&rma->peer, 0, ULONG_MAX)))
		scif_win_kill(container_of(it, struct scif_window, it));
	mutex_unlock(&rma->lock);
	wake_up_all(&rma->wq);
}

/**
 * scif_rma_handle_msg() - a window or fence request of the peer
 * @ep: the endpoint it came on
 * @type: SCIF_MSG_RMA_FIRST .. SCIF_MSG_RMA_LAST
 * @cookie: to answer with
 * @payload: @len bytes
 * @len: bytes
 *
 * Every request is answered with a status.
 *
 * Context: process (the endpoint's control work).
 */
void scif_rma_handle_msg(struct scif_endpt *ep, u16 type, u64 cookie,
			 const void *payload, u32 len)
{
	int ret;

	switch (type) {
	case SCIF_MSG_REGISTER:
		ret = scif_recv_register(ep, payload, len);
		break;
	case SCIF_MSG_UNREGISTER:
		ret = scif_recv_unregister(ep, payload, len);
		break;
	case SCIF_MSG_FENCE_MARK:
	case SCIF_MSG_FENCE_WAIT:
	case SCIF_MSG_FENCE_SIGNAL:
		scif_fence_handle_msg(ep, type, cookie, payload, len);
		return;
	default:
		ret = -EOPNOTSUPP;
	}
	scif_msg_reply(ep, cookie, ret, NULL, 0);
}
