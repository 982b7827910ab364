// SPDX-License-Identifier: GPL-2.0
/*
 * A counter in one server's memory, shared by several clients through
 * RDMA fetch-and-add: each client adds 1 COUNT times and gets back the
 * value before its add; the server's CPU never touches the counter while
 * they run.
 *
 *   faa_counter server DEV IP PORT CLIENTS
 *   faa_counter client DEV IP SERVER_IP PORT [COUNT]
 *
 * The server registers an 8-byte counter (zero) for remote atomics,
 * accepts CLIENTS connections, one RC QP each, and waits in read() for
 * each client's report: how many adds it did and the sum of the values
 * it fetched.  Atomicity means every value 0 .. N-1 (N the total of adds)
 * was fetched exactly once: the counter ends at N, and the fetched values
 * sum to N(N-1)/2.  Each client checks that its own fetched values only
 * increase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

struct report {
	uint64_t adds;
	uint64_t sum;
};

static int server(const char *devname, const char *ip, int port, int clients)
{
	struct ibv_qp *qps[64];
	int fds[64];
	struct peer_info peer;
	struct report rep;
	struct dev d;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint64_t *counter, adds = 0, sum = 0;
	int lfd, i;

	if (clients < 1 || clients > 64) {
		fprintf(stderr, "error: 1 to 64 clients\n");
		return 2;
	}
	dev_open(&d, devname, ip);
	counter = aligned_alloc(4096, 4096);
	if (!counter)
		die("aligned_alloc");
	*counter = 0;
	mr = ibv_reg_mr(d.pd, counter, 8, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		die("ibv_reg_mr");
	cq = ibv_create_cq(d.ctx, 4, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	lfd = tcp_listen(port);
	for (i = 0; i < clients; i++) {
		qps[i] = rc_qp(&d, cq, 1, 1);
		fds[i] = tcp_accept(lfd);
		exchange(fds[i], &d, qps[i], (uintptr_t)counter, mr->rkey, &peer);
		qp_connect(qps[i], &d, &peer, IBV_ACCESS_REMOTE_ATOMIC, 16);
	}
	printf("server: counter at %p (rkey %#x) shared with %d clients\n", (void *)counter,
	       mr->rkey, clients);
	fflush(stdout);
	for (i = 0; i < clients; i++) {
		tcp_read(fds[i], &rep, sizeof(rep));
		adds += rep.adds;
		sum += rep.sum;
	}
	/* The clients' last adds completed before they reported. */
	if (*(volatile uint64_t *)counter != adds || sum != adds * (adds - 1) / 2) {
		fprintf(stderr, "error: counter %llu after %llu adds; fetched values sum to %llu, want %llu\n",
			(unsigned long long)*counter, (unsigned long long)adds,
			(unsigned long long)sum, (unsigned long long)(adds * (adds - 1) / 2));
		return 1;
	}
	printf("server: counter = %llu = the %d clients' adds; every value 0..%llu fetched exactly once (sum %llu)\n",
	       (unsigned long long)*counter, clients, (unsigned long long)adds - 1,
	       (unsigned long long)sum);
	return 0;
}

static int client(const char *devname, const char *ip, const char *srv, int port, uint64_t count)
{
	struct peer_info peer;
	struct report rep = { 0, 0 };
	struct ibv_wc wc;
	struct dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t *old, prev = 0, n;
	double t0, t;
	int fd;

	dev_open(&d, devname, ip);
	old = aligned_alloc(4096, 4096);
	if (!old)
		die("aligned_alloc");
	mr = ibv_reg_mr(d.pd, old, 8, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	cq = ibv_create_cq(d.ctx, 4, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	qp = rc_qp(&d, cq, 1, 1);
	fd = tcp_connect(srv, port);
	exchange(fd, &d, qp, 0, 0, &peer);
	qp_connect(qp, &d, &peer, 0, 16);
	t0 = now();
	for (n = 0; n < count; n++) {
		struct ibv_sge s = { (uintptr_t)old, 8, mr->lkey };
		struct ibv_send_wr w = {
			.sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = peer.addr, .compare_add = 1, .rkey = peer.rkey },
		}, *bad;

		verbs_check(ibv_post_send(qp, &w, &bad), "ibv_post_send");
		poll_one(cq, &wc);
		if (n && *old <= prev) {
			fprintf(stderr, "error: fetched %llu after %llu\n", (unsigned long long)*old,
				(unsigned long long)prev);
			return 1;
		}
		prev = *old;
		rep.sum += *old;
		rep.adds++;
	}
	t = now() - t0;
	printf("client: %llu fetch-and-adds in %.3f s (%.1f us each), fetched values increasing, last %llu\n",
	       (unsigned long long)count, t, t / count * 1e6, (unsigned long long)prev);
	tcp_write(fd, &rep, sizeof(rep));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc >= 6 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argv[4], atoi(argv[5]),
			      argc > 6 ? strtoull(argv[6], NULL, 0) : 1000);
	fprintf(stderr, "usage: %s server DEV IP PORT CLIENTS\n"
		"       %s client DEV IP SERVER_IP PORT [COUNT]\n", argv[0], argv[0]);
	return 2;
}
