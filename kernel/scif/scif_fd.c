// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_scif: /dev/scif, the SCIF user ABI.
 *
 * One open file is one endpoint, created in the opener's network
 * namespace (its node). The ioctls are those of the kernel's uapi header
 * <linux/scif_ioctl.h> (type 's', numbers 1-17, the MPSS 4 / Linux 4.4-5.9
 * ABI that libscif speaks): each one is the kernel API call of the same
 * name, with user buffers copied or, for windows and v* RMA, pinned.
 *
 * The header declares widths that the libraries calling it do not all
 * keep: SCIF_BIND's argument is declared a __u64, but MPSS 4's libscif
 * passes the address of a uint16_t and MPSS 3's that of an int. Each
 * ioctl reads and writes back no more than the narrowest caller owns;
 * man/man7/scif.7 (The ioctl ABI) has the table, which this file follows.
 *
 * Accepting takes two calls, as in that ABI: SCIF_ACCEPTREQ on the
 * listening file accepts a connection and returns a token in
 * scifioctl_accept.endpt; SCIF_ACCEPTREG with that token on a freshly
 * opened file makes the accepted endpoint that file's (its own unused
 * endpoint is closed). Upstream handed out the endpoint's kernel address
 * as the token; here it is a small number from an xarray, valid only for
 * a task sharing the accepting task's address space, and the accepted
 * endpoints not claimed when the listening file is closed are closed with
 * it.
 *
 * mmap() maps the peer's windows (scif_mmap()) when the peer endpoint is
 * in this kernel (scif_mmap.c); a window of another host is memory the CPU
 * cannot reach, so there mmap() fails (ENODEV) and programs use
 * scif_readfrom()/scif_writeto() instead. A mapping that starts at
 * SCIRE_SCIF_RX_RING_OFFSET is always scire's own receive ring, for
 * libscif's scif_recv() (struct scire_scif_rx_ring), even where a peer
 * window covers that offset.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "scif_main.h"

/* Bytes of a scif_send()/scif_recv() moved through the kernel at a time. */
#define SCIF_FD_CHUNK	(16 * 1024)
/* Bytes of a message small enough to move through the stack instead. */
#define SCIF_FD_SMALL	64

/**
 * struct scif_file - what an open /dev/scif holds
 * @lock: guards @ep (SCIF_ACCEPTREG replaces it) and @accepted
 * @ep: the file's endpoint; calls take a reference while they run
 * @accepted: endpoints this (listening) file accepted whose token was not
 *	yet claimed with SCIF_ACCEPTREG, struct scif_accepted
 */
struct scif_file {
	struct mutex lock;	/* see above */
	struct scif_endpt *ep;
	struct list_head accepted;
};

/**
 * struct scif_accepted - an accepted endpoint waiting for SCIF_ACCEPTREG
 * @ep: the endpoint (its owner reference)
 * @mm: the accepting task's mm (mmgrab()ed, so no other mm gets its address
 *	while the token is compared with it)
 * @token: its index in scif_tokens
 * @owner: the listening file's state
 * @entry: on @owner->accepted
 */
struct scif_accepted {
	struct scif_endpt *ep;
	struct mm_struct *mm;
	u32 token;
	struct scif_file *owner;
	struct list_head entry;
};

/* Tokens of SCIF_ACCEPTREQ -> struct scif_accepted. */
static DEFINE_XARRAY_ALLOC1(scif_tokens);
/* Serializes claiming a token against its owner's release. */
static DEFINE_MUTEX(scif_tokens_lock);

static void scif_accepted_free(struct scif_accepted *acc)
{
	if (acc->mm)
		mmdrop(acc->mm);
	kfree(acc);
}

static struct scif_endpt *scif_file_ep(struct scif_file *sf)
{
	struct scif_endpt *ep;

	mutex_lock(&sf->lock);
	ep = sf->ep;
	scif_ep_get(ep);
	mutex_unlock(&sf->lock);
	return ep;
}

static int scif_fd_open(struct inode *inode, struct file *file)
{
	struct scif_file *sf;

	sf = kzalloc(sizeof(*sf), GFP_KERNEL_ACCOUNT);
	if (!sf)
		return -ENOMEM;
	sf->ep = scif_open();
	if (!sf->ep) {
		kfree(sf);
		return -ENOMEM;
	}
	mutex_init(&sf->lock);
	INIT_LIST_HEAD(&sf->accepted);
	file->private_data = sf;
	return nonseekable_open(inode, file);
}

