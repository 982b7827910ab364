// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues.  A user SRQ is a [`Queue`] of receive WQEs
//! (`struct rxe_recv_wqe` layout) that librxe maps and fills; the QPs
//! attached to it take their receive WQEs from it instead of from a ring
//! of their own.  A WQE is copied, checked and resolved when a message
//! starts (`wqe::fetch_recv`, against the SRQ's PD and `max_sge`), and
//! the consumer index moves at once: the WQE then belongs to the QP that
//! took it (its completion, or its flush, goes to that QP's CQ).
//!
//! The limit event (`IB_EVENT_SRQ_LIMIT_REACHED`): armed by `modify_srq`
//! with `IB_SRQ_LIMIT` (or at creation with a nonzero `srq_limit`), it
//! fires once when a take leaves fewer WQEs than the limit, and disarms
//! (the limit reads 0 again), as IBTA and C rxe have it.
//!
//! Resizing (`IB_SRQ_MAX_WR`, `SRQ_RESIZE`): a new ring takes the WQEs
//! posted and not yet taken, in order; its mmap info goes where librxe's
//! `struct rxe_modify_srq_cmd` points (C rxe's uABI: not in the response),
//! and librxe maps it while it holds its SRQ lock.  Fewer entries than
//! those WQEs, or than an armed limit, is `EINVAL`.  The new ring is made
//! and its mmap info written (`verbs/srq.rs`) before the SRQ's lock is
//! taken ([`RrxeSrq::apply`]): nothing touches user memory under a lock
//! the engine takes.
//!
//! A kernel consumer's SRQ (nvmet-rdma with `use_srq`, for instance) has
//! a kernel-only ring in the same layout.  Its `post_srq_recv` writes
//! WQEs there from any context (`verbs/post.rs`) under [`SrqShared`]'s
//! `kpost` lock, which a resize also holds while it moves the WQEs, so no
//! request lands in a ring being replaced.

use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

use crate::kapi::rdma::mr::PdId;
use crate::kapi::rdma::rxe_uapi::RECV_WQE_SIZE;
use crate::kapi::rdma::srq::{SrqAttr, SrqEvents};
use crate::kapi::spinlock_irq::SpinLockIrq;
use crate::kapi::xarray::{RcuRelease, RcuTable};
use crate::mr::MrTable;
use crate::param;
use crate::queue::{Geometry, Queue};
use crate::wqe::{BadRecv, RecvWqe};
use crate::{new_spinlock_irq, rrxe_ratelimited};

/// `sizeof(struct ib_sge)` (librxe's receive SGE slots).
const SGE_SIZE: u32 = 16;

/// The ring and what the kernel keeps of it, under the SRQ's lock.
struct SrqInner {
    /// Taken away when the SRQ is destroyed.
    queue: Option<Arc<Queue>>,
    /// The kernel's consumer index (a running count; user space's copy
    /// is only published).
    consumer: u32,
    /// Armed limit, 0 if disarmed.
    limit: u32,
    /// WQEs the ring holds.
    capacity: u32,
}

/// What an SRQ shares with the QPs attached to it.
#[pin_data]
pub(crate) struct SrqShared {
    pub(crate) pd: PdId,
    max_sge: u32,
    #[pin]
    inner: Mutex<SrqInner>,
    /// A kernel consumer's ring (the one in `inner`), which its
    /// `post_srq_recv` fills from any context; `None` for a user SRQ and
    /// once the SRQ is destroyed.
    #[pin]
    kpost: SpinLockIrq<Option<Arc<Queue>>>,
    events: SrqEvents,
}

/// The SRQs of a device, by number (`srq_num`; the table bounds
/// `max_srq`).
pub(crate) type SrqTable = RcuTable<SrqShared>;

/// Driver data of one SRQ.
pub(crate) struct RrxeSrq {
    pub(crate) shared: Arc<SrqShared>,
    num: u32,
    /// The work item that drops the table's reference after destruction.
    release: RcuRelease<SrqShared>,
}

/// The size of a receive WQE with `max_sge` SGEs.
fn wqe_size(max_sge: u32) -> u32 {
    RECV_WQE_SIZE as u32 + max_sge * SGE_SIZE
}

/// The ring of an SRQ of `max_wr` WQEs of `max_sge` SGEs each.
pub(crate) fn geometry(max_wr: u32, max_sge: u32) -> Result<Geometry> {
    Geometry::new(max_wr, wqe_size(max_sge), param::MAX_SRQ_WR as u32)
        .map_err(|_| bad("max_wr", max_wr))
}

