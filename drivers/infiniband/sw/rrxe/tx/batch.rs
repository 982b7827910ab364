// SPDX-License-Identifier: GPL-2.0

//! A UDP GSO batch: several consecutive RoCE packets of one message in one
//! skb (`proto::gso`), one IP and UDP header for all of them, which the
//! stack, or a NIC with UDP segmentation offload, cuts into ordinary
//! RoCEv2 packets.  Built front to back in one pass like a single packet
//! (`tx::send`): the batch's IP and UDP headers, then per packet its
//! transport headers, payload, pad and ICRC.  Each packet's ICRC is
//! computed over the IP and UDP headers its segment will carry (its own
//! lengths, the IPv4 identification of its index), not over the batch's:
//! those of a full-size segment are written and masked once per batch
//! ([`IcrcPrefix`]), and only the identification changes from packet to
//! packet.
//!
//! A batch is not built when the module parameter `gso` is off, for fewer
//! than two packets ([`Batch::plan`]), for a route to this host (the
//! loopback delivery takes one packet at a time) or when its buffer cannot
//! be allocated ([`Batch::begin`]): the caller sends packet by packet.

use kernel::prelude::*;

use super::{ip_udp_len, route, write_ip_udp, Fill, TxError, MAX_HEADERS};
use crate::icrc::KernelCrc32;
use crate::kapi::net::route::{Route, TxPacket};
use crate::proto::bth::Bth;
use crate::proto::builder::{packet_len, pad_for, write_headers, ExtHeaders};
use crate::proto::gso::{segment_ipv4_id, udp_pseudo_sum, Plan, MAX_SEGMENTS};
use crate::proto::icrc::{IcrcPrefix, MAX_TRANSPORT_HDR};
use crate::proto::ip::{IpVersion, UDP_HDR_LEN};
use crate::proto::opcode::RC_FLUSH;
use crate::qp::{DevCore, Endpoints};
use crate::stats::Counter;

/// The IPv4 identification of a batch's IP header (its first segment's).
const FIRST_IPV4_ID: u16 = 0;
/// Most bytes of RoCE packets in one batch: its buffer is one linear
/// allocation of about this size (an order-4 page block at most).
const MAX_BATCH_BYTES: usize = 60 * 1024;

/// The ICRC prefix of a segment of `roce_len` bytes of UDP payload to
/// `ep`: its IP and UDP headers, masked.
fn segment_prefix(ep: &Endpoints, roce_len: usize) -> Result<IcrcPrefix> {
    let net_len = ip_udp_len(&ep.ips);
    let mut hdr = [0u8; MAX_HEADERS];
    let version = write_ip_udp(&mut hdr[..net_len], ep, roce_len, (FIRST_IPV4_ID, 0))?;
    Ok(IcrcPrefix::new(version, &hdr[..net_len])?)
}

/// A batch being built, packet by packet, as planned.
pub(crate) struct Batch<'a> {
    dev: &'a DevCore,
    route: &'a Route,
    ep: &'a Endpoints,
    pkt: TxPacket,
    plan: Plan,
    /// The ICRC prefix of a segment of `gso_size` bytes (IPv4
    /// identification to be set).
    full: IcrcPrefix,
    /// Packets appended so far.
    appended: usize,
    /// Their bytes as they will be on the wire, IP header onwards.
    wire_bytes: usize,
}

impl<'a> Batch<'a> {
    /// The batch that the next `most` packets to `ep` (at most; their
    /// RoCE lengths, BTH through ICRC, by index from 0, given by `len_of`)
    /// make from the first on: as many as [`Plan`] admits within
    /// [`MAX_BATCH_BYTES`].  `None` when `gso` is off, or fewer than two
    /// would go (or a length is unknown): they go one by one.
    pub(crate) fn plan(
        ep: &Endpoints,
        most: u32,
        len_of: impl Fn(u32) -> Option<usize>,
    ) -> Option<Plan> {
        let most = most.min(MAX_SEGMENTS as u32);
        if most < 2 || !crate::param::gso() {
            return None;
        }
        let version = if ep.ips.is_v4() {
            IpVersion::V4
        } else {
            IpVersion::V6
        };
        let mut plan = Plan::new(version, len_of(0)?, MAX_BATCH_BYTES);
        for i in 1..most {
            if !plan.admit(len_of(i)?) {
                break;
            }
        }
        (plan.count() >= 2).then_some(plan)
    }