static int scif_fd_release(struct inode *inode, struct file *file)
{
	struct scif_file *sf = file->private_data;
	struct scif_accepted *acc, *next;
	LIST_HEAD(unclaimed);

	mutex_lock(&scif_tokens_lock);
	mutex_lock(&sf->lock);
	list_for_each_entry_safe(acc, next, &sf->accepted, entry) {
		xa_erase(&scif_tokens, acc->token);
		list_move(&acc->entry, &unclaimed);
	}
	mutex_unlock(&sf->lock);
	mutex_unlock(&scif_tokens_lock);

	list_for_each_entry_safe(acc, next, &unclaimed, entry) {
		scif_close(acc->ep);
		scif_accepted_free(acc);
	}
	scif_close(sf->ep);
	kfree(sf);
	return 0;
}

static __poll_t scif_fd_poll(struct file *file, poll_table *wait)
{
	struct scif_endpt *ep = scif_file_ep(file->private_data);
	__poll_t mask;

	mask = scif_ep_poll(ep, file, wait);
	scif_ep_put(ep);
	return mask;
}

/* SCIF_ACCEPTREQ: accept on the listening endpoint, hand out a token. */
static long scif_fd_acceptreq(struct scif_file *sf, struct scif_endpt *ep,
			      struct scifioctl_accept __user *uarg)
{
	struct scifioctl_accept req;
	struct scif_accepted *acc;
	scif_epd_t nep;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	acc = kzalloc(sizeof(*acc), GFP_KERNEL);
	if (!acc)
		return -ENOMEM;
	ret = scif_accept(ep, &req.peer, &nep, req.flags);
	if (ret) {
		kfree(acc);
		return ret;
	}
	acc->ep = nep;
	acc->mm = current->mm;
	mmgrab(acc->mm);
	acc->owner = sf;
	mutex_lock(&scif_tokens_lock);
	ret = xa_alloc(&scif_tokens, &acc->token, acc, xa_limit_31b, GFP_KERNEL);
	if (!ret) {
		mutex_lock(&sf->lock);
		list_add_tail(&acc->entry, &sf->accepted);
		mutex_unlock(&sf->lock);
	}
	mutex_unlock(&scif_tokens_lock);
	if (ret)
		goto err_close;
	req.endpt = acc->token;
	if (!copy_to_user(uarg, &req, sizeof(req)))
		return 0;

	/* Nobody learnt the token, unless another thread guessed it. */
	mutex_lock(&scif_tokens_lock);
	if (xa_load(&scif_tokens, req.endpt) != acc) {
		mutex_unlock(&scif_tokens_lock);
		return -EFAULT;
	}
	xa_erase(&scif_tokens, acc->token);
	mutex_lock(&sf->lock);
	list_del(&acc->entry);
	mutex_unlock(&sf->lock);
	mutex_unlock(&scif_tokens_lock);
	ret = -EFAULT;

err_close:
	scif_close(nep);
	scif_accepted_free(acc);
	return ret;
}

/* SCIF_ACCEPTREG: this fresh file becomes the accepted endpoint's. */
static long scif_fd_acceptreg(struct scif_file *sf, u64 __user *uarg)
{
	struct scif_endpt *old;
	struct scif_accepted *acc;
	u64 token;

	if (get_user(token, uarg))
		return -EFAULT;
	if (token > U32_MAX)
		return -EINVAL;
	mutex_lock(&scif_tokens_lock);
	acc = xa_load(&scif_tokens, token);
	if (!acc || acc->mm != current->mm) {
		mutex_unlock(&scif_tokens_lock);
		return -EINVAL;
	}
	mutex_lock(&sf->lock);
	if (READ_ONCE(sf->ep->state) != SCIFEP_UNBOUND) {
		/* Only a file that has done nothing yet may take it. */
		mutex_unlock(&sf->lock);
		mutex_unlock(&scif_tokens_lock);
		return -EINVAL;
	}
	xa_erase(&scif_tokens, acc->token);
	/*
	 * The listening file's lock inside this file's: two files, and
	 * scif_tokens_lock keeps any other pair from nesting meanwhile.
	 */
	mutex_lock_nested(&acc->owner->lock, SINGLE_DEPTH_NESTING);
	list_del(&acc->entry);
	mutex_unlock(&acc->owner->lock);
	old = sf->ep;
	sf->ep = acc->ep;
	mutex_unlock(&sf->lock);
	mutex_unlock(&scif_tokens_lock);

	scif_accepted_free(acc);
	scif_close(old);
	return 0;
}

