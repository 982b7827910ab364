// SPDX-License-Identifier: GPL-2.0
/*
 * stalled_copy: a verb whose copy to user memory never completes must not
 * hold up anyone's traffic.  userfaultfd makes a
 * page whose first touch parks the toucher until the program resolves the
 * fault; the program hands that page to a verb as the place for the
 * driver's answer, waits until the kernel is parked in the copy, and
 * meanwhile runs RC traffic on QPs that use the same CQ or SRQ:
 *
 *   cq   RESIZE_CQ (legacy write() command) with its response buffer in
 *        the page: the driver's part of the response (the new ring's
 *        struct mminfo) is the copy that parks.  Traffic: SENDs between
 *        two QPs whose send and receive completions go to that CQ.
 *   srq  MODIFY_SRQ (IB_SRQ_MAX_WR) whose struct rxe_modify_srq_cmd
 *        names an address in the page for the new ring's mminfo.
 *        Traffic: SENDs to a QP that takes its receives from that SRQ.
 *   odp  an RDMA WRITE into an on-demand-paging region over the page:
 *        the responder's fault must fail at once (REM_ACCESS_ERR), not
 *        wait for the userfaultfd (hmm faults without
 *        FAULT_FLAG_ALLOW_RETRY, so userfaultfd refuses them).
 *
 * While a verb is parked, the traffic must complete (a driver that copies
 * under a lock the engine takes parks every engine task that touches
 * the CQ or SRQ instead: no completion comes until the fault is
 * resolved).  Then the fault is resolved (UFFDIO_COPY of a zero page)
 * and the parked verb must return, successfully.
 *
 * Usage: stalled_copy [-d IBDEV] [-n SENDS] [-t WAIT_MS] cq|srq|odp|all...
 * The device needs a RoCE v2 IPv4 GID (an address on its netdev): the QPs
 * are connected to each other through it.  Runs as root: a userfaultfd
 * must catch kernel-mode faults (no UFFD_USER_MODE_ONLY).
 * Exit status: 0 all held, 1 something did not, 2 setup failed, 4 no
 * userfaultfd in this kernel (kselftest's skip).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "report.h"
#include "ibdev.h"

static int sends = 16;
static int wait_ms = 5000;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Waits up to WAIT_MS for *flag; whether it was set. */
static int wait_flag(atomic_int *flag, int ms)
{
	double end = now() + ms / 1e3;

	while (!atomic_load(flag)) {
		if (now() > end)
			return 0;
		sleep_ms(5);
	}
	return 1;
}

static size_t page;	/* the system's page size */

/* ---- two RC QPs connected to each other through the device's GID ---- */

struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;	/* a sends, b receives */
	struct ibv_mr *mr;	/* a's source and b's receive buffer */
	char *buf;
};

static struct ibv_qp *rc_qp(struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 64, .max_recv_wr = srq ? 0 : 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("create_qp: %s", strerror(errno));
	return qp;
}


static void pair_make(struct pair *p, struct ibv_srq *srq)
{
	p->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!p->cq)
		die("create_cq: %s", strerror(errno));
	p->a = rc_qp(p->cq, NULL);
	p->b = rc_qp(p->cq, srq);
	/* 4.096 us * 2^19, about 2 s, 7 retries: a QP whose peer is held up
	 * by the bug keeps retrying for longer than the check waits (with
	 * 2^18, 8.6 s, its retries ran out within the 10 s wait on debug). */
	rc_connect(p->a, p->b->qp_num, 19);
	rc_connect(p->b, p->a->qp_num, 19);
	p->buf = calloc(1, 1 << 16);
	p->mr = ibv_reg_mr(pd, p->buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE);
	if (!p->buf || !p->mr)
		die("reg_mr: %s", strerror(errno));
}

/* Posts N receives for b, on its RQ or on SRQ. */
static void post_recvs(struct pair *p, struct ibv_srq *srq, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)p->buf + 4096 + 64 * i, 64, p->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1 }, *badwr;

		if (srq ? ibv_post_srq_recv(srq, &wr, &badwr) : ibv_post_recv(p->b, &wr, &badwr))
			die("post_recv: %s", strerror(errno));
	}
}

