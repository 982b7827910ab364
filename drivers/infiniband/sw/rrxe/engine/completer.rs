// SPDX-License-Identifier: GPL-2.0

//! The completer: acknowledgements for an RC requester, in the send task.
//! An ACK retires (completes, in order) every WQE whose last PSN it
//! covers; an RNR NAK acknowledges what precedes it and makes the
//! requester wait the RNR time, then resend; a PSN sequence NAK or a
//! retransmit timeout makes it resend from the oldest unacknowledged PSN,
//! counting down the retry budget; the other NAKs are fatal: the WQE
//! completes with the remote error and the QP goes to the error state.
//! An acknowledgement of nothing outstanding, or of a PSN not yet sent, is
//! dropped and counted, never fatal.  Responses to requests rrxe does not
//! send (RDMA READ, atomics) are dropped.

use kernel::{sync::Arc, time::Delta};

use super::fail;
use super::requester::{arm_retransmit, set_timer};
use super::rx;
use crate::kapi::net::skb::SkBuff;
use crate::proto::aeth::{NakCode, Syndrome};
use crate::proto::cqe::WcStatus;
use crate::proto::opcode::RC_ACKNOWLEDGE;
use crate::proto::psn::Psn;
use crate::proto::Packet;
use crate::proto::qp_state::QpType;
use crate::proto::window::{acked, rewound_sent};
use crate::qp::{
    send::{SendSide, TimerKind},
    Qp,
};
use crate::stats::Counter;

/// Retries: 7 means "forever" for RNR (IBTA), a plain count otherwise.
const RNR_INFINITE: u8 = 7;

/// Everything up to and including `psn` is acknowledged.
fn ack_through(qp: &Arc<Qp>, s: &mut SendSide, psn: Psn) {
    for _ in 0..acked(s.inflight.spans(), psn) {
        s.retire_head(qp, WcStatus::Success);
    }
    if psn.next().compare(s.comp_psn) > 0 {
        s.comp_psn = psn.next();
        s.retry_left = s.params.retry_cnt;
        s.rnr_left = s.params.rnr_retry;
    }
    // After a rewind, an ACK of packets sent before it may cover more than
    // the current pass has resent: resume after what it covers.
    if s.comp_psn.compare(s.psn) > 0 {
        resume_at_comp(s);
    }
    match s.timer {
        Some((TimerKind::RnrWait, _)) => {}
        _ if s.comp_psn == s.sent_end => s.clear_timer(),
        _ => arm_retransmit(qp, s),
    }
}

/// Rewinds the requester to the oldest unacknowledged PSN (a
/// retransmission).
fn rewind(qp: &Qp, s: &mut SendSide) {
    qp.count(Counter::Retransmits);
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
        qp.count(Counter::RetryExceeded);
        s.retire_head(qp, WcStatus::RetryExcErr);
        fail(qp, "transport retries exhausted");
        return;
    }
    s.retry_left -= 1;
    rewind(qp, s);
}

/// Handles an acknowledgement the receive path queued for `qp`.
pub(crate) fn handle(qp: &Arc<Qp>, s: &mut SendSide, skb: SkBuff) {
    rx::with_queued(qp, skb, |_, pkt| handle_ack(qp, s, pkt));
}

fn handle_ack(qp: &Arc<Qp>, s: &mut SendSide, pkt: &Packet<'_>) {
    if qp.qp_type != QpType::Rc || pkt.opcode() != RC_ACKNOWLEDGE {
        qp.count(Counter::RcvDropped);
        return;
    }
    let Some(aeth) = pkt.aeth() else { return };
    let psn = pkt.psn();
    // Not yet sent: bogus.  Before the oldest unacknowledged one: stale.
    // Either acknowledges nothing outstanding.
    if psn.compare(s.sent_end) >= 0 || psn.compare(s.comp_psn.prev()) < 0 {
        qp.count(Counter::RcvDropped);
        return;
    }
    match aeth.syndrome() {
        Syndrome::Ack { .. } => ack_through(qp, s, psn),
        Syndrome::RnrNak(t) => {
            qp.count(Counter::RcvRnrNak);
            ack_through(qp, s, psn.prev());
            if s.rnr_left == 0 {
                qp.count(Counter::RnrRetryExceeded);
                s.retire_head(qp, WcStatus::RnrRetryExcErr);
                fail(qp, "RNR retries exhausted");
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
            ack_through(qp, s, psn.prev());
            retry(qp, s);
        }
        Syndrome::Nak(code) => {
            ack_through(qp, s, psn.prev());
            let status = match code {
                NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                NakCode::RemoteOperationalError => WcStatus::RemOpErr,
                _ => WcStatus::RemInvReqErr,
            };
            s.retire_head(qp, status);
            fail(qp, "the responder NAKed a request");
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
        TimerKind::Retransmit => {
            if s.comp_psn != s.sent_end {
                qp.count(Counter::RetryTimeout);
                retry(qp, s);
            }
        }
    }
}
