// SPDX-License-Identifier: GPL-2.0

//! The completer: acknowledgements for an RC requester, in the send task.
//! An ACK retires (completes, in order) every WQE whose last PSN it
//! covers; an RNR NAK acknowledges what precedes it and makes the
//! requester wait the RNR time, then resend; a PSN sequence NAK or a
//! retransmit timeout makes it resend from the oldest unacknowledged PSN,
//! counting down the retry budget; the other NAKs are fatal: the WQE
//! completes with the remote error and the QP goes to the error state.
//! An acknowledgement of nothing outstanding, or of a PSN not yet sent, is
//! dropped and counted, never fatal: at the last acknowledged PSN only a
//! duplicate positive ACK is taken, never a NAK (`in_window`).
//!
//! A READ or atomic completes only by its response (`completer/
//! response.rs`), which also acknowledges every request before it.  An
//! acknowledgement or response that shows the responder past a READ or
//! atomic whose response has not (all) arrived means a response was lost:
//! the requester resends from the oldest unacknowledged PSN, once per
//! such gap.

use kernel::{sync::Arc, time::Delta};

use super::fail_head;
use super::requester::{arm_retransmit, set_timer};
use super::rx::{self, RxPacket};
use crate::kapi::net::skb::SkBuff;
use crate::proto::aeth::{NakCode, Syndrome};
use crate::proto::cqe::WcStatus;
use crate::proto::opcode::{
    RC_ACKNOWLEDGE, RC_ATOMIC_ACKNOWLEDGE, RC_RDMA_READ_RESPONSE_FIRST, RC_RDMA_READ_RESPONSE_LAST,
    RC_RDMA_READ_RESPONSE_MIDDLE, RC_RDMA_READ_RESPONSE_ONLY,
};
use crate::proto::psn::Psn;
use crate::proto::qp_state::QpType;
use crate::proto::window::{acked, rewound_sent};
use crate::proto::Packet;
use crate::qp::{
    send::{SendSide, TimerKind},
    Qp,
};
use crate::stats::Counter;

/// Retries: 7 means "forever" for RNR (IBTA), a plain count otherwise.
const RNR_INFINITE: u8 = 7;

mod response;

/// Retires the WQEs at the head that an acknowledgement of every PSN up
/// to and including `psn` completes, stopping at a READ or atomic (only
/// its response completes it), and moves the oldest unacknowledged PSN
/// on, but not into such a WQE's PSNs (its responses move it).
fn retire_acked(qp: &Arc<Qp>, s: &mut SendSide, psn: Psn) {
    for _ in 0..acked(s.inflight.ackable_spans(), psn) {
        s.retire_head(qp, WcStatus::Success);
    }
    let mut to = psn.next();
    if let Some(h) = s.inflight.get(0) {
        if h.started && h.hdr.op.needs_response() && h.first_psn.compare(to) < 0 {
            to = h.first_psn;
        }
    }
    advance_comp(s, to);
}

/// Progress: the oldest unacknowledged PSN moves on to `to` (if later),
/// which renews the retry budgets and ends the current gap.
fn advance_comp(s: &mut SendSide, to: Psn) {
    if to.compare(s.comp_psn) > 0 {
        s.comp_psn = to;
        s.retry_left = s.params.retry_cnt;
        s.rnr_left = s.params.rnr_retry;
        s.gap_retry_at = None;
    }
}

/// After acknowledgements were taken: resume sending after what they
/// cover if a rewind had gone back further (an ACK of packets sent before
/// the rewind may cover more than the current pass has resent), and set
/// the timer.
fn settle(qp: &Arc<Qp>, s: &mut SendSide) {
    if s.comp_psn.compare(s.psn) > 0 {
        resume_at_comp(s);
    }
    rearm(qp, s);
}

/// Whether the oldest WQE waits for a response that the responder has
/// gone past (an acknowledgement or response at `psn` is later than it):
/// that response was lost.
fn response_lost(s: &SendSide, psn: Psn) -> bool {
    s.inflight
        .get(0)
        .is_some_and(|h| h.started && h.hdr.op.needs_response() && psn.compare(s.comp_psn) >= 0)
}

