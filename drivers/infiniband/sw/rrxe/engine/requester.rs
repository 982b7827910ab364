// SPDX-License-Identifier: GPL-2.0

//! The requester: takes send WQEs from the send ring (copying, checking
//! and resolving each, see `wqe`), cuts each message into packets of the
//! path MTU and sends them with consecutive PSNs, one packet per step.
//! RC keeps at most [`MAX_UNACKED_PSNS`] unacknowledged and asks for an
//! ACK on the last packet of each message and at least every
//! [`MAX_PKT_PER_ACK`] packets; the retransmit timer runs while anything
//! is unacknowledged.  UC WQEs complete as soon as their last packet is
//! sent.  UD sends are `datagram`'s (`requester/datagram.rs`, as the UD
//! responder is `responder/datagram.rs`).
//!
//! RDMA READ and atomics (RC only) are one request packet each; a READ
//! takes as many PSNs as its response has packets, and one resent after
//! a lost response asks only for the rest (`segment::read_resume`).  At
//! most `max_rd_atomic` of them are outstanding, and a fenced WQE waits
//! until none is.  A READ or atomic posted on a QP whose `max_rd_atomic`
//! is 0 could never be sent: it completes with a local QP operation error
//! (C rxe leaves it, and everything after it, waiting forever).
//!
//! Memory window binds and local invalidates send nothing: they are
//! carried out once they are the oldest WQE (`requester/local_op.rs`).

mod batch;
mod datagram;
mod local_op;

use kernel::{prelude::*, sync::Arc, time::Delta};

use super::{fail, fail_head, rx};
use crate::proto::atmeth::AtomicEth;
use crate::proto::bth::{Bth, BTH_DEF_PKEY};
use crate::proto::builder::ExtHeaders;
use crate::proto::cqe::WcStatus;
use crate::proto::feth::Feth;
use crate::proto::ieth::Ieth;
use crate::proto::immdt::Immdt;
use crate::proto::qp_state::{QpState, QpType};
use crate::proto::reth::Reth;
use crate::proto::segment::{payload_of, read_resume, request_opcode};
use crate::proto::window::ack_timeout_ns;
use crate::proto::wqe::send_flags;
use crate::proto::wqe::SendOp;
use crate::qp::{
    send::{SendSide, TimerKind},
    Qp,
};
use crate::tx::{self, Sent, TxError};

/// What one step did.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Something was done; there may be more.
    Progress,
    /// Nothing to do until new input (a doorbell, a packet, a timer).
    Idle,
}

/// Unacknowledged PSNs an RC requester may have outstanding.
pub(crate) const MAX_UNACKED_PSNS: u32 = 128;
/// An ACK is requested at least every this many packets: a quarter of
/// the window, so a long message is acknowledged (and the window moves)
/// while it is still being sent.
pub(crate) const MAX_PKT_PER_ACK: u32 = MAX_UNACKED_PSNS / 4;

/// Arms the QP's timer for `kind`, `after` from now.
pub(crate) fn set_timer(qp: &Arc<Qp>, s: &mut SendSide, kind: TimerKind, after: Delta) {
    s.timer = Some((kind, kernel::time::Instant::now() + after));
    // One hrtimer per QP: the old handle must go (cancelling the timer)
    // before the timer is started again, or dropping it later would cancel
    // the new expiry.
    s.timer_handle = None;
    s.timer_handle = Some(super::arm_timer(qp, after));
}

/// (Re)starts the retransmit timer (the local ACK timeout of the path in
/// use).
pub(crate) fn arm_retransmit(qp: &Arc<Qp>, s: &mut SendSide) {
    s.armed_comp = s.comp_psn;
    s.renewed = false;
    let timeout = qp.path.get().map_or(0, |p| p.timeout);
    if let Some(ns) = ack_timeout_ns(timeout) {
        set_timer(
            qp,
            s,
            TimerKind::Retransmit,
            Delta::from_nanos(ns.min(i64::MAX as u64) as i64),
        );
    }
}

/// Takes the next WQE from the send ring; false if there is none (or no
/// room to hold it).
pub(super) fn fetch(qp: &Qp, s: &mut SendSide) -> bool {
    if s.inflight.is_full() {
        return false;
    }
    let Some(sq) = s.sq.as_deref() else {
        return false;
    };
    if sq.posted_since(s.fetched).unwrap_or(0) == 0 {
        return false;
    }
    let caps = &qp.init.caps;
    let w = match crate::wqe::fetch_send(
        sq,
        s.fetched,
        &qp.dev.mrs,
        qp.init.pd,
        caps.max_send_sge,
        caps.max_inline_data,
        s.params.pmtu,
    ) {
        Ok(w) => w,
        Err(_) => return false,
    };
    if s.inflight.push(w).is_err() {
        return false;
    }
    s.fetched = s.fetched.wrapping_add(1);
    true
}

