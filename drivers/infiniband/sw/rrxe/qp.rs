// SPDX-License-Identifier: GPL-2.0

//! A queue pair as the data path sees it.  Each piece of state is kept
//! once, behind the narrowest lock that fits how it is used:
//!
//! * identity and what `create_qp` fixed (number, type, caps, PD, CQs);
//! * the state ([`Qp::state`]): an atomic, read without a lock by the
//!   receive path in softirq context and by both tasks; changed by
//!   `modify_qp` and by the engine on a fatal error;
//! * the path ([`Qp::path`]): a lock-free cell (`qp/path.rs`), read by the
//!   receive path's address check and by transmit;
//! * the attributes `modify_qp` stored ([`Qp::attrs`], a mutex), which
//!   `query_qp` reports; the engine gets what it needs from them as
//!   parameters when they change;
//! * the send side ([`Qp::send`], `qp/send.rs`): the send ring, the
//!   WQEs in flight, PSNs, retry counts, the timer; used by the send task
//!   (requester and completer);
//! * the receive side ([`Qp::recv`], `qp/recv.rs`): the receive ring, the
//!   message being received, the expected PSN; used by the receive task
//!   (responder);
//! * two bounded queues of received packets, requests for the receive task
//!   and acknowledgements for the send task, filled in softirq context
//!   (bounded in packets and in bytes), and the path MTU the receive path
//!   checks their length against (an atomic);
//! * who runs each task ([`Qp::send_sched`], [`Qp::recv_sched`],
//!   `qp/task.rs`): an atomic word each, which decides who may take the
//!   side's lock.
//!
//! Locks, their order and contexts: the table in the `engine` module's
//! documentation (the one place that lists them).

pub(crate) mod inflight;
pub(crate) mod migration;
pub(crate) mod path;
pub(crate) mod placement;
pub(crate) mod recv;
pub(crate) mod send;
pub(crate) mod task;

use kernel::{
    impl_has_hr_timer, impl_has_work, new_mutex, new_work,
    prelude::*,
    sync::{
        aref::ARef,
        atomic::{Acquire, Atomic, Full, Relaxed, Release},
        Arc, Mutex,
    },
    time::hrtimer::HrTimer,
    workqueue::Work,
};

use crate::ah::AhTable;
use crate::cq::CqShared;
use crate::kapi::net::{netdev::NetDevice, skb_queue::SkbQueue};
use crate::kapi::rdma::event::{QpEvent, QpEvents};
use crate::kapi::rdma::qp::{QpAttr, QpInit};
use crate::kapi::spinlock_irq::SpinLockIrq;
use crate::kapi::xarray::RcuTable;
use crate::mcast::McastTable;
use crate::mr::MrTable;
use crate::mw::{MwTable, QpIdent};
use crate::new_spinlock_irq;
use crate::param;
use crate::proto::cqe::{Cqe, WcStatus};
use crate::proto::qp_state::{QpState, QpType};
use crate::queue::Queue;
use crate::srq::{SrqShared, SrqTable};
use crate::stats::{Counter, Stats};
use placement::Placement;
use task::TaskWord;

pub(crate) use path::{Endpoints, PathCell};

/// Send WQEs a QP holds fetched at most: the RC window (128 PSNs, so at
/// most 128 WQEs started and unacknowledged) and room to fetch ahead.
pub(crate) const INFLIGHT_MAX: usize = 256;

/// Received packets a QP queues per direction before dropping
/// (`rcv_dropped`): a packet storm cannot make the kernel hold more.
pub(crate) const RX_QUEUE_LIMIT: u32 = 1024;

/// Memory (`skb->truesize`, summed) a QP's queue holds per direction
/// before dropping (`rcv_dropped`).  The receive path admits no packet
/// with more than 4096 payload bytes, so a packet holds at most about
/// 8 KiB (a 4 KiB-MTU packet in a page-sized buffer, or its IP fragments);
/// 4 MiB is room for 512 of them, a full RC window (128 PSNs) four times
/// over, and for seven skbs of 64 segments each (UDP GRO's most, about
/// 520 KiB of truesize at 4 KiB MTU) should the receive path one day take
/// GRO'd skbs.  Packets of a 1 KiB MTU (about 2.5 KiB each) meet the count
/// bound first.  Without it, 1024 reassembled 64 KiB datagrams would pin
/// more than 100 MiB per queue.
pub(crate) const RX_QUEUE_BYTES: usize = 4 << 20;

