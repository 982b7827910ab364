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
use crate::kapi::xarray::{RcuRelease, RcuTable};
use crate::param;
use crate::proto::path::IpPair;

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

impl RrxeAh {
    /// A new AH for the address vector `av` (checked by the caller; `ips`
    /// its address pair), numbered and then published: `report` gets the
    /// number first (for user space's response), and an error from it
    /// abandons the AH before any WQE can name it.  Without `sleepable`,
    /// nothing here sleeps.
    pub(crate) fn new(
        table: &AhTable,
        pd: PdId,
        av: &QpPath,
        ips: IpPair,
        sleepable: bool,
        report: impl FnOnce(u32) -> Result,
    ) -> Result<Self> {
        let gfp = if sleepable { GFP_KERNEL } else { GFP_ATOMIC };
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
        report(state.num)?;
        slot.publish(state.clone())?;
        Ok(Self { state, release })
    }

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
