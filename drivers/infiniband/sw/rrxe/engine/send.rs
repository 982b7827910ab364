// SPDX-License-Identifier: GPL-2.0

//! The send task of a QP: under its `send` lock, step by step, the
//! completer handles queued acknowledgements and timer expiries, then the
//! requester sends new packets; in the error state the send queue is
//! flushed.  Up to [`BUDGET`] steps per run, then it requeues itself if
//! work is left.

use kernel::{
    sync::Arc,
    time::{Instant, Monotonic},
};

use super::{completer, requester, rx, schedule_send, BUDGET};
use crate::kapi::rdma::event::QpEvent;
use crate::proto::qp_state::QpState;
use crate::qp::{send::SendSide, Qp};
use crate::tx::Sent;

/// What one step did.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Something was done; there may be more.
    Progress,
    /// Nothing to do until new input (a doorbell, a packet, a timer).
    Idle,
}

/// Runs the send task (from its work item).
pub(crate) fn run(qp: &Arc<Qp>) {
    if qp.is_dead() {
        qp.rx_responses.purge();
        return;
    }
    let mut s = qp.send.lock();
    if run_locked(qp, &mut s) {
        drop(s);
        schedule_send(qp);
    }
}

/// Runs the send task in the caller (the doorbell) if its lock is free;
/// false if it is taken (the holder, or a queued run, will see the new
/// work).
pub(crate) fn run_if_free(qp: &Arc<Qp>) -> bool {
    if qp.is_dead() {
        return true;
    }
    let Some(mut s) = qp.send.try_lock() else {
        return false;
    };
    if run_locked(qp, &mut s) {
        drop(s);
        schedule_send(qp);
    }
    true
}

/// Up to [`BUDGET`] steps; true if work is left.
fn run_locked(qp: &Arc<Qp>, s: &mut SendSide) -> bool {
    for _ in 0..BUDGET {
        if qp.is_dead() {
            return false;
        }
        if let Some(skb) = qp.rx_responses.pop() {
            completer::handle(qp, s, skb);
            continue;
        }
        if timer_due(s) {
            completer::timer_expired(qp, s);
            continue;
        }
        match qp.state() {
            QpState::Err => {
                let more = s.flush(qp, BUDGET);
                // The first flush tells the receive task (an error found
                // here, a CQ overrun, needs its flush too).
                if !core::mem::replace(&mut s.err_flushed, true) {
                    super::schedule_recv(qp);
                }
                return more;
            }
            QpState::Rts => {}
            // SQD: messages in progress finish (the requester starts no
            // new WQE), then SQ_DRAINED if the consumer asked for it.
            QpState::Sqd => {
                if s.sqd_notify && s.drained() {
                    s.sqd_notify = false;
                    qp.raise(QpEvent::SqDrained);
                }
            }
            // SQE and the states before RTS send nothing.
            _ => return false,
        }
        if requester::step(qp, s) == Step::Idle {
            return false;
        }
    }
    true
}

/// The timer's deadline has passed.
fn timer_due(s: &SendSide) -> bool {
    match s.timer {
        Some((_, when)) => (when - Instant::<Monotonic>::now()).as_nanos() <= 0,
        None => false,
    }
}

/// Delivers a packet the requester or completer addressed to this host.
pub(crate) fn deliver_sent(qp: &Qp, sent: Sent) {
    if let Sent::Loopback(skb) = sent {
        rx::receive(&qp.dev, skb);
    }
}
