/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The check macros of the provider's unit tests (scire_*_test.c): each
 * failed check is printed with where and what, counted, and the test's
 * exit status comes from unit_result(). Not part of libscire.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_UNIT_H
#define SCIRE_UNIT_H

#include <inttypes.h>
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			failures++;					\
			printf("FAIL %s:%d: %s: ", __func__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

#define CHECK_EQ(got, want)						\
	CHECK((uint64_t)(got) == (uint64_t)(want),			\
	      "got 0x%" PRIx64 ", want 0x%" PRIx64,			\
	      (uint64_t)(got), (uint64_t)(want))

/* main()'s return value: 1 if any check failed, else 0 saying @what passed. */
static inline int unit_result(const char *what)
{
	if (failures) {
		printf("%d check(s) failed\n", failures);
		return 1;
	}
	printf("all %s checks passed\n", what);
	return 0;
}

#endif /* SCIRE_UNIT_H */
