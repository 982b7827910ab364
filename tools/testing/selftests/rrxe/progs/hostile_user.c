// SPDX-License-Identifier: GPL-2.0
/*
 * hostile_user: a hostile local user of an rrxe device (attack 3).  It speaks the rxe user ABI directly, the way librxe does but
 * without its manners: legacy uverbs write() commands on
 * /dev/infiniband/uverbsN (GET_CONTEXT, ALLOC_PD, REG_MR, CREATE_CQ,
 * CREATE_QP, MODIFY_QP, QUERY_QP, POST_SEND as librxe's doorbell,
 * DESTROY_*), the CQ and QP rings mmap'ed at the offsets the driver's
 * udata responses give (struct rxe_create_cq_resp / rxe_create_qp_resp),
 * and then garbage written into everything user space can reach.
 *
 * Why: the rings are shared memory, so every index and every WQE field
 * the kernel reads from them is attacker-controlled.  The driver must
 * answer with errors, error completions or the QP's error state; never
 * a splat, a leak, a hang or a CPU hog.  The kernel log and kmemleak are
 * checked by the scenario harness (tools/testing/selftests/rrxe/debug/
 * hostile-user.sh); this program checks what it can see itself and
 * exits non-zero only when something that must hold does not.
 *
 * Usage: hostile_user [-d IBDEV] [-n COUNT] [-t WAIT_MS] PHASE...
 * Phases:
 *   rings  garbage producer/consumer indices in the SQ, RQ and CQ rings
 *          (huge, equal, off by the mask, 0xffffffff), doorbells; every
 *          verb still answers, destroy succeeds.
 *   wqes   garbage send and receive WQEs (opcodes, flags, num_sge
 *          0/5/33/0xffffffff, huge and overflowing lengths, bad lkeys,
 *          out-of-range addresses, inline sizes beyond the WQE): each
 *          must end in an error completion or the QP's error state, not
 *          in a successful completion.  Two valid WQEs first, as controls.
 *   storm  a QP in the error state whose SQ producer index claims the
 *          whole ring (the largest one context may have: 2^21 slots,
 *          halved until CREATE_QP succeeds), doorbell after doorbell:
 *          the kernel CPU time per doorbell must stay under a
 *          threshold (see phase_storm() for the numbers) and the
 *          machine must be idle after the storm.
 *   race   threads ringing the doorbell and scribbling WQEs and indices
 *          while another thread destroys the QP, COUNT times.
 *   fork   COUNT children set up a QP, scribble and _exit without any
 *          cleanup (one stuck in RNR retries, one storming in the error
 *          state); one more is SIGKILLed in a doorbell loop.
 *   maps   mmap at wrong offsets and sizes, MAP_PRIVATE, and mmap of a
 *          ring after its QP or CQ is destroyed: errors, no crash.
 *   all    every phase above, in that order.
 * The device must have a RoCE v2 IPv4 GID (an address on its netdev):
 * QPs are connected to themselves through it.
 *
 * Only libc and the kernel's uapi headers (rdma/ib_user_verbs.h,
 * rdma/rdma_user_rxe.h): no libibverbs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "report.h"
#include "roce_gid.h"

/* enum ib_qp_attr_mask (include/rdma/ib_verbs.h, not in the uapi). */
#define QP_STATE (1u << 0)
#define QP_ACCESS_FLAGS (1u << 3)
#define QP_PKEY_INDEX (1u << 4)
#define QP_PORT (1u << 5)
#define QP_AV (1u << 7)
#define QP_PATH_MTU (1u << 8)
#define QP_TIMEOUT (1u << 9)
#define QP_RETRY_CNT (1u << 10)
#define QP_RNR_RETRY (1u << 11)
#define QP_RQ_PSN (1u << 12)
#define QP_MAX_QP_RD_ATOMIC (1u << 13)
#define QP_MIN_RNR_TIMER (1u << 15)
#define QP_SQ_PSN (1u << 16)
#define QP_MAX_DEST_RD_ATOMIC (1u << 17)
#define QP_DEST_QPN (1u << 20)

enum { QPS_RESET, QPS_INIT, QPS_RTR, QPS_RTS, QPS_SQD, QPS_SQE, QPS_ERR };
enum { QPT_RC = 2 };
/* IB_WR_* as user space numbers them (enum ib_uverbs_wr_opcode). */
enum { WR_RDMA_WRITE = 0, WR_SEND = 2, WR_RDMA_READ = 4, WR_ATOMIC_CMP_AND_SWP = 5,
       WR_LOCAL_INV = 7, WR_BIND_MW = 8, WR_SEND_WITH_INV = 9, WR_DRIVER1 = 11, WR_FLUSH = 14 };
enum { SEND_SIGNALED = 2, SEND_INLINE = 8 };
enum { ACCESS_LOCAL_WRITE = 1, ACCESS_REMOTE_WRITE = 2 };

static const char *ibdev = "rrxe0";
static int count = 4;
static int wait_ms = 3000;
static int debug_kernel;
/* rnr_retry of the loopback QPs: 1 (fail fast), 7 (retry forever). */
static int rnr_retry = 1;

static uint64_t rnd(void)
{
	static __thread uint64_t s;

	static uint64_t seq;

	if (!s) {
		struct timespec ts;

		/* Distinct per thread and per call site, even for threads
		 * created in the same nanosecond at a reused address. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = ((uint64_t)ts.tv_sec * 1000000007u + ts.tv_nsec) ^
		    (__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull) ^
		    ((uint64_t)getpid() << 32);
		if (!s)
			s = 1;
	}
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static void fill_random(void *p, size_t n)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = rnd();
}

/* ---- uverbs commands ---- */

/*
 * One legacy write() command: header, then REQ (whose first u64 is the
 * response pointer when RESP is given).  Returns 0 or -errno.
 */
static int uv_cmd(int fd, uint32_t command, void *req, size_t req_len, void *resp,
		  size_t resp_len)
{
	char buf[512];
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (sizeof(hdr) + req_len) / 4,
		.out_words = resp_len / 4,
	};

	if (sizeof(hdr) + req_len > sizeof(buf))
		die("command %u too long", command);
	if (resp) {
		uint64_t p = (uintptr_t)resp;

		memcpy(req, &p, sizeof(p));
	}
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), req, req_len);
	if (write(fd, buf, sizeof(hdr) + req_len) != (ssize_t)(sizeof(hdr) + req_len))
		return -errno;
	return 0;
}

struct ring {
	struct rxe_queue_buf *q;
	size_t len;
	uint64_t offset;
};

struct cq {
	uint32_t handle;
	struct ring r;
	uint32_t cons;
};

struct qp {
	uint32_t handle, qpn;
	struct ring sq, rq;
	struct ib_uverbs_create_qp_resp caps;
};

struct dev {
	int fd, async_fd;
	uint32_t pd;
	uint8_t gid[16];
	int gid_index;
	/* A registered buffer for SGEs. */
	char *buf;
	size_t buf_len;
	uint32_t mr, lkey, rkey;
};

static int open_uverbs(const char *name)
{
	DIR *d = opendir("/sys/class/infiniband_verbs");
	struct dirent *e;
	char path[512], dev[64];
	int fd = -1;

	if (!d)
		die("no /sys/class/infiniband_verbs");
	while ((e = readdir(d))) {
		FILE *f;

		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", dev) == 1 && !strcmp(dev, name)) {
			snprintf(path, sizeof(path), "/dev/infiniband/%s", e->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				die("open %s: %s", path, strerror(errno));
		}
		fclose(f);
		if (fd >= 0)
			break;
	}
	closedir(d);
	if (fd < 0)
		die("no uverbs device for %s", name);
	return fd;
}

