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

use super::fail_head;
use super::send::Step;
use crate::mw::{is_window_key, QpIdent};
use crate::proto::cqe::WcStatus;
use crate::proto::wqe::SendOp;
use crate::qp::{send::SendSide, Qp};
use crate::stats::Counter;

/// Invalidates `rkey` for QP `qp`: a type 2 memory window (counted in
/// `mw_invalidations`) or a fast registration of a region in its PD.
/// LOCAL_INV (`by` None) or a SEND with Invalidate received by QP `by`
/// (for a window, the QP it was bound through).  The error is the reason
/// it fails.
pub(super) fn invalidate(
    qp: &Qp,
    rkey: u32,
    by: Option<QpIdent>,
) -> core::result::Result<(), &'static str> {
    if is_window_key(rkey) {
        qp.dev.mws.invalidate(rkey, qp.init.pd, by)?;
        qp.count(Counter::MwInvalidations);
        Ok(())
    } else {
        qp.dev.mrs.invalidate_fast(rkey, qp.init.pd)
    }
}

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
        SendOp::LocalInv => {
            invalidate(qp, w.hdr.invalidate_rkey(), None).map_err(|why| (WcStatus::LocQpOpErr, why))
        }
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
