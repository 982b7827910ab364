// SPDX-License-Identifier: GPL-2.0

//! The memory region verbs: `reg_user_mr` (pinned, or on demand with
//! `IB_ACCESS_ON_DEMAND`), `alloc_mr` for fast registration, and
//! `get_dma_mr` (kernel memory, local access only).  The regions and their
//! table are `mr.rs`'s; prefetching is `verbs/advise.rs`.

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::device::RrxeDev;
use crate::kapi::eopnotsupp;
use crate::kapi::rdma::{
    device::Device,
    fast_reg::FastPages,
    mr::{odp::OdpUmem, MrMemory, PdId},
    udata::UData,
};
use crate::mr::{RrxeMr, LOCAL_WRITE, ON_DEMAND, UNSUPPORTED_ACCESS};
use crate::rrxe_ratelimited;

/// `reg_user_mr`: `range` is the user's (start, length, iova).
pub(crate) fn reg_user(
    dev: &Device<RrxeDev>,
    pd: PdId,
    (start, length, iova): (u64, u64, u64),
    access: u32,
    udata: Option<UData<'_>>,
) -> Result<(RrxeMr, u32)> {
    if access & UNSUPPORTED_ACCESS != 0 {
        rrxe_ratelimited!(
            pr_warn,
            "rrxe: {}: reg_mr: access {:#x} not supported\n",
            dev.name(),
            access
        );
        return Err(eopnotsupp());
    }
    if let Some(mut u) = udata {
        u.require_empty_input()?;
    }
    let mrs = &dev.core().mrs;
    let mr = if access & ON_DEMAND != 0 {
        let odp = OdpUmem::new(dev, start, length, access)?;
        mrs.register_on_demand(odp, pd, iova, length, access)?
    } else {
        let mem = MrMemory::pin(dev, start, length, access)?;
        mrs.register(mem, pd, iova, length, access)?
    };
    let key = mr.state_key();
    Ok((mr, key))
}

/// `alloc_mr` (`IB_MR_TYPE_MEM_REG`): a region for fast registration.
pub(crate) fn alloc_fast(
    dev: &Device<RrxeDev>,
    pd: PdId,
    pages: Arc<FastPages>,
) -> Result<(RrxeMr, u32)> {
    let mr = dev.core().mrs.alloc_fast(pd, pages)?;
    let key = mr.state_key();
    Ok((mr, key))
}

/// `get_dma_mr`: all of kernel memory, for local access only.
pub(crate) fn get_dma(dev: &Device<RrxeDev>, pd: PdId, access: u32) -> Result<(RrxeMr, u32)> {
    if access & !LOCAL_WRITE != 0 {
        rrxe_ratelimited!(
            pr_warn,
            "rrxe: {}: get_dma_mr: access {:#x}: only local access to kernel memory\n",
            dev.name(),
            access
        );
        return Err(eopnotsupp());
    }
    let mem = MrMemory::kernel_direct();
    let mr = dev.core().mrs.register(mem, pd, 0, u64::MAX, access)?;
    let key = mr.state_key();
    Ok((mr, key))
}
