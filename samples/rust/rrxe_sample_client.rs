// SPDX-License-Identifier: GPL-2.0

//! rrxe_sample_client: another kernel module on rrxe's abstraction layer.
//!
//! rrxe keeps every unsafe line in `kapi`, safe wrappers shaped to go
//! upstream as `kernel::rdma` and `kernel::net`.  This module compiles
//! that same layer (the `kapi` and `proto` entries here are links to
//! rrxe's sources, the way a driver would use `kernel::rdma` once it is
//! upstream) and uses it as a consumer, not a provider: it registers an
//! ib_core client, so ib_core tells it of every RDMA device, rrxe's, C
//! rxe's or any other, when it appears (or at load, for devices already
//! there) and before it goes.  For each it logs the name, the driver id,
//! and each port's state, active MTU and GID table size.  It contains no
//! `unsafe` itself.
//!
//! ```text
//! # modprobe rrxe_sample_client
//! # rdma link add rrxe0 type rrxe netdev veth0
//! rrxe_sample_client: rrxe0 added: driver id 11, 1 port; port 1: ACTIVE, active MTU 1024, 1024 GID slots
//! ```

use kernel::prelude::*;
use kernel::sync::atomic::{Atomic, Relaxed};

/// rrxe's protocol core (the link `proto`), which `kapi` builds on.
#[allow(dead_code, unreachable_pub, unused_attributes, unused_imports)]
#[path = "proto/src/lib.rs"]
mod proto;

/// rrxe's abstraction layer (the link `kapi`); this module uses its
/// client side only.
#[allow(dead_code, unused_imports, unused_macros)]
mod kapi;

use kapi::rdma::client::{ClientHandler, ClientRegistration, IbDevice};

/// Devices this client was told of and not yet told are gone.
static DEVICES: Atomic<i32> = Atomic::new(0);

struct Watcher;

fn port_state(state: u32) -> &'static str {
    match state {
        1 => "DOWN",
        2 => "INIT",
        3 => "ARMED",
        4 => "ACTIVE",
        5 => "ACTIVE_DEFER",
        _ => "NOP",
    }
}

fn describe(dev: &IbDevice, what: &str) {
    let n = dev.port_count();
    let plural = if n == 1 { "" } else { "s" };
    pr_info!(
        "{} {}: driver id {}, {} port{}\n",
        dev.name(),
        what,
        dev.driver_id(),
        n,
        plural
    );
    for port in 1..=n {
        match dev.query_port(port) {
            Ok(p) => pr_info!(
                "{} port {}: {}, active MTU {}, {} GID slots\n",
                dev.name(),
                port,
                port_state(p.state),
                p.active_mtu,
                p.gid_tbl_len
            ),
            Err(e) => pr_info!("{} port {}: query failed ({:?})\n", dev.name(), port, e),
        }
    }
}

impl ClientHandler for Watcher {
    const NAME: &'static CStr = c"rrxe_sample_client";

    fn added(dev: &IbDevice) {
        let n = DEVICES.fetch_add(1, Relaxed) + 1;
        describe(dev, "added");
        pr_info!("{} device(s) known\n", n);
    }

    fn removed(dev: &IbDevice) {
        let n = DEVICES.fetch_sub(1, Relaxed) - 1;
        pr_info!("{} removed; {} device(s) known\n", dev.name(), n);
    }
}

#[pin_data]
struct SampleModule {
    #[pin]
    client: ClientRegistration<Watcher>,
}

impl kernel::InPlaceModule for SampleModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pr_info!("registering an ib_core client through rrxe's kapi\n");
        try_pin_init!(Self {
            client <- ClientRegistration::register(),
        })
    }
}

module! {
    type: SampleModule,
    name: "rrxe_sample_client",
    authors: ["rrxe developers"],
    description: "Sample: an ib_core client on rrxe's Rust abstraction layer",
    license: "GPL",
}