/* Index and value of the device's first RoCE v2 IPv4-mapped GID. */
static void find_gid(struct dev *d)
{
	char path[256];

	for (int i = 0; i < 64; i++) {
		FILE *f;
		unsigned int w[8];

		if (!gid_is_roce_v2(ibdev, i))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gids/%d", ibdev, i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3], &w[4], &w[5],
			   &w[6], &w[7]) == 8 &&
		    !w[0] && !w[1] && !w[2] && !w[3] && !w[4] && w[5] == 0xffff) {
			for (int k = 0; k < 8; k++) {
				d->gid[2 * k] = w[k] >> 8;
				d->gid[2 * k + 1] = w[k];
			}
			d->gid_index = i;
			fclose(f);
			return;
		}
		fclose(f);
	}
	die("%s has no RoCE v2 IPv4 GID (give its netdev an address)", ibdev);
}

static void dev_open(struct dev *d)
{
	struct ib_uverbs_get_context gc = {0};
	struct ib_uverbs_get_context_resp gcr;
	struct ib_uverbs_alloc_pd ap = {0};
	struct ib_uverbs_alloc_pd_resp apr;
	struct ib_uverbs_reg_mr rm = {0};
	struct ib_uverbs_reg_mr_resp rmr;
	int r;

	memset(d, 0, sizeof(*d));
	d->fd = open_uverbs(ibdev);
	find_gid(d);
	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_GET_CONTEXT, &gc, sizeof(gc), &gcr, sizeof(gcr));
	if (r)
		die("GET_CONTEXT: %s", strerror(-r));
	d->async_fd = gcr.async_fd;
	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_ALLOC_PD, &ap, sizeof(ap), &apr, sizeof(apr));
	if (r)
		die("ALLOC_PD: %s", strerror(-r));
	d->pd = apr.pd_handle;
	d->buf_len = 1 << 16;
	d->buf = mmap(NULL, d->buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->buf == MAP_FAILED)
		die("mmap buffer");
	memset(d->buf, 0x5a, d->buf_len);
	rm.start = (uintptr_t)d->buf;
	rm.length = d->buf_len;
	rm.hca_va = (uintptr_t)d->buf;
	rm.pd_handle = d->pd;
	rm.access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE;
	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_REG_MR, &rm, sizeof(rm), &rmr, sizeof(rmr));
	if (r)
		die("REG_MR: %s", strerror(-r));
	d->mr = rmr.mr_handle;
	d->lkey = rmr.lkey;
	d->rkey = rmr.rkey;
}

static void dev_close(struct dev *d)
{
	struct ib_uverbs_dereg_mr dm = {.mr_handle = d->mr};
	struct ib_uverbs_dealloc_pd dp = {.pd_handle = d->pd};
	int r;

	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_DEREG_MR, &dm, sizeof(dm), NULL, 0);
	if (r)
		bad("DEREG_MR: %s", strerror(-r));
	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_DEALLOC_PD, &dp, sizeof(dp), NULL, 0);
	if (r)
		bad("DEALLOC_PD: %s", strerror(-r));
	munmap(d->buf, d->buf_len);
	close(d->async_fd);
	close(d->fd);
}

static int map_ring(struct dev *d, struct ring *r, const struct mminfo *mi)
{
	void *p = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, mi->offset);

	if (p == MAP_FAILED)
		return -errno;
	r->q = p;
	r->len = mi->size;
	r->offset = mi->offset;
	return 0;
}

static void unmap_ring(struct ring *r)
{
	if (r->q)
		munmap(r->q, r->len);
	r->q = NULL;
}

static int cq_create(struct dev *d, struct cq *c, uint32_t cqe)
{
	struct ib_uverbs_create_cq cmd = {0};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct rxe_create_cq_resp drv;
	} resp;
	int r;

	memset(c, 0, sizeof(*c));
	memset(&resp, 0, sizeof(resp));
	cmd.cqe = cqe;
	cmd.comp_channel = -1;
	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (r)
		return r;
	c->handle = resp.core.cq_handle;
	r = map_ring(d, &c->r, &resp.drv.mi);
	if (r)
		die("mmap CQ ring (offset %#llx size %u): %s", (unsigned long long)resp.drv.mi.offset,
		    resp.drv.mi.size, strerror(-r));
	return 0;
}

static int cq_destroy(struct dev *d, struct cq *c)
{
	struct ib_uverbs_destroy_cq cmd = {.cq_handle = c->handle};
	struct ib_uverbs_destroy_cq_resp resp;

	unmap_ring(&c->r);
	return uv_cmd(d->fd, IB_USER_VERBS_CMD_DESTROY_CQ, &cmd, sizeof(cmd), &resp, sizeof(resp));
}

static int qp_create(struct dev *d, struct qp *q, struct cq *scq, struct cq *rcq, uint32_t sq_wr,
		     uint32_t rq_wr, uint32_t send_sge, uint32_t inl)
{
	struct ib_uverbs_create_qp cmd = {0};
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct rxe_create_qp_resp drv;
	} resp;
	int r;

	memset(q, 0, sizeof(*q));
	memset(&resp, 0, sizeof(resp));
	cmd.pd_handle = d->pd;
	cmd.send_cq_handle = scq->handle;
	cmd.recv_cq_handle = rcq->handle;
	cmd.max_send_wr = sq_wr;
	cmd.max_recv_wr = rq_wr;
	cmd.max_send_sge = send_sge;
	cmd.max_recv_sge = 4;
	cmd.max_inline_data = inl;
	cmd.qp_type = QPT_RC;
	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (r)
		return r;
	q->handle = resp.core.qp_handle;
	q->qpn = resp.core.qpn;
	q->caps = resp.core;
	r = map_ring(d, &q->sq, &resp.drv.sq_mi);
	if (!r)
		r = map_ring(d, &q->rq, &resp.drv.rq_mi);
	if (r)
		die("mmap QP ring: %s", strerror(-r));
	return 0;
}

static int qp_destroy(struct dev *d, struct qp *q, int unmap)
{
	struct ib_uverbs_destroy_qp cmd = {.qp_handle = q->handle};
	struct ib_uverbs_destroy_qp_resp resp;
	int r = uv_cmd(d->fd, IB_USER_VERBS_CMD_DESTROY_QP, &cmd, sizeof(cmd), &resp, sizeof(resp));

	if (unmap) {
		unmap_ring(&q->sq);
		unmap_ring(&q->rq);
	}
	return r;
}

static int qp_modify(struct dev *d, struct qp *q, struct ib_uverbs_modify_qp *m)
{
	m->qp_handle = q->handle;
	return uv_cmd(d->fd, IB_USER_VERBS_CMD_MODIFY_QP, m, sizeof(*m), NULL, 0);
}

static int qp_state(struct dev *d, struct qp *q);

static int qp_to_init(struct dev *d, struct qp *q)
{
	struct ib_uverbs_modify_qp m = {0};

	m.attr_mask = QP_STATE | QP_PKEY_INDEX | QP_PORT | QP_ACCESS_FLAGS;
	m.qp_state = QPS_INIT;
	m.port_num = 1;
	m.qp_access_flags = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE;
	return qp_modify(d, q, &m);
}

