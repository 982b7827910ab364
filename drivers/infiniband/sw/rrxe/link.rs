// SPDX-License-Identifier: GPL-2.0

//! The life of rrxe devices: `rdma link add NAME type rrxe netdev DEV`
//! creates one (after checking the netdev), the netdev's unregistration or
//! `rdma link delete` removes it, and module unload removes all that are
//! left.  The registry below is how unload finds them: C rxe shares our
//! driver id, so ib_core's per-driver-id teardown would take its devices too.
//! A device's entry also holds its use of its namespace's UDP sockets
//! (`net.rs`), so the sockets live exactly as long as some device in the
//! namespace is registered.

use kernel::prelude::*;

use crate::device::RrxeDev;
use crate::kapi::net::{
    netdev::NetDevice,
    notifier::{NetdevEvent, NetdevHandler},
};
use crate::kapi::rdma::{
    device::{driver_id_bound_to, Device, DeviceParams, DeviceRef, Driver},
    link::LinkHandler,
};
use crate::kapi::static_mutex::static_mutex;
use crate::net::NetUse;
use crate::stats::Counter;
use crate::{param, rrxe_ratelimited};

static_mutex! {
    /// The registered devices, for unload to remove.
    static DEVICES: Mutex<KVec<Registered>> = KVec::new();
}

static_mutex! {
    /// Serialises `rdma link add`.
    static NEWLINK: Mutex<()> = ();
}

/// A registered device, as the registry holds it.
struct Registered {
    dev: DeviceRef<RrxeDev>,
    /// The device's share of its namespace's sockets.
    _net: NetUse,
}

/// Removes the entry of the device `is` picks from the registry.
fn remove_entry(is: impl Fn(&DeviceRef<RrxeDev>) -> bool) {
    let gone = {
        let mut devices = DEVICES.lock();
        let found = devices.iter().position(|r| is(&r.dev));
        found.map(|i| devices.remove(i))
    };
    // Dropped after `DEVICES` is released: the socket use takes `SOCKETS`
    // (the lock table in `engine.rs`).
    drop(gone);
}

/// Called from the device's `dealloc_driver`: drop it from the registry.
/// Our `get_device` reference goes; ib_core still holds its own until
/// `dealloc_driver` returns, so the memory outlives this call.
pub(crate) fn forget(dev: &Device<RrxeDev>) {
    remove_entry(|d| d.is(dev));
}

/// Owned by the module: dropping it (at unload, after the link type is
/// unregistered, so no new devices) removes every rrxe device left.
pub(crate) struct DevicesGuard;

impl Drop for DevicesGuard {
    fn drop(&mut self) {
        remove_all();
        // A static is never dropped: give the registry's buffer back, or
        // every load/unload cycle leaks it (kmemleak found that).
        let left = core::mem::take(&mut *DEVICES.lock());
        drop(left);
        pr_info!("rrxe: all devices removed\n");
    }
}

/// Unregisters every rrxe device and waits for each to be gone.
fn remove_all() {
    loop {
        let next = DEVICES.lock().first().map(|r| r.dev.clone());
        let Some(dev) = next else { break };
        // Returns once `dealloc_driver` (hence `forget`) has run, also when
        // another path (netdev removal, `rdma link delete`) got there first.
        dev.unregister();
        // Defensive: if ib_core never called `dealloc_driver` for it (a
        // registration that never completed), drop our entry ourselves so
        // this loop ends.
        remove_entry(|d| d.ptr_eq(&dev));
    }
}

/// Why a netdev cannot carry an rrxe device, as an errno.  Like C rxe,
/// any netdev but a VLAN device will do: packets leave through the IP
/// stack, so the link type does not matter (Ethernet, tun, ...).
fn check_netdev(netdev: &NetDevice) -> Result {
    if netdev.is_vlan() {
        rrxe_ratelimited!(
            pr_err,
            "rrxe: {}: a VLAN device: bind the device under it (its VLANs' GIDs are used through that)\n",
            netdev.name()
        );
        return Err(EPERM);
    }
    if driver_id_bound_to(netdev, RrxeDev::DRIVER_ID) {
        rrxe_ratelimited!(
            pr_err,
            "rrxe: {}: already has an rxe/rrxe device\n",
            netdev.name()
        );
        return Err(EEXIST);
    }
    Ok(())
}

