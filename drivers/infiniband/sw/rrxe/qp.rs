// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: creation with the send and receive rings librxe maps (in
//! `struct rxe_send_wqe` / `struct rxe_recv_wqe` layout), the QP table
//! (QP number -> QP, for the receive path), `modify_qp` through the IBTA
//! state machine of the protocol core (`proto::qp_state`) with every
//! attribute value range-checked, the error state with its flush, and the
//! QP's work items (see `engine` for how they are serialised).

use core::mem::size_of;
use kernel::{
    bindings, impl_has_delayed_work, impl_has_work, new_delayed_work, new_mutex, new_work,
    prelude::*,
    sync::{Arc, Mutex},
    time::{Delta, Instant, Monotonic},
    workqueue::{DelayedWork, Work, WorkItem},
};

use crate::cq::{CqShared, RrxeCq};
use crate::engine::{DevCore, ENGINE_WQ};
use crate::kapi::rdma::cq::UserCaller;
use crate::kapi::rdma::qp::{QpAttr, QpCaps, QpInit};
use crate::net::Endpoints;
use crate::proto::bth::BTH_QPN_MASK;
use crate::proto::cqe::{wc_opcode, Cqe, WcStatus};
use crate::proto::gid::IbMtu;
use crate::proto::psn::{Psn, PSN_MASK};
use crate::proto::qp_state::{attr, check_modify_qp, QpState, QpType};
use crate::queue::{Geometry, UserQueue};
use crate::table::IndexTable;
use crate::wqe::{RecvWqe, SendWqe};
use crate::{param, rrxe_ratelimited};

/// `sizeof(struct ib_sge)`.
const SGE_SIZE: u32 = 16;
/// Largest inline payload: the SGE area of a full WQE, as C rxe.
const MAX_INLINE: u32 = param::MAX_SGE as u32 * SGE_SIZE;
/// QP numbers 0..15 are reserved (QP0, QP1 and spare).
const FIRST_QPN: u32 = param::MIN_QP_INDEX as u32;
/// Largest QP number (24 bits, as far as the table goes).
const LAST_QPN: u32 = FIRST_QPN + (param::MAX_QP as u32) - 1;

/// Why the QP's timer is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerKind {
    /// Unacknowledged packets: retransmit when it expires.
    Retransmit,
    /// An RNR NAK asked to wait before retrying.
    RnrWait,
}

/// The engine state of a QP, under its lock.
pub(crate) struct Engine {
    /// The attributes `modify_qp` stored.
    pub(crate) attrs: QpAttr,
    pub(crate) state: QpState,
    /// Addresses, from the path set at RTR.
    pub(crate) ep: Option<Endpoints>,
    /// Path MTU in bytes.
    pub(crate) pmtu: u32,
    /// Destroyed: nothing may run any more.
    pub(crate) dead: bool,
    /// The rings user space maps; taken away (and their mmap entries
    /// removed) by `destroy_qp`, so they never outlive the user context
    /// even if a work item still holds the QP.  Engine code clones the
    /// `Arc` under the lock for the length of one step.
    pub(crate) rings: Option<Arc<Rings>>,
    // ---- send side (requester and completer) ----
    /// Send WQEs copied out of the ring (a running count).
    pub(crate) sq_fetched: u32,
    /// Send WQEs retired (the consumer index published to user space).
    pub(crate) sq_done: u32,
    /// Fetched, not retired, oldest first.
    pub(crate) inflight: KVec<SendWqe>,
    /// Index in `inflight` of the WQE the requester sends next.
    pub(crate) req_next: usize,
    /// Next PSN to send.
    pub(crate) req_psn: Psn,
    /// Packets sent since the last one that asked for an ACK.
    pub(crate) noack: u32,
    /// Oldest unacknowledged PSN.
    pub(crate) comp_psn: Psn,
    pub(crate) retry_left: u8,
    pub(crate) rnr_left: u8,
    pub(crate) timer: Option<(TimerKind, Instant<Monotonic>)>,
    // ---- receive side (responder) ----
    /// Receive WQEs retired (the consumer index published to user space).
    pub(crate) rq_done: u32,
    /// Next expected request PSN.
    pub(crate) resp_psn: Psn,
    /// Last request opcode accepted (message sequencing).
    pub(crate) resp_opcode: Option<u8>,
    /// Message sequence number (count of completed requests).
    pub(crate) msn: u32,
    /// The receive WQE a SEND in progress fills.
    pub(crate) recv: Option<RecvWqe>,
    /// The target of an RDMA WRITE in progress: region and offset.
    pub(crate) write: Option<crate::responder::WriteTarget>,
    /// A PSN sequence NAK was sent and not yet resolved.
    pub(crate) nak_sent: bool,
    /// UC: drop packets until the next message starts.
    pub(crate) uc_drop: bool,
}

