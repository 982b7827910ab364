// SPDX-License-Identifier: GPL-2.0

//! Completion queues.  A user CQ is a [`UserQueue`] of `ib_uverbs_wc`
//! slots that librxe maps and polls itself.  The kernel is the only
//! producer: it keeps its producer index privately (the shared copy is
//! only published, never read back) and reads the user's consumer index
//! masked, to detect a full ring.  Completion events go to the consumer's
//! handler as armed by `req_notify_cq`.  Kernel-owned CQs (for in-kernel
//! consumers such as the MAD layer) are not supported.

use kernel::{
    bindings, new_mutex,
    prelude::*,
    sync::{
        atomic::{Acquire, Atomic, Full, Release},
        Arc, Mutex,
    },
};

use crate::kapi::rdma::cq::{CqAttr, CqEvents, UserCaller};
use crate::proto::cqe::{Cqe, CQE_SIZE};
use crate::queue::{Geometry, UserQueue};
use crate::{param, rrxe_ratelimited};

/// The ring and the kernel's producer index (a running count).
struct Ring {
    /// Taken away when the CQ is destroyed (see [`RrxeCq`]'s drop).
    queue: Option<UserQueue>,
    producer: u32,
}

/// What a CQ shares with the QPs that complete into it.  QPs may hold it
/// (through work items) after the CQ is destroyed; the ring is gone then
/// and completions are dropped.
#[pin_data]
pub(crate) struct CqShared {
    #[pin]
    ring: Mutex<Ring>,
    /// Armed notification (`IB_CQ_SOLICITED` or `IB_CQ_NEXT_COMP`), 0 if
    /// disarmed.
    notify: Atomic<u32>,
    events: CqEvents,
}

/// Driver data of one CQ.
pub(crate) struct RrxeCq {
    pub(crate) shared: Arc<CqShared>,
}

impl Drop for RrxeCq {
    /// `destroy_cq`: the ring's mmap entry goes now, while the user context
    /// exists, whoever still holds the shared part.
    fn drop(&mut self) {
        let q = self.shared.ring.lock().queue.take();
        drop(q);
    }
}

/// Creates a CQ for `attr`; see [`crate::kapi::rdma::device::Driver::create_cq`].
pub(crate) fn create(
    attr: CqAttr,
    user: Option<UserCaller<'_>>,
    events: CqEvents,
) -> Result<(RrxeCq, u32)> {
    let Some(mut user) = user else {
        rrxe_ratelimited!(pr_warn, "rrxe: kernel CQs are not supported\n");
        return Err(crate::kapi::eopnotsupp());
    };
    if attr.flags != 0 {
        return Err(crate::kapi::eopnotsupp());
    }
    // ib_core checks this for user space; kept as a guard for every caller.
    if attr.comp_vector >= kernel::cpu::nr_cpu_ids() {
        return Err(EINVAL);
    }
    let geo =
        Geometry::new(attr.cqe, CQE_SIZE as u32, param::MAX_CQE as u32).inspect_err(|_| {
            rrxe_ratelimited!(
                pr_warn,
                "rrxe: create_cq: {} entries is out of range\n",
                attr.cqe
            );
        })?;
    user.udata.require_empty_input()?;
    let queue = UserQueue::new(&user.ctx, geo)?;
    // struct rxe_create_cq_resp { struct mminfo mi; }
    user.udata.respond(&queue.mminfo())?;
    let shared = Arc::pin_init(
        pin_init!(CqShared {
            ring <- new_mutex!(Ring { queue: Some(queue), producer: 0 }),
            notify: Atomic::new(0),
            events,
        }),
        GFP_KERNEL,
    )?;
    Ok((RrxeCq { shared }, geo.capacity()))
}

