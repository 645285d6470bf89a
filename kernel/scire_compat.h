/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire: what differs between the kernels scire builds for (Debian
 * bookworm's 6.1 and 6.12), in one place. The code is written against the
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
#include <net/inet_sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* 6.12 moved the unaligned accessors to <linux/unaligned.h>. */
#ifdef SCIRE_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
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

#endif /* SCIRE_COMPAT_H */