/// One step: sends the next packet the window allows (or the next packets,
/// as one UDP GSO batch: `requester/batch.rs`), or retires a WQE that
/// cannot be sent.
pub(crate) fn step(qp: &Arc<Qp>, s: &mut SendSide) -> Step {
    if matches!(s.timer, Some((TimerKind::RnrWait, _))) {
        return Step::Idle;
    }
    if qp.is_datagram() {
        return datagram::step(qp, s);
    }
    if qp.qp_type == QpType::Rc && s.comp_psn.distance_to(s.psn) >= MAX_UNACKED_PSNS {
        return Step::Idle;
    }
    if s.next == s.inflight.len() && !fetch(qp, s) {
        return Step::Idle;
    }
    let idx = s.next;
    let Some(w) = s.inflight.get(idx) else {
        return Step::Idle;
    };
    if let Some(status) = w.error {
        // Completed in order: once everything before it is retired.
        if idx == 0 {
            fail_head(qp, s, status, "malformed send WQE");
            return Step::Progress;
        }
        return Step::Idle;
    }
    // SQD: what is in progress finishes, nothing new starts.
    if !w.started && qp.state() == QpState::Sqd {
        return Step::Idle;
    }
    if w.hdr.op.is_local() {
        // Once everything posted before it is retired.
        if idx == 0 {
            return local_op::execute(qp, s);
        }
        return Step::Idle;
    }
    if !w.started && w.hdr.op.needs_response() {
        if s.params.max_rd_atomic == 0 {
            if let Some(w) = s.inflight.get_mut(idx) {
                w.error = Some(WcStatus::LocQpOpErr);
            }
            return Step::Progress;
        }
        if s.rd_atomic_out >= u32::from(s.params.max_rd_atomic) {
            return Step::Idle;
        }
    }
    if !w.started && w.hdr.flags & send_flags::FENCE != 0 && s.rd_atomic_out > 0 {
        return Step::Idle;
    }
    let Some(ep) = qp.path.get() else {
        fail(qp, "no path to send on");
        return Step::Progress;
    };
    qp.placement.note_send(w.npkts, w.hdr.op.needs_response());
    let sent = match batch::send(qp, s, &ep, idx) {
        Some(sent) => sent,
        None => send_one(qp, s, &ep, idx),
    };
    match sent {
        Ok(()) => Step::Progress,
        Err(status) => {
            if let Some(w) = s.inflight.get_mut(idx) {
                w.error = Some(status);
            }
            if idx == 0 {
                fail_head(qp, s, status, "local access error on a send WQE");
            }
            Step::Progress
        }
    }
}

/// A request packet as planned: its headers and where its payload comes
/// from in the message.
pub(super) struct Planned {
    pub(super) bth: Bth,
    pub(super) ext: ExtHeaders,
    /// Message offset of the payload.
    pub(super) off: u32,
    /// Payload bytes.
    pub(super) len: u32,
    /// The packet asks for an ACK.
    pub(super) ack_req: bool,
}

/// Packet `k` of WQE `w` of a QP of type `qp_type` with path MTU `pmtu`,
/// sent with PSN `psn` to QP `dest_qpn` after `noack` packets that did
/// not ask for an ACK.
pub(super) fn plan_packet(
    qp_type: QpType,
    w: &crate::wqe::SendWqe,
    k: u32,
    (pmtu, dest_qpn): (u32, u32),
    psn: crate::proto::Psn,
    noack: u32,
) -> Result<Planned, WcStatus> {
    let op = w.hdr.op;
    let opcode = request_opcode(qp_type, op, k, w.npkts).ok_or(WcStatus::LocQpOpErr)?;
    // A READ, atomic or FLUSH is one request packet without payload.
    let (off, len) = if op.carries_payload() {
        payload_of(k, w.hdr.length, pmtu)
    } else {
        (0, 0)
    };
    let last = op.needs_response() || k + 1 >= w.npkts;
    let ext = request_headers(w, k, pmtu, last)?;
    let ack_req = qp_type == QpType::Rc && (last || noack + 1 >= MAX_PKT_PER_ACK);
    let se = last && op.is_send() && w.hdr.flags & send_flags::SOLICITED != 0;
    let bth = Bth::new(opcode, dest_qpn, psn)
        .with_pkey(BTH_DEF_PKEY)
        .with_se(se)
        .with_ack_req(ack_req);
    Ok(Planned {
        bth,
        ext,
        off,
        len,
        ack_req,
    })
}