/* To the error state (through INIT from RESET: IBTA has no RESET -> ERR). */
static int qp_to_err(struct dev *d, struct qp *q)
{
	struct ib_uverbs_modify_qp m = {0};
	int r;

	if (qp_state(d, q) == QPS_RESET && (r = qp_to_init(d, q)))
		return r;
	m.attr_mask = QP_STATE;
	m.qp_state = QPS_ERR;
	return qp_modify(d, q, &m);
}

/* RESET -> INIT -> RTR -> RTS, connected to itself through the device's
 * IPv4 GID; rnr_retry as set above. */
static int qp_loopback_rts(struct dev *d, struct qp *q)
{
	struct ib_uverbs_modify_qp m = {0};
	int r;

	r = qp_to_init(d, q);
	if (r)
		return r;
	m.attr_mask = QP_STATE | QP_AV | QP_PATH_MTU | QP_DEST_QPN | QP_RQ_PSN |
		      QP_MAX_DEST_RD_ATOMIC | QP_MIN_RNR_TIMER;
	m.qp_state = QPS_RTR;
	memcpy(m.dest.dgid, d->gid, 16);
	m.dest.sgid_index = d->gid_index;
	m.dest.hop_limit = 64;
	m.dest.is_global = 1;
	m.dest.port_num = 1;
	m.path_mtu = 3; /* 1024 */
	m.dest_qp_num = q->qpn;
	m.rq_psn = 100;
	m.max_dest_rd_atomic = 1;
	m.min_rnr_timer = 1;
	r = qp_modify(d, q, &m);
	if (r)
		return r;
	memset(&m, 0, sizeof(m));
	m.attr_mask = QP_STATE | QP_TIMEOUT | QP_RETRY_CNT | QP_RNR_RETRY | QP_SQ_PSN |
		      QP_MAX_QP_RD_ATOMIC;
	m.qp_state = QPS_RTS;
	/* 67 ms, 7 retries: the debug kernel under TCG can take more than
	 * a millisecond to loop a packet back. */
	m.timeout = 14;
	m.retry_cnt = 7;
	m.rnr_retry = rnr_retry;
	m.sq_psn = 100;
	m.max_rd_atomic = 1;
	return qp_modify(d, q, &m);
}

/* The QP's state, or -errno. */
static int qp_state(struct dev *d, struct qp *q)
{
	struct ib_uverbs_query_qp cmd = {0};
	struct ib_uverbs_query_qp_resp resp;
	int r;

	cmd.qp_handle = q->handle;
	cmd.attr_mask = QP_STATE;
	r = uv_cmd(d->fd, IB_USER_VERBS_CMD_QUERY_QP, &cmd, sizeof(cmd), &resp, sizeof(resp));
	return r ? r : resp.qp_state;
}

/* librxe's doorbell: an empty POST_SEND. */
static int doorbell_fd(int fd, uint32_t qp_handle)
{
	struct ib_uverbs_post_send cmd = {0};
	struct ib_uverbs_post_send_resp resp;

	cmd.qp_handle = qp_handle;
	cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return uv_cmd(fd, IB_USER_VERBS_CMD_POST_SEND, &cmd, sizeof(cmd), &resp, sizeof(resp));
}

static int doorbell(struct dev *d, struct qp *q)
{
	return doorbell_fd(d->fd, q->handle);
}

/* ---- rings ---- */

static uint32_t mask_of(struct ring *r)
{
	return r->q->index_mask;
}

static size_t slot_size(struct ring *r)
{
	return (size_t)1 << r->q->log2_elem_size;
}

static void *slot(struct ring *r, uint32_t i)
{
	return r->q->data + ((size_t)(i & mask_of(r)) << r->q->log2_elem_size);
}

