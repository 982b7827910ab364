// SPDX-License-Identifier: GPL-2.0

//! Where the packet engine runs.  All of it (the requester, the responder
//! for received requests, the completer for received acknowledgements, the
//! retransmit and RNR timers) runs as work items on one ordered workqueue,
//! so for a given QP nothing runs concurrently with anything else, and
//! packets are processed in arrival order.  Verbs (modify, destroy, the
//! doorbell) only take the QP's engine lock briefly or queue work.
//!
//! Lifetimes, by construction: a work item owns what it uses (`Arc`s of
//! the QP, of the device core, the skb); destroying a QP marks it dead
//! under its engine lock, so work items or timers that run later find it
//! dead and do nothing; a pending timer is cancelled and its reference
//! dropped at destroy.  Nothing on the data path holds an `ib_qp`, `ib_cq`
//! or `ib_device` pointer (completion events go through `CqEvents`, which
//! `destroy_cq` disconnects).  Unload empties the queue slot, waits for
//! RCU readers, and drains the queue.

use kernel::{
    impl_has_work, new_work,
    prelude::*,
    sync::{aref::ARef, Arc},
    workqueue::{Work, WorkItem},
};

use crate::kapi::net::{netdev::NetDevice, skb::SkBuff};
use crate::kapi::workqueue::QueueSlot;
use crate::mr::MrTable;
use crate::qp::QpTable;
use crate::stats::{Counter, Stats};

/// The engine's workqueue (see the module docs).
pub(crate) static ENGINE_WQ: QueueSlot = QueueSlot::new();

/// What the data path of a device needs, shared by its QPs and in-flight
/// packets; outlives the ib_core device only as long as they do.
#[pin_data]
pub(crate) struct DevCore {
    /// The Ethernet device packets leave through.
    pub(crate) netdev: ARef<NetDevice>,
    /// Registered memory regions by key.
    #[pin]
    pub(crate) mrs: MrTable,
    /// Queue pairs by number.
    #[pin]
    pub(crate) qps: QpTable,
    /// Counters.
    pub(crate) stats: Stats,
}

impl DevCore {
    /// The core of a new device on `netdev`.
    pub(crate) fn new(netdev: ARef<NetDevice>) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                netdev,
                mrs <- MrTable::new(),
                qps <- crate::qp::new_table(),
                stats: Stats::new(),
            }),
            GFP_KERNEL,
        )
    }
}

/// A received packet on its way to the engine.
#[pin_data]
struct RxWork {
    core: Arc<DevCore>,
    skb: SkBuff,
    #[pin]
    work: Work<RxWork>,
}

impl_has_work! {
    impl HasWork<Self> for RxWork { self.work }
}

impl WorkItem for RxWork {
    type Pointer = Pin<KBox<RxWork>>;

    fn run(this: Pin<KBox<RxWork>>) {
        crate::recv::process(&this.core, &this.skb);
    }
}

/// Queues a received (linear) packet for `core`'s device; may be called
/// in softirq context.
pub(crate) fn queue_rx(core: Arc<DevCore>, skb: SkBuff) {
    let c = core.clone();
    let item = KBox::pin_init(pin_init!(RxWork { core: c, skb, work <- new_work!("rrxe::rx") }), GFP_ATOMIC);
    match item {
        Ok(item) => {
            if ENGINE_WQ.with(|q| q.enqueue(item)).is_none() {
                core.stats.inc(Counter::RcvDropped);
            }
        }
        Err(_) => core.stats.inc(Counter::RcvDropped),
    }
}
