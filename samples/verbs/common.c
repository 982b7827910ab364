// SPDX-License-Identifier: GPL-2.0
/*
 * Shared plumbing of the verbs samples (see common.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

void die(const char *what)
{
	fprintf(stderr, "error: %s%s%s\n", what, errno ? ": " : "",
		errno ? strerror(errno) : "");
	exit(1);
}

void verbs_check(int rc, const char *what)
{
	if (rc) {
		errno = rc;
		die(what);
	}
}

void dev_open(struct dev *d, const char *name, const char *ip)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr port;
	struct in_addr v4;
	int i;

	if (!list)
		die("ibv_get_device_list");
	d->ctx = NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d->ctx)
		die("no such RDMA device (or it cannot be opened)");
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		die("ibv_alloc_pd");
	if (inet_pton(AF_INET, ip, &v4) != 1)
		die("not an IPv4 address");
	if (ibv_query_port(d->ctx, 1, &port))
		die("ibv_query_port");
	/* RoCE v2 GIDs of IPv4 addresses are IPv4-mapped IPv6 addresses. */
	for (i = 0; i < port.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(d->ctx, 1, i, &e, 0) || e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (!memcmp(e.gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) &&
		    !memcmp(e.gid.raw + 12, &v4, 4)) {
			d->gid_index = i;
			d->gid = e.gid;
			return;
		}
	}
	errno = 0;
	die("the device has no RoCE v2 GID for that address");
}

int tcp_listen(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16))
		die("bind/listen");
	return fd;
}

int tcp_accept(int lfd)
{
	int one = 1, fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		die("accept");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int tcp_connect(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, i, fd;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		die("not an IPv4 server address");
	/* The server may still be starting: retry for 10 s. */
	for (i = 0; i < 100; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket");
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		usleep(100000);
	}
	die("connect to the server");
	return -1;
}

void tcp_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			die("write to the peer");
		p += n;
		len -= n;
	}
}

void tcp_read(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0) {
			if (n == 0)
				errno = 0;
			die("read from the peer (closed?)");
		}
		p += n;
		len -= n;
	}
}

void exchange(int fd, const struct dev *d, struct ibv_qp *qp, uint64_t addr,
	      uint32_t rkey, struct peer_info *peer)
{
	struct peer_info mine = {
		.qpn = qp->qp_num,
		.psn = (uint32_t)(lrand48() & 0xffffff),
		.rkey = rkey,
		.addr = addr,
	};

	memcpy(mine.gid, d->gid.raw, 16);
	tcp_write(fd, &mine, sizeof(mine));
	tcp_read(fd, peer, sizeof(*peer));
	/* Each side starts its send PSN where the other expects it. */
	peer->local_psn = mine.psn;
}

void qp_connect(struct ibv_qp *qp, const struct dev *d,
		const struct peer_info *peer, int access, int rd_atomic)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = access,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify QP to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = d->gid_index;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify QP to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = peer->local_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd_atomic;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify QP to RTS");
}

struct ibv_qp *rc_qp(struct dev *d, struct ibv_cq *cq, int send_wr,
		     int recv_wr)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

void poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		;
	if (n < 0)
		die("ibv_poll_cq");
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "error: completion of wr_id %llu: %s\n",
			(unsigned long long)wc->wr_id,
			ibv_wc_status_str(wc->status));
		exit(1);
	}
}

double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
