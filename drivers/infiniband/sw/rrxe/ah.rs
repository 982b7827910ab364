// SPDX-License-Identifier: GPL-2.0

//! Address handles: where a UD send goes.  Each AH has a number (1 ..
//! `MAX_AH`, C rxe's `ah_num`) that `create_user_ah` returns to librxe in
//! `struct rxe_create_ah_resp`; librxe writes it into every UD WQE, and
//! the requester looks it up in the device's AH table.  The table holds
//! the AH's state by reference count: destroying an AH removes it from
//! the table (a WQE naming it afterwards fails), while a send already
//! holding it finishes with it.  The destination MAC is not kept: the
//! transmit path resolves it through the route's neighbour, as for RC.
//!
//! Kernel consumers create and destroy AHs where they may not sleep (the
//! connection manager does both under its spinlocks, without
//! `RDMA_CREATE_AH_SLEEPABLE`): creation then allocates with
//! `GFP_ATOMIC`, and destruction never sleeps (the table's reference is
//! dropped after an RCU grace period, [`RcuTable::remove`]).

use kernel::{prelude::*, sync::Arc};

use crate::kapi::rdma::mr::PdId;
use crate::kapi::rdma::qp::{GidNetdev, QpPath};
use crate::kapi::rdma::udata::UData;
use crate::kapi::xarray::{RcuRelease, RcuTable};
use crate::param;
use crate::proto::path::IpPair;
use crate::rrxe_ratelimited;

/// What a UD send needs of an AH.
pub(crate) struct AhState {
    pub(crate) num: u32,
    pub(crate) pd: PdId,
    /// The address pair of the GIDs (source: the GID `sgid_index` named).
    pub(crate) ips: IpPair,
    pub(crate) tclass: u8,
    pub(crate) hop_limit: u8,
    /// The source GID's netdev.
    pub(crate) gid_dev: GidNetdev,
    /// As created, for `query_ah`.
    av: QpPath,
}

/// Driver data of one AH: its entry in the table.
pub(crate) struct RrxeAh {
    state: Arc<AhState>,
    /// For the deferred release of the table's reference at destroy.
    release: RcuRelease<AhState>,
}

/// The AHs of a device, by number.
pub(crate) type AhTable = RcuTable<AhState>;

/// `create_ah`: validates the address vector and publishes the AH;
/// without `sleepable`, nothing here sleeps.
pub(crate) fn create(
    table: &AhTable,
    pd: PdId,
    av: &QpPath,
    udata: Option<UData<'_>>,
    sleepable: bool,
) -> Result<RrxeAh> {
    let gfp = if sleepable { GFP_KERNEL } else { GFP_ATOMIC };
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
    let release = RcuRelease::new(gfp)?;
    let slot = if sleepable {
        table.reserve(1, param::MAX_AH as u32)?
    } else {
        table.reserve_atomic(1, param::MAX_AH as u32)?
    };
    let state = Arc::new(
        AhState {
            num: slot.index(),
            pd,
            ips,
            tclass: av.traffic_class,
            hop_limit: av.hop_limit,
            gid_dev: av.gid_dev,
            av: *av,
        },
        gfp,
    )?;
    if let Some(mut u) = udata {
        u.require_empty_input()?;
        // struct rxe_create_ah_resp { __u32 ah_num; __u32 reserved; }
        let mut resp = [0u8; 8];
        resp[..4].copy_from_slice(&state.num.to_ne_bytes());
        u.respond(&resp)?;
    }
    slot.publish(state.clone())?;
    Ok(RrxeAh { state, release })
}

impl RrxeAh {
    /// Its number (what a UD WQE names).
    pub(crate) fn num(&self) -> u32 {
        self.state.num
    }

    /// The address vector it was created with.
    pub(crate) fn av(&self) -> QpPath {
        self.state.av
    }

    /// `destroy_ah`: WQEs naming it from now on fail.  Does not sleep.
    pub(crate) fn destroy(self, table: &AhTable) {
        table.remove(self.state.num, &self.state, self.release);
    }
}
