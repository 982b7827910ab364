// SPDX-License-Identifier: GPL-2.0

//! rdma_rrxe: a soft RoCEv2 RDMA device written in Rust.
//!
//! `rdma link add NAME type rrxe netdev DEV` creates an `ib_core` device on
//! a netdev (Ethernet, tun, ...) that the unmodified rdma-core userspace
//! drives through its rxe provider (same driver id and uverbs ABI as the C
//! `rdma_rxe`).
//!
//! Layout, in layers that call only downwards (`make test` checks it with
//! no exceptions: tools/testing/runner/layers.py holds the table;
//! Documentation/rrxe/design.rst explains it):
//!
//! 0. `kapi`: the only unsafe code (safe wrappers over ib_core, netdev,
//!    skb, route, workqueue and xarray C APIs).
//! 1. `proto`: the pure, no_std protocol core shared with the host test
//!    build.
//! 2. Helpers: `param`, `stats`, `icrc`, `port`, `limit`, `errno`.
//! 3. Objects: memory regions (`mr`), memory windows (`mw`), address
//!    handles (`ah`), completion queues (`cq`), shared receive queues
//!    (`srq`), multicast groups (`mcast`), rings (`queue`), WQE copies
//!    (`wqe`).
//! 4. The QP and its state (`qp`, `qp/`).
//! 5. Transmit (`tx`).
//! 6. The packet engine (`engine`, `engine/`: receive path, requester,
//!    completer, responder, per-QP tasks and timers; the lock table).
//! 7. The device's state and accounting (`device`).
//! 8. The UDP sockets and their receive hook (`net`).
//! 9. The devices' life: creation, the registry, removal (`link`).
//! 10. The verbs, ib_core's entry (`verbs`, `verbs/`), then this file.

// Unsafe code only in `kapi`: the compiler checks it.
#![deny(unsafe_code)]

use kernel::prelude::*;

mod ah;
mod cq;
mod device;
mod engine;
mod errno;
mod icrc;
mod kapi;
mod limit;
mod link;
mod mcast;
mod mr;
mod mw;
mod net;
mod param;
mod port;
mod qp;
mod queue;
mod srq;
mod stats;
mod tx;
mod verbs;
mod wqe;

/// The pure protocol core (drivers/infiniband/sw/rrxe/proto), built into the
/// module from the same sources as the host crate `rrxe_proto`.  Its
/// `#![no_std]` is meaningful only as a crate root (`unused_attributes`);
/// parts not used by the driver yet are `dead_code` here.
#[allow(dead_code, unreachable_pub, unused_attributes)]
#[path = "proto/src/lib.rs"]
mod proto;

use kapi::{
    net::{notifier::NetdevNotifier, pernet::PernetRegistration},
    rdma::link::LinkRegistration,
    xarray::ReleaseQueue,
};

module! {
    type: RrxeModule,
    name: "rdma_rrxe",
    authors: ["rrxe developers"],
    description: "Soft RoCEv2 RDMA device in Rust (rxe-compatible)",
    license: "GPL",
    alias: ["rdma-link-rrxe"],
    params: {
        gid_tbl_len: u32 {
            default: 1024,
            description: "GID table entries per port, 16-1024 (default 1024, as C rxe); ib_core's sysfs files for each entry make device creation slow on debug kernels",
        },
        flush_icrc_rxe: u32 {
            default: 0,
            description: "1: send FLUSH requests with C rxe's ICRC coverage (which covers the headers twice) so C rxe accepts them; 0 (default): IBTA's",
        },
    },
}

/// The module's state.  Fields are dropped in declaration order, which is
/// the teardown order: no new devices, then no devices, then no notifier,
/// no sockets, the engine's workqueues (drained), and last the release
/// queue (the objects removed from the device tables, dropped).
#[pin_data]
struct RrxeModule {
    /// `rdma link add ... type rrxe`.
    #[pin]
    link: LinkRegistration<link::RrxeLink>,
    /// Removes the devices left at unload.
    devices: link::DevicesGuard,
    /// Netdev removal removes the device on it; kept until all devices are
    /// gone, so a netdev vanishing during unload is still handled.
    #[pin]
    notifier: NetdevNotifier<link::RrxeNetdevEvents>,
    /// Closes a namespace's UDP sockets when the namespace goes.
    #[pin]
    pernet: PernetRegistration<net::RrxePernet>,
    /// Frees the socket registry (after the devices and the hook).
    _sockets: net::SocketsGuard,
    /// Owns the engine's workqueues (see `engine`).
    _wq: engine::Workqueues,
    /// Drops what the device tables removed (see `kapi::xarray`).
    _releases: ReleaseQueue,
}

impl kernel::InPlaceModule for RrxeModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        param::warn_clamped();
        // Initialised in this order: the queues and the namespace hook
        // first, the notifier before the link type, so no device exists
        // without netdev-removal coverage.
        try_pin_init!(Self {
            _releases: ReleaseQueue::start()?,
            _wq: engine::start()?,
            _sockets: net::SocketsGuard,
            pernet <- PernetRegistration::register(),
            notifier <- NetdevNotifier::register(),
            devices: link::DevicesGuard,
            link <- LinkRegistration::register(),
        })
    }
}