static uint32_t ld(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Writes LEN bytes of W into the next slot and publishes it. */
static void produce(struct ring *r, const void *w, size_t len)
{
	uint32_t p = ld(&r->q->producer_index);

	memcpy(slot(r, p), w, len);
	st(&r->q->producer_index, (p + 1) & mask_of(r));
}

/* Next completion of QPN (others are dropped), waiting up to MS. */
static int cq_next(struct cq *c, uint32_t qpn, struct ib_uverbs_wc *wc, int ms)
{
	double end = now() + ms / 1000.0;
	struct rxe_queue_buf *q = c->r.q;

	do {
		uint32_t p = ld(&q->producer_index) & q->index_mask;
		uint32_t cons = ld(&q->consumer_index) & q->index_mask;

		while (cons != p) {
			memcpy(wc, q->data + ((size_t)cons << q->log2_elem_size), sizeof(*wc));
			cons = (cons + 1) & q->index_mask;
			st(&q->consumer_index, cons);
			if (wc->qp_num == qpn)
				return 1;
		}
		usleep(200);
	} while (now() < end);
	return 0;
}

static void cq_drain(struct cq *c)
{
	st(&c->r.q->consumer_index, ld(&c->r.q->producer_index));
}

static const char *wc_status_name(uint32_t s)
{
	static const char *const n[] = {"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR",
					"LOC_EEC_OP_ERR", "LOC_PROT_ERR", "WR_FLUSH_ERR",
					"MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR",
					"REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR",
					"RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR"};
	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "other";
}

/* ---- phase rings ---- */

static void phase_rings(void)
{
	struct dev d;
	struct cq c;
	struct qp q;
	int r, s, n = 0;

	printf("phase rings: garbage SQ/RQ/CQ indices\n");
	dev_open(&d);
	if ((r = cq_create(&d, &c, 16)))
		die("CREATE_CQ: %s", strerror(-r));
	uint32_t cq_mask = mask_of(&c.r), cq_log2 = c.r.q->log2_elem_size;

	for (int round = 0; round < count; round++) {
		if ((r = qp_create(&d, &q, &c, &c, 16, 16, 2, 32)))
			die("CREATE_QP: %s", strerror(-r));
		if ((r = qp_loopback_rts(&d, &q)))
			die("loopback RTS: %s", strerror(-r));
		uint32_t sq_mask = mask_of(&q.sq);

		/* Garbage slots everywhere, then garbage indices. */
		fill_random(q.sq.q->data, q.sq.len - sizeof(*q.sq.q));
		fill_random(q.rq.q->data, q.rq.len - sizeof(*q.rq.q));
		for (int i = 0; i < 10; i++) {
			struct ring *rs[3] = {&q.sq, &q.rq, &c.r};
			uint32_t masks[3] = {sq_mask, mask_of(&q.rq), cq_mask};

			for (int k = 0; k < 3; k++) {
				uint32_t m = masks[k], cons = ld(&rs[k]->q->consumer_index);
				uint32_t v[10] = {0xffffffff, 0x80000000, m + 1, m, 0, cons,
						  cons + m, cons - 1, 0xdeadbeef, (uint32_t)rnd()};
				st(&rs[k]->q->producer_index, v[i]);
				doorbell(&d, &q);
				st(&rs[k]->q->consumer_index, v[(i + 3) % 10]);
				doorbell(&d, &q);
				n += 2;
			}
			/* Index-related header fields too: the kernel must not
			 * read them back (they are for user space only). */
			q.sq.q->log2_elem_size = rnd();
			q.sq.q->index_mask = rnd();
			c.r.q->index_mask = rnd();
			c.r.q->log2_elem_size = rnd();
			r = doorbell(&d, &q);
			n++;
			s = qp_state(&d, &q);
			if (s < 0)
				bad("QUERY_QP after garbage indices: %s", strerror(-s));
			else if (s > QPS_ERR)
				bad("QUERY_QP says state %d", s);
		}
		/* Still answers everything, and the QP can be failed and
		 * destroyed. */
		if ((r = qp_to_err(&d, &q)))
			bad("MODIFY_QP to ERR after garbage indices: %s", strerror(-r));
		doorbell(&d, &q);
		s = qp_state(&d, &q);
		if (s != QPS_ERR)
			bad("QP state %d after MODIFY_QP to ERR", s);
		if ((r = qp_destroy(&d, &q, 1)))
			bad("DESTROY_QP after garbage indices: %s", strerror(-r));
		/* The CQ's header was scribbled: put it back for our own
		 * polling (the kernel never reads it). */
		c.r.q->index_mask = cq_mask;
		c.r.q->log2_elem_size = cq_log2;
	}
	if ((r = cq_destroy(&d, &c)))
		bad("DESTROY_CQ after garbage indices: %s", strerror(-r));
	dev_close(&d);
	note("%d rounds, %d doorbells with garbage indices: verbs answered", count, n);
}

/* ---- phase wqes ---- */

enum expect { MUST_SUCCEED, MUST_FAIL, ANY };

struct send_case {
	const char *name;
	enum expect expect;
};

static const struct send_case send_cases[] = {
	{"control: inline SEND 8 B", MUST_SUCCEED},
	{"control: SEND 64 B from the MR", MUST_SUCCEED},
	{"opcode 0x1234", MUST_FAIL},
	{"opcode 0xffffffff", MUST_FAIL},
	{"opcode RDMA_READ (QP without remote read)", MUST_FAIL},
	{"opcode ATOMIC_CMP_AND_SWP (QP without remote atomic)", MUST_FAIL},
	{"opcode BIND_MW", MUST_FAIL},
	{"opcode DRIVER1", MUST_FAIL},
	{"send_flags 0xffffffff", MUST_FAIL},
	{"num_sge 33", MUST_FAIL},
	{"num_sge 0xffffffff", MUST_FAIL},
	{"num_sge 5 > max_send_sge 4", MUST_FAIL},
	{"sge length 0xffffffff", MUST_FAIL},
	{"two sges of 0x80000000 (sum overflows 2^31)", MUST_FAIL},
	{"four sges of 0xffffffff (sum overflows u32)", MUST_FAIL},
	{"bad lkey 0xdeadbeef", MUST_FAIL},
	{"lkey 0", MUST_FAIL},
	{"address before the MR", MUST_FAIL},
	{"address range wrapping 2^64", MUST_FAIL},
	{"inline length 0xffffffff", MUST_FAIL},
	{"inline length = slot size (beyond the WQE)", MUST_FAIL},
	{"inline length max_inline + 1", MUST_FAIL},
	{"RDMA WRITE, rkey 0xdeadbeef", MUST_FAIL},
	{"RDMA WRITE past the MR's end", MUST_FAIL},
	{"valid inline SEND, kernel-owned fields garbage", ANY},
	{"SEND, num_sge 0, dma.length 0xffffffff", ANY},
	{"LOCAL_INV of key 0xdeadbeef", MUST_FAIL},
	{"BIND_MW of window 0xdeadbeef to the MR", MUST_FAIL},
	{"LOCAL_INV of the MR's own key", MUST_FAIL},
	{"FLUSH, placement type 0xff", MUST_FAIL},
	{"FLUSH, rkey 0xdeadbeef", MUST_FAIL},
	{"SEND with Invalidate of key 0xdeadbeef", ANY},
	{"random bytes", ANY},
};

#define NSEND (sizeof(send_cases) / sizeof(send_cases[0]))

/* Fills the send WQE of case I (in a buffer of SLOT bytes). */
static void send_case_fill(unsigned int i, struct rxe_send_wqe *w, size_t slot_len,
			   const struct dev *d, uint32_t max_inline)
{
	struct rxe_sge *sge = w->dma.sge;
	uint64_t base = (uintptr_t)d->buf;

	memset(w, 0, slot_len);
	w->wr.opcode = WR_SEND;
	w->wr.send_flags = SEND_SIGNALED;
	w->dma.num_sge = 1;
	sge[0].addr = base;
	sge[0].length = 64;
	sge[0].lkey = d->lkey;
	w->dma.length = 64;
	w->dma.resid = 64;
	switch (i) {
	case 0:
		w->wr.send_flags |= SEND_INLINE;
		w->dma.num_sge = 0;
		w->dma.length = w->dma.resid = 8;
		memcpy(w->dma.inline_data, "hostile!", 8);
		break;
	case 1:
		break;
	case 2: w->wr.opcode = 0x1234; break;
	case 3: w->wr.opcode = 0xffffffff; break;
	case 4: w->wr.opcode = WR_RDMA_READ; w->wr.wr.rdma.remote_addr = base; w->wr.wr.rdma.rkey = d->rkey; break;
	case 5: w->wr.opcode = WR_ATOMIC_CMP_AND_SWP; w->wr.wr.atomic.remote_addr = base; w->wr.wr.atomic.rkey = d->rkey; break;
	case 6: w->wr.opcode = WR_BIND_MW; break;
	case 7: w->wr.opcode = WR_DRIVER1; break;
	case 8: w->wr.send_flags = 0xffffffff; break;
	case 9: w->dma.num_sge = 33; break;
	case 10: w->dma.num_sge = 0xffffffff; break;
	case 11:
		w->dma.num_sge = 5;
		for (int k = 1; k < 5; k++)
			sge[k] = sge[0];
		break;
	case 12: sge[0].length = 0xffffffff; w->dma.length = 0xffffffff; break;
	case 13:
		w->dma.num_sge = 2;
		sge[0].length = sge[1].length = 0x80000000;
		sge[1].addr = base;
		sge[1].lkey = d->lkey;
		w->dma.length = 0;
		break;
	case 14:
		w->dma.num_sge = 4;
		for (int k = 0; k < 4; k++)
			sge[k] = (struct rxe_sge){.addr = base, .length = 0xffffffff, .lkey = d->lkey};
		w->dma.length = 0xfffffffc;
		break;
	case 15: sge[0].lkey = 0xdeadbeef; break;
	case 16: sge[0].lkey = 0; break;
	case 17: sge[0].addr = base - 4096; break;
	case 18: sge[0].addr = 0xffffffffffff0000ull; sge[0].length = 0x20000; w->dma.length = 0x20000; break;
	case 19:
		w->wr.send_flags |= SEND_INLINE;
		w->dma.num_sge = 0;
		w->dma.length = 0xffffffff;
		break;
	case 20:
		w->wr.send_flags |= SEND_INLINE;
		w->dma.num_sge = 0;
		w->dma.length = slot_len;
		break;
	case 21:
		w->wr.send_flags |= SEND_INLINE;
		w->dma.num_sge = 0;
		w->dma.length = max_inline + 1;
		break;
	case 22:
		w->wr.opcode = WR_RDMA_WRITE;
		w->wr.wr.rdma.remote_addr = base;
		w->wr.wr.rdma.rkey = 0xdeadbeef;
		break;
	case 23:
		w->wr.opcode = WR_RDMA_WRITE;
		w->wr.wr.rdma.remote_addr = base + d->buf_len - 32;
		w->wr.wr.rdma.rkey = d->rkey;
		break;
	case 24:
		w->wr.send_flags |= SEND_INLINE;
		w->dma.num_sge = 0;
		w->dma.length = 8;
		w->dma.resid = 0xffffffff;
		w->dma.cur_sge = 0xffffffff;
		w->dma.sge_offset = 0xffffffff;
		w->dma.reserved = 0xffffffff;
		w->status = 0xffffffff;
		w->state = 0xffffffff;
		w->iova = ~0ull;
		w->mask = 0xffffffff;
		w->first_psn = w->last_psn = 0xffffffff;
		w->ack_length = w->ssn = w->has_rd_atomic = 0xffffffff;
		w->wr.reserved = 0xffffffff;
		break;
	case 25:
		w->dma.num_sge = 0;
		w->dma.length = 0xffffffff;
		break;
	case 26:
		w->wr.opcode = WR_LOCAL_INV;
		w->wr.ex.invalidate_rkey = 0xdeadbeef;
		w->dma.num_sge = 0;
		break;
	case 27:
		/* wr.mw: addr, length, mr_lkey, mw_rkey, rkey, access */
		w->wr.opcode = WR_BIND_MW;
		w->dma.num_sge = 0;
		w->wr.wr.mw.addr = base;
		w->wr.wr.mw.length = 4096;
		w->wr.wr.mw.mr_lkey = d->lkey;
		w->wr.wr.mw.mw_rkey = 0xdeadbeef;
		w->wr.wr.mw.rkey = 0x42;
		w->wr.wr.mw.access = ACCESS_REMOTE_WRITE;
		break;
	case 28:
		w->wr.opcode = WR_LOCAL_INV;
		w->wr.ex.invalidate_rkey = d->rkey;
		w->dma.num_sge = 0;
		break;
	case 29:
	case 30: {
		/* wr.flush (newer uapi): rkey at 36, type at 40, level at 41 */
		uint32_t rkey = i == 29 ? d->rkey : 0xdeadbeef;

		w->wr.opcode = WR_FLUSH;
		w->dma.num_sge = 0;
		w->wr.wr.rdma.remote_addr = base;
		w->iova = base;
		memcpy((char *)w + 36, &rkey, 4);
		((uint8_t *)w)[40] = i == 29 ? 0xff : 1;
		break;
	}
	case 31:
		w->wr.opcode = WR_SEND_WITH_INV;
		w->wr.ex.invalidate_rkey = 0xdeadbeef;
		break;
	default:
		fill_random(w, slot_len);
		break;
	}
}

struct recv_case {
	const char *name;
	enum expect expect;
};

static const struct recv_case recv_cases[] = {
	{"control: one SGE in the MR", MUST_SUCCEED},
	{"num_sge 33", MUST_FAIL},
	{"num_sge 0xffffffff", MUST_FAIL},
	{"bad lkey 0xdeadbeef", MUST_FAIL},
	{"sge length 0xffffffff", MUST_FAIL},
	{"address before the MR", MUST_FAIL},
	{"num_sge 0 for an 8-byte SEND (too small)", MUST_FAIL},
	{"random bytes", ANY},
};

#define NRECV (sizeof(recv_cases) / sizeof(recv_cases[0]))

static void recv_case_fill(unsigned int i, struct rxe_recv_wqe *w, size_t slot_len,
			   const struct dev *d)
{
	struct rxe_sge *sge = w->dma.sge;

	memset(w, 0, slot_len);
	w->dma.num_sge = 1;
	sge[0].addr = (uintptr_t)d->buf + 4096;
	sge[0].length = 256;
	sge[0].lkey = d->lkey;
	w->dma.length = 256;
	switch (i) {
	case 0: break;
	case 1: w->dma.num_sge = 33; break;
	case 2: w->dma.num_sge = 0xffffffff; break;
	case 3: sge[0].lkey = 0xdeadbeef; break;
	case 4: sge[0].length = 0xffffffff; break;
	case 5: sge[0].addr = (uintptr_t)d->buf - 8192; break;
	case 6: w->dma.num_sge = 0; w->dma.length = 0; break;
	default: fill_random(w, slot_len); break;
	}
}

/*
 * Judges one case from the completion with WR_ID (and the QP state if
 * none comes within wait_ms) and prints the outcome on one line.
 */
static void judge(const char *what, const char *name, enum expect ex, struct dev *d, struct qp *q,
		  struct cq *c, uint64_t wr_id)
{
	struct ib_uverbs_wc wc;
	char out[160] = "";
	int got = 0, ok = 0;
	double end = now() + wait_ms / 1000.0;

	while (now() < end) {
		int left = (end - now()) * 1000;

		if (!cq_next(c, q->qpn, &wc, left > 0 ? left : 1))
			break;
		if (wc.wr_id == wr_id) {
			got = 1;
			break;
		}
	}
	int s = qp_state(d, q);

	if (got)
		snprintf(out, sizeof(out), "completion %s (%u), QP state %d",
			 wc_status_name(wc.status), wc.status, s);
	else
		snprintf(out, sizeof(out), "no completion in %d ms, QP state %d", wait_ms, s);
	switch (ex) {
	case MUST_SUCCEED:
		ok = got && wc.status == 0;
		break;
	case MUST_FAIL:
		ok = got ? wc.status != 0 : s == QPS_ERR;
		break;
	case ANY:
		ok = s >= 0;
		break;
	}
	if (ok)
		note("%s %-48s -> %s", what, name, out);
	else
		bad("%s %s -> %s (expected %s)", what, name, out,
		    ex == MUST_SUCCEED ? "success" : ex == MUST_FAIL ? "an error completion or the error state" : "an answer");
}

static void phase_wqes(void)
{
	struct dev d;
	struct cq c;
	struct qp q;
	char w[4096];
	int r;

	printf("phase wqes: garbage send and receive WQEs\n");
	dev_open(&d);
	if ((r = cq_create(&d, &c, 256)))
		die("CREATE_CQ: %s", strerror(-r));
	for (unsigned int i = 0; i < NSEND; i++) {
		int reps = send_cases[i].expect == ANY && i == NSEND - 1 ? 4 * count : 1;

		for (int rep = 0; rep < reps; rep++) {
			if ((r = qp_create(&d, &q, &c, &c, 8, 8, 4, 64)))
				die("CREATE_QP: %s", strerror(-r));
			if ((r = qp_loopback_rts(&d, &q)))
				die("loopback RTS: %s", strerror(-r));
			/* A valid receive for the SENDs that do go out. */
			recv_case_fill(0, (void *)w, slot_size(&q.rq), &d);
			((struct rxe_recv_wqe *)w)->wr_id = 0x7000 + i;
			produce(&q.rq, w, slot_size(&q.rq));
			send_case_fill(i, (void *)w, slot_size(&q.sq), &d, q.caps.max_inline_data);
			((struct rxe_send_wqe *)w)->wr.wr_id = 0x5000 + i;
			produce(&q.sq, w, slot_size(&q.sq));
			if ((r = doorbell(&d, &q)))
				bad("doorbell: %s", strerror(-r));
			if (rep == 0 || rep == reps - 1)
				judge("send", send_cases[i].name, send_cases[i].expect, &d, &q, &c,
				      0x5000 + i);
			if ((r = qp_destroy(&d, &q, 1)))
				bad("DESTROY_QP: %s", strerror(-r));
			cq_drain(&c);
		}
	}
	for (unsigned int i = 0; i < NRECV; i++) {
		int reps = recv_cases[i].expect == ANY ? 4 * count : 1;

		for (int rep = 0; rep < reps; rep++) {
			if ((r = qp_create(&d, &q, &c, &c, 8, 8, 4, 64)))
				die("CREATE_QP: %s", strerror(-r));
			if ((r = qp_loopback_rts(&d, &q)))
				die("loopback RTS: %s", strerror(-r));
			recv_case_fill(i, (void *)w, slot_size(&q.rq), &d);
			((struct rxe_recv_wqe *)w)->wr_id = 0x7000 + i;
			produce(&q.rq, w, slot_size(&q.rq));
			send_case_fill(0, (void *)w, slot_size(&q.sq), &d, q.caps.max_inline_data);
			((struct rxe_send_wqe *)w)->wr.wr_id = 0x5000;
			produce(&q.sq, w, slot_size(&q.sq));
			if ((r = doorbell(&d, &q)))
				bad("doorbell: %s", strerror(-r));
			if (rep == 0 || rep == reps - 1)
				judge("recv", recv_cases[i].name, recv_cases[i].expect, &d, &q, &c,
				      0x7000 + i);
			if ((r = qp_destroy(&d, &q, 1)))
				bad("DESTROY_QP: %s", strerror(-r));
			cq_drain(&c);
		}
	}
	if ((r = cq_destroy(&d, &c)))
		bad("DESTROY_CQ: %s", strerror(-r));
	dev_close(&d);
	note("%zu send and %zu receive cases", NSEND, NRECV);
}

/* ---- phase storm ---- */

/* Jiffies (USER_HZ) the CPUs spent not idle, from /proc/stat. */
static double busy_seconds(void)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "r");
	double busy;

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			 &v[4], &v[5], &v[6], &v[7]) != 8)
		die("cannot read /proc/stat");
	fclose(f);
	/* user nice system idle iowait irq softirq steal */
	busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return busy / sysconf(_SC_CLK_TCK);
}