/// `EINVAL`, after a rate-limited message naming `what` and its value.
pub(crate) fn bad(what: &str, v: u32) -> Error {
    rrxe_ratelimited!(pr_warn, "rrxe: SRQ: bad {} {}\n", what, v);
    EINVAL
}

impl RrxeSrq {
    /// A new SRQ on `queue` (user space's ring, or a kernel-only one for a
    /// kernel consumer) of WQEs of up to `max_sge` SGEs, the limit event
    /// armed at `limit` (0: disarmed), numbered and then published:
    /// `report` gets the number first (for user space's response), and an
    /// error from it abandons the SRQ before any QP can name it.
    pub(crate) fn new(
        table: &SrqTable,
        pd: PdId,
        queue: Queue,
        max_sge: u32,
        limit: u32,
        events: SrqEvents,
        report: impl FnOnce(u32, &Queue) -> Result,
    ) -> Result<Self> {
        let capacity = queue.mask();
        let queue = Arc::new(queue, GFP_KERNEL)?;
        let release = RcuRelease::new(GFP_KERNEL)?;
        let slot = table.reserve(param::MIN_SRQ_INDEX as u32, param::MAX_SRQ_INDEX as u32)?;
        let num = slot.index();
        report(num, &queue)?;
        let kpost = queue.is_kernel().then(|| queue.clone());
        let shared = Arc::pin_init(
            pin_init!(SrqShared {
                pd,
                max_sge,
                inner <- new_mutex!(SrqInner {
                    queue: Some(queue),
                    consumer: 0,
                    limit,
                    capacity,
                }),
                kpost <- new_spinlock_irq!(kpost),
                events,
            }),
            GFP_KERNEL,
        )?;
        slot.publish(shared.clone())?;
        Ok(Self {
            shared,
            num,
            release,
        })
    }

    /// The locked half of `modify_srq`: installs `new` (a ring made by the
    /// caller without the lock, see [`SrqShared::install`]) and/or arms
    /// the limit at `limit`.  The engine takes this lock for every receive
    /// (`take`), so nothing that touches user memory happens here.
    pub(crate) fn apply(&self, new: Option<Queue>, limit: Option<u32>) -> Result {
        let s = &self.shared;
        let new = new.map(|q| Arc::new(q, GFP_KERNEL)).transpose()?;
        let mut g = s.inner.lock();
        let old = match new {
            Some(new) => Some(s.install(&mut g, new, limit)?),
            None => None,
        };
        if let Some(limit) = limit {
            if limit > g.capacity {
                return Err(bad("srq_limit", limit));
            }
            g.limit = limit;
        }
        drop(g);
        // The old ring's mmap entry goes outside the lock as well.
        drop(old);
        Ok(())
    }

    /// `query_srq`.
    pub(crate) fn query(&self) -> SrqAttr {
        let s = &self.shared;
        let g = s.inner.lock();
        SrqAttr {
            max_wr: g.capacity,
            max_sge: s.max_sge,
            srq_limit: g.limit,
        }
    }

    /// `destroy_srq`: the ring's mapping goes now, whoever still holds
    /// the shared part (a QP's task, briefly).
    pub(crate) fn destroy(self, table: &SrqTable) {
        let kring = self.shared.kpost.lock().take();
        drop(kring);
        let q = self.shared.inner.lock().queue.take();
        drop(q);
        table.remove(self.num, &self.shared, self.release);
    }
}

/// Copies the WQEs of `old` posted since `consumer` to the start of the
/// empty ring `new` and publishes them there; `EINVAL` (nothing
/// published) if they do not fit.
fn move_pending(old: &Queue, consumer: u32, new: &Queue) -> Result {
    let pending = old.posted_since(consumer)?;
    if pending > new.mask() {
        return Err(bad("max_wr below the WQEs posted", pending));
    }
    let mut slot = [0u8; 1 << 10];
    let len = old.slot_size().min(new.slot_size()).min(slot.len());
    for i in 0..pending {
        old.read_slot(consumer.wrapping_add(i), &mut slot[..len])?;
        new.write_slot(i, &slot[..len])?;
    }
    new.publish_consumer(0)?;
    new.publish_producer(pending)
}

