// SPDX-License-Identifier: GPL-2.0
//! What happens to a crafted frame on the attacked host, predicted per
//! packet so that the scenario can check rrxe's counters against it.
//!
//! Two stages.  [`kernel`]: the IPv4 and UDP receive paths rrxe sits
//! behind (ip_rcv_core, routing, defragmentation, __udp4_lib_rcv): which
//! frames never reach rrxe, and the bytes of those that do (the IP layer
//! trims to the IP total length, UDP to its length).  [`rrxe`]: the
//! receive checks of `engine/rx.rs`, in their order (framing and header,
//! destination QP, QP type and state, P_Key, source/destination address,
//! payload length against the path MTU, ICRC), then what the responder and completer do with the packets that
//! pass: an RC request with a PSN far behind the expected one is a
//! duplicate, far ahead it is out of sequence; an acknowledgement of a PSN
//! far from anything in flight, or a response rrxe never asked for, is
//! dropped.  The header checks call the protocol core's own functions
//! (`proto::validate`), the same code rrxe runs, so the prediction does
//! not drift from the driver; the generator separately labels packets it
//! made invalid on purpose (bad ICRC, unknown opcode, ...) and asserts
//! that the model drops every one of them.

use rrxe_proto::bth::BTH_DEF_PKEY;
use rrxe_proto::icrc::icrc_verify;
use rrxe_proto::opcode::RC_ACKNOWLEDGE;
use rrxe_proto::psn::psn_compare;
use rrxe_proto::qp_state::{QpState, QpType};
use rrxe_proto::validate::{check_header, check_keys, check_payload_fits, check_type_state};
use rrxe_proto::Packet;

use crate::wire::{inet_sum, TableCrc};

/// A QP of the attacked device: number, type, and the PSN its live
/// traffic started from (both directions: its requests and its peer's).
#[derive(Clone, Copy, Debug)]
pub struct LiveQp {
    pub qpn: u32,
    pub ty: QpType,
    pub psn: u32,
}

/// Addresses of the attacked device and of its QPs' peer.
#[derive(Clone, Debug)]
pub struct Target {
    pub local: [u8; 4],
    pub peer: [u8; 4],
    /// The attacked netdev's IPv6 address (its link-local one), if IPv6
    /// packets are wanted; the live QPs' paths are IPv4.
    pub local6: Option<[u8; 16]>,
    pub live: Vec<LiveQp>,
    /// The live QPs' path MTU (bytes).
    pub pmtu: u32,
}

impl Target {
    pub fn live(&self, qpn: u32) -> Option<&LiveQp> {
        self.live.iter().find(|q| q.qpn == qpn)
    }
}

/// PSN regions that are safe for valid packets from the real peer: far
/// behind any PSN the live traffic can reach (duplicates) and far ahead
/// (out of sequence), so that such a packet can never be the one the
/// responder expects or an acknowledgement of anything in flight.  The
/// live traffic must stay within `LIVE_SPAN` PSNs of its start.
pub const LIVE_SPAN: i32 = 1 << 20;