/// What the data path of a device needs, shared by its QPs: where packets
/// leave, the regions WQEs name, the QPs by number (for received packets
/// and loopback delivery), the counters.  A QP holds it; the device's QP
/// table holds the QPs until `destroy_qp` (which ib_core runs for every QP
/// before the device goes), so the two never keep each other alive.
#[pin_data]
pub(crate) struct DevCore {
    pub(crate) netdev: ARef<NetDevice>,
    #[pin]
    pub(crate) mrs: MrTable,
    #[pin]
    pub(crate) mws: MwTable,
    #[pin]
    pub(crate) qps: RcuTable<Qp>,
    /// Address handles by number (UD sends name them).
    #[pin]
    pub(crate) ahs: AhTable,
    /// Shared receive queues by number (QPs hold theirs directly).
    #[pin]
    pub(crate) srqs: SrqTable,
    /// Multicast groups and their QPs (looked up by the receive path).
    #[pin]
    pub(crate) mcast: McastTable,
    /// Serial number of the next QP ([`QpIdent`]).
    qp_serial: Atomic<u64>,
    /// The QP whose doorbell ran the last inline pass (`engine::doorbell`).
    pub(crate) last_doorbell: Atomic<u32>,
    pub(crate) stats: Stats,
}

impl DevCore {
    /// The core of a new device on `netdev`.
    pub(crate) fn new(netdev: ARef<NetDevice>) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                netdev,
                mrs <- MrTable::new(),
                mws <- MwTable::new(),
                qps <- RcuTable::new(),
                ahs <- RcuTable::new(),
                srqs <- RcuTable::new(),
                mcast <- McastTable::new(),
                qp_serial: Atomic::new(0),
                last_doorbell: Atomic::new(0),
                stats: Stats::new(),
            }),
            GFP_KERNEL,
        )
    }
}

/// A queue pair.
#[pin_data]
pub(crate) struct Qp {
    pub(crate) qpn: u32,
    /// Its number and device-unique serial (what a type 2 memory window
    /// bound through it remembers).
    pub(crate) ident: QpIdent,
    pub(crate) qp_type: QpType,
    pub(crate) init: QpInit,
    /// A user process's QP (rings it maps), not a kernel consumer's: its
    /// tasks run on the engine's user workqueue (`engine.rs`).
    pub(crate) user: bool,
    pub(crate) dev: Arc<DevCore>,
    pub(crate) scq: Arc<CqShared>,
    pub(crate) rcq: Arc<CqShared>,
    /// The shared receive queue receive WQEs come from, if any (then the
    /// QP has no receive ring).
    pub(crate) srq: Option<Arc<SrqShared>>,
    /// Where asynchronous events go (disconnected by `destroy_qp`).
    events: QpEvents,
    /// `QpState::raw()`.
    state: Atomic<u32>,
    /// Destroyed: the tasks do nothing any more.
    dead: Atomic<bool>,
    /// The path MTU in bytes, for the receive path's length check (the
    /// two sides get it with their parameters; see [`Qp::set_pmtu`]).
    pmtu: Atomic<u32>,
    pub(crate) path: PathCell,
    /// The alternate path, if loaded (`qp/migration.rs`).
    pub(crate) alt_path: PathCell,
    /// `migration` state (MIGRATED or ARMED).
    mig: Atomic<u32>,
    /// Serialises the writers of `path`, `alt_path` and `mig`
    /// (`migration::PathWriter`); interrupts off, as the receive path
    /// reads the paths in softirq context.
    #[pin]
    paths: SpinLockIrq<migration::PathsInner>,
    #[pin]
    pub(crate) attrs: Mutex<QpAttr>,
    #[pin]
    pub(crate) send: Mutex<send::SendSide>,
    #[pin]
    pub(crate) recv: Mutex<recv::RecvSide>,
    /// Requests for the receive task.
    #[pin]
    pub(crate) rx_requests: SkbQueue,
    /// Acknowledgements for the send task.
    #[pin]
    pub(crate) rx_responses: SkbQueue,
    /// The hrtimer fired since the send task last looked (`engine/send.rs`
    /// reads the clock only then).
    pub(crate) timer_fired: Atomic<bool>,
    /// Where the QP's tasks run while it moves long messages
    /// (`qp/placement.rs`).
    pub(crate) placement: Placement,
    /// Who runs the send task (`qp/task.rs`).
    pub(crate) send_sched: TaskWord,
    /// Who runs the receive task.
    pub(crate) recv_sched: TaskWord,
    #[pin]
    pub(crate) send_task: Work<Qp, 0>,
    #[pin]
    pub(crate) recv_task: Work<Qp, 1>,
    #[pin]
    pub(crate) timer: HrTimer<Qp>,
    /// A kernel consumer's rings, which its `post_send` and `post_recv`
    /// fill from any context (`verbs/post.rs`); empty for a user QP and
    /// once the QP is destroyed.
    #[pin]
    pub(crate) kpost: SpinLockIrq<KernelRings>,
}