impl SrqShared {
    /// Replaces the ring with `new` (made by `verbs/srq.rs`), which takes
    /// the WQEs not yet taken; `EINVAL` if they, or the armed limit (or
    /// `limit`, about to be armed), do not fit, or if `new` is not the
    /// same kind of ring (user or kernel) as the old one.  A kernel SRQ's
    /// WQEs move with `post_srq_recv` held off.  Returns the old ring, for
    /// the caller to drop once it has released the lock.
    fn install(&self, g: &mut SrqInner, new: Arc<Queue>, limit: Option<u32>) -> Result<Arc<Queue>> {
        let old = g.queue.clone().ok_or(EINVAL)?;
        if new.is_kernel() != old.is_kernel() {
            return Err(EINVAL);
        }
        let capacity = new.mask();
        let limit = limit.unwrap_or(g.limit);
        if limit > capacity {
            return Err(bad("srq_limit", limit));
        }
        if new.is_kernel() {
            let mut k = self.kpost.lock();
            move_pending(&old, g.consumer, &new)?;
            *k = Some(new.clone());
        } else {
            move_pending(&old, g.consumer, &new)?;
        }
        g.queue = Some(new);
        g.consumer = 0;
        g.capacity = capacity;
        Ok(old)
    }

    /// The SGEs a receive WQE of this SRQ may name.
    pub(crate) fn max_sge(&self) -> u32 {
        self.max_sge
    }

    /// Runs `post` on a kernel SRQ's ring under its `kpost` lock (any
    /// context: the lock is taken with interrupts off); `EINVAL` for a
    /// user SRQ or a destroyed one.
    pub(crate) fn post_kernel(&self, post: impl FnOnce(&Queue) -> Result) -> Result {
        let k = self.kpost.lock();
        post(k.as_deref().ok_or(EINVAL)?)
    }

    /// Takes the next receive WQE for a message starting now: `None` if
    /// none is posted, `Some(Err(..))` for one that is malformed or names
    /// memory it may not write (it is consumed all the same).  Raises the
    /// limit event if the take left fewer WQEs than the armed limit.
    pub(crate) fn take(
        &self,
        mrs: &MrTable,
    ) -> Result<Option<core::result::Result<RecvWqe, BadRecv>>> {
        let mut fire = false;
        let taken = {
            let mut g = self.inner.lock();
            let consumer = g.consumer;
            let Some(q) = g.queue.as_ref() else {
                return Ok(None);
            };
            if q.posted_since(consumer)? == 0 {
                return Ok(None);
            }
            let w = crate::wqe::fetch_recv(q, consumer, mrs, self.pd, self.max_sge)?;
            let next = consumer.wrapping_add(1);
            q.publish_consumer(next)?;
            let left = q.posted_since(next)?;
            g.consumer = next;
            if g.limit != 0 && left < g.limit {
                g.limit = 0;
                fire = true;
            }
            w
        };
        if fire {
            self.events.limit_reached();
        }
        Ok(Some(taken))
    }
}

#[kernel::macros::kunit_tests(rrxe_srq)]
mod tests {
    use super::*;

    /// A kernel ring of `cap` entries with WQEs `ids` posted from
    /// consumer index `start` on (the consumer published there).
    fn ring(cap: u32, start: u32, ids: &[u64]) -> Result<Queue> {
        let q = Queue::new_kernel(Geometry::new(cap, 64, 64)?)?;
        for (i, id) in ids.iter().enumerate() {
            q.write_slot(start.wrapping_add(i as u32), &id.to_ne_bytes())?;
        }
        q.publish_consumer(start)?;
        q.publish_producer(start.wrapping_add(ids.len() as u32))?;
        Ok(q)
    }

    #[test]
    fn a_resize_keeps_the_posted_wqes_in_order() -> Result {
        // 7 entries (8 slots), consumer at 6: the WQEs wrap around.
        let old = ring(7, 6, &[10, 11, 12, 13])?;
        let new = Queue::new_kernel(Geometry::new(15, 64, 64)?)?;
        move_pending(&old, 6, &new)?;
        assert_eq!(new.posted_since(0)?, 4);
        for i in 0..4u32 {
            assert_eq!(new.wr_id(i), 10 + u64::from(i));
        }
        Ok(())
    }

    #[test]
    fn a_resize_below_the_posted_wqes_is_refused() -> Result {
        let old = ring(7, 0, &[1, 2, 3, 4])?;
        let small = Queue::new_kernel(Geometry::new(3, 64, 64)?)?;
        assert_eq!(move_pending(&old, 0, &small), Err(EINVAL));
        // Nothing was published in the ring that stays empty.
        assert_eq!(small.posted_since(0)?, 0);
        Ok(())
    }
}
