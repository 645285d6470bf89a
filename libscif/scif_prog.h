/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers shared by scire's own SCIF programs (bench/scif_bench.c and
 * selftests/scif_user.c): whole-message send and receive, a listening
 * endpoint, and a server child that says when clients may connect. Not
 * installed: libscif's users have their own conventions.
 *
 * The including program defines die(), which reports @what with errno in
 * its own format and exits; every helper here calls it on failure.
 */
#ifndef SCIF_PROG_H
#define SCIF_PROG_H

#include <errno.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <scif.h>

static void die(const char *what);

/* Exactly @len bytes over the stream of @epd, blocking. */
static inline void xsend(scif_epd_t epd, const void *buf, int len)
{
	if (scif_send(epd, (void *)buf, len, SCIF_SEND_BLOCK) != len)
		die("scif_send");
}

static inline void xrecv(scif_epd_t epd, void *buf, int len)
{
	if (scif_recv(epd, buf, len, SCIF_RECV_BLOCK) != len)
		die("scif_recv");
}

/*
 * A listening endpoint on @port with @backlog; then, if @ready_fd is open,
 * one byte on it tells the parent (start_server()) that clients may
 * connect.
 */
static inline scif_epd_t xlisten(unsigned short port, int backlog, int ready_fd)
{
	scif_epd_t lep = scif_open();

	if (lep < 0)
		die("scif_open");
	if (scif_bind(lep, port) != port)
		die("scif_bind");
	if (scif_listen(lep, backlog))
		die("scif_listen");
	if (ready_fd >= 0) {
		if (write(ready_fd, "r", 1) != 1)
			die("ready");
		close(ready_fd);
	}
	return lep;
}

/*
 * Fork a child that runs @server(@arg, ready_fd) and exits with its
 * return value; return its pid once the child has written its ready byte
 * (xlisten() does). die()s if it cannot fork or the child ends first.
 */
static inline pid_t start_server(int (*server)(int arg, int ready_fd), int arg)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(pfd[0]);
		_exit(server(arg, pfd[1]));
	}
	close(pfd[1]);
	errno = 0;
	if (read(pfd[0], &c, 1) != 1) {
		errno = errno ? errno : EPIPE;
		die("the server did not start");
	}
	close(pfd[0]);
	return pid;
}

/* 0 if the server child @pid exited with status 0, else 1. */
static inline int reap_server(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	return 0;
}

#endif /* SCIF_PROG_H */
