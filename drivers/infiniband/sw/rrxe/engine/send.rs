// SPDX-License-Identifier: GPL-2.0

//! The send task of a QP: under its `send` lock, step by step, the
//! completer handles queued acknowledgements and timer expiries, then the
//! requester sends new packets; in the error state the send queue is
//! flushed.  Up to [`BUDGET`] steps per pass; an owner with work left
//! hands the task to its work item (`engine.rs`).

use kernel::{
    sync::{
        atomic::ordering::{Full, Relaxed},
        Arc,
    },
    time::{Instant, Monotonic},
};

use super::requester::{self, Step};
use super::{completer, queue_send, BUDGET, PASSES_PER_RUN};
use crate::kapi::rdma::event::QpEvent;
use crate::proto::qp_state::QpState;
use crate::qp::task::Finish;
use crate::qp::{send::SendSide, Qp};

/// Runs the send task as its owner (its work item, or the doorbell that
/// claimed it: `inline`): passes while input arrives during them; work
/// left after a pass, or new input after the doorbell's one pass, goes to
/// the work item.  The doorbell's pass does `inline` steps (its caller's
/// choice, `engine::doorbell`), a work item's [`BUDGET`].  A pass that cannot have the lock (a quiescer waits for
/// it, or holds it) leaves its input marked for the end of the quiesce.
pub(crate) fn own(qp: &Arc<Qp>, inline: Option<u32>) {
    let budget = inline.unwrap_or(BUDGET);
    for passes in 1.. {
        let missed = match qp.send.try_lock() {
            Some(mut s) if !qp.send_sched.quiesced() => {
                let more = pass(qp, &mut s, budget);
                drop(s);
                if more {
                    return hand_over(qp);
                }
                false
            }
            _ => true,
        };
        match qp.send_sched.finish(missed) {
            Finish::Idle => return,
            // The doorbell's caller gets back at once; a work item yields
            // the worker after a few passes (a steady stream of ACKs
            // would keep it forever).
            Finish::Again if inline.is_some() || passes >= PASSES_PER_RUN => return hand_over(qp),
            Finish::Again => {}
        }
    }
}

/// The owner hands the task to its work item.
fn hand_over(qp: &Arc<Qp>) {
    qp.send_sched.park();
    queue_send(qp);
}

/// One pass: up to `budget` steps; true if work is left.
fn pass(qp: &Arc<Qp>, s: &mut SendSide, budget: u32) -> bool {
    if qp.is_dead() {
        qp.rx_responses.purge();
        return false;
    }
    for _ in 0..budget {
        if qp.is_dead() {
            return false;
        }
        if let Some(skb) = qp.rx_responses.pop() {
            completer::handle(qp, s, skb);
            continue;
        }
        if timer_due(qp, s) {
            completer::timer_expired(qp, s);
            continue;
        }
        match qp.state() {
            QpState::Err => {
                let more = s.flush(qp, budget);
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

/// The timer fired and its deadline has passed: one clock read per
/// firing, none per step.  A firing for a deadline moved since (the timer
/// was armed again) is dropped: the timer armed for the new one fires in
/// its turn.
fn timer_due(qp: &Qp, s: &SendSide) -> bool {
    if !qp.timer_fired.load(Relaxed) {
        return false;
    }
    // Taken in one step: with a load and a later store, a firing between
    // them (the timer armed again this pass) would be overwritten, and
    // the QP would never resend.
    if !qp.timer_fired.xchg(false, Full) {
        return false;
    }
    match s.timer {
        Some((_, when)) => (when - Instant::<Monotonic>::now()).as_nanos() <= 0,
        None => false,
    }
}
