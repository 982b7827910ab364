// SPDX-License-Identifier: GPL-2.0
/*
 * One-sided RDMA: the client WRITEs into and READs from the server's
 * registered buffer; the server's CPU takes no part in the transfer.
 *
 *   onesided server DEV IP PORT [SIZE]
 *   onesided client DEV IP SERVER_IP PORT [ITERS] [SIZE]
 *
 * The server registers SIZE bytes (default 64 KiB) for remote write and
 * read, fills the second half with its pattern, tells the client the
 * address and rkey over TCP, and then blocks in one read() on that socket
 * until the client says it is done: it posts no receive, polls no CQ and
 * makes no other system call while the data moves (run it under `strace
 * -c` with ITERS and 2*ITERS: its call count does not change).  Then it
 * checks that the client's WRITEs landed.
 *
 * The client does ITERS rounds of: RDMA WRITE of its half-buffer into the
 * server's first half, RDMA READ of the server's second half into its
 * own, each waited for by busy-polling the CQ (no system call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static uint8_t server_byte(size_t i) { return (uint8_t)(i * 7 + 1); }
static uint8_t client_byte(size_t i) { return (uint8_t)(i * 13 + 5); }

static int server(const char *devname, const char *ip, int port, size_t size)
{
	struct peer_info peer;
	struct dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t done;
	uint8_t *buf;
	size_t i, half = size / 2;
	int lfd, fd;

	dev_open(&d, devname, ip);
	buf = aligned_alloc(4096, size);
	if (!buf)
		die("aligned_alloc");
	memset(buf, 0, half);
	for (i = 0; i < half; i++)
		buf[half + i] = server_byte(i);
	mr = ibv_reg_mr(d.pd, buf, size, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr");
	cq = ibv_create_cq(d.ctx, 4, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	qp = rc_qp(&d, cq, 1, 1);
	lfd = tcp_listen(port);
	fd = tcp_accept(lfd);
	exchange(fd, &d, qp, (uintptr_t)buf, mr->rkey, &peer);
	qp_connect(qp, &d, &peer, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 4);
	printf("server: %zu bytes at %p, rkey %#x exposed; waiting (no verbs call until the client is done)\n",
	       size, (void *)buf, mr->rkey);
	fflush(stdout);
	/* The only system call of the whole transfer: blocked here. */
	tcp_read(fd, &done, sizeof(done));
	for (i = 0; i < half; i++)
		if (buf[i] != client_byte(i)) {
			fprintf(stderr, "error: server byte %zu is %#x after the client's WRITEs\n",
				i, buf[i]);
			return 1;
		}
	printf("server: the client's %llu WRITEs of %zu bytes landed byte-exact; no CQ polled, no receive posted\n",
	       (unsigned long long)done, half);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(d.pd);
	ibv_close_device(d.ctx);
	return 0;
}

static int client(const char *devname, const char *ip, const char *srv, int port,
		  uint64_t iters, size_t size)
{
	struct peer_info peer;
	struct ibv_wc wc;
	struct dev d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t i, half = size / 2;
	double t0, t;
	uint64_t n;
	int fd;

	dev_open(&d, devname, ip);
	buf = aligned_alloc(4096, size);
	if (!buf)
		die("aligned_alloc");
	for (i = 0; i < half; i++)
		buf[i] = client_byte(i);
	memset(buf + half, 0, half);
	mr = ibv_reg_mr(d.pd, buf, size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	cq = ibv_create_cq(d.ctx, 4, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	qp = rc_qp(&d, cq, 2, 1);
	fd = tcp_connect(srv, port);
	exchange(fd, &d, qp, 0, 0, &peer);
	qp_connect(qp, &d, &peer, 0, 4);

	t0 = now();
	for (n = 0; n < iters; n++) {
		struct ibv_sge wsge = { (uintptr_t)buf, half, mr->lkey };
		struct ibv_sge rsge = { (uintptr_t)buf + half, half, mr->lkey };
		struct ibv_send_wr w = {
			.wr_id = 1, .sg_list = &wsge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { peer.addr, peer.rkey },
		};
		struct ibv_send_wr r = {
			.wr_id = 2, .sg_list = &rsge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { peer.addr + half, peer.rkey },
		};
		struct ibv_send_wr *bad;

		/* WRITE then READ, chained: one ibv_post_send, one doorbell. */
		w.next = &r;
		verbs_check(ibv_post_send(qp, &w, &bad), "ibv_post_send");
		poll_one(cq, &wc);
		poll_one(cq, &wc);
	}
	t = now() - t0;
	for (i = 0; i < half; i++)
		if (buf[half + i] != server_byte(i)) {
			fprintf(stderr, "error: READ byte %zu is %#x\n", i, buf[half + i]);
			return 1;
		}
	printf("client: %llu x (WRITE %zu B + READ %zu B) in %.3f s: %.1f MB/s, %.1f us per round trip pair; READ data byte-exact\n",
	       (unsigned long long)iters, half, half, t, 2.0 * half * iters / t / 1e6,
	       t / iters * 1e6);
	tcp_write(fd, &iters, sizeof(iters));
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(d.pd);
	ibv_close_device(d.ctx);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3], atoi(argv[4]),
			      argc > 5 ? strtoul(argv[5], NULL, 0) : 65536);
	if (argc >= 6 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argv[4], atoi(argv[5]),
			      argc > 6 ? strtoull(argv[6], NULL, 0) : 1000,
			      argc > 7 ? strtoul(argv[7], NULL, 0) : 65536);
	fprintf(stderr, "usage: %s server DEV IP PORT [SIZE]\n"
		"       %s client DEV IP SERVER_IP PORT [ITERS] [SIZE]\n", argv[0], argv[0]);
	return 2;
}