static double self_user_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
}

/*
 * The error-state flush must be bounded per doorbell.  A QP in the error
 * state gets a SQ producer index claiming the whole ring, over and over,
 * each time followed by a doorbell; its CQ holds one completion, so every
 * flush completion but the first has nowhere to go.  The ring is the
 * largest the driver gives one context: max_send_wr 2^20 (2^21 slots of
 * 256 bytes) halved until CREATE_QP succeeds (with the driver's 256 MiB
 * per-context cap on ring memory that is 2^19 slots); fewer than 2^18
 * slots cannot tell the two behaviours apart, so that is a failure.
 * Measured: the CPUs' busy time (/proc/stat, all CPUs, minus this
 * process's user time) from the first doorbell to 1 s after the last,
 * divided by the doorbells: the kernel's cost of one doorbell.
 * Threshold: 20 ms per doorbell (release and debug alike).  A flush
 * bounded per run (a budget of ~1024 slots, or stopping when the CQ is
 * full) costs well under 1 ms even on the debug kernel; walking the ring
 * cost ~450 ns per slot on the release kernel under TCG (measured: 937 ms
 * per doorbell at 2^21 slots, so ~235 ms at 2^19, ~120 ms at 2^18): an
 * order of magnitude above the threshold at least.  Then the machine
 * must go idle: in the 2 s after that, under 0.5 CPU busy (a flush
 * requeueing itself forever would keep a CPU busy).  The storm stops
 * after STORM_S seconds of wall time, whatever the count, so an
 * unbounded flush fails the test instead of timing out the scenario.
 */
