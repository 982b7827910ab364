// SPDX-License-Identifier: GPL-2.0

//! The receive task of a QP: under its `recv` lock, the responder sends
//! the READ response in progress, packet by packet, and handles the
//! requests the receive path queued, up to [`BUDGET`] steps per pass (an
//! owner with work left hands the task to its work item); in the error
//! state the receive queue is flushed and queued requests are dropped.

use kernel::sync::Arc;

use super::{queue_recv, responder, BUDGET, PASSES_PER_RUN};
use crate::kapi::rdma::event::QpEvent;
use crate::proto::qp_state::QpState;
use crate::qp::task::Finish;
use crate::qp::{recv::RecvSide, Qp};

/// What a pass found besides work left.
struct Pass {
    /// Work is left (budget spent, a response in progress, requests
    /// queued).
    more: bool,
    /// The pass flushed the receive queue for the first time in the error
    /// state.
    first_flush: bool,
}

/// Runs the receive task as its owner (its work item): passes while input
/// arrives during them; work left goes back to the work item.  A pass that
/// cannot have the lock (a quiescer) leaves its input marked.
pub(crate) fn own(qp: &Arc<Qp>) {
    for passes in 1.. {
        let missed = match qp.recv.try_lock() {
            Some(mut r) if !qp.recv_sched.quiesced() => {
                let done = pass(qp, &mut r);
                drop(r);
                if done.first_flush {
                    // IBTA 11.5.2.3 (C11-5.2.3.2): the QP takes nothing
                    // more from its SRQ.
                    if qp.srq.is_some() {
                        qp.raise(QpEvent::LastWqeReached);
                    }
                    super::schedule_send(qp);
                }
                if done.more {
                    qp.recv_sched.park();
                    return queue_recv(qp);
                }
                false
            }
            _ => true,
        };
        match qp.recv_sched.finish(missed) {
            Finish::Idle => return,
            // A steady stream of requests would keep the worker forever.
            Finish::Again if passes >= PASSES_PER_RUN => {
                qp.recv_sched.park();
                return queue_recv(qp);
            }
            Finish::Again => {}
        }
    }
}

/// One pass: up to [`BUDGET`] steps.
fn pass(qp: &Arc<Qp>, r: &mut RecvSide) -> Pass {
    let idle = Pass {
        more: false,
        first_flush: false,
    };
    if qp.is_dead() {
        qp.rx_requests.purge();
        return idle;
    }
    for _ in 0..BUDGET {
        if qp.is_dead() {
            // Destroyed during the pass.  The ACK owed for requests
            // already completed still goes: the consumer may destroy the
            // QP as soon as it sees their completions, and the requester
            // waits for it (without it, its last message would exhaust
            // its retries against a QP that no longer answers).
            responder::flush_ack(qp, r);
            return idle;
        }
        if qp.state() == QpState::Err {
            let more = r.flush(qp, BUDGET);
            qp.rx_requests.purge();
            let first_flush = !core::mem::replace(&mut r.err_flushed, true);
            return Pass { more, first_flush };
        }
        if r.reply.is_some() {
            // A later request waits for the end of the response (taken
            // aside, so the one behind it can be looked at next time), a
            // duplicate of the READ being answered restarts it.
            if r.stash.is_none() {
                if let Some(skb) = qp.rx_requests.pop() {
                    if responder::restarts_reply(r, &skb) {
                        responder::handle(qp, r, skb);
                        continue;
                    }
                    r.stash = Some(skb);
                }
            }
            responder::reply_step(qp, r);
            continue;
        }
        let Some(skb) = r.stash.take().or_else(|| qp.rx_requests.pop()) else {
            responder::flush_ack(qp, r);
            return idle;
        };
        responder::handle(qp, r, skb);
    }
    responder::flush_ack(qp, r);
    Pass {
        more: r.reply.is_some() || r.stash.is_some() || qp.rx_requests.len() > 0,
        first_flush: false,
    }
}
