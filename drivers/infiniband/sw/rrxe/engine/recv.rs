// SPDX-License-Identifier: GPL-2.0

//! The receive task of a QP: under its `recv` lock, the responder sends
//! the READ response in progress, packet by packet, and handles the
//! requests the receive path queued, up to [`BUDGET`] steps per run (then
//! it requeues itself if work is left); in the error state the receive
//! queue is flushed and queued requests are dropped.

use kernel::sync::Arc;

use super::{responder, schedule_recv, BUDGET};
use crate::kapi::rdma::event::QpEvent;
use crate::proto::qp_state::QpState;
use crate::qp::Qp;

/// Runs the receive task (from its work item).
pub(crate) fn run(qp: &Arc<Qp>) {
    if qp.is_dead() {
        qp.rx_requests.purge();
        return;
    }
    let mut r = qp.recv.lock();
    for _ in 0..BUDGET {
        if qp.is_dead() {
            return;
        }
        if qp.state() == QpState::Err {
            let more = r.flush(qp, BUDGET);
            qp.rx_requests.purge();
            let first = !core::mem::replace(&mut r.err_flushed, true);
            drop(r);
            if first {
                // IBTA 11.5.2.3 (C11-5.2.3.2): the QP takes nothing more
                // from its SRQ.
                if qp.srq.is_some() {
                    qp.raise(QpEvent::LastWqeReached);
                }
                super::schedule_send(qp);
            }
            if more {
                schedule_recv(qp);
            }
            return;
        }
        if r.reply.is_some() {
            // A later request waits for the end of the response (taken
            // aside, so the one behind it can be looked at next time), a
            // duplicate of the READ being answered restarts it.
            if r.stash.is_none() {
                if let Some(skb) = qp.rx_requests.pop() {
                    if responder::restarts_reply(&r, &skb) {
                        responder::handle(qp, &mut r, skb);
                        continue;
                    }
                    r.stash = Some(skb);
                }
            }
            responder::reply_step(qp, &mut r);
            continue;
        }
        let Some(skb) = r.stash.take().or_else(|| qp.rx_requests.pop()) else {
            responder::flush_ack(qp, &mut r);
            return;
        };
        responder::handle(qp, &mut r, skb);
    }
    responder::flush_ack(qp, &mut r);
    let replying = r.reply.is_some() || r.stash.is_some();
    drop(r);
    if replying || qp.rx_requests.len() > 0 {
        schedule_recv(qp);
    }
}
