// SPDX-License-Identifier: GPL-2.0

//! `advise_mr` (`ibv_advise_mr`): prefetching on-demand-paging regions.
//! Each SGE names an ODP region of the caller's PD by lkey and a range in
//! it (by I/O virtual address, as the data path addresses it); its pages
//! are faulted in for reading or writing, or only recorded if present.
//!
//! With `IB_UVERBS_ADVISE_MR_FLAG_FLUSH` the call faults before it returns
//! and reports the first error.  Without it the SGEs are checked (bad
//! ones fail the call), the regions held, and the faults run on the
//! engine's user workqueue; their errors are dropped, as C rxe and mlx5
//! drop them.  A region deregistered meanwhile is skipped (its memory was
//! released: [`crate::kapi::rdma::mr::odp::OdpUmem::release`]); module
//! unload drains the workqueue first.
//!
//! A fault may wait as long as the user likes (file-backed memory whose
//! I/O never completes, `odp.rst`), and every call would otherwise queue
//! one more work item that may wait: so at most [`MAX_QUEUED`]
//! asynchronous prefetches are queued or running at a time, and beyond
//! that the call carries its advice out itself, in the caller's context,
//! which then waits for its own faults (errors still dropped).

use kernel::{
    impl_has_work, new_work,
    prelude::*,
    sync::{
        atomic::{Atomic, Relaxed},
        Arc,
    },
    workqueue::{Work, WorkItem},
};

use crate::kapi::rdma::mr::{odp::Prefetch, PdId};
use crate::kapi::rdma::wr::Sge;
use crate::mr::{MrState, MrTable, LOCAL_WRITE};

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

/// The asynchronous prefetches that may be queued or running at once, in
/// the whole module: a small part of the user workqueue's
/// `WQ_MAX_ACTIVE` (2048) workers.
const MAX_QUEUED: u32 = 64;

/// Asynchronous prefetches queued or running ([`QueueSlot`]s held).
static QUEUED: Atomic<u32> = Atomic::new(0);

/// One of the [`MAX_QUEUED`] places, held by a job until it is dropped
/// (after its run, or unrun if the engine was stopping).
struct QueueSlot(());

impl QueueSlot {
    /// A free place, if there is one.
    fn take() -> Option<Self> {
        if QUEUED.fetch_add(1, Relaxed) >= MAX_QUEUED {
            QUEUED.fetch_sub(1, Relaxed);
            return None;
        }
        Some(Self(()))
    }
}

impl Drop for QueueSlot {
    fn drop(&mut self) {
        QUEUED.fetch_sub(1, Relaxed);
    }
}

/// Faults in (or records) `parts` as `how` says; errors are dropped:
/// advice, not a request, so a range that cannot be faulted in now
/// faults (or fails) when it is accessed.
fn prefetch_dropping_errors(parts: &[Part], how: Prefetch) {
    for p in parts {
        let _ = p.mr.prefetch(p.off, p.len, how);
    }
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
    let Some(place) = QueueSlot::take() else {
        prefetch_dropping_errors(&parts, how);
        return Ok(());
    };
    let job = Arc::pin_init(
        pin_init!(PrefetchJob {
            work <- new_work!("rrxe_prefetch"),
            how,
            parts,
            _place: place,
        }),
        GFP_KERNEL,
    )?;
    crate::engine::schedule_user_job(job);
    Ok(())
}

/// An asynchronous prefetch: the resolved SGEs, faulted in by a work item.
#[pin_data]
pub(crate) struct PrefetchJob {
    #[pin]
    work: Work<PrefetchJob>,
    how: Prefetch,
    parts: KVec<Part>,
    _place: QueueSlot,
}

impl_has_work! {
    impl HasWork<Self> for PrefetchJob { self.work }
}

impl WorkItem for PrefetchJob {
    type Pointer = Arc<PrefetchJob>;

    fn run(this: Arc<PrefetchJob>) {
        prefetch_dropping_errors(&this.parts, this.how);
    }
}
