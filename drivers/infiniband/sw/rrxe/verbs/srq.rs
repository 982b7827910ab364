// SPDX-License-Identifier: GPL-2.0

//! The shared receive queue verbs: `create_srq` (a ring librxe maps, or a
//! kernel consumer's) and `modify_srq` (resize, arm the limit event).
//! `query_srq` and `destroy_srq` go to the SRQ itself; the SRQs, their
//! table and the engine's side of them are `srq.rs`'s.

use kernel::{
    prelude::*,
    uaccess::{UserPtr, UserSlice},
};

use crate::kapi::rdma::cq::UserCaller;
use crate::kapi::rdma::mr::PdId;
use crate::kapi::rdma::srq::{SrqAttr, SrqEvents, MODIFY_LIMIT, MODIFY_MAX_WR};
use crate::param;
use crate::queue::Queue;
use crate::srq::{bad, geometry, RrxeSrq, SrqTable};

/// `create_srq`: a ring mapped by the user process, or a kernel-only one
/// for a kernel consumer (`user` is `None`).  Writes back the capacity
/// and SGEs granted.
pub(crate) fn create(
    table: &SrqTable,
    pd: PdId,
    attr: &mut SrqAttr,
    mut user: Option<UserCaller<'_>>,
    events: SrqEvents,
) -> Result<RrxeSrq> {
    let max_sge = attr.max_sge.max(1);
    if max_sge > param::MAX_SRQ_SGE as u32 {
        return Err(bad("max_sge", attr.max_sge));
    }
    let geo = geometry(attr.max_wr, max_sge)?;
    if attr.srq_limit > geo.capacity() {
        return Err(bad("srq_limit", attr.srq_limit));
    }
    let queue = match &mut user {
        Some(u) => {
            u.udata.require_empty_input()?;
            Queue::new(&u.ctx, geo)?
        }
        None => Queue::new_kernel(geo)?,
    };
    let limit = attr.srq_limit;
    let srq = RrxeSrq::new(table, pd, queue, max_sge, limit, events, |num, queue| {
        let Some(mut u) = user else { return Ok(()) };
        // struct rxe_create_srq_resp { struct mminfo mi; __u32 srq_num; __u32 reserved; }
        let mut resp = [0u8; 24];
        resp[..16].copy_from_slice(&queue.mminfo());
        resp[16..20].copy_from_slice(&num.to_ne_bytes());
        u.udata.respond(&resp)
    })?;
    attr.max_wr = geo.capacity();
    attr.max_sge = max_sge;
    Ok(srq)
}

/// `modify_srq`: resizes (`IB_SRQ_MAX_WR`) and/or arms the limit
/// (`IB_SRQ_LIMIT`).  A resize makes its new ring, and for a user SRQ
/// reads the request and writes the mmap info to user memory, before the
/// SRQ's lock is taken ([`RrxeSrq::apply`]): a copy from or to user memory
/// may wait as long as the user likes (a page fault that userfaultfd or a
/// FUSE file never resolves), and must not hold up the QPs attached to
/// the SRQ meanwhile.
pub(crate) fn modify(
    srq: &RrxeSrq,
    attr: &SrqAttr,
    mask: u32,
    user: Option<UserCaller<'_>>,
) -> Result {
    if mask & !(MODIFY_MAX_WR | MODIFY_LIMIT) != 0 {
        return Err(bad("attribute mask", mask));
    }
    let limit = (mask & MODIFY_LIMIT != 0).then_some(attr.srq_limit);
    let new = if mask & MODIFY_MAX_WR != 0 {
        Some(new_ring(srq, attr.max_wr, limit, user)?)
    } else {
        None
    };
    srq.apply(new, limit)
}

/// A ring for a resize of `srq` to `max_wr` WQEs (`limit`, if one is
/// being armed, must fit in it).  A user SRQ's is mapped by the caller,
/// and its mmap info written to the user address `struct
/// rxe_modify_srq_cmd` names (C rxe's uABI: not in the response); a kernel
/// SRQ's (no `user`) is kernel-only.
fn new_ring(
    srq: &RrxeSrq,
    max_wr: u32,
    limit: Option<u32>,
    user: Option<UserCaller<'_>>,
) -> Result<Queue> {
    let geo = geometry(max_wr, srq.shared.max_sge())?;
    if let Some(limit) = limit.filter(|&l| l > geo.capacity()) {
        return Err(bad("srq_limit", limit));
    }
    let Some(mut user) = user else {
        return Queue::new_kernel(geo);
    };
    // struct rxe_modify_srq_cmd { __aligned_u64 mmap_info_addr; }
    let mut cmd = [0u8; 8];
    user.udata.read_input(&mut cmd)?;
    let mi_addr = u64::from_ne_bytes(cmd);
    let new = Queue::new(&user.ctx, geo)?;
    let mut w = UserSlice::new(UserPtr::from_addr(mi_addr as usize), 16).writer();
    w.write_slice(&new.mminfo())?;
    Ok(new)
}