    /// Starts a batch of `plan.count()` packets to `ep` (at least two):
    /// its buffer, with the batch's IP and UDP headers.  `None` if it
    /// goes to this host, or the buffer cannot be had: the caller sends
    /// the packets one by one (which reports a missing route).
    pub(crate) fn begin(
        dev: &'a DevCore,
        cache: &'a mut Option<Route>,
        ep: &'a Endpoints,
        plan: Plan,
    ) -> Option<Self> {
        if plan.count() < 2 {
            return None;
        }
        let route = route(cache, &dev.netdev, ep).ok()?;
        if route.is_loopback() {
            return None;
        }
        let net_len = ip_udp_len(&ep.ips);
        let mut pkt = TxPacket::new_batch(route, net_len + plan.bytes()).ok()?;
        // The batch's IP and UDP headers: lengths of the whole batch, IPv4
        // ID `FIRST_IPV4_ID`, the UDP checksum field seeded with the
        // pseudo-header sum.  The stack writes the IP lengths and checksum
        // again when it sends (`ip_local_out`), and the segmentation gives
        // each segment its own.
        let mut hdr = [0u8; MAX_HEADERS];
        let udp_len = u32::try_from(UDP_HDR_LEN + plan.bytes()).ok()?;
        let seed = udp_pseudo_sum(&ep.ips, udp_len);
        write_ip_udp(&mut hdr[..net_len], ep, plan.bytes(), (FIRST_IPV4_ID, seed)).ok()?;
        pkt.append(&hdr[..net_len]).ok()?;
        pkt.set_udp_gso(net_len - UDP_HDR_LEN, plan.gso_size(), plan.count())
            .ok()?;
        let full = segment_prefix(ep, plan.gso_size()).ok()?;
        Some(Self {
            dev,
            route,
            ep,
            pkt,
            plan,
            full,
            appended: 0,
            wire_bytes: 0,
        })
    }

    /// Appends the next packet: `bth`, `ext` and `payload_len` payload
    /// bytes that `fill` appends, then the pad and the ICRC.  Its length
    /// must be the plan's: `gso_size`, or no more for the last.
    pub(crate) fn push<E>(
        &mut self,
        bth: &Bth,
        ext: &ExtHeaders,
        payload_len: usize,
        fill: Fill<'_, E>,
    ) -> core::result::Result<(), TxError<E>> {
        let index = self.appended;
        let roce_len = packet_len(bth.opcode(), payload_len).ok_or(EINVAL)?;
        let last = index + 1 == self.plan.count();
        let fits = if last {
            roce_len <= self.plan.gso_size()
        } else {
            roce_len == self.plan.gso_size()
        };
        if index >= self.plan.count() || !fits {
            return Err(TxError::Net(EINVAL));
        }
        let id = segment_ipv4_id(FIRST_IPV4_ID, index);
        // C rxe's FLUSH coverage differs (`tx::write_all_headers`); batches
        // carry SENDs and WRITEs only.
        if bth.opcode() == RC_FLUSH {
            return Err(TxError::Net(EINVAL));
        }
        let mut prefix = if roce_len == self.plan.gso_size() {
            self.full
        } else {
            segment_prefix(self.ep, roce_len)?
        };
        prefix.set_ipv4_id(id);
        let mut hdr = [0u8; MAX_TRANSPORT_HDR];
        let tlen = write_headers(&mut hdr, bth, ext, payload_len).map_err(Error::from)?;
        let transport = &hdr[..tlen];
        let mut icrc = prefix
            .start::<KernelCrc32>(transport)
            .map_err(Error::from)?;
        self.pkt.append(transport)?;
        fill(&mut self.pkt, &mut |piece| icrc.update(piece)).map_err(TxError::Fill)?;
        let pad = usize::from(pad_for(payload_len));
        if pad != 0 {
            icrc.update(self.pkt.append_zeros(pad)?);
        }
        self.pkt.append(&icrc.finish().to_le_bytes())?;
        self.appended += 1;
        self.wire_bytes += ip_udp_len(&self.ep.ips) + roce_len;
        Ok(())
    }

    /// Hands the batch, complete, to the IP stack, and counts its packets
    /// as sent (or the batch as refused, once in `SendErr`: lost packets,
    /// which the protocol recovers).  `EINVAL` (nothing sent) if packets are missing.
    pub(crate) fn send(self) -> Result {
        if self.appended != self.plan.count() {
            return Err(EINVAL);
        }
        let stats = &self.dev.stats;
        match self.pkt.send(self.route, &self.dev.netdev) {
            Ok(()) => {
                stats.add(Counter::SentPkts, self.appended as u64);
                stats.add(Counter::SentBytes, self.wire_bytes as u64);
                stats.inc(Counter::GsoBatches);
            }
            Err(_) => stats.inc(Counter::SendErr),
        }
        Ok(())
    }
}