/// A QP's send and receive rings.
pub(crate) struct Rings {
    pub(crate) sq: UserQueue,
    pub(crate) rq: UserQueue,
}

/// What a QP number names in the table, shared by the verbs and the
/// engine's work items.
#[pin_data]
pub(crate) struct QpShared {
    pub(crate) qpn: u32,
    pub(crate) qp_type: QpType,
    pub(crate) init: QpInit,
    pub(crate) core: Arc<DevCore>,
    pub(crate) scq: Arc<CqShared>,
    pub(crate) rcq: Arc<CqShared>,
    /// UDP source port of its packets.
    pub(crate) sport: u16,
    #[pin]
    pub(crate) eng: Mutex<Engine>,
    #[pin]
    run: Work<QpShared, 0>,
    #[pin]
    timer: DelayedWork<QpShared, 1>,
}

impl_has_work! {
    impl HasWork<Self, 0> for QpShared { self.run }
}
impl_has_delayed_work! {
    impl HasDelayedWork<Self, 1> for QpShared { self.timer }
}

/// The handle in ib_core's QP object.
pub(crate) struct RrxeQp {
    shared: Arc<QpShared>,
}

/// The QP table of one device.
pub(crate) type QpTable = IndexTable<QpShared>;

/// A new, empty QP table.
pub(crate) fn new_table() -> impl PinInit<QpTable> {
    IndexTable::new(FIRST_QPN, LAST_QPN)
}

fn bad(what: &str, v: u32) -> Error {
    rrxe_ratelimited!(pr_warn, "rrxe: QP: bad {} {}\n", what, v);
    EINVAL
}

/// Checks and rounds the requested sizes; returns the SQ and RQ geometry.
fn geometry(caps: &mut QpCaps) -> Result<(Geometry, Geometry)> {
    let max_wr = param::MAX_QP_WR as u32;
    if caps.max_send_sge > param::MAX_SGE as u32 {
        return Err(bad("max_send_sge", caps.max_send_sge));
    }
    if caps.max_recv_sge > param::MAX_SGE as u32 {
        return Err(bad("max_recv_sge", caps.max_recv_sge));
    }
    if caps.max_inline_data > MAX_INLINE {
        return Err(bad("max_inline_data", caps.max_inline_data));
    }
    // A send WQE holds the larger of its SGE list and its inline data.
    let room = (caps.max_send_sge * SGE_SIZE).max(caps.max_inline_data);
    let sq_elem = size_of::<bindings::rxe_send_wqe>() as u32 + room;
    let rq_elem = size_of::<bindings::rxe_recv_wqe>() as u32 + caps.max_recv_sge * SGE_SIZE;
    let sq = Geometry::new(caps.max_send_wr.max(1), sq_elem, max_wr)
        .map_err(|_| bad("max_send_wr", caps.max_send_wr))?;
    let rq = Geometry::new(caps.max_recv_wr.max(1), rq_elem, max_wr)
        .map_err(|_| bad("max_recv_wr", caps.max_recv_wr))?;
    caps.max_send_wr = sq.capacity();
    caps.max_recv_wr = rq.capacity();
    caps.max_send_sge = room / SGE_SIZE;
    caps.max_inline_data = room;
    Ok((sq, rq))
}

fn new_engine(rings: Option<Arc<Rings>>) -> Engine {
    Engine {
        rings,
        attrs: QpAttr::default(),
        state: QpState::Reset,
        ep: None,
        pmtu: 256,
        dead: false,
        sq_fetched: 0,
        sq_done: 0,
        inflight: KVec::new(),
        req_next: 0,
        req_psn: Psn::new(0),
        noack: 0,
        comp_psn: Psn::new(0),
        retry_left: 0,
        rnr_left: 0,
        timer: None,
        rq_done: 0,
        resp_psn: Psn::new(0),
        resp_opcode: None,
        msn: 0,
        recv: None,
        write: None,
        nak_sent: false,
        uc_drop: false,
    }
}

