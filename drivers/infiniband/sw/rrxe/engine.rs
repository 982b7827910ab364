// SPDX-License-Identifier: GPL-2.0

//! The packet engine: where and in which order the protocol runs.
//!
//! Per-QP scheduling.  Every QP has two tasks, work items on an unbound
//! workqueue with the largest concurrency limit (`WQ_MAX_ACTIVE`), so
//! different QPs, and the two directions of one QP, run in parallel on all
//! CPUs, while a task never runs concurrently with itself (its scheduling
//! word, below, says who runs it; a workqueue keeps a work item from
//! running twice at once only within that queue, and a user QP's work
//! item may be queued on either user queue, but a run that hands the task
//! over touches nothing after it queued the item):
//!
//! * the **send task** (`send.rs`): the completer (acknowledgements the
//!   receive path queued, timer expiries) and the requester (new packets
//!   from the send ring), under the QP's `send` lock;
//! * the **receive task** (`recv.rs`): the responder (requests the receive
//!   path queued), under the QP's `recv` lock.
//!
//! Three such workqueues: `rrxe_engine` for kernel consumers' QPs,
//! `rrxe_user` for user processes' QPs and their `advise_mr` prefetches,
//! and `rrxe_user_bulk`, high-priority, on which a user QP's tasks are
//! queued for its owner's CPU while it moves multi-packet messages
//! (`qp/placement.rs`).  A user can make an engine task wait as long as it
//! likes in one place only, a page fault of an on-demand-paging region
//! (file-backed memory whose I/O never completes; see `odp.rst`), and only
//! a user QP's task or a prefetch touches such a region (a region serves
//! the QPs of its own PD).  So however many of its tasks a user parks, they
//! occupy the user queues' workers, and kernel consumers (NVMe-oF,
//! rdma_cm's kernel users) keep theirs.  Nothing else an engine task waits
//! for is held across a user copy: verbs copy to and from user memory
//! before they take a lock the engine takes (`verbs/cq.rs`,
//! `verbs/srq.rs`).
//!
//! Who runs a task is decided by its scheduling word (`qp/task.rs`): input
//! (a packet, a WQE, a timer expiry, a new state) is published, then the
//! word is kicked, and only a kick that finds the task without an owner
//! queues its work item; a running owner sees the mark and makes another
//! pass before it lets go.  A pass does up to [`BUDGET`] steps; an owner
//! with work left hands the task to its work item (queued again), so one
//! busy QP cannot starve the others.  The doorbell (`post_send`) claims
//! the send task and runs one short pass inline if it has no owner
//! ([`INLINE_DOORBELL`], [`INLINE_BUDGET`]); `modify_qp` and destroy
//! quiesce the tasks (destroy for good) before they take the sides'
//! locks.
//!
//! The receive path (`rx.rs`) runs in softirq context: it checks what is
//! cheap (lengths, ICRC, QP, addresses, state), appends the skb to the
//! QP's bounded queue for the task that handles it (a datagram to a
//! multicast group: a clone to each member's, `multicast.rs`), and
//! schedules that task.  It takes no lock but the queue's (and the
//! multicast groups' spinlock), allocates nothing but those clones, and
//! drops (and counts) what does not fit.
//!
//! Timers: one hrtimer per QP (retransmit or RNR wait), microsecond
//! resolution; its callback only marks the QP (`timer_fired`) and kicks
//! the send task, which reads the clock then and checks the deadline.
//! The retransmit timer is lazy: acknowledgements do not restart it, its
//! expiry re-arms it if there was progress.  Dropping the timer's handle
//! cancels it.
//!
//! # Locks
//!
//! The driver's one lock table; other files link here.  While a lock is
//! held, only locks of a higher rank are taken, and two locks of one rank
//! are never held together (a task holds one side, `send` or `recv`;
//! `modify_qp` and destroy take them one after the other).  Kinds: `M`
//! mutex (sleeps), `S` `spin_lock`, `I` `spin_lock_irqsave`
//! (`kapi::spinlock_irq::SpinLockIrq`, or C's for `sk_buff_head`), `X` the
//! `xa_lock` of an `RcuTable` (`spin_lock`).  Contexts: `P` process
//! (verbs, work items, a user QP's doorbell), `B` softirq, `A` any (hard
//! interrupt, interrupts off).
//!
//! | Rk | Lock                 | K | Ctx | Protects                        |
//! |----|----------------------|---|-----|---------------------------------|
//! | 1  | `link::NEWLINK`      | M | P   | one `rdma link add` at a time   |
//! | 2  | `link::DEVICES`      | M | P   | the devices unload removes      |
//! | 2  | `net::SOCKETS`       | M | P   | UDP sockets per namespace       |
//! | 3  | `Qp::attrs`          | M | P   | `QpAttr`, what `query_qp` shows |
//! | 3  | `McastTable::writer` | M | P   | attach, detach, netdev filter   |
//! | 4  | `Qp::send`           | M | P   | `SendSide` (the send task's)    |
//! | 4  | `Qp::recv`           | M | P   | `RecvSide` (the receive task's) |
//! | 5  | `SrqShared::inner`   | M | P   | `SrqInner`: ring, index, limit  |
//! | 5  | `CqShared::ring`     | M | P   | a user CQ's ring and producer   |
//! | 5  | `OdpUmem::umem`      | M | P   | the `ib_umem_odp` (its release) |
//! | 6  | `MwState::inner`     | S | P   | `MwInner`: rkey, binding        |
//! | 6  | `QpEvents::cell` [1] | S | P   | the `ib_qp` events go to        |
//! | 7  | `Qp::paths`          | I | P   | path cells' writers, `mig`      |
//! | 7  | `Qp::kpost`          | I | A   | a kernel QP's rings (producer)  |
//! | 7  | `SrqShared::kpost`   | I | A   | a kernel SRQ's ring (producer)  |
//! | 7  | `CqShared::kring`    | I | A   | a kernel CQ's `KernelRing`      |
//! | 7  | `FastPages::inner`   | I | A   | `FastInner`: lists, generation  |
//! | 7  | `McastTable::inner`  | I | B,P | `McastInner`: groups, members   |
//! | 7  | `SkbQueue` (C lock)  | I | B,P | `rx_requests`, `rx_responses`   |
//! | 7  | `RcuTable` `xa_lock` | X | P [2] | index allocation, (un)publish |
//!
//! Notes: [1] likewise `CqEvents` and `SrqEvents`: each holds the raw
//! `ib_cq` or `ib_srq` until its destroy verb, and calls the consumer's
//! handler under it.  [2] The AH table's also with interrupts off: the CM
//! creates and destroys address handles under its spinlocks.
//!
//! Taken while holding each (rank 7 and `CqShared::ring`: none):
//!
//! * `NEWLINK`: `SOCKETS`, then `DEVICES`, then ib_core's registration;
//!   after a failed one, `dealloc_driver` (`DEVICES`, released, then
//!   `SOCKETS`: the registry entry holds the device's socket use).
//! * `attrs`: `paths` (released again), then `send`, then `recv`.
//! * `McastTable::writer`: `McastTable::inner`; the netdev's address lock.
//! * `send`, `recv`: `paths` (a migration); a window's `inner`;
//!   `FastPages`; `OdpUmem` (an on-demand region's copy); the CQ's `kring`
//!   or `ring`, then (released) its `CqEvents`; `QpEvents`; for a packet
//!   to this host, what the receive path takes.  `send` also the MR
//!   table's `xa_lock` (REG_MR); `recv` the SRQ's `inner`, then
//!   (released) its `SrqEvents`.
//! * `SrqShared::inner`: its `kpost` (a resize); `FastPages` (a key check).
//! * `MwState::inner`: `FastPages` (the bound region's check).
//! * `OdpUmem::umem`: `mmap_lock` (a fault) or the umem's `umem_mutex` (a
//!   copy), never both.
//! * `QpEvents`, `CqEvents`, `SrqEvents`: the consumer's handler (uverbs:
//!   its `ev_queue.lock`, `I`); a kernel consumer's may post or poll
//!   (rank 7).
//!
//! The receive path (softirq) takes only a `SkbQueue` lock and
//! `McastTable::inner`, one at a time; the timer callback (hard interrupt)
//! none.  Held by the kernel around rrxe: `link_ops_rwsem` around
//! `newlink`, a device's `unregistration_lock` around `dealloc_driver`,
//! `pernet_ops_rwsem` around a namespace's exit (`SOCKETS`), RTNL around
//! netdev events (no rrxe lock there), and kernel consumers' own locks,
//! in any context, around posting, polling, arming, `map_mr_sg` and
//! address handles (hence the `I` leaves).  Under `send` and `recv` the
//! kernel takes the hrtimer base (a cancel waits for the callback, which
//! takes no lock), workqueue pools, the IP stack's locks and, when
//! destroy drops a user ring, its mmap entry's locks.  No lock an engine
//! task takes is held across a copy to or from user memory: verbs copy
//! before they take one (`verbs/cq.rs`, `verbs/srq.rs`).
//!
//! Not locks: RCU read sections (table lookups, `Revocable::try_access`
//! around copies of pinned memory, the workqueue slots), in which nothing
//! sleeps; the task words (`qp/task.rs`), which decide who takes `send` or
//! `recv` (the owner with `try_lock`, a quiescer, `modify_qp` or destroy,
//! with `lock`); the path cells (`qp/path.rs`), a seqcount read in any
//! context and written under `paths` with interrupts off (a softirq
//! reader must never wait for a write it interrupted); the counters
//! (atomics).  Lockdep has one class per `new_*!` site; all `RcuTable`s
//! share one class, all `SkbQueue`s another (both initialised in a C
//! helper).
//!
//! Lifetimes: a work item or timer holds an `Arc` of its QP; destroying a
//! QP marks it dead, quiesces both tasks for good (no new owner from then
//! on: kicks only mark, a queued run gives up; an owner past its pass may
//! still queue or raise, on its own `Arc`), waits for a pass in progress
//! (the sides' locks), drops the timer handle (cancelling the timer), takes
//! the rings away and removes it from the table (the table's reference
//! goes after an RCU grace period, on the release queue: `kapi/xarray.rs`).
//! Unload empties each workqueue's slot, waits for RCU readers and drains
//! the queue.

