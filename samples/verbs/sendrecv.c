// SPDX-License-Identifier: GPL-2.0
/*
 * Two-sided messaging: the client SENDs, the server RECEIVEs; completions
 * are either busy-polled from the CQ, which user space reads straight
 * from memory (no system call), or waited for with completion events (the
 * thread sleeps in read() on the completion channel and re-arms the CQ
 * with a request-notify, two system calls per wake-up).
 *
 *   sendrecv server DEV IP PORT poll|events [COUNT] [SIZE]
 *   sendrecv client DEV IP SERVER_IP PORT poll|events [COUNT] [SIZE] [BATCH]
 *
 * The client posts BATCH SENDs (default 16) per ibv_post_send: librxe
 * writes the WQEs into the send ring it shares with the driver and rings
 * the doorbell once, an empty post_send write(); the last WQE of a batch
 * is signaled and waited for.  The server keeps RECV_DEPTH receives
 * posted; posting a receive is a ring write only, no system call.  Each
 * message carries its number, which the server checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define RECV_DEPTH 128

struct cq_wait {
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;	/* NULL: busy polling */
	uint64_t wakeups;
};

static struct cq_wait cq_wait_new(struct dev *d, int depth, int events)
{
	struct cq_wait w = { 0 };

	if (events) {
		w.ch = ibv_create_comp_channel(d->ctx);
		if (!w.ch)
			die("ibv_create_comp_channel");
	}
	w.cq = ibv_create_cq(d->ctx, depth, NULL, w.ch, 0);
	if (!w.cq)
		die("ibv_create_cq");
	if (events && ibv_req_notify_cq(w.cq, 0))
		die("ibv_req_notify_cq");
	return w;
}

/* Up to MAX completions: polled at once if there are any; otherwise busy
 * polling spins, events sleep until the CQ's next completion event. */
static int cq_next(struct cq_wait *w, struct ibv_wc *wc, int max)
{
	for (;;) {
		int n = ibv_poll_cq(w->cq, max, wc);
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		if (n < 0)
			die("ibv_poll_cq");
		if (n > 0)
			return n;
		if (!w->ch)
			continue;
		if (ibv_get_cq_event(w->ch, &ev_cq, &ev_ctx))
			die("ibv_get_cq_event");
		ibv_ack_cq_events(ev_cq, 1);
		w->wakeups++;
		if (ibv_req_notify_cq(w->cq, 0))
			die("ibv_req_notify_cq");
		/* Poll again: completions that came before the re-arm. */
	}
}

static void post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *slot, size_t size, uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)slot, size, mr->lkey };
	struct ibv_recv_wr r = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;
	verbs_check(ibv_post_recv(qp, &r, &bad), "ibv_post_recv");
}

static int server(const char *devname, const char *ip, int port, int events,
		  uint64_t count, size_t size)
{
	struct ibv_wc wc[16];
	struct peer_info peer;
	struct cq_wait w;
	struct dev d;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t got = 0, i;
	double t0 = 0;
	int lfd, fd, n, k;

	if (size < sizeof(uint64_t))
		size = sizeof(uint64_t);
	dev_open(&d, devname, ip);
	buf = aligned_alloc(4096, RECV_DEPTH * size);
	if (!buf)
		die("aligned_alloc");
	mr = ibv_reg_mr(d.pd, buf, RECV_DEPTH * size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	w = cq_wait_new(&d, RECV_DEPTH + 8, events);
	/* One ring slot stays empty (a full ring and an empty one differ). */
	qp = rc_qp(&d, w.cq, 1, RECV_DEPTH + 1);
	lfd = tcp_listen(port);
	fd = tcp_accept(lfd);
	exchange(fd, &d, qp, 0, 0, &peer);
	qp_connect(qp, &d, &peer, 0, 1);
	/* Receives go in once the QP is past RESET; a SEND that comes first
	 * is answered RNR and retried (unlimited RNR retries). */
	for (i = 0; i < RECV_DEPTH; i++)
		post_recv(qp, mr, buf + i * size, size, i);
	while (got < count) {
		n = cq_next(&w, wc, 16);
		if (!got)
			t0 = now();
		for (k = 0; k < n; k++) {
			uint64_t slot = wc[k].wr_id, seq;

			if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV) {
				fprintf(stderr, "error: receive completion: %s\n",
					ibv_wc_status_str(wc[k].status));
				return 1;
			}
			memcpy(&seq, buf + slot * size, sizeof(seq));
			if (seq != got || wc[k].byte_len != size) {
				fprintf(stderr, "error: message %llu carries %llu (%u bytes)\n",
					(unsigned long long)got, (unsigned long long)seq, wc[k].byte_len);
				return 1;
			}
			got++;
			post_recv(qp, mr, buf + slot * size, size, slot);
		}
	}
	printf("server (%s): %llu messages of %zu B in order, %.0f msg/s; %llu wake-ups from completion events\n",
	       events ? "events" : "busy polling", (unsigned long long)got, size,
	       got / (now() - t0), (unsigned long long)w.wakeups);
	tcp_write(fd, &got, sizeof(got));
	return 0;
}

