// SPDX-License-Identifier: GPL-2.0

//! RoCEv2 over UDP: the receive sockets on port 4791 (one IPv4 and one
//! IPv6 socket per network namespace that has rrxe devices, shared by
//! them, closed with the last one or with the namespace), the hand-over of
//! received packets from softirq to the engine's workqueue, and sending a
//! transport packet built by the engine inside IP/UDP headers.
//!
//! C rxe binds the same port in the namespaces it serves, so C rxe and
//! rrxe devices cannot share a namespace; [`attach`] fails with `EADDRINUSE`
//! then, and the device is not created.

use kernel::{prelude::*, sync::Arc};

use crate::device::RrxeDev;
use crate::engine::{self, DevCore};
use crate::kapi::net::{
    netdev::NetDevice,
    pernet::PernetExit,
    route::{IpPair, Route, TxPacket},
    skb::SkBuff,
    udp_tunnel::{EncapRecv, Family, Net, TunnelSocket},
};
use crate::kapi::rdma::device::Device;
use crate::proto::ip::{Ipv4Hdr, Ipv6Hdr, UdpHdr, IPV4_HDR_LEN, IPV6_HDR_LEN, ROCE_V2_UDP_DPORT, UDP_HDR_LEN};
use crate::proto::{icrc::icrc_fill, Header};
use crate::{icrc::KernelCrc32, rrxe_ratelimited};

/// The sockets of one namespace.
struct NsSockets {
    cookie: u64,
    users: u32,
    _v4: TunnelSocket<RrxeRecv>,
    _v6: TunnelSocket<RrxeRecv>,
}

kernel::sync::global_lock! {
    // SAFETY: Initialised by `init` in module init, before any device.
    unsafe(uninit) static SOCKETS: Mutex<KVec<NsSockets>> = KVec::new();
}

/// Initialises the socket registry.  Call exactly once, at module init.
pub(crate) fn init() {
    // SAFETY: Called once, before any other use of `SOCKETS`.
    unsafe { SOCKETS.init() };
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
    socks.push(NsSockets { cookie, users: 1, _v4: v4, _v6: v6 }, GFP_KERNEL)?;
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
            pr_err!("rrxe: {} namespace socket sets left at unload\n", left.len());
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
    fn recv(netdev: &NetDevice, mut skb: SkBuff) {
        let Some(dev) = Device::<RrxeDev>::get_by_netdev(netdev) else {
            return;
        };
        let core = dev.core().clone();
        drop(dev);
        if skb.linearize().is_err() {
            core.stats.inc(crate::stats::Counter::RcvDropped);
            return;
        }
        engine::queue_rx(core, skb);
    }
}

/// Where a QP's packets go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Endpoints {
    pub(crate) ips: IpPair,
    /// UDP source port (per QP, for ECMP entropy).
    pub(crate) sport: u16,
}

impl Endpoints {
    /// From a source and destination GID; both IPv4-mapped, or both not.
    pub(crate) fn from_gids(sgid: &[u8; 16], dgid: &[u8; 16], sport: u16) -> Option<Self> {
        let v4 = |g: &[u8; 16]| (g[..10] == [0; 10] && g[10..12] == [0xff, 0xff]).then(|| [g[12], g[13], g[14], g[15]]);
        let ips = match (v4(sgid), v4(dgid)) {
            (Some(saddr), Some(daddr)) => IpPair::V4 { saddr, daddr },
            (None, None) => IpPair::V6 { saddr: *sgid, daddr: *dgid },
            _ => return None,
        };
        Some(Self { ips, sport })
    }
}

/// Length of the IP + UDP headers.
fn hdr_len(ips: &IpPair) -> usize {
    UDP_HDR_LEN
        + match ips {
            IpPair::V4 { .. } => IPV4_HDR_LEN,
            IpPair::V6 { .. } => IPV6_HDR_LEN,
        }
}

/// Builds a packet of `len` transport bytes (BTH .. ICRC) with `fill`,
/// adds the IP/UDP headers and the ICRC, and sends it (or, for a
/// destination on this host, hands it to the receive path directly).
pub(crate) fn xmit(core: &Arc<DevCore>, ep: &Endpoints, len: usize, fill: impl FnOnce(&mut [u8]) -> Result) -> Result {
    let route = Route::lookup(&core.netdev, &ep.ips).inspect_err(|e| {
        rrxe_ratelimited!(pr_warn, "rrxe: {}: no route: error {}\n", core.netdev.name(), e.to_errno());
    })?;
    let hlen = hdr_len(&ep.ips);
    let mut pkt = TxPacket::new(&route, hlen, len)?;
    fill(pkt.data_mut())?;
    let udp_len = u16::try_from(UDP_HDR_LEN + len).map_err(|_| EINVAL)?;
    let mut hdr = [0u8; IPV6_HDR_LEN + UDP_HDR_LEN];
    let ip_len = match ep.ips {
        IpPair::V4 { saddr, daddr } => {
            // DF set, so the ID may be anything (RFC 6864): 0.
            let ip = Ipv4Hdr::new_udp(saddr, daddr, udp_len, 0, 64, 0);
            ip.emit(&mut hdr[..IPV4_HDR_LEN]).map_err(|_| EINVAL)?;
            IPV4_HDR_LEN
        }
        IpPair::V6 { saddr, daddr } => {
            let ip = Ipv6Hdr::new_udp(saddr, daddr, udp_len, 0, 0, 64);
            ip.emit(&mut hdr[..IPV6_HDR_LEN]).map_err(|_| EINVAL)?;
            IPV6_HDR_LEN
        }
    };
    UdpHdr::new(ep.sport, ROCE_V2_UDP_DPORT, udp_len - UDP_HDR_LEN as u16)
        .emit(&mut hdr[ip_len..ip_len + UDP_HDR_LEN])
        .map_err(|_| EINVAL)?;
    pkt.push_headers(&hdr[..hlen])?;
    icrc_fill::<KernelCrc32>(pkt.data_mut()).map_err(|_| EINVAL)?;
    core.stats.inc(crate::stats::Counter::SentPkts);
    if route.is_loopback() {
        drop(route);
        engine::queue_rx(core.clone(), pkt.into_skb());
        return Ok(());
    }
    pkt.send(route, &core.netdev)
}
