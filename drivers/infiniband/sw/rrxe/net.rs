// SPDX-License-Identifier: GPL-2.0

//! RoCEv2 over UDP: the receive sockets on port 4791 (one IPv4 and one
//! IPv6 socket per network namespace that has rrxe devices, shared by
//! them, closed with the last one or with the namespace), and the
//! hand-over of received packets, in softirq context, to the engine's
//! receive path of the device they arrived on.
//!
//! C rxe binds the same port in the namespaces it serves, so C rxe and
//! rrxe devices cannot share a namespace; [`attach`] fails with `EADDRINUSE`
//! then, and the device is not created.

use kernel::prelude::*;

use crate::device::RrxeDev;
use crate::kapi::net::{
    netdev::NetDevice,
    pernet::PernetExit,
    skb::SkBuff,
    udp_tunnel::{EncapRecv, Family, Net, TunnelSocket},
};
use crate::kapi::rdma::device::Device;
use crate::kapi::static_mutex::static_mutex;
use crate::proto::ip::ROCE_V2_UDP_DPORT;
use crate::rrxe_ratelimited;

/// The sockets of one namespace.
struct NsSockets {
    cookie: u64,
    users: u32,
    _v4: TunnelSocket<RrxeRecv>,
    _v6: TunnelSocket<RrxeRecv>,
}

static_mutex! {
    /// The sockets of every namespace with rrxe devices.
    static SOCKETS: Mutex<KVec<NsSockets>> = KVec::new();
}

/// A device's use of its namespace's sockets; dropping it gives it back.
pub(crate) struct NetUse {
    cookie: u64,
}

/// Opens (or shares) the sockets of `net`.
pub(crate) fn attach(net: &Net) -> Result<NetUse> {
    let cookie = net.cookie();
    let mut socks = SOCKETS.lock();
    if let Some(s) = socks.iter_mut().find(|s| s.cookie == cookie) {
        s.users += 1;
        return Ok(NetUse { cookie });
    }
    let open = |family| {
        TunnelSocket::<RrxeRecv>::open(net, family, ROCE_V2_UDP_DPORT).inspect_err(|e| {
            rrxe_ratelimited!(
                pr_err,
                "rrxe: cannot bind UDP port {} ({:?}): error {} (C rxe active in this namespace?)\n",
                ROCE_V2_UDP_DPORT,
                family,
                e.to_errno()
            );
        })
    };
    let v4 = open(Family::V4)?;
    let v6 = open(Family::V6)?;
    socks.push(
        NsSockets {
            cookie,
            users: 1,
            _v4: v4,
            _v6: v6,
        },
        GFP_KERNEL,
    )?;
    Ok(NetUse { cookie })
}

impl Drop for NetUse {
    fn drop(&mut self) {
        let mut socks = SOCKETS.lock();
        if let Some(i) = socks.iter().position(|s| s.cookie == self.cookie) {
            socks[i].users -= 1;
            if socks[i].users == 0 {
                drop(socks.remove(i));
            }
        }
    }
}

/// Owned by the module, dropped after the devices and the pernet hook are
/// gone: frees the socket registry's buffer (a static is never dropped).
pub(crate) struct SocketsGuard;

impl Drop for SocketsGuard {
    fn drop(&mut self) {
        let left = core::mem::take(&mut *SOCKETS.lock());
        if !left.is_empty() {
            pr_err!(
                "rrxe: {} namespace socket sets left at unload\n",
                left.len()
            );
        }
    }
}

/// Closes the sockets of a namespace being dismantled (its devices, on
/// netdevs that were in it, are on their way out).
pub(crate) struct RrxePernet;

impl PernetExit for RrxePernet {
    fn exit(net: &Net) {
        let cookie = net.cookie();
        let mut socks = SOCKETS.lock();
        if let Some(i) = socks.iter().position(|s| s.cookie == cookie) {
            drop(socks.remove(i));
        }
    }
}

/// The receive handler of the sockets.
pub(crate) struct RrxeRecv;

impl EncapRecv for RrxeRecv {
    /// A packet that arrived on a VLAN device goes to the device bound to
    /// the netdev under it (the VLAN's GIDs are in that device's table,
    /// as C rxe has it), tagged with its VLAN ID for UD completions.
    fn recv(netdev: &NetDevice, mut skb: SkBuff) {
        let (vlan, port_dev) = match netdev.vlan() {
            Some((id, real)) => (Some(id), real),
            None => (None, netdev),
        };
        let Some(dev) = Device::<RrxeDev>::get_by_netdev(port_dev) else {
            return;
        };
        skb.set_rx_vlan(vlan);
        if skb.push_to_network_header().is_err() {
            dev.core().stats.inc(crate::stats::Counter::RcvDropped);
            return;
        }
        crate::engine::rx::receive(dev.core(), skb);
    }
}