#define STORM_MS_PER_DOORBELL 20.0
#define STORM_S 15.0
#define IDLE_MAX_CPUS 0.5

static void phase_storm(void)
{
	struct dev d;
	struct cq c;
	struct qp q;
	uint32_t want = 1u << 20;
	int r, n = 0, target = 50 * count;
	double b0, u0, t0, t1, b1, u1, b2, b3, per, idle_busy;

	printf("phase storm: error-state flush with the producer index claiming the whole ring\n");
	dev_open(&d);
	if ((r = cq_create(&d, &c, 1)))
		die("CREATE_CQ: %s", strerror(-r));
	for (;;) {
		r = qp_create(&d, &q, &c, &c, want, 1, 0, 0);
		if (!r)
			break;
		if (want <= 1u << 17) {
			bad("CREATE_QP with %u send WRs: %s: the ring is too small for the measure",
			    want, strerror(-r));
			cq_destroy(&d, &c);
			dev_close(&d);
			return;
		}
		note("CREATE_QP with max_send_wr %u: %s; halving", want, strerror(-r));
		want >>= 1;
	}
	note("SQ: %u slots of %zu bytes (%zu MiB), CQ: %u slots", mask_of(&q.sq) + 1, slot_size(&q.sq),
	     q.sq.len >> 20, mask_of(&c.r) + 1);
	if ((r = qp_to_err(&d, &q)))
		die("MODIFY_QP RESET -> INIT -> ERR: %s", strerror(-r));
	usleep(200000);
	b0 = busy_seconds();
	u0 = self_user_seconds();
	t0 = now();
	while (n < target && now() - t0 < STORM_S) {
		uint32_t m = mask_of(&q.sq), cons = ld(&q.sq.q->consumer_index);
		/* Whole ring ahead of the kernel's consumer index, or an
		 * index with garbage above the mask. */
		uint32_t p = n % 3 == 0 ? cons - 1 : n % 3 == 1 ? (cons + m) | ~m : 0xffffffff;

		st(&q.sq.q->producer_index, p);
		if ((r = doorbell(&d, &q)))
			bad("doorbell in the error state: %s", strerror(-r));
		n++;
		/* Read our CQ once in a while, so the ring is not always full. */
		if (n % 8 == 0)
			cq_drain(&c);
	}
	t1 = now();
	sleep(1);
	b1 = busy_seconds();
	u1 = self_user_seconds();
	per = ((b1 - b0) - (u1 - u0)) * 1000.0 / n;
	if (per < 0) /* clock-tick granularity of /proc/stat vs rusage */
		per = 0;
	note("%d doorbells in %.2f s wall; kernel CPU %.3f s over the storm + 1 s: %.2f ms per doorbell (threshold %.0f ms)",
	     n, t1 - t0, (b1 - b0) - (u1 - u0), per, STORM_MS_PER_DOORBELL);
	if (per > STORM_MS_PER_DOORBELL)
		bad("the error-state flush costs %.2f ms of CPU per doorbell (threshold %.0f ms): it walks the whole ring",
		    per, STORM_MS_PER_DOORBELL);
	if (n < target)
		bad("only %d of %d doorbells in %.0f s", n, target, STORM_S);
	b2 = busy_seconds();
	sleep(2);
	b3 = busy_seconds();
	idle_busy = (b3 - b2) / 2;
	note("after the storm: %.2f CPUs busy (threshold %.1f)", idle_busy, IDLE_MAX_CPUS);
	if (idle_busy > IDLE_MAX_CPUS)
		bad("the kernel stays busy after the storm: %.2f CPUs", idle_busy);
	if (qp_state(&d, &q) != QPS_ERR)
		bad("QP not in the error state after the storm");
	if ((r = qp_destroy(&d, &q, 1)))
		bad("DESTROY_QP: %s", strerror(-r));
	if ((r = cq_destroy(&d, &c)))
		bad("DESTROY_CQ: %s", strerror(-r));
	dev_close(&d);
}

/* ---- phase race ---- */

struct racer {
	struct dev *d;
	struct qp *q;
	volatile int *stop;
	int doorbells, refused;
};

