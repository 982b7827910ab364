// SPDX-License-Identifier: GPL-2.0

//! Transmit: one RoCEv2 packet built in one pass into one skb.  The IP and
//! UDP headers (with the QP's traffic class and hop limit), the BTH and
//! extension headers, then the payload, appended straight from the pinned
//! user pages by the caller, then the pad and the ICRC.  The ICRC is
//! computed along the way over each piece just written (while it is in
//! cache), by the kernel's CRC32, which uses the CPU's carry-less multiply
//! where it can; no second walk over the packet.
//!
//! Several packets of one message can also go out as one UDP GSO batch
//! ([`Batch`], `tx/batch.rs`), which the stack or the NIC cuts into
//! packets like these.
//!
//! The route is cached by the caller (one per QP side) and revalidated
//! with `dst_check` before each packet; a stale or missing one is looked
//! up again.  A packet for an address of this host comes back to the
//! caller as a received skb, for the caller to deliver without touching
//! the network.

mod batch;

use kernel::prelude::*;

use crate::icrc::KernelCrc32;
use crate::kapi::net::{
    netdev::NetDevice,
    route::{self, Route, TxPacket},
    skb::SkBuff,
};
use crate::proto::bth::Bth;
use crate::proto::builder::{packet_len, pad_for, write_headers, ExtHeaders};
use crate::proto::icrc::{IcrcHasher, IcrcPrefix, MAX_TRANSPORT_HDR};
use crate::proto::ip::{
    IpVersion, Ipv4Hdr, Ipv6Hdr, UdpHdr, IPV4_HDR_LEN, IPV6_HDR_LEN, ROCE_V2_UDP_DPORT, UDP_HDR_LEN,
};
use crate::proto::opcode::RC_FLUSH;
use crate::proto::path::IpPair;
use crate::proto::Header;
use crate::qp::{DevCore, Endpoints};
use crate::rrxe_ratelimited;
use crate::stats::Counter;

/// Longest IP, UDP and transport headers.
const MAX_HEADERS: usize = IPV6_HDR_LEN + UDP_HDR_LEN + MAX_TRANSPORT_HDR;

/// A packet's payload source: appends `len` bytes to the packet, calling
/// the checksum callback on each piece as written.
pub(crate) type Fill<'a, E> =
    &'a mut dyn FnMut(&mut TxPacket, &mut dyn FnMut(&[u8])) -> core::result::Result<(), E>;

pub(crate) use batch::Batch;

/// How a send ended.
pub(crate) enum Sent {
    /// Handed to the IP stack (or dropped by it: a lost packet, which the
    /// protocol recovers).
    Wire,
    /// Addressed to this host: deliver this skb to the receive path.
    Loopback(SkBuff),
}

/// Why a packet was not sent.
pub(crate) enum TxError<E> {
    /// The payload source failed (a local protection error, say).
    Fill(E),
    /// No route, no memory, a header that does not fit: counted as a lost
    /// packet by the caller.
    Net(Error),
}

impl<E> From<Error> for TxError<E> {
    fn from(e: Error) -> Self {
        TxError::Net(e)
    }
}

fn ip_udp_len(ips: &IpPair) -> usize {
    UDP_HDR_LEN
        + if ips.is_v4() {
            IPV4_HDR_LEN
        } else {
            IPV6_HDR_LEN
        }
}

/// The addresses of a path, as a route lookup takes them.
fn route_pair(ips: &IpPair) -> route::IpPair {
    match *ips {
        IpPair::V4 { saddr, daddr } => route::IpPair::V4 { saddr, daddr },
        IpPair::V6 { saddr, daddr } => route::IpPair::V6 { saddr, daddr },
    }
}

/// The route to use for `ep`: the cached one if still valid and for the
/// same addresses and interface (a path migration changes them), else a
/// new lookup (cached) out of the source GID's netdev (`netdev` itself
/// if the path does not name one).
fn route<'a>(
    cache: &'a mut Option<Route>,
    netdev: &NetDevice,
    ep: &Endpoints,
) -> Result<&'a Route> {
    let oif = match ep.gid_dev.ifindex {
        0 => netdev.ifindex(),
        i => i,
    };
    let pair = route_pair(&ep.ips);
    if cache
        .as_ref()
        .is_some_and(|r| r.pair() != &pair || r.oif() != oif || !r.is_valid())
    {
        *cache = None;
    }
    if cache.is_none() {
        let r = Route::lookup(netdev.net(), oif, &pair).inspect_err(|e| {
            rrxe_ratelimited!(
                pr_warn,
                "rrxe: {}: no route: error {}\n",
                netdev.name(),
                e.to_errno()
            );
        })?;
        *cache = Some(r);
    }
    cache.as_ref().ok_or(ENOENT)
}

/// Whether FLUSH requests go out with C rxe's ICRC coverage
/// (`flush_icrc_rxe=1`): C rxe drops FLUSH packets with IBTA's.
fn rxe_flush_icrc() -> bool {
    *crate::module_parameters::flush_icrc_rxe.value() != 0
}