pub(crate) mod completer;
mod invalidate;
pub(crate) mod recv;
pub(crate) mod requester;
pub(crate) mod responder;
pub(crate) mod rx;
pub(crate) mod send;

use kernel::{
    cpu::CpuId,
    prelude::*,
    sync::{
        atomic::ordering::{Relaxed, Release},
        Arc, ArcBorrow,
    },
    time::{
        hrtimer::{HrTimerCallback, HrTimerCallbackContext, HrTimerPointer, HrTimerRestart},
        Delta,
    },
    workqueue::{HasWork, RawWorkItem, WorkItem},
};

use crate::kapi::workqueue::{OwnedQueue, QueueSlot, SlotGuard, MAX_ACTIVE};
use crate::proto::cqe::WcStatus;
use crate::qp::task::{Claim, Kick, Take};
use crate::qp::{send::SendSide, Qp};

/// Steps a task run takes before it yields the worker.
pub(crate) const BUDGET: u32 = 1024;

/// Passes a work item makes for input that arrives during them before it
/// hands the task to a new run (queued behind the other QPs' work).
pub(crate) const PASSES_PER_RUN: u32 = 4;

/// Whether the doorbell runs a pass of the send task in the caller when
/// the task has no owner (else it queues the task, as C rxe 7.2 does).
const INLINE_DOORBELL: bool = true;