/// UDP source port for QP `qpn`: 0xc000 and up, spread by a hash (for
/// ECMP entropy, as C rxe).
pub(crate) fn source_port(qpn: u32) -> u16 {
    0xc000 | ((qpn.wrapping_mul(0x9e37_79b9) >> 18) as u16 & 0x3fff)
}

/// `create_qp` for user QPs of type RC, UC or UD.
pub(crate) fn create(
    core: &Arc<DevCore>,
    init: &mut QpInit,
    cqs: (&RrxeCq, &RrxeCq),
    user: Option<UserCaller<'_>>,
) -> Result<(RrxeQp, u32)> {
    let Some(mut user) = user else {
        rrxe_ratelimited!(pr_warn, "rrxe: kernel QPs are not supported\n");
        return Err(crate::kapi::eopnotsupp());
    };
    let qp_type = match QpType::from_raw(init.qp_type) {
        // UD QPs can be created and moved through their states; their
        // data path is not implemented (sends complete with a local QP
        // operation error, received datagrams are dropped).
        Some(t @ (QpType::Rc | QpType::Uc | QpType::Ud)) => t,
        _ => {
            rrxe_ratelimited!(pr_warn, "rrxe: QP type {} is not supported\n", init.qp_type);
            return Err(crate::kapi::eopnotsupp());
        }
    };
    if init.create_flags != 0 || init.has_srq {
        return Err(crate::kapi::eopnotsupp());
    }
    user.udata.require_empty_input()?;
    let (sqg, rqg) = geometry(&mut init.caps)?;
    let sq = UserQueue::new(&user.ctx, sqg)?;
    let rq = UserQueue::new(&user.ctx, rqg)?;
    let (sq_mi, rq_mi) = (sq.mminfo(), rq.mminfo());
    let rings = Arc::new(Rings { sq, rq }, GFP_KERNEL)?;
    let init_copy = *init;
    let shared = core.qps.insert(|qpn, _| {
        let sport = source_port(qpn);
        try_pin_init!(QpShared {
            qpn,
            qp_type,
            init: init_copy,
            core: core.clone(),
            scq: cqs.0.shared.clone(),
            rcq: cqs.1.shared.clone(),
            sport,
            eng <- new_mutex!(new_engine(Some(rings))),
            run <- new_work!("rrxe::qp"),
            timer <- new_delayed_work!("rrxe::qp_timer"),
        })
    })?;
    // struct rxe_create_qp_resp { struct mminfo rq_mi, sq_mi; }
    let mut resp = [0u8; 32];
    resp[..16].copy_from_slice(&rq_mi);
    resp[16..].copy_from_slice(&sq_mi);
    if let Err(e) = user.udata.respond(&resp) {
        core.qps.remove(shared.qpn, &shared);
        return Err(e);
    }
    let qpn = shared.qpn;
    Ok((RrxeQp { shared }, qpn))
}

/// Range checks of the attribute values `mask` selects.
fn check_values(a: &QpAttr, mask: u32) -> Result {
    let has = |bit| mask & bit != 0;
    if has(attr::PATH_MTU) && IbMtu::from_raw(a.path_mtu).is_none() {
        return Err(bad("path_mtu", a.path_mtu));
    }
    if has(attr::MAX_QP_RD_ATOMIC) && i32::from(a.max_rd_atomic) > param::MAX_QP_RD_ATOM {
        return Err(bad("max_rd_atomic", a.max_rd_atomic.into()));
    }
    if has(attr::MAX_DEST_RD_ATOMIC) && i32::from(a.max_dest_rd_atomic) > param::MAX_QP_RD_ATOM {
        return Err(bad("max_dest_rd_atomic", a.max_dest_rd_atomic.into()));
    }
    if has(attr::PORT) && a.port_num != 1 {
        return Err(bad("port", a.port_num));
    }
    if has(attr::PKEY_INDEX) && a.pkey_index != 0 {
        return Err(bad("pkey_index", a.pkey_index.into()));
    }
    if has(attr::TIMEOUT) && a.timeout > 31 {
        return Err(bad("timeout", a.timeout.into()));
    }
    if has(attr::RETRY_CNT) && a.retry_cnt > 7 {
        return Err(bad("retry_cnt", a.retry_cnt.into()));
    }
    if has(attr::RNR_RETRY) && a.rnr_retry > 7 {
        return Err(bad("rnr_retry", a.rnr_retry.into()));
    }
    if has(attr::MIN_RNR_TIMER) && a.min_rnr_timer > 31 {
        return Err(bad("min_rnr_timer", a.min_rnr_timer.into()));
    }
    if has(attr::AV) && (u32::from(a.path.sgid_index) >= param::GID_TBL_LEN as u32 || a.path.port_num > 1) {
        return Err(bad("address vector sgid_index", a.path.sgid_index.into()));
    }
    if has(attr::AV) && Endpoints::from_gids(&a.path.sgid, &a.path.dgid, 0).is_none() {
        return Err(bad("address vector (IPv4 and IPv6 GIDs mixed)", a.path.sgid_index.into()));
    }
    if has(attr::CAP) || has(attr::ALT_PATH) || has(attr::PATH_MIG_STATE) || has(attr::RATE_LIMIT) {
        return Err(crate::kapi::eopnotsupp());
    }
    Ok(())
}

