// SPDX-License-Identifier: GPL-2.0

//! The completion queue verbs: `create_cq` (a ring librxe maps, or a
//! kernel consumer's), `resize_cq` and `req_notify_cq`.  `poll_cq` (kernel
//! consumers only) and `destroy_cq` go to the CQ itself; the CQs are
//! `cq.rs`'s.

use kernel::prelude::*;

use crate::cq::RrxeCq;
use crate::kapi::eopnotsupp;
use crate::kapi::rdma::cq::{notify, CqAttr, CqEvents, UserCaller};
use crate::limit::Charge;
use crate::proto::cqe::CQE_SIZE;
use crate::queue::{Geometry, Queue};
use crate::{param, rrxe_ratelimited};

/// The ring of a CQ of `cqe` entries (`verb` names the caller in the
/// message for an out-of-range size).
fn geometry(cqe: u32, verb: &str) -> Result<Geometry> {
    Geometry::new(cqe, CQE_SIZE as u32, param::MAX_CQE as u32).inspect_err(|_| {
        rrxe_ratelimited!(pr_warn, "rrxe: {}: {} entries is out of range\n", verb, cqe);
    })
}

/// `create_cq` for `attr`; returns the CQ and the entries it holds.
pub(crate) fn create(
    attr: CqAttr,
    user: Option<UserCaller<'_>>,
    events: CqEvents,
    charge: Charge,
) -> Result<(RrxeCq, u32)> {
    if attr.flags != 0 {
        return Err(eopnotsupp());
    }
    // ib_core checks this for user space; kept as a guard for every caller.
    if attr.comp_vector >= kernel::cpu::nr_cpu_ids() {
        return Err(EINVAL);
    }
    let geo = geometry(attr.cqe, "create_cq")?;
    let queue = match user {
        Some(mut user) => {
            user.udata.require_empty_input()?;
            let queue = Queue::new(&user.ctx, geo)?;
            // struct rxe_create_cq_resp { struct mminfo mi; }
            user.udata.respond(&queue.mminfo())?;
            Some(queue)
        }
        None => None,
    };
    Ok((
        RrxeCq::new(queue, geo.capacity(), events, charge)?,
        geo.capacity(),
    ))
}

/// `resize_cq`: a new ring of at least `cqe` entries takes the
/// completions not yet polled, in order, and replaces the old one (whose
/// mapping goes; librxe maps the new one from the response, holding its CQ
/// lock meanwhile, so it does not poll during the call).  `EINVAL` if they
/// do not fit.
///
/// The new ring is allocated and the response copied to user space
/// before the ring lock is taken: the engine takes that lock for every
/// completion, and a copy to user memory may wait as long as the user
/// likes (a page fault userfaultfd or a FUSE file never resolves).  If the
/// completions then do not fit, the call fails and the response written
/// names a ring that is already gone (librxe ignores it on failure), as on
/// C rxe, which copies before it locks too.
pub(crate) fn resize(cq: &RrxeCq, cqe: u32, user: Option<UserCaller<'_>>) -> Result<u32> {
    let Some(mut user) = user else {
        return Err(eopnotsupp());
    };
    user.udata.require_empty_input()?;
    let geo = geometry(cqe, "resize_cq")?;
    let new = Queue::new(&user.ctx, geo)?;
    // struct rxe_resize_cq_resp { struct mminfo mi; }
    user.udata.respond(&new.mminfo())?;
    cq.replace_ring(new, geo.capacity())?;
    Ok(geo.capacity())
}

/// `req_notify_cq`: arms the CQ; with `IB_CQ_REPORT_MISSED_EVENTS`, says
/// whether completions already wait.
pub(crate) fn req_notify(cq: &RrxeCq, flags: u32) -> Result<bool> {
    let arm = flags & notify::SOLICITED_MASK;
    if arm == notify::SOLICITED_MASK {
        return Err(EINVAL);
    }
    cq.arm(arm);
    if flags & notify::REPORT_MISSED_EVENTS == 0 {
        return Ok(false);
    }
    cq.any_pending()
}