/// Steps of the doorbell's inline pass when the device's previous inline
/// pass was another QP's (a step sends one packet or handles one
/// acknowledgement); the rest of a burst goes to the work item, on
/// whichever CPU is free.  Measured (`performance.rst`): with the whole
/// burst inline, four QPs' sends all ran in the posting thread and half
/// of the runs were slow with a CPU idle; with a short pass for every
/// doorbell, one QP's 64 KiB SENDs lost their 2x lead.
pub(crate) const INLINE_BUDGET: u32 = 4;

/// Whether the engine's workers run at high priority.  Measured with engine
/// v2 (two alternating rounds, same boot): worse in 10 of 11 cells (e.g.
/// ib_send_lat 2 B 1.95x C rxe instead of 0.66x): the busy-polling
/// benchmark threads and the workers then fight for the two CPUs; off.
/// Only multi-packet transfers run at high priority, each beside its
/// owner (`qp/placement.rs`).
const HIGHPRI: bool = false;

/// The workqueue of kernel consumers' QPs (see the module docs).
static KERNEL_WQ: QueueSlot = QueueSlot::new();

/// The workqueue of user processes' QPs and prefetches.
static USER_WQ: QueueSlot = QueueSlot::new();

/// The high-priority workqueue of user QPs' multi-packet transfers, each
/// task queued for its owner's CPU (`qp/placement.rs`).
static USER_BULK_WQ: QueueSlot = QueueSlot::new();