/// Resends from the oldest unacknowledged PSN because responses arrived
/// out of order (one was lost); once per oldest unacknowledged PSN, since
/// the rest of the same burst is out of order as well.
fn gap_retry(qp: &Arc<Qp>, s: &mut SendSide) {
    if s.gap_retry_at == Some(s.comp_psn) {
        // The responder is alive and still sending (the rest of a
        // response whose beginning was lost): the retransmit timer waits.
        qp.count(Counter::RcvDropped);
        if s.comp_psn != s.sent_end {
            arm_retransmit(qp, s);
        }
        return;
    }
    s.gap_retry_at = Some(s.comp_psn);
    qp.count(Counter::CompleterRetry);
    retry(qp, s);
}

/// Sets the timer after progress, lazily: a running retransmit timer is
/// left to expire, and its expiry sees the progress (`armed_comp`) and
/// re-arms for a full timeout from then (so a resend comes one to two
/// timeouts after the last progress, as on C rxe), instead of a cancel, a
/// clock read and a restart per acknowledgement.  An RNR wait stays.
fn rearm(qp: &Arc<Qp>, s: &mut SendSide) {
    if s.timer.is_none() && s.comp_psn != s.sent_end {
        arm_retransmit(qp, s);
    }
}

/// Everything up to and including `psn` is acknowledged; true if that
/// showed a lost READ or atomic response (and a resend started).
fn ack_through(qp: &Arc<Qp>, s: &mut SendSide, psn: Psn) -> bool {
    retire_acked(qp, s, psn);
    if response_lost(s, psn) {
        gap_retry(qp, s);
        return true;
    }
    settle(qp, s);
    false
}

/// Rewinds the requester to the oldest unacknowledged PSN (a
/// retransmission).
fn rewind(qp: &Qp, s: &mut SendSide) {
    qp.count(Counter::Retransmits);
    // The resend is timed afresh (the requester arms the timer as it
    // sends): the retransmit timer of the first transmission would expire
    // less than a timeout after the resend and spend a second retry on
    // it.  An RNR wait stays.
    if matches!(s.timer, Some((TimerKind::Retransmit, _))) {
        s.clear_timer();
    }
    resume_at_comp(s);
}

/// Makes the requester send next the packet at the oldest unacknowledged
/// PSN: the head WQE resumes there, the later ones from their start.
fn resume_at_comp(s: &mut SendSide) {
    s.psn = s.comp_psn;
    s.next = 0;
    s.noack = 0;
    let comp = s.comp_psn;
    s.inflight.for_each_mut(|i, w| {
        w.pkts_sent = if i == 0 {
            rewound_sent(w.span(), comp)
        } else {
            0
        };
    });
}

/// Resends from the oldest unacknowledged PSN if the retry budget allows.
fn retry(qp: &Arc<Qp>, s: &mut SendSide) {
    if s.comp_psn == s.sent_end {
        return;
    }
    if s.retry_left == 0 {
        // APM: an armed alternate path gets a fresh retry budget (and is
        // timed with its own timeout).
        if qp.migrate() {
            s.retry_left = s.params.retry_cnt;
            rewind(qp, s);
            return;
        }
        qp.count(Counter::RetryExceeded);
        fail_head(qp, s, WcStatus::RetryExcErr, "transport retries exhausted");
        return;
    }
    s.retry_left -= 1;
    rewind(qp, s);
}

/// Handles a response (acknowledgement, READ response, atomic
/// acknowledgement) the receive path queued for `qp`.
pub(crate) fn handle(qp: &Arc<Qp>, s: &mut SendSide, skb: SkBuff) {
    rx::with_queued(qp, skb, |rx, pkt| handle_response(qp, s, rx, pkt));
}

fn handle_response(qp: &Arc<Qp>, s: &mut SendSide, rx: &RxPacket<'_>, pkt: &Packet<'_>) {
    if qp.qp_type != QpType::Rc {
        qp.count(Counter::RcvDropped);
        return;
    }
    if !in_window(s, pkt) {
        qp.count(Counter::RcvDropped);
        return;
    }
    // From the peer on the armed alternate path: it migrated; so do we.
    if rx.on_alternate(qp) {
        qp.migrate();
    }
    // An AETH on a response must say ACK; NAKs come as acknowledgements.
    if pkt.opcode() != RC_ACKNOWLEDGE && pkt.aeth().is_some_and(|a| !a.syndrome().is_ack()) {
        bad_response(qp, s, "a READ or atomic response carries a NAK");
        return;
    }
    match pkt.opcode() {
        RC_ACKNOWLEDGE => handle_ack(qp, s, pkt),
        RC_RDMA_READ_RESPONSE_FIRST
        | RC_RDMA_READ_RESPONSE_MIDDLE
        | RC_RDMA_READ_RESPONSE_LAST
        | RC_RDMA_READ_RESPONSE_ONLY => response::read(qp, s, rx, pkt),
        RC_ATOMIC_ACKNOWLEDGE => response::atomic(qp, s, pkt),
        _ => qp.count(Counter::RcvDropped),
    }
}