/*
 * SCIF_SEND and SCIF_RECV: the message moves through a kernel buffer of at
 * most SCIF_FD_CHUNK bytes, chunk by chunk. A short chunk ends the call;
 * bytes that moved count even if a later chunk fails. A received chunk is
 * consumed from the stream before it is copied out: a bad user buffer loses
 * it, as a read() into one would. A small message (the common case of a
 * request/response protocol) uses a buffer on the stack: an allocation and
 * a free were a measurable part of an 8-byte round trip.
 */
static long scif_fd_msg(struct scif_endpt *ep, struct scifioctl_msg __user *uarg,
			bool send)
{
	int block = send ? SCIF_SEND_BLOCK : SCIF_RECV_BLOCK;
	struct scifioctl_msg req;
	int done = 0, chunk, ret = 0;
	u8 small[SCIF_FD_SMALL];
	void __user *ubuf;
	void *buf;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.len < 0 || req.flags & ~block)
		return -EINVAL;
	ubuf = u64_to_user_ptr(req.msg);
	if (req.len <= SCIF_FD_SMALL)
		buf = small;
	else
		buf = kmalloc(min_t(int, req.len, SCIF_FD_CHUNK), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (done < req.len) {
		chunk = min_t(int, req.len - done, SCIF_FD_CHUNK);
		if (send && copy_from_user(buf, ubuf + done, chunk)) {
			ret = -EFAULT;
			break;
		}
		ret = send ? scif_send(ep, buf, chunk, req.flags) :
			     scif_recv(ep, buf, chunk, req.flags);
		if (ret <= 0)
			break;
		if (!send && copy_to_user(ubuf + done, buf, ret)) {
			ret = -EFAULT;
			break;
		}
		done += ret;
		if (ret < chunk)
			break;
	}
	if (!req.len)
		ret = send ? scif_send(ep, buf, 0, req.flags) :
			     scif_recv(ep, buf, 0, req.flags);
	if (buf != small)
		kfree(buf);
	if (done)
		ret = done;
	if (ret < 0)
		return ret;
	if (put_user(ret, &uarg->out_len))
		return -EFAULT;
	return 0;
}

static long scif_fd_reg(struct scif_endpt *ep, struct scifioctl_reg __user *uarg)
{
	struct scifioctl_reg req;
	off_t off;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	/*
	 * User space names its own memory only; without SCIF_MAP_KERNEL,
	 * scif_register() takes @addr as an address of current's mm.
	 */
	if (req.flags & SCIF_MAP_KERNEL)
		return -EINVAL;
	off = scif_register(ep, (void *)(uintptr_t)req.addr, req.len, req.offset,
			    req.prot, req.flags);
	if (off < 0)
		return off;
	if (put_user(off, &uarg->out_offset)) {
		scif_unregister(ep, off, req.len);
		return -EFAULT;
	}
	return 0;
}

static long scif_fd_copy(struct scif_endpt *ep, unsigned int cmd,
			 struct scifioctl_copy __user *uarg)
{
	struct scifioctl_copy req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	switch (cmd) {
	case SCIF_READFROM:
		return scif_readfrom(ep, req.loffset, req.len, req.roffset, req.flags);
	case SCIF_WRITETO:
		return scif_writeto(ep, req.loffset, req.len, req.roffset, req.flags);
	case SCIF_VREADFROM:
		return scif_rma_vcopy(ep, req.addr, req.len, req.roffset, req.flags,
				      false, true);
	default:
		return scif_rma_vcopy(ep, req.addr, req.len, req.roffset, req.flags,
				      true, true);
	}
}

static long scif_fd_node_ids(struct scifioctl_node_ids __user *uarg)
{
	struct scifioctl_node_ids req;
	u16 self, *nodes;
	int ret, n;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.len < 0)
		return -EINVAL;
	n = min_t(int, req.len, SCIF_MAX_NODE + 1);
	nodes = kcalloc(n ?: 1, sizeof(*nodes), GFP_KERNEL);
	if (!nodes)
		return -ENOMEM;
	ret = scif_get_node_ids(nodes, n, &self);
	if (ret >= 0 &&
	    (copy_to_user(u64_to_user_ptr(req.nodes), nodes,
			  min(ret, n) * sizeof(*nodes)) ||
	     put_user(self, (u16 __user *)u64_to_user_ptr(req.self)) ||
	     put_user(ret, &uarg->len)))
		ret = -EFAULT;
	kfree(nodes);
	return ret < 0 ? ret : 0;
}

