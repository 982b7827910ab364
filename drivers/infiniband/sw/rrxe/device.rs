// SPDX-License-Identifier: GPL-2.0

//! An rrxe device's state: its identity (GUIDs derived from the netdev's
//! MAC at creation), its resource accounting (protection domains, user
//! contexts and CQs, each bounded), and the data path's shared state
//! (`DevCore`: the object tables and counters).  ib_core's calls on the
//! device are the verbs' (`verbs.rs`); its life (creation, the registry,
//! removal) is the link layer's (`link.rs`).

use kernel::prelude::*;
use kernel::sync::Arc;

use crate::limit::{Charge, Limit};
use crate::qp::DevCore;
use crate::stats::Counter;
use crate::{param, proto::gid};

/// User contexts per device.
const MAX_UCONTEXT: u32 = 1 << 20;

/// Driver data of one rrxe device.
#[pin_data]
pub(crate) struct RrxeDev {
    /// Node, port and system image GUID: the EUI-64 of the MAC.
    guid: u64,
    /// Live protection domains.
    pds: Limit,
    /// Live user contexts.
    ucontexts: Limit,
    /// Live completion queues (each holds a charge).
    cqs: Arc<Limit>,
    /// The data path's tables and counters.
    core: Arc<DevCore>,
}

impl RrxeDev {
    /// Driver data for a device on a netdev whose MAC is `mac`.
    pub(crate) fn new(mac: [u8; 6], core: Arc<DevCore>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            guid: gid::guid_from_mac(mac),
            pds: Limit::new(param::MAX_PD as u32, "pd"),
            ucontexts: Limit::new(MAX_UCONTEXT, "ucontext"),
            cqs: Arc::new(Limit::new(param::MAX_CQ as u32, "cq"), GFP_KERNEL)?,
            core,
        })
    }

    /// The node GUID.
    pub(crate) fn guid(&self) -> u64 {
        self.guid
    }

    /// The data path's shared state.
    pub(crate) fn core(&self) -> &Arc<DevCore> {
        &self.core
    }

    /// Counts `c` on the device.
    pub(crate) fn count(&self, c: Counter) {
        self.core.stats.inc(c);
    }

    /// Accounts a new protection domain (`ENOMEM` at the limit).
    pub(crate) fn take_pd(&self) -> Result {
        self.pds.take()
    }

    /// A protection domain is gone.
    pub(crate) fn give_pd(&self) -> Result {
        self.pds.give()
    }

    /// Accounts a new user context (`ENOMEM` at the limit).
    pub(crate) fn take_ucontext(&self) -> Result {
        self.ucontexts.take()
    }

    /// A user context is gone.
    pub(crate) fn give_ucontext(&self) {
        let _ = self.ucontexts.give();
    }

    /// A charge for a new CQ, which the CQ holds while it lives.
    pub(crate) fn charge_cq(&self) -> Result<Charge> {
        self.cqs.charge()
    }
}