/// The 48-bit address the device's GUIDs derive from: the netdev's
/// hardware address (its first 6 bytes, zero-padded), or, for a netdev
/// without one (tun), a random locally administered unicast address, so
/// that connection management still sees a unique GUID.
fn identity_mac(netdev: &NetDevice) -> [u8; 6] {
    netdev.hw_addr6().unwrap_or_else(|| {
        let mut mac = [0u8; 6];
        crate::kapi::random::fill(&mut mac);
        crate::proto::gid::make_local_unicast(&mut mac);
        mac
    })
}

/// The `rrxe` link type.
pub(crate) struct RrxeLink;

impl LinkHandler for RrxeLink {
    const TYPE: &'static CStr = c"rrxe";

    fn newlink(name: &CStr, netdev: &NetDevice) -> Result {
        // ib_core runs `rdma link add` requests concurrently; serialise ours
        // so two cannot both pass the one-device-per-netdev check.
        let _serial = NEWLINK.lock();
        check_netdev(netdev)?;
        let mac = identity_mac(netdev);
        let params = DeviceParams {
            node_desc: param::NODE_DESC,
            node_guid: crate::proto::gid::guid_from_mac(mac),
            num_comp_vectors: kernel::cpu::nr_cpu_ids() as i32,
        };
        let core = crate::qp::DevCore::new(netdev.into())?;
        let net = crate::net::attach(netdev.net())?;
        let res = Device::register(name, netdev, &params, RrxeDev::new(mac, core), move |d| {
            let entry = Registered {
                dev: d.clone(),
                _net: net,
            };
            let mut devices = DEVICES.lock();
            // Room first: a failed push would drop the entry (whose socket
            // use takes `SOCKETS`) under `DEVICES`; after a failed reserve
            // the guard goes first.
            devices.reserve(1, GFP_KERNEL)?;
            devices.push(entry, GFP_KERNEL)?;
            Ok(())
        });
        match res {
            Ok(_registered) => {
                pr_info!(
                    "rrxe: {}: added on {}\n",
                    name.to_str().unwrap_or("?"),
                    netdev.name()
                );
                Ok(())
            }
            Err(e) => {
                rrxe_ratelimited!(
                    pr_err,
                    "rrxe: {}: cannot add on {}: error {}\n",
                    name.to_str().unwrap_or("?"),
                    netdev.name(),
                    e.to_errno()
                );
                Err(e)
            }
        }
    }
}

/// Netdev events that concern rrxe devices.  Port state and GID changes
/// are ib_core's job (it watches the same chain); rrxe counts the link
/// going down (`link_downed`, as C rxe: on `NETDEV_DOWN`, and on
/// `NETDEV_CHANGE` that leaves no carrier) and removes a device whose
/// netdev goes away.
pub(crate) struct RrxeNetdevEvents;

impl NetdevHandler for RrxeNetdevEvents {
    fn event(event: NetdevEvent, netdev: &NetDevice) {
        let downed = match event {
            NetdevEvent::Down => true,
            NetdevEvent::Change => !netdev.is_running_with_carrier(),
            _ => false,
        };
        if downed {
            if let Some(dev) = Device::<RrxeDev>::get_by_netdev(netdev) {
                dev.count(Counter::LinkDowned);
            }
            return;
        }
        if event != NetdevEvent::Unregister {
            return;
        }
        if let Some(dev) = Device::<RrxeDev>::get_by_netdev(netdev) {
            pr_info!(
                "rrxe: {}: removing, {} is unregistering\n",
                dev.name(),
                netdev.name()
            );
            // Under RTNL here: unregister asynchronously, as C rxe does.
            dev.unregister_queued();
        }
    }
}
