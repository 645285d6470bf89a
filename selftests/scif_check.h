/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The check and die helpers of scire's SCIF test programs (scif_user,
 * scif_mmap, scif_mpss_abi): one TAP-style line per check, "ok WHO: ..."
 * or "not ok WHO: ... (errno N text)", counted in checks and failures.
 * The including program sets who ("client", "server", ...) before it
 * checks anything. Include before <scif_prog.h>, whose helpers call die().
 */
#ifndef SCIF_CHECK_H
#define SCIF_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;
static const char *who = "client";

/*
 * Count one check; print it, with errno as the call left it when it
 * failed. errno is the same afterwards, for a caller that looks again.
 */
static void __attribute__((format(printf, 2, 3))) check(int ok, const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s%s: ", ok ? "ok " : "not ok ", who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok)
		printf(" (errno %d %s)", err, strerror(err));
	printf("\n");
	fflush(stdout);
	errno = err;
}

/* A step the rest depends on failed: say what, with errno, and exit 1. */
static void die(const char *what)
{
	printf("not ok %s: %s: %s\n", who, what, strerror(errno));
	exit(1);
}

#endif