/// Owns the engine's workqueues; dropping it drains and destroys them.
/// No work item of the kernel queue queues work on a user queue or the
/// reverse; a user QP's task moves between the two user queues, and one
/// that finds its next queue gone (its slot empty) gives up
/// ([`queue_send`]), as it does on unload anyway.
pub(crate) struct Workqueues {
    _kernel: SlotGuard,
    _user: SlotGuard,
    _user_bulk: SlotGuard,
}

/// Creates the engine's workqueues; they live until the guard drops.
pub(crate) fn start() -> Result<Workqueues> {
    let user = USER_WQ.install(OwnedQueue::new_unbound(c"rrxe_user", MAX_ACTIVE, HIGHPRI)?)?;
    let user_bulk = USER_BULK_WQ.install(OwnedQueue::new_unbound(
        c"rrxe_user_bulk",
        MAX_ACTIVE,
        true,
    )?)?;
    let kernel = KERNEL_WQ.install(OwnedQueue::new_unbound(
        c"rrxe_engine",
        MAX_ACTIVE,
        HIGHPRI,
    )?)?;
    Ok(Workqueues {
        _kernel: kernel,
        _user: user,
        _user_bulk: user_bulk,
    })
}

/// The workqueue `qp`'s tasks run on.
fn queue_of(qp: &Qp) -> &'static QueueSlot {
    if qp.user {
        &USER_WQ
    } else {
        &KERNEL_WQ
    }
}

/// Input for `qp`'s send task was published: queues the task unless it
/// has an owner, who will see the input.  Any context.
pub(crate) fn schedule_send(qp: &Arc<Qp>) {
    if qp.send_sched.kick() == Kick::Queue {
        queue_send(qp);
    }
}

/// Input for `qp`'s receive task was published (as [`schedule_send`]).
pub(crate) fn schedule_recv(qp: &Arc<Qp>) {
    if qp.recv_sched.kick() == Kick::Queue {
        queue_recv(qp);
    }
}

/// Queues the send task's work item for its owner (a transition of the
/// word said so).  The item cannot be queued already (one owner, one
/// item); if the workqueue is gone (unload), the owner gives up.
pub(crate) fn queue_send(qp: &Arc<Qp>) {
    match enqueue::<0>(qp, qp.placement.send_cpu(qp.user)) {
        Some(Ok(())) => {}
        // Pending already: that run owns the task (the word says this
        // cannot happen).
        Some(Err(_)) => already_queued(qp, "send"),
        None => qp.send_sched.abandon(),
    }
}

/// Queues the receive task's work item (as [`queue_send`]).
pub(crate) fn queue_recv(qp: &Arc<Qp>) {
    match enqueue::<1>(qp, qp.placement.recv_cpu(qp.user)) {
        Some(Ok(())) => {}
        Some(Err(_)) => already_queued(qp, "receive"),
        None => qp.recv_sched.abandon(),
    }
}

/// Queues `qp`'s task `ID`: on the bulk queue for `cpu` if there is one
/// (`qp/placement.rs`), else on the QP's queue wherever the kernel puts
/// it; `None` if the queue is gone (unload).
fn enqueue<const ID: u64>(qp: &Arc<Qp>, cpu: Option<CpuId>) -> Option<QueueResult>
where
    Arc<Qp>: RawWorkItem<ID, EnqueueOutput = QueueResult>,
{
    match cpu {
        Some(cpu) => USER_BULK_WQ.enqueue_on::<Arc<Qp>, ID>(cpu, qp.clone()),
        None => queue_of(qp).with(|q| q.enqueue::<Arc<Qp>, ID>(qp.clone())),
    }
}

/// What queueing a task's work item returns: the `Arc` back if the item
/// was queued already.
type QueueResult = core::result::Result<(), Arc<Qp>>;