/// `modify_qp`: the transition must be legal for the QP type with exactly
/// the attributes IBTA allows, and every value in range; then the selected
/// attributes are stored and the state changes.
pub(crate) fn modify(qp: &RrxeQp, new: &QpAttr, mask: u32) -> Result {
    let s = &qp.shared;
    let mut e = s.eng.lock();
    let a = &mut e.attrs;
    let cur_raw = if mask & attr::CUR_STATE != 0 { new.cur_state } else { a.state };
    let next_raw = if mask & attr::STATE != 0 { new.state } else { cur_raw };
    let cur = QpState::from_raw(cur_raw).ok_or_else(|| bad("cur_qp_state", cur_raw))?;
    let next = QpState::from_raw(next_raw).ok_or_else(|| bad("qp_state", next_raw))?;
    if check_modify_qp(cur, next, s.qp_type, mask).is_err() {
        rrxe_ratelimited!(
            pr_warn,
            "rrxe: QP {:#x}: transition {} -> {} with mask {:#x} refused\n",
            s.qpn,
            cur_raw,
            next_raw,
            mask
        );
        return Err(EINVAL);
    }
    check_values(new, mask)?;
    // Copy each attribute `mask` selects; PSNs and QPNs are 24 bits.
    macro_rules! copy_selected {
        ($($bit:ident => $field:ident $(& $m:expr)?),* $(,)?) => {$(
            if mask & attr::$bit != 0 {
                a.$field = new.$field $(& $m)?;
            }
        )*};
    }
    copy_selected!(
        EN_SQD_ASYNC_NOTIFY => en_sqd_async_notify,
        ACCESS_FLAGS => access_flags,
        PKEY_INDEX => pkey_index,
        PORT => port_num,
        QKEY => qkey,
        AV => path,
        PATH_MTU => path_mtu,
        TIMEOUT => timeout,
        RETRY_CNT => retry_cnt,
        RNR_RETRY => rnr_retry,
        RQ_PSN => rq_psn & PSN_MASK,
        MAX_QP_RD_ATOMIC => max_rd_atomic,
        MIN_RNR_TIMER => min_rnr_timer,
        SQ_PSN => sq_psn & PSN_MASK,
        MAX_DEST_RD_ATOMIC => max_dest_rd_atomic,
        DEST_QPN => dest_qp_num & BTH_QPN_MASK,
    );
    a.state = next_raw;
    let e = &mut *e;
    if mask & attr::AV != 0 {
        e.ep = Endpoints::from_gids(&e.attrs.path.sgid, &e.attrs.path.dgid, s.sport);
    }
    if mask & attr::PATH_MTU != 0 {
        e.pmtu = IbMtu::from_raw(e.attrs.path_mtu).map_or(256, |m| m.bytes());
    }
    if mask & attr::RQ_PSN != 0 {
        e.resp_psn = Psn::new(e.attrs.rq_psn);
    }
    if mask & attr::SQ_PSN != 0 {
        e.req_psn = Psn::new(e.attrs.sq_psn);
        e.comp_psn = e.req_psn;
    }
    if mask & attr::RETRY_CNT != 0 {
        e.retry_left = e.attrs.retry_cnt;
    }
    if mask & attr::RNR_RETRY != 0 {
        e.rnr_left = e.attrs.rnr_retry;
    }
    let was = e.state;
    e.state = next;
    match next {
        QpState::Reset if was != QpState::Reset => reset(e),
        QpState::Err if was != QpState::Err => flush(s, e),
        _ => {}
    }
    if next == QpState::Rts {
        // WQEs may have been posted (and their doorbell ignored) before.
        schedule(s);
    }
    Ok(())
}

