// SPDX-License-Identifier: GPL-2.0

//! The send queue's local operations, which send no packet: binding a
//! memory window (BIND_MW, also what `ibv_bind_mw` posts) and invalidating
//! one (LOCAL_INV).  The requester carries one out when it is the oldest
//! WQE not retired, so it takes effect after everything posted before it
//! (for LOCAL_INV, the local invalidate fence IBTA describes; C rxe fences
//! it the same way), and it completes at once, in order.  A bind that
//! fails completes with `IB_WC_MW_BIND_ERR`, a local invalidate with
//! `IB_WC_LOC_QP_OP_ERR`; either puts the QP in the error state first.

use kernel::sync::Arc;

use super::fail_head;
use super::send::Step;
use crate::proto::cqe::WcStatus;
use crate::proto::wqe::SendOp;
use crate::qp::{send::SendSide, Qp};
use crate::stats::Counter;

/// Carries out the local operation at the head of the in-flight WQEs.
pub(super) fn execute(qp: &Arc<Qp>, s: &mut SendSide) -> Step {
    let Some(w) = s.inflight.get(0) else {
        return Step::Idle;
    };
    let mws = &qp.dev.mws;
    let res = match w.hdr.op {
        SendOp::BindMw => mws
            .bind(&qp.dev.mrs, qp.ident, qp.init.pd, &w.hdr.bind)
            .map_err(|why| (WcStatus::MwBindErr, why)),
        SendOp::LocalInv => mws
            .invalidate(w.hdr.invalidate_rkey(), qp.init.pd, None)
            .map_err(|why| (WcStatus::LocQpOpErr, why)),
        _ => Err((WcStatus::LocQpOpErr, "not a local operation")),
    };
    match res {
        Ok(()) => {
            qp.count(if w.hdr.op == SendOp::BindMw {
                Counter::MwBinds
            } else {
                Counter::MwInvalidations
            });
            s.retire_head(qp, WcStatus::Success);
        }
        Err((status, why)) => {
            crate::rrxe_ratelimited!(
                pr_warn,
                "rrxe: QP {:#x}: {:?} (wr_id {:#x}) failed: {}\n",
                qp.qpn,
                w.hdr.op,
                w.hdr.wr_id,
                why
            );
            fail_head(qp, s, status, why);
        }
    }
    Step::Progress
}
