/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * scire selftests: async event names and a bounded wait on the async fd.
 *
 * Copyright (c) 2026 The scire authors.
 */
#ifndef SCIRE_EVENTS_H
#define SCIRE_EVENTS_H

#include <fcntl.h>
#include <poll.h>

#include "scire_test.h"

static const struct {
	const char *name;
	enum ibv_event_type type;
} t_events[] = {
	{ "CQ_ERR", IBV_EVENT_CQ_ERR },
	{ "QP_FATAL", IBV_EVENT_QP_FATAL },
	{ "QP_REQ_ERR", IBV_EVENT_QP_REQ_ERR },
	{ "QP_ACCESS_ERR", IBV_EVENT_QP_ACCESS_ERR },
	{ "COMM_EST", IBV_EVENT_COMM_EST },
	{ "SQ_DRAINED", IBV_EVENT_SQ_DRAINED },
	{ "PATH_MIG", IBV_EVENT_PATH_MIG },
	{ "PATH_MIG_ERR", IBV_EVENT_PATH_MIG_ERR },
	{ "DEVICE_FATAL", IBV_EVENT_DEVICE_FATAL },
	{ "PORT_ACTIVE", IBV_EVENT_PORT_ACTIVE },
	{ "PORT_ERR", IBV_EVENT_PORT_ERR },
	{ "LID_CHANGE", IBV_EVENT_LID_CHANGE },
	{ "PKEY_CHANGE", IBV_EVENT_PKEY_CHANGE },
	{ "SM_CHANGE", IBV_EVENT_SM_CHANGE },
	{ "SRQ_ERR", IBV_EVENT_SRQ_ERR },
	{ "SRQ_LIMIT_REACHED", IBV_EVENT_SRQ_LIMIT_REACHED },
	{ "QP_LAST_WQE_REACHED", IBV_EVENT_QP_LAST_WQE_REACHED },
	{ "CLIENT_REREGISTER", IBV_EVENT_CLIENT_REREGISTER },
	{ "GID_CHANGE", IBV_EVENT_GID_CHANGE },
	{ "WQ_FATAL", IBV_EVENT_WQ_FATAL },
};

#define T_NEVENTS (sizeof(t_events) / sizeof(t_events[0]))

/* "PORT_ERR" or "IBV_EVENT_PORT_ERR" -> type; -1 if unknown. */
static inline int t_event_parse(const char *name)
{
	size_t i;

	if (!strncmp(name, "IBV_EVENT_", 10))
		name += 10;
	for (i = 0; i < T_NEVENTS; i++)
		if (!strcmp(name, t_events[i].name))
			return t_events[i].type;
	return -1;
}

static inline const char *t_event_name(enum ibv_event_type type)
{
	size_t i;

	for (i = 0; i < T_NEVENTS; i++)
		if (t_events[i].type == type)
			return t_events[i].name;
	return "UNKNOWN";
}

/* Never block in ibv_get_async_event: the deadline is poll()'s job. */
static inline void t_async_nonblock(struct ibv_context *ctx)
{
	int flags = fcntl(ctx->async_fd, F_GETFL);

	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
		t_fatal("cannot make the async fd non-blocking: %s", t_errname(errno));
}

/*
 * Wait until deadline (t_now() seconds) for one async event; acks it and
 * returns 1 with *type filled, or 0 on timeout. The event is printed as it
 * arrives, with the port or object it names.
 */
static inline int t_next_async_event(struct ibv_context *ctx, double deadline,
				     enum ibv_event_type *type)
{
	struct ibv_async_event ev;

	for (;;) {
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		double left = deadline - t_now();
		int ret;

		if (left <= 0)
			return 0;
		ret = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (ret < 0 && errno != EINTR)
			t_fatal("poll on the async fd: %s", t_errname(errno));
		if (ret <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev)) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			t_fatal("ibv_get_async_event: %s", t_errname(errno));
		}
		*type = ev.event_type;
		if (ev.event_type == IBV_EVENT_PORT_ACTIVE ||
		    ev.event_type == IBV_EVENT_PORT_ERR ||
		    ev.event_type == IBV_EVENT_LID_CHANGE ||
		    ev.event_type == IBV_EVENT_PKEY_CHANGE ||
		    ev.event_type == IBV_EVENT_GID_CHANGE ||
		    ev.event_type == IBV_EVENT_SM_CHANGE ||
		    ev.event_type == IBV_EVENT_CLIENT_REREGISTER)
			printf("event %s port %d\n", t_event_name(ev.event_type),
			       ev.element.port_num);
		else
			printf("event %s\n", t_event_name(ev.event_type));
		fflush(stdout);
		ibv_ack_async_event(&ev);
		return 1;
	}
}

#endif /* SCIRE_EVENTS_H */