/// The rings a kernel consumer posts to.
#[derive(Default)]
pub(crate) struct KernelRings {
    pub(crate) sq: Option<Arc<Queue>>,
    pub(crate) rq: Option<Arc<Queue>>,
}

impl_has_work! {
    impl HasWork<Self, 0> for Qp { self.send_task }
    impl HasWork<Self, 1> for Qp { self.recv_task }
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Qp {
        mode: kernel::time::hrtimer::RelativeMode<kernel::time::Monotonic>,
        field: self.timer
    }
}

/// A QP's send ring and where its receive WQEs come from, as created.
pub(crate) struct Rings {
    pub(crate) sq: Queue,
    /// Its own receive ring, or none with an SRQ.
    pub(crate) rq: Option<Queue>,
    pub(crate) srq: Option<Arc<SrqShared>>,
}

impl Qp {
    /// A new QP in the RESET state.
    pub(crate) fn new(
        qpn: u32,
        qp_type: QpType,
        init: QpInit,
        dev: Arc<DevCore>,
        cqs: (Arc<CqShared>, Arc<CqShared>),
        rings: Rings,
        events: QpEvents,
    ) -> Result<Arc<Self>> {
        // At most a window's worth of WQEs is ever fetched (see the requester).
        let inflight = (init.caps.max_send_wr as usize).min(INFLIGHT_MAX);
        let sq = Arc::new(rings.sq, GFP_KERNEL)?;
        let rq = match rings.rq {
            Some(q) => Some(Arc::new(q, GFP_KERNEL)?),
            None => None,
        };
        let user = !sq.is_kernel();
        let kpost = if !user {
            KernelRings {
                sq: Some(sq.clone()),
                rq: rq.clone(),
            }
        } else {
            KernelRings::default()
        };
        let send = send::SendSide::new(sq, inflight)?;
        let recv = recv::RecvSide::new(rq)?;
        let ident = QpIdent {
            qpn,
            serial: dev.qp_serial.fetch_add(1, Relaxed),
        };
        Arc::pin_init(
            pin_init!(Self {
                qpn,
                ident,
                qp_type,
                init,
                user,
                dev,
                scq: cqs.0,
                rcq: cqs.1,
                srq: rings.srq,
                events,
                state: Atomic::new(QpState::Reset.raw()),
                dead: Atomic::new(false),
                pmtu: Atomic::new(256),
                path: PathCell::new(),
                alt_path: PathCell::new(),
                mig: Atomic::new(migration::MIGRATED),
                paths <- new_spinlock_irq!(migration::PathsInner::default()),
                attrs <- new_mutex!(QpAttr::default()),
                send <- new_mutex!(send),
                recv <- new_mutex!(recv),
                rx_requests <- SkbQueue::new(RX_QUEUE_LIMIT, RX_QUEUE_BYTES),
                rx_responses <- SkbQueue::new(RX_QUEUE_LIMIT, RX_QUEUE_BYTES),
                timer_fired: Atomic::new(false),
                placement: Placement::new(),
                send_sched: TaskWord::new(),
                recv_sched: TaskWord::new(),
                send_task <- new_work!("rrxe::send_task"),
                recv_task <- new_work!("rrxe::recv_task"),
                timer <- HrTimer::new(),
                kpost <- new_spinlock_irq!(kpost),
            }),
            GFP_KERNEL,
        )
    }

