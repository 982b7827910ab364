// SPDX-License-Identifier: GPL-2.0

//! The address handle verbs: `create_ah` (kernel consumers, perhaps where
//! they may not sleep) and `create_user_ah` (librxe gets the AH's number
//! in `struct rxe_create_ah_resp`).  `query_ah` and `destroy_ah` go to the
//! AH itself; the AHs and their table are `ah.rs`'s.

use kernel::prelude::*;

use crate::ah::RrxeAh;
use crate::device::RrxeDev;
use crate::kapi::rdma::{device::Device, mr::PdId, qp::QpPath, udata::UData};
use crate::param;
use crate::proto::path::IpPair;
use crate::rrxe_ratelimited;

/// `create_ah`: checks the address vector and publishes the AH; without
/// `sleepable`, nothing here sleeps.
pub(crate) fn create(
    dev: &Device<RrxeDev>,
    pd: PdId,
    av: &QpPath,
    udata: Option<UData<'_>>,
    sleepable: bool,
) -> Result<RrxeAh> {
    if av.port_num != 1 || u32::from(av.sgid_index) >= param::gid_tbl_len() {
        rrxe_ratelimited!(
            pr_warn,
            "rrxe: create_ah: bad port {} or sgid_index {}\n",
            av.port_num,
            av.sgid_index
        );
        return Err(EINVAL);
    }
    let Some(ips) = IpPair::from_gids(&av.sgid, &av.dgid) else {
        rrxe_ratelimited!(pr_warn, "rrxe: create_ah: IPv4 and IPv6 GIDs mixed\n");
        return Err(EINVAL);
    };
    RrxeAh::new(&dev.core().ahs, pd, av, ips, sleepable, |num| {
        let Some(mut u) = udata else { return Ok(()) };
        u.require_empty_input()?;
        // struct rxe_create_ah_resp { __u32 ah_num; __u32 reserved; }
        let mut resp = [0u8; 8];
        resp[..4].copy_from_slice(&num.to_ne_bytes());
        u.respond(&resp)
    })
}