/// `query_qp`.
pub(crate) fn query(qp: &RrxeQp) -> (QpAttr, QpInit) {
    let mut a = qp.shared.eng.lock().attrs;
    a.caps = qp.shared.init.caps;
    (a, qp.shared.init)
}

/// `destroy_qp`: marks the QP dead (work items that still hold it will
/// find it so), cancels its timer and drops it from the table.  The rings
/// are freed once user space has unmapped them.
pub(crate) fn destroy(qp: RrxeQp) {
    let s = &qp.shared;
    {
        let mut e = s.eng.lock();
        e.dead = true;
        e.rings = None;
        e.timer = None;
        e.inflight.clear();
        e.recv = None;
        e.write = None;
    }
    crate::kapi::workqueue::cancel_delayed::<QpShared, 1>(s);
    s.core.qps.remove(s.qpn, s);
}

/// The doorbell: librxe wrote send WQEs and wants them processed.  The
/// requester runs on the engine's workqueue, not in the caller: running it
/// here would contend with the workqueue for the QP's lock on every
/// acknowledgement (measured: 10x slower for 64 KiB messages).
pub(crate) fn doorbell(qp: &RrxeQp) -> Result {
    schedule(&qp.shared);
    Ok(())
}

/// Queues the QP's run (requester, or flush in the error state); a run
/// already queued covers this request too.
pub(crate) fn schedule(s: &Arc<QpShared>) {
    let _ = ENGINE_WQ.with(|q| q.enqueue::<Arc<QpShared>, 0>(s.clone()));
}

impl WorkItem<0> for QpShared {
    type Pointer = Arc<QpShared>;

    fn run(this: Arc<QpShared>) {
        let mut e = this.eng.lock();
        if e.dead {
            return;
        }
        match e.state {
            QpState::Err => flush(&this, &mut e),
            _ => {
                if crate::requester::run(&this, &mut e) {
                    drop(e);
                    schedule(&this);
                }
            }
        }
    }
}

impl WorkItem<1> for QpShared {
    type Pointer = Arc<QpShared>;

    fn run(this: Arc<QpShared>) {
        let mut e = this.eng.lock();
        if e.dead {
            return;
        }
        let Some((kind, when)) = e.timer else { return };
        let left = when - Instant::<Monotonic>::now();
        if !left.is_negative() && !left.is_zero() {
            // Re-armed for later meanwhile.
            drop(e);
            enqueue_timer(&this, left);
            return;
        }
        e.timer = None;
        crate::completer::timer_expired(&this, &mut e, kind);
        if e.state == QpState::Rts && crate::requester::run(&this, &mut e) {
            drop(e);
            schedule(&this);
        }
    }
}

fn enqueue_timer(s: &Arc<QpShared>, after: Delta) {
    let ms = ((after.as_micros_ceil() + 999) / 1000).clamp(1, i64::from(u32::MAX)) as u32;
    let j = kernel::time::msecs_to_jiffies(ms);
    let _ = ENGINE_WQ.with(|q| q.enqueue_delayed::<Arc<QpShared>, 1>(s.clone(), j));
}

/// Sets the QP's timer to fire `after` from now, for `kind`.
pub(crate) fn set_timer(s: &Arc<QpShared>, e: &mut Engine, kind: TimerKind, after: Delta) {
    e.timer = Some((kind, Instant::<Monotonic>::now() + after));
    enqueue_timer(s, after);
}

/// Posts a completion for the send queue; a CQ overrun is fatal to the QP.
pub(crate) fn complete_send(s: &QpShared, e: &mut Engine, w: &SendWqe, status: WcStatus) {
    let signaled = s.init.sq_sig_all || w.hdr.flags & crate::proto::wqe::send_flags::SIGNALED != 0;
    if status == WcStatus::Success && !signaled {
        return;
    }
    if status != WcStatus::Success {
        s.core.stats.inc(crate::stats::Counter::CompletionErrors);
    }
    let opcode = if w.hdr.op.is_write() { wc_opcode::RDMA_WRITE } else { wc_opcode::SEND };
    let cqe = Cqe { wr_id: w.hdr.wr_id, status, opcode, byte_len: w.hdr.length, imm: None, qp_num: s.qpn, src_qp: 0 };
    if s.scq.post(&cqe, false).is_err() && e.state != QpState::Err {
        e.state = QpState::Err;
        e.attrs.state = QpState::Err.raw();
    }
}