static int client(const char *devname, const char *ip, const char *srv, int port,
		  int events, uint64_t count, size_t size, int batch)
{
	struct ibv_send_wr wr[64], *bad;
	struct ibv_sge sge[64];
	struct ibv_wc wc[16];
	struct peer_info peer;
	struct cq_wait w;
	struct dev d;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t sent = 0, done;
	uint8_t *buf;
	double t0, t;
	int fd, k;

	if (batch < 1 || batch > 64)
		batch = 16;
	if (size < sizeof(uint64_t))
		size = sizeof(uint64_t);
	dev_open(&d, devname, ip);
	buf = aligned_alloc(4096, 64 * size);
	if (!buf)
		die("aligned_alloc");
	memset(buf, 0x5a, 64 * size);
	mr = ibv_reg_mr(d.pd, buf, 64 * size, 0);
	if (!mr)
		die("ibv_reg_mr");
	w = cq_wait_new(&d, 128, events);
	qp = rc_qp(&d, w.cq, 64, 1);
	fd = tcp_connect(srv, port);
	exchange(fd, &d, qp, 0, 0, &peer);
	qp_connect(qp, &d, &peer, 0, 1);
	t0 = now();
	while (sent < count) {
		int nb = count - sent < (uint64_t)batch ? (int)(count - sent) : batch;

		for (k = 0; k < nb; k++) {
			uint64_t seq = sent + k;

			memcpy(buf + k * size, &seq, sizeof(seq));
			sge[k] = (struct ibv_sge){ (uintptr_t)buf + k * size, size, mr->lkey };
			wr[k] = (struct ibv_send_wr){
				.wr_id = seq, .sg_list = &sge[k], .num_sge = 1,
				.opcode = IBV_WR_SEND,
				.send_flags = k == nb - 1 ? IBV_SEND_SIGNALED : 0,
				.next = k == nb - 1 ? NULL : &wr[k + 1],
			};
		}
		verbs_check(ibv_post_send(qp, wr, &bad), "ibv_post_send");
		/* One signaled completion per batch: the batch is done. */
		if (cq_next(&w, wc, 1) != 1 || wc[0].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "error: send completion: %s\n", ibv_wc_status_str(wc[0].status));
			return 1;
		}
		sent += nb;
	}
	t = now() - t0;
	tcp_read(fd, &done, sizeof(done));
	printf("client (%s): %llu SENDs of %zu B in batches of %d: %.0f msg/s; server confirmed %llu\n",
	       events ? "events" : "busy polling", (unsigned long long)sent, size, batch,
	       sent / t, (unsigned long long)done);
	return done == count ? 0 : 1;
}

int main(int argc, char **argv)
{
	int events;

	if (argc >= 6 && !strcmp(argv[1], "server")) {
		events = !strcmp(argv[5], "events");
		return server(argv[2], argv[3], atoi(argv[4]), events,
			      argc > 6 ? strtoull(argv[6], NULL, 0) : 10000,
			      argc > 7 ? strtoul(argv[7], NULL, 0) : 64);
	}
	if (argc >= 7 && !strcmp(argv[1], "client")) {
		events = !strcmp(argv[6], "events");
		return client(argv[2], argv[3], argv[4], atoi(argv[5]), events,
			      argc > 7 ? strtoull(argv[7], NULL, 0) : 10000,
			      argc > 8 ? strtoul(argv[8], NULL, 0) : 64,
			      argc > 9 ? atoi(argv[9]) : 16);
	}
	fprintf(stderr, "usage: %s server DEV IP PORT poll|events [COUNT] [SIZE]\n"
		"       %s client DEV IP SERVER_IP PORT poll|events [COUNT] [SIZE] [BATCH]\n",
		argv[0], argv[0]);
	return 2;
}
