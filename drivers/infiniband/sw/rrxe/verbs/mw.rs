// SPDX-License-Identifier: GPL-2.0

//! The memory window verbs: `alloc_mw` (type 1 or 2, librxe passes no
//! data) and `dealloc_mw`.  Binding is a send queue operation
//! (`engine/requester/local_op.rs`); the windows are `mw.rs`'s.

use kernel::prelude::*;

use crate::device::RrxeDev;
use crate::kapi::rdma::{device::Device, mr::PdId, mw::MwType, udata::UData};
use crate::mw::RrxeMw;

/// `alloc_mw`: a window in `pd`, and its rkey.
pub(crate) fn alloc(
    dev: &Device<RrxeDev>,
    pd: PdId,
    kind: MwType,
    udata: Option<UData<'_>>,
) -> Result<(RrxeMw, u32)> {
    if let Some(mut u) = udata {
        u.require_empty_input()?;
    }
    dev.core().mws.allocate(pd, kind)
}