/// Posts a completion for the receive queue and retires its WQE.
pub(crate) fn complete_recv(s: &QpShared, e: &mut Engine, cqe: &Cqe, solicited: bool) {
    e.rq_done = e.rq_done.wrapping_add(1);
    if let Some(r) = &e.rings {
        let _ = r.rq.publish_consumer(e.rq_done);
    }
    if cqe.status != WcStatus::Success {
        s.core.stats.inc(crate::stats::Counter::CompletionErrors);
    }
    if s.rcq.post(cqe, solicited).is_err() && e.state != QpState::Err {
        e.state = QpState::Err;
        e.attrs.state = QpState::Err.raw();
    }
}

/// Retires the oldest in-flight send WQE with `status`.
pub(crate) fn retire_head(s: &QpShared, e: &mut Engine, status: WcStatus) {
    if e.inflight.is_empty() {
        return;
    }
    let w = e.inflight.remove(0).ok();
    e.req_next = e.req_next.saturating_sub(1);
    e.sq_done = e.sq_done.wrapping_add(1);
    if let Some(r) = &e.rings {
        let _ = r.sq.publish_consumer(e.sq_done);
    }
    if let Some(w) = w {
        complete_send(s, e, &w, status);
    }
}

/// Moves the QP to the error state (an error it detected: a bad WQE, an
/// access violation, retries exhausted) and flushes its queues.
pub(crate) fn fail(s: &QpShared, e: &mut Engine, why: &str) {
    if e.state == QpState::Err {
        return;
    }
    rrxe_ratelimited!(pr_warn, "rrxe: QP {:#x}: error state: {}\n", s.qpn, why);
    e.state = QpState::Err;
    e.attrs.state = QpState::Err.raw();
    flush(s, e);
}

/// The error state's flush: every WQE still queued, in flight or not yet
/// fetched, completes with `IB_WC_WR_FLUSH_ERR`, in order.
pub(crate) fn flush(s: &QpShared, e: &mut Engine) {
    e.timer = None;
    e.write = None;
    while !e.inflight.is_empty() {
        retire_head(s, e, WcStatus::WrFlushErr);
    }
    e.req_next = 0;
    let Some(rings) = e.rings.clone() else { return };
    let (sq, rq) = (&rings.sq, &rings.rq);
    let mask = sq.mask();
    if let Ok(p) = sq.user_producer() {
        let mut n = p.wrapping_sub(e.sq_done) & mask;
        while n > 0 {
            let mut b = [0u8; 8];
            let wr_id = sq.read_slot(e.sq_done, &mut b).map_or(0, |()| u64::from_ne_bytes(b));
            let cqe = Cqe { wr_id, status: WcStatus::WrFlushErr, opcode: wc_opcode::SEND, byte_len: 0, imm: None, qp_num: s.qpn, src_qp: 0 };
            e.sq_done = e.sq_done.wrapping_add(1);
            let _ = sq.publish_consumer(e.sq_done);
            let _ = s.scq.post(&cqe, false);
            n -= 1;
        }
    }
    e.sq_fetched = e.sq_done;
    let flushed = |wr_id| Cqe { wr_id, status: WcStatus::WrFlushErr, opcode: wc_opcode::RECV, byte_len: 0, imm: None, qp_num: s.qpn, src_qp: 0 };
    if let Some(r) = e.recv.take() {
        complete_recv(s, e, &flushed(r.hdr.wr_id), false);
    }
    let rmask = rq.mask();
    if let Ok(p) = rq.user_producer() {
        let mut n = p.wrapping_sub(e.rq_done) & rmask;
        while n > 0 {
            let mut b = [0u8; 8];
            let wr_id = rq.read_slot(e.rq_done, &mut b).map_or(0, |()| u64::from_ne_bytes(b));
            complete_recv(s, e, &flushed(wr_id), false);
            n -= 1;
        }
    }
}

/// Back to RESET: forget all state; both rings become empty (indices 0,
/// as librxe expects after a reset).
fn reset(e: &mut Engine) {
    let attrs = e.attrs;
    let rings = e.rings.take();
    *e = new_engine(rings);
    e.attrs = attrs;
    if let Some(r) = &e.rings {
        for q in [&r.sq, &r.rq] {
            let _ = q.publish_producer(0);
            let _ = q.publish_consumer(0);
        }
    }
}