/// Whether a response at `pkt`'s PSN may concern what is outstanding:
/// sent, and not before the oldest unacknowledged PSN.  One PSN earlier,
/// the last one acknowledged, only a positive ACK is taken (a duplicate,
/// the answer to a resent request, which renews the retransmit timer):
/// anything else there, like anything older, acknowledges nothing
/// outstanding (with nothing outstanding, that PSN is the only one left),
/// and a NAK or RNR NAK for it would fail or stall an innocent WQE or an
/// idle QP (C rxe drops these too).
fn in_window(s: &SendSide, pkt: &Packet<'_>) -> bool {
    let psn = pkt.psn();
    if psn.compare(s.sent_end) >= 0 || psn.compare(s.comp_psn.prev()) < 0 {
        return false;
    }
    psn != s.comp_psn.prev()
        || (pkt.opcode() == RC_ACKNOWLEDGE && pkt.aeth().is_some_and(|a| a.syndrome().is_ack()))
}

/// A malformed response for the oldest WQE: it completes with a bad
/// response error and the QP goes to the error state.
fn bad_response(qp: &Arc<Qp>, s: &mut SendSide, why: &str) {
    fail_head(qp, s, WcStatus::BadRespErr, why);
}

fn handle_ack(qp: &Arc<Qp>, s: &mut SendSide, pkt: &Packet<'_>) {
    let Some(aeth) = pkt.aeth() else { return };
    let psn = pkt.psn();
    match aeth.syndrome() {
        Syndrome::Ack { .. } => {
            // At the last acknowledged PSN: a duplicate (`in_window`).
            s.renewed |= psn == s.comp_psn.prev();
            ack_through(qp, s, psn);
        }
        Syndrome::RnrNak(t) => {
            qp.count(Counter::RcvRnrNak);
            ack_through(qp, s, psn.prev());
            if s.rnr_left == 0 {
                qp.count(Counter::RnrRetryExceeded);
                fail_head(qp, s, WcStatus::RnrRetryExcErr, "RNR retries exhausted");
                return;
            }
            if s.rnr_left != RNR_INFINITE {
                s.rnr_left -= 1;
            }
            rewind(qp, s);
            set_timer(
                qp,
                s,
                TimerKind::RnrWait,
                Delta::from_micros(i64::from(t.micros())),
            );
        }
        Syndrome::Nak(NakCode::PsnSequenceError) => {
            qp.count(Counter::RcvSeqErr);
            if !ack_through(qp, s, psn.prev()) {
                retry(qp, s);
            }
        }
        Syndrome::Nak(code) => {
            ack_through(qp, s, psn.prev());
            let status = match code {
                NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                NakCode::RemoteOperationalError => WcStatus::RemOpErr,
                _ => WcStatus::RemInvReqErr,
            };
            fail_head(qp, s, status, "the responder NAKed a request");
        }
        Syndrome::NakReserved(_) | Syndrome::Reserved(_) => qp.count(Counter::RcvDropped),
    }
}

/// The QP's timer is due (the caller checked the deadline).
pub(crate) fn timer_expired(qp: &Arc<Qp>, s: &mut SendSide) {
    let Some((kind, _)) = s.timer else { return };
    s.clear_timer();
    match kind {
        // The RNR wait is over: the rewind was done when the NAK came.
        TimerKind::RnrWait => {}
        // Nothing outstanding: the timer stops.  Progress or a duplicate
        // ACK since it was armed: a full timeout from now.  Neither:
        // resend.
        TimerKind::Retransmit if s.comp_psn == s.sent_end => {}
        TimerKind::Retransmit if s.comp_psn != s.armed_comp || s.renewed => arm_retransmit(qp, s),
        TimerKind::Retransmit => {
            s.gap_retry_at = None;
            qp.count(Counter::RetryTimeout);
            retry(qp, s);
        }
    }
}