/// `resize_cq`: a new ring of at least `cqe` entries takes the
/// completions not yet polled, in order, and replaces the old one (whose
/// mapping goes; librxe maps the new one from the response, holding its CQ
/// lock meanwhile, so it does not poll during the call).  `EINVAL` if they
/// do not fit.
pub(crate) fn resize(cq: &RrxeCq, cqe: u32, user: Option<UserCaller<'_>>) -> Result<u32> {
    let Some(mut user) = user else {
        return Err(crate::kapi::eopnotsupp());
    };
    user.udata.require_empty_input()?;
    let geo = Geometry::new(cqe, CQE_SIZE as u32, param::MAX_CQE as u32).inspect_err(|_| {
        rrxe_ratelimited!(
            pr_warn,
            "rrxe: resize_cq: {} entries is out of range\n",
            cqe
        );
    })?;
    let mut ring = cq.shared.ring.lock();
    let old = ring.queue.as_ref().ok_or(EINVAL)?;
    let consumer = old.user_consumer()?;
    let pending = ring.producer.wrapping_sub(consumer) & old.mask();
    if pending > geo.capacity() {
        rrxe_ratelimited!(
            pr_warn,
            "rrxe: resize_cq: {} entries cannot hold the {} not polled\n",
            cqe,
            pending
        );
        return Err(EINVAL);
    }
    let new = UserQueue::new(&user.ctx, geo)?;
    let mut slot = [0u8; CQE_SIZE];
    for i in 0..pending {
        old.read_slot(consumer.wrapping_add(i), &mut slot)?;
        new.write_slot(i, &slot)?;
    }
    new.publish_consumer(0)?;
    new.publish_producer(pending)?;
    // struct rxe_resize_cq_resp { struct mminfo mi; }
    user.udata.respond(&new.mminfo())?;
    ring.queue = Some(new);
    ring.producer = pending;
    Ok(geo.capacity())
}

/// Arms the CQ; reports pending completions if asked.
pub(crate) fn req_notify(cq: &RrxeCq, flags: u32) -> Result<bool> {
    let cq = &cq.shared;
    let arm = flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK;
    if arm == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK {
        return Err(EINVAL);
    }
    // NEXT_COMP wins over SOLICITED if both requests race, as in C rxe.
    if arm == bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP {
        cq.notify.store(arm, Release);
    } else if arm != 0 {
        let _ = cq.notify.cmpxchg(0, arm, Full);
    }
    let report = flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0;
    let pending = match &cq.ring.lock().queue {
        Some(q) => q.count()?,
        None => 0,
    };
    Ok(report && pending != 0)
}

impl CqShared {
    /// Appends `cqe`, then raises an event if the CQ is armed for it
    /// (`solicited` completions also satisfy `IB_CQ_SOLICITED`).  `ENOSPC`
    /// if the ring is full: the completion is lost and the caller must
    /// treat the QP as failed (IBTA: CQ overrun is a fatal error); the
    /// CQ's consumer gets `IB_EVENT_CQ_ERR`.
    pub(crate) fn post(&self, cqe: &Cqe, solicited: bool) -> Result {
        let overrun = self.append(cqe);
        if overrun == Err(ENOSPC) {
            self.events.error();
        }
        overrun?;
        let armed = self.notify.load(Acquire);
        let fire = armed == bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP
            || (solicited && armed == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED);
        if fire && self.notify.cmpxchg(armed, 0, Full).is_ok() {
            self.events.notify();
        }
        Ok(())
    }

    /// Appends `cqe` to the ring; `ENOSPC` if it is full.
    fn append(&self, cqe: &Cqe) -> Result {
        {
            let mut ring = self.ring.lock();
            let prod = ring.producer;
            let Some(q) = &ring.queue else {
                return Err(ENODEV);
            };
            let next = prod.wrapping_add(1);
            if next & q.mask() == q.user_consumer()? {
                rrxe_ratelimited!(pr_warn, "rrxe: CQ overrun (QP {:#x})\n", cqe.qp_num);
                return Err(ENOSPC);
            }
            q.write_slot(prod, &cqe.encode())?;
            q.publish_producer(next)?;
            ring.producer = next;
        }
        Ok(())
    }
}
