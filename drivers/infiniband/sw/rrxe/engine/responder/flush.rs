// SPDX-License-Identifier: GPL-2.0

//! FLUSH at the responder (IBTA 1.5 memory placement extensions).  Every
//! earlier request of the QP has already been placed by the time a FLUSH
//! is handled (requests are handled in PSN order, and placement is a copy
//! into the pinned pages by the CPU), so global visibility needs only a
//! write barrier before the acknowledgement, as on C rxe.  Persistence
//! would need persistent memory: rrxe does not claim it, no region can be
//! registered with `IB_ACCESS_FLUSH_PERSISTENT`, so a persistent FLUSH
//! fails the rkey check.
//!
//! The request is checked like any remote access: the QP's FLUSH rights by
//! placement type (`proto::validate`), the rkey, PD and the region's (or
//! window's) FLUSH rights, and for range selectivity the range.  For
//! region selectivity the length is ignored (the whole region is flushed)
//! but the address must still lie in the region.  It takes a responder
//! resource, so a
//! duplicate is acknowledged again (C rxe records none and drops it), and
//! is answered by an empty READ RESPONSE ONLY.

use super::atomic::acknowledge_write;
use super::{remote_region, Denial, Outcome};
use crate::mr::{FLUSH_GLOBAL, FLUSH_PERSISTENT};
use crate::proto::feth::{self, FLUSH_MR, FLUSH_RANGE};
use crate::proto::resources::Resource;
use crate::proto::Packet;
use crate::qp::{recv::RecvSide, Qp};
use crate::stats::Counter;

/// A new FLUSH (in sequence): checks it, orders every earlier placement
/// before its acknowledgement and acknowledges it.
pub(super) fn execute(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>) -> Result<(), Outcome> {
    let (Some(f), Some(reth)) = (pkt.feth(), pkt.reth()) else {
        return Err(Outcome::invalid("FLUSH without FETH or RETH"));
    };
    if r.res.capacity() == 0 {
        return Err(Outcome::invalid(
            "FLUSH on a QP without responder resources (max_dest_rd_atomic 0)",
        ));
    }
    let plt = f.placement_type();
    let mut need = 0;
    if plt & feth::FLUSH_GLOBAL != 0 {
        need |= FLUSH_GLOBAL;
    }
    if plt & feth::FLUSH_PERSISTENT != 0 {
        need |= FLUSH_PERSISTENT;
    }
    let len = match f.selectivity() {
        FLUSH_RANGE => u64::from(reth.len()),
        FLUSH_MR => 0,
        _ => return Err(Outcome::invalid("FLUSH of an undefined selectivity level")),
    };
    remote_region(
        qp,
        reth.rkey(),
        reth.va(),
        len,
        need,
        Denial {
            unknown: "FLUSH with an unknown rkey",
            outside: "FLUSH outside the region or its rights",
        },
    )?;
    kernel::sync::barrier::smp_wmb();
    qp.count(Counter::FlushesExecuted);
    let psn = pkt.psn();
    // Cannot fail: the capacity was checked above.
    let _ = r.res.insert(Resource::Written(psn));
    acknowledge_write(qp, r, psn);
    Ok(())
}
