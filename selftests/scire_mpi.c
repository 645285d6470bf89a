// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A small MPI program for selftests/76-middleware.sh and
 * selftests/pair/15-middleware.sh: what an MPI user runs first on a new
 * fabric. Two or more ranks; rank 0 and rank 1 ping-pong messages of 8 B,
 * 4 KiB, 64 KiB and 1 MiB (eager and rendezvous protocols: UCX moves the
 * large ones with RDMA READ or WRITE), every byte checked on both sides;
 * then every rank takes part in MPI_Allreduce of one long and of a
 * 1 MiB array, with the sums checked. Prints the half round trip per size
 * and the 8-byte allreduce time (information, not a pass criterion).
 * With --alltoall (selftests/hosts/10-mpi.sh), then MPI_Alltoall of 8 B
 * and of 64 KiB blocks between every two ranks, every element checked
 * for the rank it came from and the rank it went to.
 *
 * Exit status 0 if every check held; otherwise it says what differed and
 * calls MPI_Abort (non-zero status).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static void die(const char *what)
{
	fprintf(stderr, "rank %d: %s\n", rank, what);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* The byte at offset i of message iter of the given size, before (0) or
 * after (1) the echoing rank has turned it around.
 */
static uint8_t pattern(size_t i, int iter, size_t size, int echoed)
{
	uint8_t b = (uint8_t)(i * 131 + (size_t)iter * 7 + size / 4096);

	return echoed ? (uint8_t)~b : b;
}

static void fill(uint8_t *buf, size_t size, int iter, int echoed)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = pattern(i, iter, size, echoed);
}

static void check(const uint8_t *buf, size_t size, int iter, int echoed)
{
	char msg[160];

	for (size_t i = 0; i < size; i++) {
		if (buf[i] == pattern(i, iter, size, echoed))
			continue;
		snprintf(msg, sizeof(msg),
			 "ping-pong %zu B, iteration %d: byte %zu is 0x%02x, want 0x%02x",
			 size, iter, i, buf[i], pattern(i, iter, size, echoed));
		die(msg);
	}
}

static void pingpong(size_t size, int iters)
{
	uint8_t *buf = malloc(size);
	double t0;
	int iter;

	if (!buf)
		die("out of memory");
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (iter = 0; iter < iters && rank < 2; iter++) {
		if (rank == 0) {
			fill(buf, size, iter, 0);
			MPI_Send(buf, (int)size, MPI_BYTE, 1, iter, MPI_COMM_WORLD);
			memset(buf, 0, size);
			MPI_Recv(buf, (int)size, MPI_BYTE, 1, iter, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(buf, size, iter, 1);
		} else {
			memset(buf, 0, size);
			MPI_Recv(buf, (int)size, MPI_BYTE, 0, iter, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(buf, size, iter, 0);
			for (size_t i = 0; i < size; i++)
				buf[i] = (uint8_t)~buf[i];
			MPI_Send(buf, (int)size, MPI_BYTE, 0, iter, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("ping-pong %7zu B x %3d: ok, %.1f us half round trip\n", size,
		       iters, (MPI_Wtime() - t0) * 1e6 / iters / 2);
	free(buf);
}

static void allreduce(void)
{
	const size_t n = (1 << 20) / sizeof(long);
	long one = rank + 1, sum = 0, want = (long)nranks * (nranks + 1) / 2;
	long *in = malloc(n * sizeof(long)), *out = malloc(n * sizeof(long));
	const int reps = 100;
	char msg[160];
	double t0;

	if (!in || !out)
		die("out of memory");
	MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (sum != want) {
		snprintf(msg, sizeof(msg), "8-byte allreduce: sum %ld, want %ld", sum, want);
		die(msg);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int r = 0; r < reps; r++)
		MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("allreduce 8 B x %d: ok, %.1f us each\n", reps,
		       (MPI_Wtime() - t0) * 1e6 / reps);

	for (size_t i = 0; i < n; i++)
		in[i] = (long)i * (rank + 1);
	MPI_Allreduce(in, out, (int)n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (size_t i = 0; i < n; i++) {
		if (out[i] == (long)i * want)
			continue;
		snprintf(msg, sizeof(msg), "1 MiB allreduce: element %zu is %ld, want %ld",
			 i, out[i], (long)i * want);
		die(msg);
	}
	if (rank == 0)
		printf("allreduce 1 MiB: ok\n");
	free(in);
	free(out);
}

/* Element i of the block rank src sends to rank dst. */
static long a2a_value(int src, int dst, size_t i)
{
	return ((long)src << 40) | ((long)dst << 24) | (long)i;
}

static void alltoall(size_t block)
{
	const size_t n = block / sizeof(long);
	long *in = malloc(n * nranks * sizeof(long)), *out = malloc(n * nranks * sizeof(long));
	char msg[160];
	double t0;

	if (!in || !out)
		die("out of memory");
	for (int dst = 0; dst < nranks; dst++)
		for (size_t i = 0; i < n; i++)
			in[dst * n + i] = a2a_value(rank, dst, i);
	memset(out, 0, n * nranks * sizeof(long));
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	MPI_Alltoall(in, (int)n, MPI_LONG, out, (int)n, MPI_LONG, MPI_COMM_WORLD);
	for (int src = 0; src < nranks; src++) {
		for (size_t i = 0; i < n; i++) {
			if (out[src * n + i] == a2a_value(src, rank, i))
				continue;
			snprintf(msg, sizeof(msg),
				 "alltoall %zu B: element %zu from rank %d is %#lx, want %#lx",
				 block, i, src, out[src * n + i], a2a_value(src, rank, i));
			die(msg);
		}
	}
	if (rank == 0)
		printf("alltoall %zu B per rank pair: ok, %.1f us\n", block,
		       (MPI_Wtime() - t0) * 1e6);
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	char host[MPI_MAX_PROCESSOR_NAME];
	int len;
	int a2a = argc > 1 && !strcmp(argv[1], "--alltoall");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks < 2)
		die("needs at least two ranks");
	MPI_Get_processor_name(host, &len);
	printf("rank %d of %d on %s\n", rank, nranks, host);
	fflush(stdout);

	pingpong(8, 200);
	pingpong(4096, 100);
	pingpong(65536, 50);
	pingpong(1 << 20, 10);
	allreduce();
	if (a2a) {
		alltoall(sizeof(long));
		alltoall(65536);
	}

	MPI_Finalize();
	return 0;
}