/// Sends the next packet of WQE `idx`.  A network error counts as a lost
/// packet (the retransmit timer recovers it); a local error (the WQE's
/// memory) is returned as the WQE's completion status.
fn send_one(
    qp: &Arc<Qp>,
    s: &mut SendSide,
    ep: &crate::qp::Endpoints,
    idx: usize,
) -> Result<(), WcStatus> {
    let path = (s.params.pmtu, s.params.dest_qpn);
    let (psn, noack) = (s.psn, s.noack);
    let route = &mut s.route;
    let rd_atomic_out = &mut s.rd_atomic_out;
    let w = s.inflight.get_mut(idx).ok_or(WcStatus::LocQpOpErr)?;
    let p = plan_packet(qp.qp_type, w, w.pkts_sent, path, psn, noack)?;
    if !w.started {
        w.first_psn = psn;
        w.started = true;
        if w.hdr.op.needs_response() {
            *rd_atomic_out += 1;
        }
    }
    let wr: &crate::wqe::SendWqe = w;
    let mut fill = |pkt: &mut crate::kapi::net::route::TxPacket, f: &mut dyn FnMut(&[u8])| {
        crate::wqe::gather(wr, p.off, p.len as usize, pkt, f)
    };
    let sent = tx::send(
        &qp.dev,
        route,
        ep,
        &p.bth,
        &p.ext,
        p.len as usize,
        &mut fill,
    );
    match sent {
        Ok(sent) => deliver_sent(qp, sent),
        Err(TxError::Fill(err)) => {
            return Err(gather_failed(qp, err));
        }
        // No route, no memory: a lost packet, recovered by the timer.
        Err(TxError::Net(_)) => {}
    }
    packet_sent(qp, s, idx, p.ack_req);
    Ok(())
}

/// A send WQE's payload could not be gathered (its memory, a local
/// protection error): says so, rate-limited, and gives the WQE's
/// completion status.
pub(super) fn gather_failed(qp: &Qp, err: crate::mr::AccessError) -> WcStatus {
    crate::rrxe_ratelimited!(
        pr_warn,
        "rrxe: QP {:#x}: send WQE gather failed: {:?}\n",
        qp.qpn,
        err
    );
    WcStatus::LocProtErr
}

/// The extension headers of packet `k` of WQE `w` (`last`: the last
/// packet of its message, or its only request packet): the RETH, AtomicETH
/// and FETH its kind carries, the immediate data and the rkey to
/// invalidate on the last.
fn request_headers(
    w: &crate::wqe::SendWqe,
    k: u32,
    pmtu: u32,
    last: bool,
) -> Result<ExtHeaders, WcStatus> {
    let h = &w.hdr;
    let mut ext = ExtHeaders::default();
    match h.op {
        SendOp::Read => {
            let (va, rest) =
                read_resume(h.remote_addr, h.length, k, pmtu).ok_or(WcStatus::LocQpOpErr)?;
            ext.reth = Some(Reth::new(va, h.rkey, rest));
        }
        SendOp::CompareSwap => {
            ext.atmeth = Some(AtomicEth::new(h.remote_addr, h.rkey, h.swap, h.compare_add))
        }
        SendOp::FetchAdd => {
            ext.atmeth = Some(AtomicEth::new(
                h.remote_addr,
                h.rkey,
                h.compare_add,
                h.compare_add,
            ))
        }
        SendOp::AtomicWrite => ext.reth = Some(Reth::new(h.remote_addr, h.rkey, h.length)),
        SendOp::Flush => {
            ext.feth = Some(Feth::new(
                u32::from(h.flush.placement_type),
                u32::from(h.flush.selectivity),
            ));
            ext.reth = Some(Reth::new(h.remote_addr, h.rkey, h.length));
        }
        op if k == 0 && op.is_write() => {
            ext.reth = Some(Reth::new(h.remote_addr, h.rkey, h.length));
        }
        _ => {}
    }
    if last && h.op.has_imm() {
        ext.immdt = Some(Immdt::from_raw(h.imm));
    }
    if last && h.op == SendOp::SendInv {
        ext.ieth = Some(Ieth::new(h.invalidate_rkey()));
    }
    Ok(ext)
}

/// A packet of WQE `idx` went out (or was lost on the way): the PSN moves
/// on (a READ request by all its responses), the WQE is done once fully
/// sent (UC: retired at once), and an RC QP's retransmit timer runs.
pub(super) fn packet_sent(qp: &Arc<Qp>, s: &mut SendSide, idx: usize, ack_req: bool) {
    let psn = s.psn;
    let Some(w) = s.inflight.get_mut(idx) else {
        return;
    };
    let read = w.hdr.op.is_read();
    // A READ request covers the PSNs of all its (remaining) responses.
    let advance = if read {
        w.npkts.saturating_sub(w.pkts_sent).max(1)
    } else {
        1
    };
    w.pkts_sent = if read { w.npkts } else { w.pkts_sent + 1 };
    let done = w.fully_sent();
    s.psn = psn.add(advance);
    if s.psn.compare(s.sent_end) > 0 {
        s.sent_end = s.psn;
    }
    s.noack = if ack_req { 0 } else { s.noack + 1 };
    if done {
        s.next += 1;
        if qp.qp_type == QpType::Uc && idx == 0 {
            s.retire_head(qp, WcStatus::Success);
        }
    }
    if qp.qp_type == QpType::Rc && s.timer.is_none() {
        arm_retransmit(qp, s);
    }
}

/// Delivers a packet the requester addressed to this host.
fn deliver_sent(qp: &Qp, sent: Sent) {
    if let Sent::Loopback(skb) = sent {
        rx::receive(&qp.dev, skb);
    }
}