static void *racer_main(void *arg)
{
	struct racer *ra = arg;
	struct qp *q = ra->q;
	char w[512];

	while (!*ra->stop) {
		size_t len = slot_size(&q->sq) < sizeof(w) ? slot_size(&q->sq) : sizeof(w);

		switch (rnd() % 4) {
		case 0: /* a garbage WQE */
			fill_random(w, len);
			produce(&q->sq, w, len);
			break;
		case 1: /* a valid inline SEND */
			send_case_fill(0, (void *)w, len, ra->d, 0);
			produce(&q->sq, w, len);
			break;
		case 2: /* garbage indices */
			st(&q->sq.q->producer_index, rnd());
			st(&q->rq.q->producer_index, rnd());
			break;
		default: /* a whole-ring claim */
			st(&q->sq.q->producer_index, ld(&q->sq.q->consumer_index) - 1);
			break;
		}
		if (doorbell(ra->d, q))
			ra->refused++;
		ra->doorbells++;
	}
	return NULL;
}

static void phase_race(void)
{
	enum { NTHREADS = 3 };
	struct dev d;
	struct cq c;
	int r, total = 0, refused = 0, busy = 0;

	printf("phase race: doorbells and scribbles from %d threads while another destroys the QP\n",
	       NTHREADS);
	dev_open(&d);
	if ((r = cq_create(&d, &c, 64)))
		die("CREATE_CQ: %s", strerror(-r));
	for (int it = 0; it < 10 * count; it++) {
		struct qp q;
		pthread_t th[NTHREADS];
		struct racer ra[NTHREADS];
		volatile int stop = 0;

		if ((r = qp_create(&d, &q, &c, &c, 64, 64, 2, 32)))
			die("CREATE_QP: %s", strerror(-r));
		if (it % 2 == 0 && (r = qp_loopback_rts(&d, &q)))
			die("loopback RTS: %s", strerror(-r));
		if (it % 4 == 1)
			qp_to_err(&d, &q);
		for (int k = 0; k < NTHREADS; k++) {
			ra[k] = (struct racer){.d = &d, .q = &q, .stop = &stop};
			pthread_create(&th[k], NULL, racer_main, &ra[k]);
		}
		usleep(1000 + rnd() % 20000);
		if (it % 3 == 0)
			qp_to_err(&d, &q);
		/* ib_core refuses (EBUSY) to destroy an object another
		 * command is using (a doorbell holds the QP's uobject for
		 * read): retry, as a real user would have to. */
		for (int tries = 0; (r = qp_destroy(&d, &q, 0)) == -EBUSY && tries < 100000; tries++) {
			busy++;
			if (tries % 100 == 99)
				usleep(100);
		}
		if (r)
			bad("DESTROY_QP under doorbells: %s", strerror(-r));
		/* The threads go on a little against the destroyed QP, with
		 * its rings still mapped. */
		usleep(2000);
		stop = 1;
		for (int k = 0; k < NTHREADS; k++) {
			pthread_join(th[k], NULL);
			total += ra[k].doorbells;
			refused += ra[k].refused;
		}
		unmap_ring(&q.sq);
		unmap_ring(&q.rq);
		cq_drain(&c);
	}
	if ((r = cq_destroy(&d, &c)))
		bad("DESTROY_CQ: %s", strerror(-r));
	dev_close(&d);
	note("%d destroys under %d doorbells (%d refused: the QP was gone; %d DESTROY_QP retries on EBUSY)",
	     10 * count, total, refused, busy);
}

/* ---- phase fork ---- */

/* A child: sets everything up, scribbles, and _exits without cleanup. */
static void child_main(int kind)
{
	struct dev d;
	struct cq c;
	struct qp q;
	char w[512];

	dev_open(&d);
	if (cq_create(&d, &c, kind == 2 ? 1 : 16))
		_exit(3);
	if (qp_create(&d, &q, &c, &c, kind == 2 ? 1 << 12 : 16, 16, 2, 32))
		_exit(3);
	switch (kind) {
	case 0: /* SENDs with no receive posted and RNR retries forever:
		 * the process exits with WQEs in flight and a timer armed */
		rnr_retry = 7;
		if (qp_loopback_rts(&d, &q))
			_exit(3);
		for (int i = 0; i < 8; i++) {
			send_case_fill(1, (void *)w, slot_size(&q.sq), &d, 0);
			produce(&q.sq, w, slot_size(&q.sq));
		}
		doorbell(&d, &q);
		break;
	case 1: /* garbage WQEs and indices */
		if (qp_loopback_rts(&d, &q))
			_exit(3);
		for (int i = 0; i < 64; i++) {
			fill_random(w, slot_size(&q.sq) < sizeof(w) ? slot_size(&q.sq) : sizeof(w));
			produce(&q.sq, w, slot_size(&q.sq) < sizeof(w) ? slot_size(&q.sq) : sizeof(w));
			if (i % 8 == 0)
				st(&q.sq.q->producer_index, rnd());
			doorbell(&d, &q);
		}
		break;
	default: /* storm in the error state */
		qp_to_err(&d, &q);
		for (int i = 0; i < 64; i++) {
			st(&q.sq.q->producer_index, ld(&q.sq.q->consumer_index) - 1);
			doorbell(&d, &q);
		}
		break;
	}
	_exit(0);
}

static void phase_fork(void)
{
	int n = 3 * count, r, st_;
	pid_t pid;

	printf("phase fork: %d children exit without cleanup, one is killed mid-doorbell\n", n + 1);
	for (int i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0)
			child_main(i % 3);
		if (waitpid(pid, &st_, 0) != pid)
			die("waitpid");
		if (!WIFEXITED(st_) || WEXITSTATUS(st_))
			bad("child %d (kind %d) ended with status %#x", i, i % 3, st_);
	}
	/* One killed while it rings doorbells with garbage from 2 threads. */
	pid = fork();
	if (pid == 0) {
		struct dev d;
		struct cq c;
		struct qp q;
		pthread_t th[2];
		struct racer ra[2];
		volatile int stop = 0;

		dev_open(&d);
		if (cq_create(&d, &c, 16) || qp_create(&d, &q, &c, &c, 64, 16, 2, 32) ||
		    qp_loopback_rts(&d, &q))
			_exit(3);
		for (int k = 0; k < 2; k++) {
			ra[k] = (struct racer){.d = &d, .q = &q, .stop = &stop};
			pthread_create(&th[k], NULL, racer_main, &ra[k]);
		}
		for (;;)
			pause();
	}
	usleep(300000);
	kill(pid, SIGKILL);
	r = waitpid(pid, &st_, 0);
	if (r != pid || !WIFSIGNALED(st_) || WTERMSIG(st_) != SIGKILL)
		bad("the killed child ended with status %#x", st_);
	note("%d children exited without cleanup, 1 killed", n);
}

/* ---- phase maps ---- */

static void expect_map_fails(struct dev *d, const char *what, size_t len, uint64_t off, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, d->fd, off);

	if (p != MAP_FAILED) {
		/* Touching it must not crash the kernel either. */
		bad("mmap %s (offset %#llx, %zu bytes) succeeded", what, (unsigned long long)off, len);
		munmap(p, len);
	} else {
		note("mmap %-40s -> %s", what, strerror(errno));
	}
}