/// Where a frame ends in the kernel, before rrxe.
pub enum KernelFate {
    /// Dropped by the IP/UDP stack for sure.
    Drop(&'static str),
    /// Most likely dropped by the stack, not counted on (bounds only);
    /// the bytes rrxe would see otherwise.
    Uncertain(&'static str, Vec<u8>),
    /// Handed to rrxe: the L3 bytes it sees.
    Deliver(Vec<u8>),
}

/// The kernel's IPv4/UDP receive path for a frame of `ethertype` with
/// `l3` after the Ethernet header, destination MAC the receiver's.
pub fn kernel(ethertype: u16, l3: &[u8], t: &Target) -> KernelFate {
    use KernelFate::*;
    if ethertype == 0x86dd && t.local6.is_some() {
        return kernel6(l3, t);
    }
    if ethertype != 0x0800 {
        return Drop("ethertype");
    }
    if l3.len() < 20 || l3[0] >> 4 != 4 || l3[0] & 0x0f < 5 {
        return Drop("ip header");
    }
    let ihl = usize::from(l3[0] & 0x0f) * 4;
    if l3.len() < ihl || inet_sum(0, &l3[..ihl]) != 0xffff {
        return Drop("ip checksum");
    }
    let tot = usize::from(u16::from_be_bytes([l3[2], l3[3]]));
    if tot > l3.len() || tot < ihl {
        return Drop("ip total length");
    }
    let l3 = &l3[..tot];
    if u16::from_be_bytes([l3[6], l3[7]]) & 0x3fff != 0 {
        return Drop("fragment");
    }
    let src: [u8; 4] = l3[12..16].try_into().unwrap();
    let dst: [u8; 4] = l3[16..20].try_into().unwrap();
    if dst != t.local {
        return Drop("not for this host");
    }
    let mut unsure = is_martian(src, t).then_some("martian source");
    if l3[9] != 17 {
        return Drop("not udp");
    }
    let udp = &l3[ihl..];
    if udp.len() < 8 {
        return Drop("udp header");
    }
    let ulen = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    if ulen > udp.len() || ulen < 8 {
        return Drop("udp length");
    }
    let udp = &udp[..ulen];
    if u16::from_be_bytes([udp[2], udp[3]]) != 4791 {
        return Drop("udp port");
    }
    if u16::from_be_bytes([udp[6], udp[7]]) != 0 && inet_sum(pseudo_sum(src, dst, ulen), udp) != 0xffff {
        unsure = unsure.or(Some("udp checksum"));
    }
    let seen = l3[..ihl + ulen].to_vec();
    match unsure {
        Some(why) => Uncertain(why, seen),
        None => Deliver(seen),
    }
}

/// The IPv6 receive path (ip6_rcv_core, __udp6_lib_rcv) for packets to
/// `t.local6`, without extension headers.
fn kernel6(l3: &[u8], t: &Target) -> KernelFate {
    use KernelFate::*;
    if l3.len() < 40 || l3[0] >> 4 != 6 {
        return Drop("ipv6 header");
    }
    let plen = usize::from(u16::from_be_bytes([l3[4], l3[5]]));
    if plen == 0 || 40 + plen > l3.len() {
        return Drop("ipv6 payload length");
    }
    let l3 = &l3[..40 + plen];
    let src: [u8; 16] = l3[8..24].try_into().unwrap();
    if Some(<[u8; 16]>::try_from(&l3[24..40]).unwrap()) != t.local6 {
        return Drop("not for this host");
    }
    // Multicast and loopback (::1) sources are refused; the unspecified
    // (::) and IPv4-mapped ones are not (scenario 20 saw them reach rrxe,
    // which counts them foreign: the QPs' paths are IPv4).
    let loopback = src[..15].iter().all(|&b| b == 0) && src[15] == 1;
    let mut unsure = None;
    if src[0] == 0xff {
        unsure = Some("ipv6 multicast source");
    } else if loopback {
        unsure = Some("ipv6 loopback source");
    }
    if l3[6] != 17 {
        return Drop("not udp");
    }
    let udp = &l3[40..];
    if udp.len() < 8 {
        return Drop("udp header");
    }
    let ulen = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    if ulen > udp.len() || ulen < 8 {
        return Drop("udp length");
    }
    let udp = &udp[..ulen];
    if u16::from_be_bytes([udp[2], udp[3]]) != 4791 {
        return Drop("udp port");
    }
    if u16::from_be_bytes([udp[6], udp[7]]) == 0 || inet_sum(pseudo6_sum(&l3[8..40], ulen), udp) != 0xffff {
        unsure = unsure.or(Some("ipv6 udp checksum"));
    }
    let seen = l3[..40 + ulen].to_vec();
    match unsure {
        Some(why) => Uncertain(why, seen),
        None => Deliver(seen),
    }
}

/// IPv6 pseudo header sum: `addrs` (source then destination), length, UDP.
pub fn pseudo6_sum(addrs: &[u8], ulen: usize) -> u32 {
    let mut p = [0u8; 8];
    p[..4].copy_from_slice(&(ulen as u32).to_be_bytes());
    p[7] = 17;
    inet_sum(inet_sum(0, addrs), &p)
}

fn pseudo_sum(src: [u8; 4], dst: [u8; 4], ulen: usize) -> u32 {
    let mut p = [0u8; 12];
    p[..4].copy_from_slice(&src);
    p[4..8].copy_from_slice(&dst);
    p[9] = 17;
    p[10..12].copy_from_slice(&(ulen as u16).to_be_bytes());
    inet_sum(0, &p)
}

/// Sources the routing code refuses (zeronet, loopback, multicast,
/// limited broadcast, one of our own addresses).
pub fn is_martian(src: [u8; 4], t: &Target) -> bool {
    src[0] == 0 || src[0] == 127 || src[0] >= 224 || src == t.local
}

/// What rrxe does with a delivered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Dropped by the receive checks (`rcv_dropped`).
    CheckDrop(&'static str),
    /// From/to an address other than the QP's path: `rcv_foreign` and
    /// `rcv_dropped`.
    Foreign,
    /// RC request far behind: `duplicate_request` (or `rcv_dropped` if the
    /// QP's queue is full).
    Duplicate,
    /// RC request far ahead: `out_of_seq_request` (or `rcv_dropped`).
    OutOfSeq,
    /// Response the completer drops: `rcv_dropped` either way.
    RespDrop,
    /// Accepted; effect depends on the live QP's state (not counted on).
    Other(&'static str),
}

/// Bytes rrxe makes linear before parsing (`MAX_HEADERS` in rx.rs).
const MAX_HEADERS: usize = 40 + 8 + 12 + 28;

/// rrxe's receive path for the L3 packet `l3` (IP header first).
pub fn rrxe(l3: &[u8], t: &Target) -> Fate {
    use Fate::*;
    let prefix = &l3[..l3.len().min(MAX_HEADERS)];
    let Ok((pkt, _)) = Packet::parse_l3_prefix(prefix, l3.len()) else {
        return CheckDrop("parse");
    };
    if check_header(&pkt).is_err() {
        return CheckDrop("header");
    }
    let Some(qp) = t.live(pkt.dest_qpn()) else {
        return CheckDrop("no such qp");
    };
    if check_type_state(&pkt, qp.ty, QpState::Rts).is_err() {
        return CheckDrop("qp type");
    }
    if check_keys(&pkt, qp.ty, BTH_DEF_PKEY, 0).is_err() {
        return CheckDrop("pkey");
    }
    // The live QPs' paths are IPv4: nothing over IPv6 is from their peer.
    if l3[0] >> 4 != 4 || l3[12..16] != t.peer || l3[16..20] != t.local {
        return Foreign;
    }
    if check_payload_fits(&pkt, t.pmtu).is_err() {
        return CheckDrop("longer than the path MTU");
    }
    if icrc_verify::<TableCrc>(l3).is_err() {
        return CheckDrop("icrc");
    }
    // psn_compare's sign is the order; its magnitude is scaled by 2^8.
    let d = psn_compare(pkt.psn().get(), qp.psn) >> 8;
    // Behind every PSN the live traffic can expect or have acknowledged
    // (base .. base + LIVE_SPAN), ahead of every PSN it can have sent.
    let behind = d <= -2 && d > -(1 << 23) + LIVE_SPAN;
    let ahead = d > LIVE_SPAN && d < (1 << 23);
    let info = pkt.info();
    if info.is_request() {
        match qp.ty {
            QpType::Rc if behind => Duplicate,
            QpType::Rc if ahead => OutOfSeq,
            _ => Other("request"),
        }
    } else if pkt.opcode() != RC_ACKNOWLEDGE || behind || ahead {
        RespDrop
    } else {
        Other("ack")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flood::Flood;
    use crate::wire::Rng;
    use crate::Summary;

    fn target() -> Target {
        Target {
            local: [10, 77, 0, 1],
            peer: [10, 77, 0, 2],
            local6: Some([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0xff, 0xfe, 0, 0, 1]),
            live: vec![LiveQp { qpn: 16, ty: QpType::Rc, psn: 100 }, LiveQp { qpn: 17, ty: QpType::Uc, psn: 5 }],
            pmtu: 1024,
        }
    }

    /// Every category the scenario counts on shows up, and packets made
    /// invalid on purpose are all dropped (Flood::packet asserts it).
    #[test]
    fn flood_covers_the_categories() {
        let t = target();
        let mut f = Flood::new(&t, 1024, &[]);
        let mut r = Rng::new(1);
        let mut s = Summary::default();
        for _ in 0..20000 {
            f.packet(&mut r, &mut s);
        }
        assert_eq!(s.total, s.kernel_drop + s.uncertain + s.reach);
        assert_eq!(s.other, 0);
        for v in [s.kernel_drop, s.uncertain, s.foreign, s.duplicate, s.out_of_seq, s.resp_drop, s.known_invalid] {
            assert!(v > 0, "a category is empty");
        }
    }
}
