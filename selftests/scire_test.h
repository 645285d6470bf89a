/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire selftests: small helpers shared by the C test programs. Each test
 * sets up, checks one area, says exactly what differed, and exits with
 * T_EXIT_PASS (0), T_EXIT_SKIP (77) or T_EXIT_FAIL (1).
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_TEST_H
#define SCIRE_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

enum {
	T_EXIT_PASS = 0,
	T_EXIT_FAIL = 1,
	T_EXIT_SKIP = 77,
};

static const char *t_name = "test";

/* "FAIL: <test>: <message>" on stderr. */
static inline void t_vreport_fail(const char *fmt, va_list ap)
{
	fprintf(stderr, "FAIL: %s: ", t_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Stop the test: a step it depends on failed. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) t_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_vreport_fail(fmt, ap);
	va_end(ap);
	exit(T_EXIT_FAIL);
}

static inline void __attribute__((noreturn, format(printf, 1, 2))) t_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: %s: ", t_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(T_EXIT_SKIP);
}

/* Record a failed check and carry on: later checks still say what they saw. */
static int t_failures;

static inline void __attribute__((format(printf, 1, 2))) t_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t_vreport_fail(fmt, ap);
	va_end(ap);
	t_failures++;
}

static inline const char *t_errname(int err)
{
	static char buf[48];

	switch (err) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EIO: return "EIO";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPROTO: return "EPROTO";
	case ENOENT: return "ENOENT";
	case EAGAIN: return "EAGAIN";
	default:
		snprintf(buf, sizeof(buf), "errno %d (%s)", err, strerror(err));
		return buf;
	}
}

/*
 * Open the RDMA device called name. A device that exists in the kernel but
 * has no user-space provider is invisible to libibverbs, so say where the
 * provider comes from when the name is not found.
 */
static inline struct ibv_context *t_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	char seen[512] = "";
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		t_fatal("ibv_get_device_list: %s", t_errname(errno));
	for (i = 0; i < n; i++) {
		const char *dn = ibv_get_device_name(list[i]);

		if (!strcmp(dn, name)) {
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				t_fatal("ibv_open_device(%s): %s", name, t_errname(errno));
			break;
		}
		strncat(seen, " ", sizeof(seen) - strlen(seen) - 1);
		strncat(seen, dn, sizeof(seen) - strlen(seen) - 1);
	}
	ibv_free_device_list(list);
	if (!ctx)
		t_fatal("no verbs device '%s' (libibverbs sees:%s); is libscire installed or RDMAV_DRIVERS=<build>/providers/scire/libscire set? IBV_SHOW_WARNINGS=1 tells more",
			name, n ? seen : " nothing");
	return ctx;
}

/*
 * Parse the "-d DEV" command line of a test that takes nothing else, name
 * the test, and open DEV; *devp is set to DEV (argv memory).
 */
static inline struct ibv_context *t_open_from_args(const char *name, int argc,
						   char **argv,
						   const char **devp)
{
	const char *dev = NULL;
	int c;

	t_name = name;
	while ((c = getopt(argc, argv, "d:")) != -1) {
		if (c != 'd')
			exit(T_EXIT_FAIL);
		dev = optarg;
	}
	if (!dev) {
		fprintf(stderr, "usage: %s -d DEV\n", argv[0]);
		exit(T_EXIT_FAIL);
	}
	*devp = dev;
	return t_open_device(dev);
}

static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* SCIRE_TEST_H */