/// The IP and UDP headers of a datagram to `ep` with `roce_len` bytes of
/// UDP payload, into `hdr` (exactly their length, `ip_udp_len`): the QP's
/// traffic class and hop limit, IPv4 identification `ipv4_id` (0 for a
/// packet sent alone: DF is set, so it may be anything, RFC 6864; a
/// batch's segment's is its index, `proto::gso::segment_ipv4_id`), UDP
/// checksum field `udp_check` (0: RoCEv2 senders do not checksum; a UDP
/// GSO batch carries the pseudo-header sum).  Returns the IP version.
fn write_ip_udp(
    hdr: &mut [u8],
    ep: &Endpoints,
    roce_len: usize,
    (ipv4_id, udp_check): (u16, u16),
) -> Result<IpVersion> {
    let udp_len = u16::try_from(UDP_HDR_LEN + roce_len)?;
    let l3 = hdr.len().checked_sub(UDP_HDR_LEN).ok_or(EINVAL)?;
    let version = match ep.ips {
        IpPair::V4 { saddr, daddr } => {
            let ip = Ipv4Hdr::new_udp(saddr, daddr, udp_len, ep.tclass, ep.hop_limit, ipv4_id);
            ip.emit(&mut hdr[..l3])?;
            IpVersion::V4
        }
        IpPair::V6 { saddr, daddr } => {
            let ip = Ipv6Hdr::new_udp(saddr, daddr, udp_len, ep.tclass, 0, ep.hop_limit);
            ip.emit(&mut hdr[..l3])?;
            IpVersion::V6
        }
    };
    UdpHdr::new(ep.sport, ROCE_V2_UDP_DPORT, udp_len - UDP_HDR_LEN as u16)
        .with_checksum(udp_check)
        .emit(&mut hdr[l3..])?;
    Ok(version)
}

/// The IP, UDP and transport headers of a packet sent alone to `ep` with
/// `bth`, `ext` and `payload_len` payload bytes (`roce_len` bytes of UDP
/// payload), written into `hdr`: their length and the ICRC over them.
fn write_all_headers(
    hdr: &mut [u8; MAX_HEADERS],
    ep: &Endpoints,
    (bth, ext): (&Bth, &ExtHeaders),
    payload_len: usize,
    roce_len: usize,
) -> Result<(usize, IcrcHasher<KernelCrc32>)> {
    let net_len = ip_udp_len(&ep.ips);
    let version = write_ip_udp(&mut hdr[..net_len], ep, roce_len, (0, 0))?;
    let tlen = write_headers(&mut hdr[net_len..], bth, ext, payload_len)?;
    let headers = &hdr[..net_len + tlen];
    let mut icrc = IcrcPrefix::new(version, &headers[..net_len])?.start(&headers[net_len..])?;
    if bth.opcode() == RC_FLUSH && rxe_flush_icrc() {
        // C rxe's coverage of FLUSH: the headers once more, unmasked (its
        // opcode table gives FLUSH no payload offset, so its "payload"
        // starts at the BTH).
        icrc.update(&headers[net_len..]);
    }
    Ok((net_len + tlen, icrc))
}

/// Sends one packet of device `dev` with `bth` and `ext` and
/// `payload_len` payload bytes that `fill` appends, and counts it in the
/// device's counters (sent, or refused by the IP stack).
pub(crate) fn send<E>(
    dev: &DevCore,
    cache: &mut Option<Route>,
    ep: &Endpoints,
    bth: &Bth,
    ext: &ExtHeaders,
    payload_len: usize,
    fill: Fill<'_, E>,
) -> core::result::Result<Sent, TxError<E>> {
    let roce_len = packet_len(bth.opcode(), payload_len).ok_or(EINVAL)?;
    let net_len = ip_udp_len(&ep.ips);
    let mut hdr = [0u8; MAX_HEADERS];
    let (hlen, mut icrc) = write_all_headers(&mut hdr, ep, (bth, ext), payload_len, roce_len)?;
    let headers = &hdr[..hlen];
    let (netdev, stats) = (&*dev.netdev, &dev.stats);
    let r = route(cache, netdev, ep)?;
    let mut pkt = TxPacket::new(r, net_len + roce_len)?;
    pkt.append(headers)?;
    fill(&mut pkt, &mut |piece| icrc.update(piece)).map_err(TxError::Fill)?;
    let pad = usize::from(pad_for(payload_len));
    if pad != 0 {
        icrc.update(pkt.append_zeros(pad)?);
    }
    pkt.append(&icrc.finish().to_le_bytes())?;
    let count_sent = || {
        stats.inc(Counter::SentPkts);
        stats.add(Counter::SentBytes, (net_len + roce_len) as u64);
    };
    if r.is_loopback() {
        count_sent();
        let mut skb = pkt.into_skb();
        // As received on the source GID's netdev.
        skb.set_rx_vlan(ep.gid_dev.vlan);
        return Ok(Sent::Loopback(skb));
    }
    // A drop by the stack is a lost packet: the protocol recovers it.
    match pkt.send(r, netdev) {
        Ok(()) => count_sent(),
        Err(_) => stats.inc(Counter::SendErr),
    }
    Ok(Sent::Wire)
}

/// Sends a packet without payload (an acknowledgement).
pub(crate) fn send_header_only(
    dev: &DevCore,
    cache: &mut Option<Route>,
    ep: &Endpoints,
    bth: &Bth,
    ext: &ExtHeaders,
) -> core::result::Result<Sent, Error> {
    let mut none = |_: &mut TxPacket, _: &mut dyn FnMut(&[u8])| Ok::<(), Error>(());
    send(dev, cache, ep, bth, ext, 0, &mut none).map_err(|e| match e {
        TxError::Fill(e) | TxError::Net(e) => e,
    })
}