/* ---- the traffic, in a thread of its own ---- */

struct traffic {
	struct pair *p;
	int n;
	atomic_int stop;	/* give up polling */
	atomic_int done;
	int completions;	/* successful, of 2n (n sends, n receives) */
	int errors;
	char first_error[96];
};

static void *traffic_main(void *arg)
{
	struct traffic *t = arg;
	struct pair *p = t->p;

	for (int i = 0; i < t->n; i++) {
		struct ibv_sge sge = { (uintptr_t)p->buf, 64, p->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *badwr;

		if (ibv_post_send(p->a, &wr, &badwr)) {
			snprintf(t->first_error, sizeof(t->first_error), "post_send: %s",
				 strerror(errno));
			t->errors++;
			break;
		}
	}
	while (t->completions < 2 * t->n && !t->errors && !atomic_load(&t->stop)) {
		struct ibv_wc wc[16];
		int k = ibv_poll_cq(p->cq, 16, wc);

		if (k < 0) {
			snprintf(t->first_error, sizeof(t->first_error), "poll_cq: %d", k);
			t->errors++;
			break;
		}
		for (int i = 0; i < k; i++) {
			if (wc[i].status == IBV_WC_SUCCESS) {
				t->completions++;
			} else if (!t->errors++) {
				snprintf(t->first_error, sizeof(t->first_error),
					 "wr_id %llu: %s", (unsigned long long)wc[i].wr_id,
					 ibv_wc_status_str(wc[i].status));
			}
		}
		if (!k)
			sleep_ms(1);
	}
	atomic_store(&t->done, 1);
	return NULL;
}

/* ---- the page that parks whoever touches it ---- */

static int uffd = -1;
static char *trap;	/* NPAGES pages, each faulting once */
enum { TRAP_CQ, TRAP_SRQ, TRAP_ODP, NPAGES };

/* 0, or 4 if this kernel has no userfaultfd. */
static int trap_open(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };

	/* Not UFFD_USER_MODE_ONLY: the faults to catch are the kernel's. */
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		printf("  SKIP: userfaultfd: %s (CONFIG_USERFAULTFD)\n", strerror(errno));
		return 4;
	}
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API: %s", strerror(errno));
	trap = mmap(NULL, NPAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (trap == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	reg.range.start = (uintptr_t)trap;
	reg.range.len = NPAGES * page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER: %s", strerror(errno));
	return 0;
}

/* Waits up to MS for a fault on trap page I; whether one came. */
static int trap_wait(int i, int ms)
{
	double end = now() + ms / 1e3;

	for (;;) {
		struct pollfd pfd = { uffd, POLLIN, 0 };
		struct uffd_msg msg;
		int left = (int)((end - now()) * 1e3);

		if (poll(&pfd, 1, left > 0 ? left : 0) <= 0)
			return 0;
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event == UFFD_EVENT_PAGEFAULT &&
		    msg.arg.pagefault.address / page == (uintptr_t)(trap + i * page) / page)
			return 1;
		note("unexpected userfaultfd event %u at %#llx", msg.event,
		     (unsigned long long)msg.arg.pagefault.address);
	}
}

/* Resolves the fault on trap page I with a page of zeroes. */
static void trap_release(int i)
{
	static char zero[1 << 16] __attribute__((aligned(4096)));
	struct uffdio_copy c = {
		.dst = (uintptr_t)(trap + i * page),
		.src = (uintptr_t)zero,
		.len = page,
	};

	if (ioctl(uffd, UFFDIO_COPY, &c) && errno != EEXIST)
		die("UFFDIO_COPY: %s", strerror(errno));
}

/* ---- a verb in a thread of its own, as a legacy write() command ---- */

struct verb {
	const char *name;
	char cmd[128];
	size_t len;
	atomic_int done;
	int err;		/* 0 or errno */
};

static void verb_init(struct verb *v, const char *name, uint32_t command, const void *req,
		      size_t req_len, size_t out_len)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (sizeof(hdr) + req_len) / 4,
		.out_words = out_len / 4,
	};

	memset(v, 0, sizeof(*v));
	v->name = name;
	memcpy(v->cmd, &hdr, sizeof(hdr));
	memcpy(v->cmd + sizeof(hdr), req, req_len);
	v->len = sizeof(hdr) + req_len;
}

