/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device a C check program works on: ibdev_open() opens IBDEV,
 * allocates a PD and finds the port's first RoCE v2 IPv4-mapped GID
 * (the device's netdev needs an address); rc_connect() takes an RC QP
 * through INIT, RTR and RTS to a QP of the same device, through that
 * GID.  Include after report.h; each program includes it once.
 */
#ifndef RRXE_PROGS_IBDEV_H
#define RRXE_PROGS_IBDEV_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "roce_gid.h"

static const char *ibdev = "rrxe0";
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index = -1;

/* Index and value of the device's first RoCE v2 IPv4-mapped GID. */
static inline void find_gid(void)
{
	for (int i = 0; i < 64; i++) {
		if (!gid_is_roce_v2(ibdev, i))
			continue;
		if (ibv_query_gid(ctx, 1, i, &gid))
			continue;
		if (!gid.raw[0] && !gid.raw[8] && gid.raw[10] == 0xff && gid.raw[11] == 0xff) {
			gid_index = i;
			return;
		}
	}
	die("%s has no RoCE v2 IPv4 GID (give its netdev an address)", ibdev);
}

static inline void ibdev_open(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ibdev))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("cannot open %s", ibdev);
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("alloc_pd: %s", strerror(errno));
	find_gid();
}

/*
 * INIT, RTR (path MTU 1024, one READ/atomic in flight each way) and RTS
 * with TIMEOUT (4.096 us * 2^TIMEOUT) and 7 retries and RNR retries,
 * connected to QP number DEST of the same device.
 */
static inline void rc_connect(struct ibv_qp *qp, uint32_t dest, uint8_t timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS: %s", strerror(errno));
}

#endif
