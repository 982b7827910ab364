// SPDX-License-Identifier: GPL-2.0

//! Memory access rights (`enum ib_access_flags`, `IB_ACCESS_*`, in
//! include/rdma/ib_verbs.h; the values of `enum ib_uverbs_access_flags`
//! in include/uapi/rdma/ib_user_ioctl_verbs.h): what a memory region or
//! window grants, and what a QP lets its peer do (`qp_access_flags`).

use kernel::bindings;

/// `IB_ACCESS_LOCAL_WRITE`: the device may write the region locally
/// (receives may scatter into it).
pub(crate) const LOCAL_WRITE: u32 = bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE;
/// `IB_ACCESS_REMOTE_WRITE`: a peer may RDMA WRITE into the region.
pub(crate) const REMOTE_WRITE: u32 = bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE;
/// `IB_ACCESS_REMOTE_READ`: a peer may RDMA READ from the region.
pub(crate) const REMOTE_READ: u32 = bindings::ib_access_flags_IB_ACCESS_REMOTE_READ;
/// `IB_ACCESS_REMOTE_ATOMIC`: a peer may run atomics on the region.
pub(crate) const REMOTE_ATOMIC: u32 = bindings::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC;
/// `IB_ACCESS_MW_BIND`: memory windows may be bound to the region.
pub(crate) const MW_BIND: u32 = bindings::ib_access_flags_IB_ACCESS_MW_BIND;
/// `IB_ZERO_BASED`: a window addressed from 0, not by virtual address.
pub(crate) const ZERO_BASED: u32 = bindings::ib_access_flags_IB_ZERO_BASED;
/// `IB_ACCESS_ON_DEMAND`: an on-demand-paging region (not pinned).
pub(crate) const ON_DEMAND: u32 = bindings::ib_access_flags_IB_ACCESS_ON_DEMAND;
/// `IB_ACCESS_HUGETLB`: an on-demand-paging region backed by huge pages.
pub(crate) const HUGETLB: u32 = bindings::ib_access_flags_IB_ACCESS_HUGETLB;
/// `IB_ACCESS_FLUSH_GLOBAL`: FLUSH for global visibility may target the
/// region.
pub(crate) const FLUSH_GLOBAL: u32 = bindings::ib_access_flags_IB_ACCESS_FLUSH_GLOBAL;
/// `IB_ACCESS_FLUSH_PERSISTENT`: FLUSH to persistence may target the
/// region (ib_core refuses it unless the device claims
/// [`device_cap::FLUSH_PERSISTENT`](super::caps::device_cap::FLUSH_PERSISTENT)).
pub(crate) const FLUSH_PERSISTENT: u32 = bindings::ib_access_flags_IB_ACCESS_FLUSH_PERSISTENT;
