// SPDX-License-Identifier: GPL-2.0

//! `advise_mr` (`ibv_advise_mr`): prefetching on-demand-paging regions.
//! Each SGE names an ODP region of the caller's PD by lkey and a range in
//! it (by I/O virtual address, as the data path addresses it); its pages
//! are faulted in for reading or writing, or only recorded if present.
//!
//! With `IB_UVERBS_ADVISE_MR_FLAG_FLUSH` the call faults before it returns
//! and reports the first error.  Without it the SGEs are checked (bad
//! ones fail the call), the regions held, and the faults run on the
//! engine's workqueue; their errors are only counted, as C rxe and mlx5
//! drop them.  A region deregistered meanwhile is skipped (its memory was
//! released: [`crate::kapi::rdma::mr::odp::OdpUmem::release`]); module
//! unload drains the workqueue first.

use kernel::{
    impl_has_work, new_work,
    prelude::*,
    sync::Arc,
    workqueue::{Work, WorkItem},
};

use crate::kapi::rdma::mr::{odp::Prefetch, PdId};
use crate::mr::{MrState, MrTable, LOCAL_WRITE};
use crate::proto::wqe::Sge;

/// One resolved SGE: the region, the offset in it and the length.
struct Part {
    mr: Arc<MrState>,
    off: usize,
    len: usize,
}

/// Resolves `sges` in `pd`: `EINVAL` for an unknown key, a region of
/// another PD, one that is not on demand or a range outside it; `EPERM`
/// for a write prefetch of a region without local write access.
fn resolve(mrs: &MrTable, pd: PdId, how: Prefetch, sges: &[Sge]) -> Result<KVec<Part>> {
    let mut parts = KVec::with_capacity(sges.len(), GFP_KERNEL)?;
    for s in sges {
        let mr = mrs.lookup(s.lkey).ok_or(EINVAL)?;
        if !mr.is_on_demand() {
            return Err(EINVAL);
        }
        let off = mr
            .check(pd, s.addr, u64::from(s.length), 0)
            .map_err(|_| EINVAL)?;
        if how == Prefetch::Write && mr.access() & LOCAL_WRITE == 0 {
            return Err(EPERM);
        }
        parts.push(
            Part {
                mr,
                off,
                len: s.length as usize,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(parts)
}

/// `advise_mr` (module docs).  May sleep.
pub(crate) fn advise(mrs: &MrTable, pd: PdId, how: Prefetch, flush: bool, sges: &[Sge]) -> Result {
    let parts = resolve(mrs, pd, how, sges)?;
    if flush {
        for p in parts.iter() {
            p.mr.prefetch(p.off, p.len, how)?;
        }
        return Ok(());
    }
    let job = Arc::pin_init(
        pin_init!(PrefetchJob {
            work <- new_work!("rrxe_prefetch"),
            how,
            parts,
        }),
        GFP_KERNEL,
    )?;
    crate::engine::schedule_prefetch(job);
    Ok(())
}

/// An asynchronous prefetch: the resolved SGEs, faulted in by a work item.
#[pin_data]
pub(crate) struct PrefetchJob {
    #[pin]
    work: Work<PrefetchJob>,
    how: Prefetch,
    parts: KVec<Part>,
}

impl_has_work! {
    impl HasWork<Self> for PrefetchJob { self.work }
}

impl WorkItem for PrefetchJob {
    type Pointer = Arc<PrefetchJob>;

    fn run(this: Arc<PrefetchJob>) {
        for p in this.parts.iter() {
            // Advice, not a request: a range that cannot be faulted in
            // now faults (or fails) when it is accessed.
            let _ = p.mr.prefetch(p.off, p.len, this.how);
        }
    }
}