    /// The current state.  Any context.
    pub(crate) fn state(&self) -> QpState {
        QpState::from_raw(self.state.load(Acquire)).unwrap_or(QpState::Err)
    }

    /// Sets the state (`modify_qp`, or the engine on a fatal error).
    pub(crate) fn set_state(&self, s: QpState) {
        self.state.store(s.raw(), Release);
    }

    /// Moves to the error state; true if it was not there already.
    pub(crate) fn enter_error(&self) -> bool {
        self.state.xchg(QpState::Err.raw(), Full) != QpState::Err.raw()
    }

    /// Whether send requests may be posted (and the doorbell rung): the
    /// QP is live and has reached RTS (SQD, SQE and ERR take them too:
    /// the send task runs or flushes them), as C rxe's `post_send` has it.
    pub(crate) fn takes_sends(&self) -> bool {
        !self.is_dead() && !matches!(self.state(), QpState::Reset | QpState::Init | QpState::Rtr)
    }

    /// Whether receive requests may be posted: the QP is live and out of
    /// RESET (IBTA C10-97.2.1, as C rxe's `post_recv`).
    pub(crate) fn takes_recvs(&self) -> bool {
        !self.is_dead() && self.state() != QpState::Reset
    }

    /// The path MTU, in bytes: the most payload a packet to or from this
    /// QP carries.  Any context.
    pub(crate) fn pmtu(&self) -> u32 {
        self.pmtu.load(Relaxed)
    }

    /// Records the path MTU (`modify_qp`, which gives the send and
    /// receive sides the same value).
    pub(crate) fn set_pmtu(&self, bytes: u32) {
        self.pmtu.store(bytes, Relaxed);
    }

    /// Whether `destroy_qp` ran.
    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Acquire)
    }

    /// Marks the QP destroyed (the tasks stop touching it).
    pub(crate) fn mark_dead(&self) {
        self.dead.store(true, Release);
    }

    /// Raises the asynchronous event `ev` (dropped once the QP is
    /// destroyed).
    pub(crate) fn raise(&self, ev: QpEvent) {
        self.events.raise(ev);
    }

    /// Whether the QP sends and receives datagrams (UD, and QP1, the GSI
    /// QP, which is a UD QP).
    pub(crate) fn is_datagram(&self) -> bool {
        matches!(self.qp_type, QpType::Ud | QpType::Gsi)
    }

    /// Counts `c` on the device.
    pub(crate) fn count(&self, c: Counter) {
        self.dev.stats.inc(c);
    }

    /// Posts a completion on `cq` (the QP's send or receive CQ); a CQ
    /// overrun is fatal to the QP (IBTA): returns false then.
    pub(crate) fn post_cqe(&self, cq: &CqShared, cqe: &Cqe, solicited: bool) -> bool {
        if cqe.status != WcStatus::Success {
            self.count(Counter::CompletionErrors);
        }
        if cq.post(cqe, self.events.handle(), solicited).is_err() {
            self.enter_error();
            return false;
        }
        true
    }

    /// A flush completion for this QP.
    pub(crate) fn flush_cqe(&self, wr_id: u64, opcode: u32) -> Cqe {
        Cqe {
            wr_id,
            status: WcStatus::WrFlushErr,
            opcode,
            byte_len: 0,
            imm: None,
            invalidated: None,
            qp_num: self.qpn,
            src_qp: 0,
            grh: None,
            vlan: None,
        }
    }
}

/// QP numbers 0..15 are reserved (QP0, QP1 and spare).
pub(crate) const FIRST_QPN: u32 = param::MIN_QP_INDEX as u32;
/// Largest QP number handed out.
pub(crate) const LAST_QPN: u32 = FIRST_QPN + (param::MAX_QP as u32) - 1;