static void *verb_main(void *arg)
{
	struct verb *v = arg;

	if (write(ctx->cmd_fd, v->cmd, v->len) != (ssize_t)v->len)
		v->err = errno;
	atomic_store(&v->done, 1);
	return NULL;
}

/*
 * Runs verb V in a thread until its copy parks on trap page I, then the
 * traffic of pair P; resolves the fault and checks that the verb returns.
 * What the verb holds must not be what the traffic needs.
 */
static void park_and_run(struct verb *v, int i, struct pair *p, const char *shared)
{
	struct traffic t = { .p = p, .n = sends };
	pthread_t vt, tt;
	double t0;
	int flowed;

	if (pthread_create(&vt, NULL, verb_main, v))
		die("pthread_create");
	if (!trap_wait(i, wait_ms)) {
		bad("%s did not touch the userfaultfd page in %d ms (%s)", v->name, wait_ms,
		    atomic_load(&v->done) ? (v->err ? strerror(v->err) : "it returned") :
					    "still running");
		trap_release(i);
		pthread_join(vt, NULL);
		return;
	}
	note("%s is parked in its copy to user memory", v->name);
	t0 = now();
	if (pthread_create(&tt, NULL, traffic_main, &t))
		die("pthread_create");
	flowed = wait_flag(&t.done, wait_ms);
	if (!flowed)
		bad("traffic on the QPs sharing the %s stopped while %s is parked: %d of %d completions in %d ms",
		    shared, v->name, t.completions, 2 * t.n, wait_ms);
	else if (t.errors)
		bad("traffic while %s is parked: %d errors, first %s", v->name, t.errors,
		    t.first_error);
	else
		note("traffic on the QPs sharing the %s: %d of %d completions in %.0f ms while %s is parked",
		     shared, t.completions, 2 * t.n, (now() - t0) * 1e3, v->name);
	if (atomic_load(&v->done))
		bad("%s returned while its copy should still be parked", v->name);
	trap_release(i);
	t0 = now();
	if (!wait_flag(&v->done, wait_ms))
		bad("%s did not return within %d ms of the fault's resolution", v->name, wait_ms);
	else if (v->err)
		bad("%s failed after the fault's resolution: %s", v->name, strerror(v->err));
	else
		note("%s returned %.0f ms after the fault's resolution", v->name,
		     (now() - t0) * 1e3);
	if (!flowed && wait_flag(&t.done, wait_ms))
		note("the traffic finished only after the fault's resolution: %d of %d completions",
		     t.completions, 2 * t.n);
	/* Its completions may have gone to a ring librxe does not poll. */
	atomic_store(&t.stop, 1);
	pthread_join(vt, NULL);
	pthread_join(tt, NULL);
}

static void phase_cq(void)
{
	struct pair p;
	struct ib_uverbs_resize_cq rc = { 0 };
	struct verb v;

	pair_make(&p, NULL);
	post_recvs(&p, NULL, sends);
	/* The whole response in the trap page: ib_core's part (struct
	 * ib_uverbs_resize_cq_resp) is written after the driver returns, the
	 * driver's (struct rxe_resize_cq_resp) by the driver. */
	rc.response = (uintptr_t)(trap + TRAP_CQ * page);
	rc.cq_handle = p.cq->handle;
	rc.cqe = 512;
	verb_init(&v, "resize_cq", IB_USER_VERBS_CMD_RESIZE_CQ, &rc, sizeof(rc),
		  sizeof(struct ib_uverbs_resize_cq_resp) + sizeof(struct rxe_resize_cq_resp));
	park_and_run(&v, TRAP_CQ, &p, "CQ");
	if (!v.err && v.done) {
		struct rxe_resize_cq_resp *r = (void *)(trap + TRAP_CQ * page +
						       sizeof(struct ib_uverbs_resize_cq_resp));

		if (!r->mi.size)
			bad("resize_cq's response names no ring");
	}
	/* The CQ's ring changed under librxe: everything goes at exit. */
}

