// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire: the tracepoints of scire_trace.h, instantiated once.
 *
 * Copyright (c) 2026 The scire authors.
 */
#define CREATE_TRACE_POINTS
#include "scire_trace.h"
