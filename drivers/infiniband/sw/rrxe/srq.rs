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
//! those WQEs, or than an armed limit, is `EINVAL`.

use core::mem::size_of;
use kernel::{
    bindings, new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    uaccess::{UserPtr, UserSlice},
};

use crate::kapi::rdma::cq::UserCaller;
use crate::kapi::rdma::mr::PdId;
use crate::kapi::rdma::srq::{SrqAttr, SrqEvents, MODIFY_LIMIT, MODIFY_MAX_WR};
use crate::kapi::xarray::RcuTable;
use crate::mr::MrTable;
use crate::param;
use crate::queue::{Geometry, Queue};
use crate::rrxe_ratelimited;
use crate::wqe::{BadRecv, RecvWqe};

/// `sizeof(struct ib_sge)` (librxe's receive SGE slots).
const SGE_SIZE: u32 = 16;

/// The ring and what the kernel keeps of it, under the SRQ's lock.
struct SrqInner {
    /// Taken away when the SRQ is destroyed.
    queue: Option<Queue>,
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
    events: SrqEvents,
}

/// The SRQs of a device, by number (`srq_num`; the table bounds
/// `max_srq`).
pub(crate) type SrqTable = RcuTable<SrqShared>;

/// Driver data of one SRQ.
pub(crate) struct RrxeSrq {
    pub(crate) shared: Arc<SrqShared>,
    num: u32,
}

fn bad(what: &str, v: u32) -> Error {
    rrxe_ratelimited!(pr_warn, "rrxe: SRQ: bad {} {}\n", what, v);
    EINVAL
}

/// `create_srq` for user SRQs.
pub(crate) fn create(
    table: &SrqTable,
    pd: PdId,
    attr: &mut SrqAttr,
    user: Option<UserCaller<'_>>,
    events: SrqEvents,
) -> Result<RrxeSrq> {
    let Some(mut user) = user else {
        rrxe_ratelimited!(pr_warn, "rrxe: kernel SRQs are not supported\n");
        return Err(crate::kapi::eopnotsupp());
    };
    let max_sge = attr.max_sge.max(1);
    if max_sge > param::MAX_SRQ_SGE as u32 {
        return Err(bad("max_sge", attr.max_sge));
    }
    let elem = size_of::<bindings::rxe_recv_wqe>() as u32 + max_sge * SGE_SIZE;
    let geo = Geometry::new(attr.max_wr, elem, param::MAX_SRQ_WR as u32)
        .map_err(|_| bad("max_wr", attr.max_wr))?;
    if attr.srq_limit > geo.capacity() {
        return Err(bad("srq_limit", attr.srq_limit));
    }
    user.udata.require_empty_input()?;
    let queue = Queue::new(&user.ctx, geo)?;
    let slot = table.reserve(param::MIN_SRQ_INDEX as u32, param::MAX_SRQ_INDEX as u32)?;
    let num = slot.index();
    // struct rxe_create_srq_resp { struct mminfo mi; __u32 srq_num; __u32 reserved; }
    let mut resp = [0u8; 24];
    resp[..16].copy_from_slice(&queue.mminfo());
    resp[16..20].copy_from_slice(&num.to_ne_bytes());
    user.udata.respond(&resp)?;
    let limit = attr.srq_limit;
    let shared = Arc::pin_init(
        pin_init!(SrqShared {
            pd,
            max_sge,
            inner <- new_mutex!(SrqInner {
                queue: Some(queue),
                consumer: 0,
                limit,
                capacity: geo.capacity(),
            }),
            events,
        }),
        GFP_KERNEL,
    )?;
    slot.publish(shared.clone())?;
    attr.max_wr = geo.capacity();
    attr.max_sge = max_sge;
    Ok(RrxeSrq { shared, num })
}

impl RrxeSrq {
    /// `modify_srq`: resizes and/or arms the limit.
    pub(crate) fn modify(&self, attr: &SrqAttr, mask: u32, user: Option<UserCaller<'_>>) -> Result {
        if mask & !(MODIFY_MAX_WR | MODIFY_LIMIT) != 0 {
            return Err(bad("attribute mask", mask));
        }
        let s = &self.shared;
        let mut g = s.inner.lock();
        if mask & MODIFY_MAX_WR != 0 {
            let mut user = user.ok_or(EINVAL)?;
            // struct rxe_modify_srq_cmd { __aligned_u64 mmap_info_addr; }
            let mut cmd = [0u8; 8];
            user.udata.read_input(&mut cmd)?;
            let limit = if mask & MODIFY_LIMIT != 0 {
                attr.srq_limit
            } else {
                g.limit
            };
            s.resize(&mut g, attr.max_wr, limit, &user, u64::from_ne_bytes(cmd))?;
        }
        if mask & MODIFY_LIMIT != 0 {
            if attr.srq_limit > g.capacity {
                return Err(bad("srq_limit", attr.srq_limit));
            }
            g.limit = attr.srq_limit;
        }
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
        drop(self.shared.inner.lock().queue.take());
        drop(table.remove(self.num, &self.shared));
    }
}

impl SrqShared {
    /// Replaces the ring with one of at least `max_wr` WQEs holding those
    /// not yet taken; writes its mmap info to user address `mi_addr`.
    fn resize(
        &self,
        g: &mut SrqInner,
        max_wr: u32,
        limit: u32,
        user: &UserCaller<'_>,
        mi_addr: u64,
    ) -> Result {
        let old = g.queue.as_ref().ok_or(EINVAL)?;
        let pending = old.posted_since(g.consumer)?;
        let elem = size_of::<bindings::rxe_recv_wqe>() as u32 + self.max_sge * SGE_SIZE;
        let geo = Geometry::new(max_wr, elem, param::MAX_SRQ_WR as u32)
            .map_err(|_| bad("max_wr", max_wr))?;
        if pending > geo.capacity() || limit > geo.capacity() {
            return Err(bad("max_wr below the WQEs posted or the limit", max_wr));
        }
        let new = Queue::new(&user.ctx, geo)?;
        let mut slot = [0u8; 1 << 10];
        let len = old.slot_size().min(slot.len());
        for i in 0..pending {
            old.read_slot(g.consumer.wrapping_add(i), &mut slot[..len])?;
            new.write_slot(i, &slot[..len])?;
        }
        new.publish_consumer(0)?;
        new.publish_producer(pending)?;
        let mut w = UserSlice::new(UserPtr::from_addr(mi_addr as usize), 16).writer();
        w.write_slice(&new.mminfo())?;
        g.queue = Some(new);
        g.consumer = 0;
        g.capacity = geo.capacity();
        Ok(())
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