static void phase_maps(void)
{
	struct dev d;
	struct cq c;
	struct qp q;
	struct ring sq, cqr;
	long pg = sysconf(_SC_PAGESIZE);
	int r;

	printf("phase maps: mmap at wrong offsets and sizes, after destroy\n");
	dev_open(&d);
	if ((r = cq_create(&d, &c, 16)))
		die("CREATE_CQ: %s", strerror(-r));
	if ((r = qp_create(&d, &q, &c, &c, 16, 16, 2, 32)))
		die("CREATE_QP: %s", strerror(-r));
	sq = q.sq;
	cqr = c.r;
	expect_map_fails(&d, "SQ, one page too long", sq.len + pg, sq.offset, MAP_SHARED);
	if (sq.len > (size_t)pg)
		expect_map_fails(&d, "SQ, one page too short", sq.len - pg, sq.offset, MAP_SHARED);
	expect_map_fails(&d, "SQ offset + 1 page", sq.len, sq.offset + pg, MAP_SHARED);
	expect_map_fails(&d, "offset 0x7fff0000000", sq.len, 0x7fff0000000ull, MAP_SHARED);
	expect_map_fails(&d, "offset -1 page", pg, -(uint64_t)pg, MAP_SHARED);
	/* MAP_PRIVATE and a second mapping of the same ring: whatever the
	 * answer, no crash; a second shared mapping is legal. */
	{
		void *p = mmap(NULL, sq.len, PROT_READ | PROT_WRITE, MAP_PRIVATE, d.fd, sq.offset);

		note("mmap SQ MAP_PRIVATE -> %s", p == MAP_FAILED ? strerror(errno) : "mapped");
		if (p != MAP_FAILED) {
			((volatile char *)p)[0] = 1;
			munmap(p, sq.len);
		}
		p = mmap(NULL, sq.len, PROT_READ | PROT_WRITE, MAP_SHARED, d.fd, sq.offset);
		if (p == MAP_FAILED)
			bad("second shared mapping of the SQ: %s", strerror(errno));
		else
			munmap(p, sq.len);
	}
	/* Destroy with the rings still mapped, then map them again. */
	if ((r = qp_destroy(&d, &q, 0)))
		bad("DESTROY_QP: %s", strerror(-r));
	/* The old mappings stay usable memory (the area lives until unmapped). */
	st(&sq.q->producer_index, 0xffffffff);
	fill_random(sq.q->data, 256);
	expect_map_fails(&d, "SQ after DESTROY_QP", sq.len, sq.offset, MAP_SHARED);
	expect_map_fails(&d, "RQ after DESTROY_QP", q.rq.len, q.rq.offset, MAP_SHARED);
	if ((r = doorbell(&d, &q)) == 0)
		bad("doorbell on a destroyed QP succeeded");
	if ((r = qp_state(&d, &q)) >= 0)
		bad("QUERY_QP on a destroyed QP succeeded");
	{
		struct ib_uverbs_destroy_cq cmd = {.cq_handle = c.handle};
		struct ib_uverbs_destroy_cq_resp resp;

		if ((r = uv_cmd(d.fd, IB_USER_VERBS_CMD_DESTROY_CQ, &cmd, sizeof(cmd), &resp, sizeof(resp))))
			bad("DESTROY_CQ: %s", strerror(-r));
	}
	st(&cqr.q->consumer_index, 0xffffffff);
	expect_map_fails(&d, "CQ after DESTROY_CQ", cqr.len, cqr.offset, MAP_SHARED);
	unmap_ring(&sq);
	unmap_ring(&q.rq);
	unmap_ring(&cqr);
	/* Double destroy: errors. */
	if (!qp_destroy(&d, &q, 0))
		bad("second DESTROY_QP succeeded");
	dev_close(&d);
}

/* ---- phase createfail ---- */

static long vmalloc_used_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmallocUsed: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * create_qp failing after the driver allocated its rings and reserved its
 * QP number (review finding 6): the driver's half of the response lands on
 * a read-only page, so its copy-out fails (EFAULT) at the end of the
 * driver's create.  The 128 MiB rings of every failed attempt must be gone
 * when the call returns: vmalloc usage does not grow, and the context's
 * ring cap (256 MiB) still admits a 128 MiB QP afterwards (one leaked
 * charge would refuse it with ENOMEM).
 */
static void phase_createfail(void)
{
	struct dev d;
	struct cq c;
	struct qp q;
	long pg = sysconf(_SC_PAGESIZE);
	long before, after;
	int r, fails = 0, tries = 4 * count;
	char *m;
	struct ib_uverbs_create_qp_resp *core;

	printf("phase createfail: create_qp whose response copy fails, %d times\n", tries);
	dev_open(&d);
	if ((r = cq_create(&d, &c, 16)))
		die("CREATE_CQ: %s", strerror(-r));
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + pg, pg, PROT_READ))
		die("mmap/mprotect: %s", strerror(errno));
	core = (void *)(m + pg - sizeof(*core));
	before = vmalloc_used_kb();
	for (int i = 0; i < tries; i++) {
		struct ib_uverbs_create_qp cmd = {0};

		cmd.pd_handle = d.pd;
		cmd.send_cq_handle = c.handle;
		cmd.recv_cq_handle = c.handle;
		cmd.max_send_wr = 1 << 16;
		cmd.max_recv_wr = 16;
		cmd.max_send_sge = 32;
		cmd.max_recv_sge = 1;
		cmd.qp_type = QPT_RC;
		r = uv_cmd(d.fd, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd), core,
			   sizeof(*core) + sizeof(struct rxe_create_qp_resp));
		if (r == 0)
			bad("CREATE_QP with an unwritable driver response succeeded");
		else
			fails++;
	}
	after = vmalloc_used_kb();
	note("%d of %d creates failed (last: %s); VmallocUsed %ld -> %ld kB", fails, tries,
	     strerror(-r), before, after);
	if (after - before > 64 * 1024)
		bad("vmalloc usage grew by %ld kB over failed creates", after - before);
	if ((r = qp_create(&d, &q, &c, &c, 1 << 16, 16, 32, 0)))
		bad("a 128 MiB QP after the failed creates: %s (ring memory still charged)",
		    strerror(-r));
	else if ((r = qp_destroy(&d, &q, 1)))
		bad("DESTROY_QP: %s", strerror(-r));
	munmap(m, 2 * pg);
	cq_destroy(&d, &c);
	dev_close(&d);
}

int main(int argc, char **argv)
{
	int opt;
	const char *flavor = getenv("RRXE_FLAVOR");

	debug_kernel = flavor && !strcmp(flavor, "debug");
	if (debug_kernel)
		wait_ms = 15000;
	while ((opt = getopt(argc, argv, "d:n:t:")) != -1) {
		switch (opt) {
		case 'd': ibdev = optarg; break;
		case 'n': count = atoi(optarg); break;
		case 't': wait_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-d IBDEV] [-n COUNT] [-t WAIT_MS] rings|wqes|storm|race|fork|maps|createfail|all...\n",
				argv[0]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no phase given\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = optind; i < argc; i++) {
		const char *p = argv[i];
		int all = !strcmp(p, "all");
		double t0 = now();
		int f0 = failures;

		if (all || !strcmp(p, "rings"))
			phase_rings();
		if (all || !strcmp(p, "wqes"))
			phase_wqes();
		if (all || !strcmp(p, "storm"))
			phase_storm();
		if (all || !strcmp(p, "race"))
			phase_race();
		if (all || !strcmp(p, "fork"))
			phase_fork();
		if (all || !strcmp(p, "maps"))
			phase_maps();
		if (all || !strcmp(p, "createfail"))
			phase_createfail();
		if (!all && strcmp(p, "rings") && strcmp(p, "wqes") && strcmp(p, "storm") && strcmp(p, "createfail") &&
		    strcmp(p, "race") && strcmp(p, "fork") && strcmp(p, "maps")) {
			fprintf(stderr, "unknown phase %s\n", p);
			return 2;
		}
		printf("%s: %s in %.1f s\n", p, failures == f0 ? "PASS" : "FAIL", now() - t0);
	}
	printf("hostile_user: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
