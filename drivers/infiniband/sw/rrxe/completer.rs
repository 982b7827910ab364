// SPDX-License-Identifier: GPL-2.0

//! The completer: acknowledgements for an RC requester.  An ACK retires
//! (completes, in order) every WQE whose last PSN it covers; an RNR NAK
//! acknowledges what precedes it and makes the requester wait the RNR
//! time, then resend; a PSN sequence NAK or a retransmit timeout makes it
//! resend from the oldest unacknowledged PSN, counting down the retry
//! budget; the other NAKs are fatal: the WQE completes with the remote
//! error and the QP goes to the error state.  Responses to requests rrxe
//! does not send (RDMA READ, atomics) are dropped.

use kernel::{sync::Arc, time::Delta};

use crate::proto::aeth::{NakCode, Syndrome};
use crate::proto::cqe::WcStatus;
use crate::proto::opcode::RC_ACKNOWLEDGE;
use crate::proto::psn::Psn;
use crate::proto::qp_state::QpType;
use crate::proto::Packet;
use crate::qp::{fail, retire_head, set_timer, Engine, QpShared, TimerKind};
use crate::requester::arm_retransmit;
use crate::stats::Counter;

/// Retries: 7 means "forever" for RNR (IBTA), a plain count otherwise.
const RNR_INFINITE: u8 = 7;

/// Everything up to and including `psn` is acknowledged.
fn ack_through(s: &Arc<QpShared>, e: &mut Engine, psn: Psn) {
    while let Some(w) = e.inflight.first() {
        if !w.started || w.last_psn().compare(psn) > 0 {
            break;
        }
        retire_head(s, e, WcStatus::Success);
    }
    if psn.next().compare(e.comp_psn) > 0 {
        e.comp_psn = psn.next();
        e.retry_left = e.attrs.retry_cnt;
    }
    match e.timer {
        Some((TimerKind::RnrWait, _)) => {}
        _ if e.comp_psn == e.req_psn => e.timer = None,
        _ => arm_retransmit(s, e),
    }
}

/// Rewinds the requester to the oldest unacknowledged PSN.
fn rewind(s: &QpShared, e: &mut Engine) {
    s.core.stats.inc(Counter::Retransmits);
    e.req_psn = e.comp_psn;
    e.req_next = 0;
    e.noack = 0;
    let comp = e.comp_psn;
    for (i, w) in e.inflight.iter_mut().enumerate() {
        w.pkts_sent = if i == 0 && w.started && w.first_psn.compare(comp) <= 0 {
            w.first_psn.distance_to(comp).min(w.npkts)
        } else {
            0
        };
    }
}

/// Handles a response packet for QP `s`.
pub(crate) fn handle(s: &Arc<QpShared>, e: &mut Engine, pkt: &Packet<'_>) {
    if s.qp_type != QpType::Rc || pkt.opcode() != RC_ACKNOWLEDGE {
        s.core.stats.inc(Counter::RcvDropped);
        return;
    }
    let Some(aeth) = pkt.aeth() else { return };
    let psn = pkt.psn();
    // Not yet sent: bogus.  Before the oldest unacknowledged one: stale.
    if psn.compare(e.req_psn) >= 0 || psn.compare(e.comp_psn.prev()) < 0 {
        s.core.stats.inc(Counter::RcvDropped);
        return;
    }
    match aeth.syndrome() {
        Syndrome::Ack { .. } => ack_through(s, e, psn),
        Syndrome::RnrNak(t) => {
            s.core.stats.inc(Counter::RcvRnrNak);
            ack_through(s, e, psn.prev());
            if e.rnr_left == 0 {
                s.core.stats.inc(Counter::RnrRetryExceeded);
                retire_head(s, e, WcStatus::RnrRetryExcErr);
                fail(s, e, "RNR retries exhausted");
                return;
            }
            if e.rnr_left != RNR_INFINITE {
                e.rnr_left -= 1;
            }
            rewind(s, e);
            set_timer(s, e, TimerKind::RnrWait, Delta::from_micros(i64::from(t.micros())));
        }
        Syndrome::Nak(NakCode::PsnSequenceError) => {
            s.core.stats.inc(Counter::RcvSeqErr);
            ack_through(s, e, psn.prev());
            retry(s, e);
        }
        Syndrome::Nak(code) => {
            ack_through(s, e, psn.prev());
            let status = match code {
                NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                NakCode::RemoteOperationalError => WcStatus::RemOpErr,
                _ => WcStatus::RemInvReqErr,
            };
            retire_head(s, e, status);
            fail(s, e, "the responder NAKed a request");
        }
        Syndrome::NakReserved(_) | Syndrome::Reserved(_) => s.core.stats.inc(Counter::RcvDropped),
    }
}

/// Resends from the oldest unacknowledged PSN if the retry budget allows.
fn retry(s: &Arc<QpShared>, e: &mut Engine) {
    if e.comp_psn == e.req_psn {
        return;
    }
    if e.retry_left == 0 {
        s.core.stats.inc(Counter::RetryExceeded);
        retire_head(s, e, WcStatus::RetryExcErr);
        fail(s, e, "transport retries exhausted");
        return;
    }
    e.retry_left -= 1;
    rewind(s, e);
}

/// The QP's timer fired (already cleared by the caller).
pub(crate) fn timer_expired(s: &Arc<QpShared>, e: &mut Engine, kind: TimerKind) {
    match kind {
        // The RNR wait is over: the rewind was done when the NAK came.
        TimerKind::RnrWait => {}
        TimerKind::Retransmit => {
            if e.comp_psn != e.req_psn {
                s.core.stats.inc(Counter::RetryTimeout);
                retry(s, e);
            }
        }
    }
}