/// A task's work item was found queued when its word said it was not.
fn already_queued(qp: &Qp, task: &str) {
    crate::rrxe_ratelimited!(
        pr_warn,
        "rrxe: QP {:#x}: {} task queued twice\n",
        qp.qpn,
        task
    );
}

/// Queues a job a user asked for on the user workqueue (the verbs'
/// asynchronous `advise_mr` prefetch); dropped if the engine is stopping
/// (module unload).
pub(crate) fn schedule_user_job<T>(job: Arc<T>)
where
    T: WorkItem<Pointer = Arc<T>> + HasWork<T> + Send + Sync + 'static,
{
    let _ = USER_WQ.with(|q| q.enqueue(job));
}

/// `modify_qp` ends its quiesce of `qp`'s tasks (started before it took
/// their locks; they are released): the runs that input during it asked
/// for are queued.
pub(crate) fn unquiesce(qp: &Arc<Qp>) {
    if qp.send_sched.unquiesce() == Kick::Queue {
        queue_send(qp);
    }
    if qp.recv_sched.unquiesce() == Kick::Queue {
        queue_recv(qp);
    }
}

/// The doorbell (process context): new WQEs are in the send ring.  If
/// the send task has no owner, the caller takes it and runs a pass
/// ([`INLINE_DOORBELL`]); else the owner sees the WQEs.
pub(crate) fn doorbell(qp: &Arc<Qp>) {
    if qp.user {
        qp.placement.set_home();
    }
    // A kernel consumer may ring it in atomic context: no pass there.
    if !INLINE_DOORBELL || !qp.user {
        schedule_send(qp);
    } else if qp.send_sched.claim() == Claim::Won {
        // A poster that keeps ringing one QP sends its bursts itself while
        // a worker receives; one that rings several in turn would send for
        // all of them on one CPU, so it sends the head of each burst only
        // and workers send the rest in parallel.
        let budget = if qp.dev.last_doorbell.xchg(qp.qpn, Relaxed) == qp.qpn {
            BUDGET
        } else {
            INLINE_BUDGET
        };
        send::own(qp, Some(budget));
    }
}

/// Moves `qp` to the error state because of `why` (a rate-limited
/// message) and schedules both tasks, which flush their queues.
pub(crate) fn fail(qp: &Arc<Qp>, why: &str) {
    if qp.enter_error() {
        crate::rrxe_ratelimited!(pr_warn, "rrxe: QP {:#x}: error state: {}\n", qp.qpn, why);
    }
    schedule_send(qp);
    schedule_recv(qp);
}

/// A fatal error of the oldest send WQE: the QP enters the error state
/// (`fail`), then the WQE completes with `status`, so that a consumer who
/// sees the error completion finds the QP in the error state (IBTA); the
/// caller holds the send side `s`.
pub(crate) fn fail_head(qp: &Arc<Qp>, s: &mut SendSide, status: WcStatus, why: &str) {
    fail(qp, why);
    s.retire_head(qp, status);
}

/// Arms `qp`'s timer to fire `after` from now (the caller holds the send
/// side and stores the handle there).
pub(crate) fn arm_timer(qp: &Arc<Qp>, after: Delta) -> kernel::time::hrtimer::ArcHrTimerHandle<Qp> {
    qp.clone().start(after)
}

impl WorkItem<0> for Qp {
    type Pointer = Arc<Qp>;

    fn run(this: Arc<Qp>) {
        if this.send_sched.take_queued() == Take::Run {
            send::own(&this, None);
        }
    }
}

impl WorkItem<1> for Qp {
    type Pointer = Arc<Qp>;

    fn run(this: Arc<Qp>) {
        if this.recv_sched.take_queued() == Take::Run {
            recv::own(&this);
        }
    }
}

impl HrTimerCallback for Qp {
    type Pointer<'a> = Arc<Qp>;

    fn run(this: ArcBorrow<'_, Qp>, _ctx: HrTimerCallbackContext<'_, Qp>) -> HrTimerRestart {
        // Hard interrupt context: only mark and schedule; the task checks
        // whether the deadline is still current.
        this.timer_fired.store(true, Release);
        let qp: Arc<Qp> = this.into();
        schedule_send(&qp);
        HrTimerRestart::NoRestart
    }
}
