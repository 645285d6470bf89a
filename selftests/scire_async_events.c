// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * scire_async_events -d DEV -e EV1,EV2,... [-t SECONDS]: open DEV, print
 * "ready", then wait for the listed async events in that order (names as in
 * IBV_EVENT_<NAME>, e.g. PORT_ERR,PORT_ACTIVE). Each event is printed and
 * acked as it arrives; events out of order or not listed are printed and
 * otherwise ignored (a carrier flip also brings GID_CHANGE, for example).
 * Exit 0 once all arrived, 1 if the time (default 10 s) runs out first.
 *
 * Copyright (c) 2026 The scire authors.
 */
#include <getopt.h>

#include "scire_events.h"

#define MAX_EVENTS 32

int main(int argc, char **argv)
{
	enum ibv_event_type want[MAX_EVENTS], got;
	const char *dev = NULL;
	char *list = NULL, *tok, *save;
	double timeout = 10, deadline;
	struct ibv_context *ctx;
	int nwant = 0, next = 0, c;

	t_name = "scire_async_events";
	while ((c = getopt(argc, argv, "d:e:t:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'e':
			list = optarg;
			break;
		case 't':
			timeout = strtod(optarg, NULL);
			break;
		default:
			return T_EXIT_FAIL;
		}
	}
	if (!dev || !list || timeout <= 0) {
		fprintf(stderr, "usage: %s -d DEV -e EVENT[,EVENT...] [-t SECONDS]\n",
			argv[0]);
		return T_EXIT_FAIL;
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int type = t_event_parse(tok);

		if (type < 0)
			t_fatal("unknown event name '%s'", tok);
		if (nwant == MAX_EVENTS)
			t_fatal("more than %d events listed", MAX_EVENTS);
		want[nwant++] = type;
	}

	ctx = t_open_device(dev);
	t_async_nonblock(ctx);
	printf("ready\n");
	fflush(stdout);

	deadline = t_now() + timeout;
	while (next < nwant) {
		if (!t_next_async_event(ctx, deadline, &got)) {
			fprintf(stderr, "FAIL: %s: %s: after %.1f s still waiting for %s (%d of %d events seen)\n",
				t_name, dev, timeout, t_event_name(want[next]), next, nwant);
			ibv_close_device(ctx);
			return T_EXIT_FAIL;
		}
		if (got == want[next])
			next++;
	}

	ibv_close_device(ctx);
	printf("PASS: %s: all %d events on %s\n", t_name, nwant, dev);
	return T_EXIT_PASS;
}