static void phase_srq(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct {
		struct ib_uverbs_modify_srq m;
		struct rxe_modify_srq_cmd drv;
	} req = { 0 };
	struct pair p;
	struct verb v;

	if (!srq)
		die("create_srq: %s", strerror(errno));
	pair_make(&p, srq);
	post_recvs(&p, srq, sends);
	req.m.srq_handle = srq->handle;
	req.m.attr_mask = IBV_SRQ_MAX_WR;
	req.m.max_wr = 128;
	req.drv.mmap_info_addr = (uintptr_t)(trap + TRAP_SRQ * page);
	verb_init(&v, "modify_srq", IB_USER_VERBS_CMD_MODIFY_SRQ, &req, sizeof(req), 0);
	park_and_run(&v, TRAP_SRQ, &p, "SRQ");
	if (!v.err && v.done && !((struct mminfo *)(trap + TRAP_SRQ * page))->size)
		bad("modify_srq wrote no mmap info");
}

/* An RDMA WRITE into an ODP region over the trap page: refused at once. */
static void phase_odp(void)
{
	struct ibv_device_attr_ex dx;
	struct ibv_mr *odp;
	struct pair p;
	double t0;

	if (ibv_query_device_ex(ctx, NULL, &dx) ||
	    !(dx.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE)) {
		note("odp: no ODP WRITE on %s; skipped", ibdev);
		return;
	}
	pair_make(&p, NULL);
	odp = ibv_reg_mr(pd, trap + TRAP_ODP * page, page,
			 IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!odp)
		die("reg_mr ODP: %s", strerror(errno));
	struct ibv_sge sge = { (uintptr_t)p.buf, 64, p.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)(trap + TRAP_ODP * page), odp->rkey } },
			   *badwr;
	struct ibv_wc wc;
	int k = 0;

	t0 = now();
	if (ibv_post_send(p.a, &wr, &badwr))
		die("post_send: %s", strerror(errno));
	while (now() - t0 < wait_ms / 1e3 && (k = ibv_poll_cq(p.cq, 1, &wc)) == 0)
		sleep_ms(1);
	if (k != 1)
		bad("odp: no completion for a WRITE into the userfaultfd page in %d ms", wait_ms);
	else if (wc.status != IBV_WC_REM_ACCESS_ERR)
		bad("odp: a WRITE into the userfaultfd page completed with %s, not remote access error",
		    ibv_wc_status_str(wc.status));
	else
		note("odp: a WRITE into the userfaultfd page failed in %.0f ms: %s",
		     (now() - t0) * 1e3, ibv_wc_status_str(wc.status));
	if (trap_wait(TRAP_ODP, 0))
		bad("odp: the responder's fault waited on the userfaultfd");
	trap_release(TRAP_ODP);
}

int main(int argc, char **argv)
{
	const char *flavor = getenv("RRXE_FLAVOR");
	int opt, r;

	if (flavor && !strcmp(flavor, "debug"))
		wait_ms = 10000;
	while ((opt = getopt(argc, argv, "d:n:t:")) != -1) {
		switch (opt) {
		case 'd': ibdev = optarg; break;
		case 'n': sends = atoi(optarg); break;
		case 't': wait_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-d IBDEV] [-n SENDS] [-t WAIT_MS] cq|srq|odp|all...\n",
				argv[0]);
			return 2;
		}
	}
	if (optind >= argc || sends < 1 || sends > 64) {
		fprintf(stderr, "%s: no phase given, or -n not in 1..64\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	r = trap_open();
	if (r)
		return r;
	ibdev_open();
	for (int i = optind; i < argc; i++) {
		const char *ph = argv[i];
		int all = !strcmp(ph, "all"), f0 = failures;
		double t0 = now();

		if (!all && strcmp(ph, "cq") && strcmp(ph, "srq") && strcmp(ph, "odp")) {
			fprintf(stderr, "unknown phase %s\n", ph);
			return 2;
		}
		if (all || !strcmp(ph, "cq"))
			phase_cq();
		if (all || !strcmp(ph, "srq"))
			phase_srq();
		if (all || !strcmp(ph, "odp"))
			phase_odp();
		printf("%s: %s in %.1f s\n", ph, failures == f0 ? "PASS" : "FAIL", now() - t0);
	}
	printf("stalled_copy: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
