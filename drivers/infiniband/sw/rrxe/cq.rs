// SPDX-License-Identifier: GPL-2.0

//! Completion queues.  A user CQ is a [`UserQueue`] of `ib_uverbs_wc`
//! slots that librxe maps and polls itself; the kernel will produce into it
//! (the completer and responder, with the data path) and raise completion
//! events as armed by `req_notify_cq`.  Kernel-owned CQs (for in-kernel
//! consumers such as the MAD layer) come with the data path.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{bindings, prelude::*};

use crate::kapi::rdma::cq::{CqAttr, UserCaller};
use crate::queue::{Geometry, UserQueue};
use crate::{param, rrxe_ratelimited};

/// `sizeof(struct ib_uverbs_wc)`: the completion entry librxe reads.
const UVERBS_WC_SIZE: u32 = 48;

/// Driver data of one CQ.
pub(crate) struct RrxeCq {
    queue: UserQueue,
    /// Armed notification (`IB_CQ_SOLICITED` or `IB_CQ_NEXT_COMP`), 0 if
    /// disarmed.
    notify: AtomicU32,
}

/// Creates a CQ for `attr`; see [`crate::kapi::rdma::device::Driver::create_cq`].
pub(crate) fn create(attr: CqAttr, user: Option<UserCaller<'_>>) -> Result<(RrxeCq, u32)> {
    let Some(mut user) = user else {
        rrxe_ratelimited!(pr_warn, "rrxe: kernel CQs are not supported yet\n");
        return Err(crate::kapi::eopnotsupp());
    };
    if attr.flags != 0 {
        return Err(crate::kapi::eopnotsupp());
    }
    // ib_core checks this for user space; kept as a guard for every caller.
    if attr.comp_vector >= kernel::cpu::nr_cpu_ids() {
        return Err(EINVAL);
    }
    let geo = Geometry::new(attr.cqe, UVERBS_WC_SIZE, param::MAX_CQE as u32).inspect_err(|_| {
        rrxe_ratelimited!(pr_warn, "rrxe: create_cq: {} entries is out of range\n", attr.cqe);
    })?;
    user.udata.require_empty_input()?;
    let queue = UserQueue::new(&user.ctx, geo)?;
    // struct rxe_create_cq_resp { struct mminfo mi; }
    user.udata.respond(&queue.mminfo())?;
    Ok((RrxeCq { queue, notify: AtomicU32::new(0) }, geo.capacity()))
}

/// Arms the CQ; reports pending completions if asked.
pub(crate) fn req_notify(cq: &RrxeCq, flags: u32) -> Result<bool> {
    let arm = flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK;
    if arm == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK {
        return Err(EINVAL);
    }
    // NEXT_COMP wins over SOLICITED if both requests race, as in C rxe.
    if arm == bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP {
        cq.notify.store(arm, Ordering::Release);
    } else if arm != 0 {
        let _ = cq.notify.compare_exchange(0, arm, Ordering::AcqRel, Ordering::Acquire);
    }
    let report = flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0;
    Ok(report && cq.queue.count()? != 0)
}
