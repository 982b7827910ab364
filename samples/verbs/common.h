/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared plumbing of the verbs samples: open a device and find its RoCE v2
 * GID for an IPv4 address, swap connection details with the peer over TCP,
 * move an RC QP to RTS, poll a CQ.  Nothing here is on the data path.
 */
#ifndef RRXE_SAMPLES_COMMON_H
#define RRXE_SAMPLES_COMMON_H

#include <stdint.h>
#include <infiniband/verbs.h>

/* What one side tells the other: its QP, and the buffer it exposes. */
struct peer_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t local_psn;	/* not sent: this side's own send PSN, kept by exchange() */
	uint64_t addr;
	uint8_t gid[16];
};

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	union ibv_gid gid;
};

/* Exits with a message naming what failed (and errno's text). */
void die(const char *what);

/* Exits with WHAT and the error RC if RC (a verb's return value) is not
 * 0: posting verbs return the errno instead of setting it. */
void verbs_check(int rc, const char *what);

/* Opens device NAME and finds its RoCE v2 GID for IPv4 address IP. */
void dev_open(struct dev *d, const char *name, const char *ip);

/* TCP: a listening socket on PORT, one accepted connection, a connection
 * to HOST:PORT (retried for a few seconds while the server starts). */
int tcp_listen(int port);
int tcp_accept(int lfd);
int tcp_connect(const char *host, int port);
void tcp_write(int fd, const void *buf, size_t len);
void tcp_read(int fd, void *buf, size_t len);

/* Fills MINE for QP and (ADDR, RKEY), sends it, reads the peer's. */
void exchange(int fd, const struct dev *d, struct ibv_qp *qp, uint64_t addr,
	      uint32_t rkey, struct peer_info *peer);

/* INIT -> RTR -> RTS towards PEER, path MTU 1024, remote ACCESS rights,
 * RD_ATOMIC outstanding READs/atomics each way, RNR retries unlimited. */
void qp_connect(struct ibv_qp *qp, const struct dev *d,
		const struct peer_info *peer, int access, int rd_atomic);

/* An RC QP on CQ (send and receive), SEND_WR / RECV_WR deep. */
struct ibv_qp *rc_qp(struct dev *d, struct ibv_cq *cq, int send_wr,
		     int recv_wr);

/* Busy-polls CQ for one completion; exits unless it succeeded. */
void poll_one(struct ibv_cq *cq, struct ibv_wc *wc);

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
double now(void);

#endif
