// SPDX-License-Identifier: GPL-2.0

//! The send queue's local operations, which send no packet: binding a
//! memory window (BIND_MW, also what `ibv_bind_mw` posts), invalidating a
//! window or a fast-registration region (LOCAL_INV), and registering a
//! region (REG_MR, kernel QPs only: librxe has no such opcode, and a user
//! ring that holds it gets an error completion).  The requester carries
//! one out when it is the oldest WQE not retired, so it takes effect after
//! everything posted before it (for LOCAL_INV, the local invalidate fence
//! IBTA describes; C rxe fences it the same way), and it completes at
//! once, in order.  A bind that fails completes with `IB_WC_MW_BIND_ERR`,
//! a local invalidate or a registration with `IB_WC_LOC_QP_OP_ERR`; each
//! puts the QP in the error state first.

use kernel::sync::Arc;

use super::Step;
use crate::engine::{fail_head, invalidate};
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
        SendOp::LocalInv => invalidate::rkey(qp, w.hdr.invalidate_rkey(), None)
            .map_err(|why| (WcStatus::LocQpOpErr, why)),
        SendOp::RegMr if !s.sq.as_ref().is_some_and(|q| q.is_kernel()) => {
            Err((WcStatus::LocQpOpErr, "REG_MR on a user QP"))
        }
        SendOp::RegMr => qp
            .dev
            .mrs
            .fast_register(&w.hdr.reg, qp.init.pd)
            .map_err(|why| (WcStatus::LocQpOpErr, why)),
        _ => Err((WcStatus::LocQpOpErr, "not a local operation")),
    };
    match res {
        Ok(()) => {
            if w.hdr.op == SendOp::BindMw {
                qp.count(Counter::MwBinds);
            }
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
