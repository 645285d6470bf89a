// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_dmabuf -d DEV [-g GIDIDX] [-c CHECK] [-v]
 *
 * dma-buf MRs (ibv_reg_dmabuf_mr(3)) over a buffer exported by udmabuf: a
 * memfd's pages turned into a dma-buf by /dev/udmabuf, which a machine
 * without a GPU has (pyverbs' own dma-buf tests need an amdgpu or i915
 * render node). The memfd stays mapped in the test, so what the MR holds
 * is read and written without going through RDMA. Every check is named
 * and fails saying what differed:
 *
 *   reg         a range past the buffer's end, a descriptor that is no
 *               dma-buf (the memfd itself) and remote write without local
 *               write are refused (EINVAL), a closed descriptor too
 *               (EBADF)
 *   length      the MR reports the length registered
 *   write       RDMA WRITE into the dma-buf MR (at an iova whose page
 *               offset is the buffer offset's) lands at that buffer offset
 *               and nowhere else; past the MR's end: remote access error,
 *               nothing written
 *   read        RDMA READ from the dma-buf MR returns the buffer's bytes
 *   local-sge   the dma-buf MR as the local SGE of an RDMA WRITE and as
 *               the target of a READ
 *   fd-closed   with the dma-buf's descriptor closed, the MR goes on
 *               working (it holds the buffer); deregistration ends it
 *
 * Exit 77 (skip) where the kernel has no /dev/udmabuf (bookworm's 6.1:
 * CONFIG_UDMABUF is off), or a udmabuf without vmap (6.1's, in the debug
 * kernel): scire maps the buffer for the CPU, and such an exporter's
 * buffers are refused with EOPNOTSUPP.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>

#include "scire_rc.h"

#define BUFLEN	(64 * 1024)
#define MROFF	(8192 + 256)	/* where in the buffer the MR starts */
#define MRLEN	(32 * 1024)
#define IOVA	0x7f0000000100ULL	/* page offset 256, as MROFF's */
#define RACC	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static uint8_t *buf;		/* the memfd's pages, as the MR sees them */
static uint8_t snap[BUFLEN];	/* what they should hold */

/* A dma-buf of BUFLEN bytes over a sealed memfd mapped at buf. */
static int dmabuf_new(int *memfd_out)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = BUFLEN };
	int dev, memfd, fd;

	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0) {
		if (errno == ENOENT)
			t_skip("no /dev/udmabuf: this kernel is built without CONFIG_UDMABUF");
		t_fatal("open /dev/udmabuf: %s", t_errname(errno));
	}
	memfd = memfd_create("scire_dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		t_fatal("memfd_create: %s", t_errname(errno));
	if (ftruncate(memfd, BUFLEN))
		t_fatal("ftruncate of the memfd: %s", t_errname(errno));
	/* udmabuf takes only a memfd that can no longer shrink. */
	if (fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		t_fatal("F_SEAL_SHRINK on the memfd: %s", t_errname(errno));
	buf = mmap(NULL, BUFLEN, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (buf == MAP_FAILED)
		t_fatal("mmap of the memfd: %s", t_errname(errno));
	create.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &create);
	if (fd < 0)
		t_fatal("UDMABUF_CREATE of %d bytes: %s", BUFLEN, t_errname(errno));
	close(dev);
	*memfd_out = memfd;
	return fd;
}

static void buf_fill(void)
{
	t_rand_fill(snap, BUFLEN);
	memcpy(buf, snap, BUFLEN);
}

/* Does the buffer hold snap? */
static void buf_check(const char *check, const char *what)
{
	size_t i, first = 0, diff = 0;

	for (i = 0; i < BUFLEN; i++) {
		if (buf[i] != snap[i] && !diff++)
			first = i;
	}
	if (diff)
		t_fail("%s: %s: %zu buffer bytes differ from what they should be, the first at offset %zu",
		       check, what, diff, first);
}

static void expect_refused(const char *check, const char *what, struct ibv_mr *mr, int expect)
{
	if (mr) {
		t_fail("%s: %s: registered, expected %s", check, what, t_errname(expect));
		ibv_dereg_mr(mr);
	} else if (errno != expect) {
		t_fail("%s: %s: %s, expected %s", check, what, t_errname(errno),
		       t_errname(expect));
	}
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct t_rc_opts opt;
	struct t_path path;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	int fd, memfd, ret;

	ctx = t_rc_start("scire_dmabuf", argc, argv, 1, &opt, &path);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		t_fatal("alloc_pd: %s", t_errname(errno));
	fd = dmabuf_new(&memfd);

	CHECK("reg") {
		int closed = dup(fd);

		close(closed);
		expect_refused("reg", "a range 4096 bytes past the buffer's end",
			       ibv_reg_dmabuf_mr(pd, BUFLEN - 4096, 8192, 0, fd, RACC), EINVAL);
		expect_refused("reg", "the memfd, which is no dma-buf",
			       ibv_reg_dmabuf_mr(pd, 0, 4096, 0, memfd, RACC), EINVAL);
		expect_refused("reg", "a closed descriptor",
			       ibv_reg_dmabuf_mr(pd, 0, 4096, 0, closed, RACC), EBADF);
		expect_refused("reg", "remote write without local write",
			       ibv_reg_dmabuf_mr(pd, 0, 4096, 0, fd, IBV_ACCESS_REMOTE_WRITE),
			       EINVAL);
	}

	mr = ibv_reg_dmabuf_mr(pd, MROFF, MRLEN, IOVA, fd, RACC);
	if (!mr && errno == EOPNOTSUPP)
		t_skip("this kernel's udmabuf gives no kernel mapping (vmap), which scire imports through");
	if (!mr)
		t_fatal("reg_dmabuf_mr of %d bytes at buffer offset %d: %s", MRLEN, MROFF,
			t_errname(errno));
	CHECK("length") {
		if (mr->length != MRLEN)
			t_fail("length: the MR reports %zu bytes, registered %d", mr->length, MRLEN);
	}

	CHECK("write") {
		struct t_rc_pair p;

		buf_fill();
		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(p.lbuf, 4096);
		/* Straddles a page of the buffer. */
		t_rc_rdma(&p, "write", 1, (uintptr_t)p.lbuf, p.lmr->lkey, IOVA + 7000, mr->rkey,
			  3000, IBV_WC_SUCCESS);
		memcpy(snap + MROFF + 7000, p.lbuf, 3000);
		buf_check("write", "after a WRITE at MR offset 7000");
		t_rc_pair_free(&p);
		t_rc_pair_new(&p, pd, &path);
		t_rc_rdma(&p, "write", 1, (uintptr_t)p.lbuf, p.lmr->lkey, IOVA + MRLEN - 100,
			  mr->rkey, 200, IBV_WC_REM_ACCESS_ERR);
		t_rc_pair_free(&p);
		buf_check("write", "after a WRITE past the MR's end");
	}
	CHECK("read") {
		struct t_rc_pair p;

		buf_fill();
		t_rc_pair_new(&p, pd, &path);
		t_rc_rdma(&p, "read", 0, (uintptr_t)p.lbuf, p.lmr->lkey, IOVA + 1000, mr->rkey,
			  4000, IBV_WC_SUCCESS);
		if (memcmp(p.lbuf, snap + MROFF + 1000, 4000))
			t_fail("read: READ from MR offset 1000 returned other bytes than the buffer holds");
		t_rc_pair_free(&p);
		buf_check("read", "after the READ");
	}
	CHECK("local-sge") {
		static uint8_t peer[4096];
		struct ibv_mr *pmr;
		struct t_rc_pair p;

		pmr = t_reg_mr(pd, peer, sizeof(peer), RACC, "local-sge");
		buf_fill();
		t_rc_pair_new(&p, pd, &path);
		/* MR offset 8000 -> the peer buffer. */
		t_rc_rdma(&p, "local-sge", 1, IOVA + 8000, mr->lkey, (uintptr_t)peer, pmr->rkey,
			  2048, IBV_WC_SUCCESS);
		if (memcmp(peer, snap + MROFF + 8000, 2048))
			t_fail("local-sge: the WRITE from MR offset 8000 delivered other bytes than the buffer holds");
		/* The peer buffer -> MR offset 12000, by READ. */
		t_rand_fill(peer, sizeof(peer));
		t_rc_rdma(&p, "local-sge", 0, IOVA + 12000, mr->lkey, (uintptr_t)peer, pmr->rkey,
			  4096, IBV_WC_SUCCESS);
		memcpy(snap + MROFF + 12000, peer, 4096);
		t_rc_pair_free(&p);
		buf_check("local-sge", "after the WRITE from it and the READ into it");
		if ((ret = ibv_dereg_mr(pmr)))
			t_fatal("local-sge: dereg_mr of the peer buffer: %s", t_errname(ret));
	}
	CHECK("fd-closed") {
		struct t_rc_pair p;

		close(fd);
		close(memfd);
		fd = memfd = -1;
		buf_fill();
		t_rc_pair_new(&p, pd, &path);
		t_rand_fill(p.lbuf, 4096);
		t_rc_rdma(&p, "fd-closed", 1, (uintptr_t)p.lbuf, p.lmr->lkey, IOVA, mr->rkey,
			  4096, IBV_WC_SUCCESS);
		memcpy(snap + MROFF, p.lbuf, 4096);
		t_rc_pair_free(&p);
		buf_check("fd-closed", "after a WRITE with the dma-buf's descriptor closed");
	}

	if ((ret = ibv_dereg_mr(mr)))
		t_fail("dereg_mr of the dma-buf MR: %s", t_errname(ret));
	if (fd >= 0)
		close(fd);
	if (memfd >= 0)
		close(memfd);
	munmap(buf, BUFLEN);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return t_checks_done(opt.dev);
}