static long scif_fd_fence_mark(struct scif_endpt *ep,
			       struct scifioctl_fence_mark __user *uarg)
{
	struct scifioctl_fence_mark req;
	int mark, ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = scif_fence_mark(ep, req.flags, &mark);
	if (ret)
		return ret;
	if (put_user(mark, (int __user *)u64_to_user_ptr(req.mark)))
		return -EFAULT;
	return 0;
}

static long scif_fd_fence_signal(struct scif_endpt *ep,
				 struct scifioctl_fence_signal __user *uarg)
{
	struct scifioctl_fence_signal req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return scif_fence_signal(ep, req.loff, req.lval, req.roff, req.rval,
				 req.flags);
}

static long scif_fd_connect(struct scif_endpt *ep,
			    struct scifioctl_connect __user *uarg)
{
	struct scifioctl_connect req;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = scif_connect(ep, &req.peer);
	if (ret < 0)
		return ret;
	req.self = ep->port;
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/*
 * SCIF_BIND: @uport points at the port. Only its first two bytes are
 * every caller's (MPSS 4's libscif passes a uint16_t; MPSS 3's an int and
 * scire's a __u64, their upper bytes zeroed, which on a little-endian CPU
 * puts the port in those two bytes): the port is read from them, the
 * bound port written back into them, and nothing beyond is touched. The
 * endpoint stays bound if the write-back faults, as upstream's did.
 */
static long scif_fd_bind(struct scif_endpt *ep, u16 __user *uport)
{
	u16 port;
	int ret;

	if (get_user(port, uport))
		return -EFAULT;
	ret = scif_bind(ep, port);
	if (ret < 0)
		return ret;
	port = ret;
	if (put_user(port, uport))
		return -EFAULT;
	return 0;
}

/* --- the mapped receive ring ------------------------------------------------ */

static void scif_rx_vma_open(struct vm_area_struct *vma)
{
	struct scif_endpt *ep = vma->vm_private_data;

	/* mremap() moving it: fork() does not copy it (VM_DONTCOPY). */
	scif_ep_get(ep);
	spin_lock_bh(&ep->slock);
	ep->rx_maps++;
	spin_unlock_bh(&ep->slock);
}

/* A mapping of @ep's ring went (or never came): the last frees the lock. */
static void scif_rx_map_put(struct scif_endpt *ep)
{
	spin_lock_bh(&ep->slock);
	if (!--ep->rx_maps) {
		ep->rx_mm = NULL;
		/*
		 * A reader killed while it held the lock took the mapping with
		 * it (nothing else maps it): the readers left are the kernel's.
		 */
		cmpxchg(&ep->rx_ctl->lock, SCIRE_SCIF_RX_LOCK_USER, 0);
	}
	spin_unlock_bh(&ep->slock);
}

static void scif_rx_vma_close(struct vm_area_struct *vma)
{
	struct scif_endpt *ep = vma->vm_private_data;

	scif_rx_map_put(ep);
	scif_ep_put(ep);
}

/* The reader lock is per mapping; half of one would not know it. */
static int scif_rx_vma_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static const struct vm_operations_struct scif_rx_vm_ops = {
	.open = scif_rx_vma_open,
	.close = scif_rx_vma_close,
	.may_split = scif_rx_vma_may_split,
};

/*
 * mmap(): a range of the peer's windows (scif_mmap_peer()), or, for a
 * mapping that starts at SCIRE_SCIF_RX_RING_OFFSET, the receive ring of a
 * connected endpoint, shared, for one process at a time (see
 * include/uapi/rdma/scire-scif-abi.h). For the ring: EINVAL for another
 * length than SCIRE_SCIF_RX_MAP_LEN or a private or executable mapping;
 * ENOTCONN before the connection; EBUSY while another process maps it.
 */
static int scif_fd_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct scif_endpt *ep;
	int ret = 0;

