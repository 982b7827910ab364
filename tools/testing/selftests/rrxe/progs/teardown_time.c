// SPDX-License-Identifier: GPL-2.0
/*
 * teardown_time: how long a device takes to destroy each kind of verbs
 * object, one object at a time, as a consumer tearing down its queues
 * does (an NVMe/RDMA host in error recovery destroys each queue's QP,
 * CQ and MRs in turn; a wait per object, such as an RCU grace period,
 * multiplies by their number).
 *
 * For each KIND, COUNT objects are created, then destroyed one by one;
 * each create and destroy call is timed.  Kinds:
 *   pd      ibv_alloc_pd / ibv_dealloc_pd
 *   cq      ibv_create_cq (64 entries) / ibv_destroy_cq
 *   qp      an RC QP in RESET / ibv_destroy_qp
 *   qp-rts  an RC QP connected to itself (RTS, idle) / ibv_destroy_qp
 *   mr      ibv_reg_mr of 64 KiB / ibv_dereg_mr
 *   mw      ibv_alloc_mw (type 1) / ibv_dealloc_mw
 *   srq     ibv_create_srq (64 WRs) / ibv_destroy_srq
 *   ah      ibv_create_ah to the device's own GID / ibv_destroy_ah
 * One line per kind:
 *   KIND create_us=MEDIAN destroy_us=MEDIAN destroy_max_us=MAX
 *
 * Usage: teardown_time [-d IBDEV] [-n COUNT] [KIND...]  (default: all)
 * The device needs a RoCE v2 IPv4 GID (an address on its netdev).
 * Exit status: 0 measured, 2 setup failed (an object could not be made).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "report.h"
#include "ibdev.h"

#define MAX_COUNT 1024
#define MR_BYTES (64 << 10)

static int count = 64;
static struct ibv_cq *qp_cq;	/* the QPs' send and receive CQ */
static char *mr_buf;		/* COUNT regions of MR_BYTES */

static struct ibv_qp *rc_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = qp_cq,
		.recv_cq = qp_cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &ia);
}

static void *make(const char *kind, int i)
{
	if (!strcmp(kind, "pd"))
		return ibv_alloc_pd(ctx);
	if (!strcmp(kind, "cq"))
		return ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!strcmp(kind, "qp"))
		return rc_qp();
	if (!strcmp(kind, "qp-rts")) {
		struct ibv_qp *qp = rc_qp();

		if (qp)
			rc_connect(qp, qp->qp_num, 14);
		return qp;
	}
	if (!strcmp(kind, "mr"))
		return ibv_reg_mr(pd, mr_buf + (size_t)i * MR_BYTES, MR_BYTES,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
	if (!strcmp(kind, "mw"))
		return ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!strcmp(kind, "srq")) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };

		return ibv_create_srq(pd, &sa);
	}
	if (!strcmp(kind, "ah")) {
		struct ibv_ah_attr aa = {
			.is_global = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index, .hop_limit = 64 },
			.port_num = 1,
		};

		return ibv_create_ah(pd, &aa);
	}
	die("unknown kind %s", kind);
	return NULL;
}

/* Destroys OBJ of KIND; the verb's return value. */
static int unmake(const char *kind, void *obj)
{
	if (!strcmp(kind, "pd"))
		return ibv_dealloc_pd(obj);
	if (!strcmp(kind, "cq"))
		return ibv_destroy_cq(obj);
	if (!strncmp(kind, "qp", 2))
		return ibv_destroy_qp(obj);
	if (!strcmp(kind, "mr"))
		return ibv_dereg_mr(obj);
	if (!strcmp(kind, "mw"))
		return ibv_dealloc_mw(obj);
	if (!strcmp(kind, "srq"))
		return ibv_destroy_srq(obj);
	return ibv_destroy_ah(obj);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void measure(const char *kind)
{
	static void *obj[MAX_COUNT];
	static double mk[MAX_COUNT], un[MAX_COUNT];
	double t, max = 0;

	for (int i = 0; i < count; i++) {
		t = now();
		obj[i] = make(kind, i);
		mk[i] = (now() - t) * 1e6;
		if (!obj[i])
			die("%s: creating object %d: %s", kind, i, strerror(errno));
	}
	for (int i = 0; i < count; i++) {
		int r;

		t = now();
		r = unmake(kind, obj[i]);
		un[i] = (now() - t) * 1e6;
		if (r)
			die("%s: destroying object %d: %s", kind, i, strerror(r));
		if (un[i] > max)
			max = un[i];
	}
	printf("%s create_us=%.0f destroy_us=%.0f destroy_max_us=%.0f\n", kind,
	       median(mk, count), median(un, count), max);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "pd", "cq", "qp", "qp-rts", "mr", "mw", "srq", "ah" };
	int c;

	while ((c = getopt(argc, argv, "d:n:")) != -1) {
		switch (c) {
		case 'd': ibdev = optarg; break;
		case 'n': count = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-d IBDEV] [-n COUNT] [KIND...]\n", argv[0]);
			return 2;
		}
	}
	if (count < 1 || count > MAX_COUNT)
		die("COUNT must be 1-%d", MAX_COUNT);
	ibdev_open();
	qp_cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	mr_buf = aligned_alloc(4096, (size_t)count * MR_BYTES);
	if (!qp_cq || !mr_buf)
		die("setup: %s", strerror(errno));
	memset(mr_buf, 0, (size_t)count * MR_BYTES);
	if (optind == argc)
		for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
			measure(all[k]);
	for (int k = optind; k < argc; k++)
		measure(argv[k]);
	ibv_destroy_cq(qp_cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