	if (vma->vm_pgoff != SCIRE_SCIF_RX_RING_OFFSET >> PAGE_SHIFT) {
		ep = scif_file_ep(file->private_data);
		ret = scif_mmap_peer(ep, vma);
		scif_ep_put(ep);
		return ret;
	}
	if (vma->vm_end - vma->vm_start != PAGE_ALIGN(SCIRE_SCIF_RX_MAP_LEN) ||
	    !(vma->vm_flags & VM_SHARED) || vma->vm_flags & VM_EXEC)
		return -EINVAL;
	ep = scif_file_ep(file->private_data);
	spin_lock_bh(&ep->slock);
	if (!ep->rx_ctl || (ep->state != SCIFEP_CONNECTED &&
			    ep->state != SCIFEP_DISCONNECTED))
		ret = -ENOTCONN;
	else if (ep->rx_maps && ep->rx_mm != current->mm)
		ret = -EBUSY;
	else
		ep->rx_maps++;
	if (!ret)
		ep->rx_mm = current->mm;
	spin_unlock_bh(&ep->slock);
	if (ret)
		goto err_put;
	ret = scire_vmalloc_insert_pages(vma, ep->rx_ctl);
	if (ret) {
		scif_rx_map_put(ep);
		goto err_put;
	}
	vm_flags_set(vma, VM_DONTCOPY);
	vm_flags_clear(vma, VM_MAYEXEC);
	/* The mapping keeps the reference scif_file_ep() took. */
	vma->vm_private_data = ep;
	vma->vm_ops = &scif_rx_vm_ops;
	return 0;

err_put:
	scif_ep_put(ep);
	return ret;
}

static long scif_fd_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct scif_file *sf = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct scif_endpt *ep;
	struct scifioctl_unreg unreg;
	long ret;

	if (cmd == SCIF_ACCEPTREG)
		return scif_fd_acceptreg(sf, uarg);
	if (cmd == SCIF_GET_NODEIDS)
		return scif_fd_node_ids(uarg);

	ep = scif_file_ep(sf);
	switch (cmd) {
	case SCIF_BIND:
		ret = scif_fd_bind(ep, uarg);
		break;
	case SCIF_LISTEN:
		/* The backlog is the argument itself, not a pointer. */
		ret = scif_listen(ep, (int)arg);
		break;
	case SCIF_CONNECT:
		ret = scif_fd_connect(ep, uarg);
		break;
	case SCIF_ACCEPTREQ:
		ret = scif_fd_acceptreq(sf, ep, uarg);
		break;
	case SCIF_SEND:
	case SCIF_RECV:
		ret = scif_fd_msg(ep, uarg, cmd == SCIF_SEND);
		break;
	case SCIF_REG:
		ret = scif_fd_reg(ep, uarg);
		break;
	case SCIF_UNREG:
		if (copy_from_user(&unreg, uarg, sizeof(unreg)))
			ret = -EFAULT;
		else
			ret = scif_unregister(ep, unreg.offset, unreg.len);
		break;
	case SCIF_READFROM:
	case SCIF_WRITETO:
	case SCIF_VREADFROM:
	case SCIF_VWRITETO:
		ret = scif_fd_copy(ep, cmd, uarg);
		break;
	case SCIF_FENCE_MARK:
		ret = scif_fd_fence_mark(ep, uarg);
		break;
	case SCIF_FENCE_WAIT:
		/* The mark is the argument itself, not a pointer. */
		ret = scif_fence_wait(ep, (int)arg);
		break;
	case SCIF_FENCE_SIGNAL:
		ret = scif_fd_fence_signal(ep, uarg);
		break;
	case SCIRE_SCIF_RX_RELEASE:
		ret = scif_stream_release(ep);
		break;
	default:
		ret = -ENOTTY;
	}
	scif_ep_put(ep);
	return ret;
}

static const struct file_operations scif_fops = {
	.owner = THIS_MODULE,
	.open = scif_fd_open,
	.release = scif_fd_release,
	.poll = scif_fd_poll,
	.unlocked_ioctl = scif_fd_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = scif_fd_mmap,
};

static struct miscdevice scif_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "scif",
	.fops = &scif_fops,
	.mode = 0666,
};

/**
 * scif_fd_init() - create /dev/scif
 *
 * Context: module init.
 * Return: 0 or the errno of misc_register().
 */
int scif_fd_init(void)
{
	return misc_register(&scif_misc);
}

/**
 * scif_fd_exit() - remove /dev/scif
 *
 * No file can be open: each holds a reference on the module.
 *
 * Context: module exit.
 */
void scif_fd_exit(void)
{
	misc_deregister(&scif_misc);
	WARN_ON(!xa_empty(&scif_tokens));
}
