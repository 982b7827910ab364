// SPDX-License-Identifier: GPL-2.0
//! UDP segmentation offload for RoCEv2: several back-to-back RoCE packets
//! of one message carried as the UDP payload of one GSO skb
//! (`SKB_GSO_UDP_L4`, `gso_size` the packets' length), which the stack,
//! or a NIC with UDP segmentation offload, cuts into ordinary RoCEv2
//! packets.  C rxe sends one skb per packet.
//!
//! Two facts of the kernel's segmentation (`__udp_gso_segment` and
//! `inet_gso_segment` or `ipv6_gso_segment`) decide the layout:
//!
//! * It cuts the UDP payload every `gso_size` bytes, so every packet of a
//!   batch but the last must be exactly `gso_size` long and the last no
//!   longer ([`batch_len`]).  A message's first packet is longer than its
//!   middle ones when it carries a RETH (RDMA WRITE) or an AETH (READ
//!   response), so it takes at most one shorter packet with it; a last
//!   packet with an immediate can be longer than the middle ones, and then
//!   starts a batch of its own.
//! * Each segment gets its own IP and UDP lengths, and, in IPv4, the
//!   batch's identification plus its index (unless the fixed-ID flag is
//!   set, which only TCP uses) ([`segment_ipv4_id`]).  The ICRC covers all
//!   three (it masks only TOS, TTL and the checksums), so the sender
//!   computes each packet's ICRC over the header its segment will carry:
//!   the one it would have had if sent alone, with that ID.
//!
//! The batch's IP length must fit the 16-bit length field (IPv4 total
//! length, IPv6 payload length; [`max_batch_payload`]) and it holds at
//! most [`MAX_SEGMENTS`] segments (`UDP_MAX_SEGMENTS`, what a UDP socket
//! may hand the stack in one send).

use super::ip::{IpVersion, IPPROTO_UDP, UDP_HDR_LEN};
use super::path::IpPair;

/// Most segments in one batch (the kernel's `UDP_MAX_SEGMENTS`).
pub const MAX_SEGMENTS: usize = 128;

/// Largest value of the IP length field (IPv4 total length, IPv6 payload
/// length) without jumbograms.
const MAX_IP_LEN_FIELD: usize = 0xffff;

/// The most UDP payload bytes (RoCE packets, BTH through ICRC) one batch
/// of IP version `version` may carry.
pub const fn max_batch_payload(version: IpVersion) -> usize {
    match version {
        // The total length counts the IPv4 header.
        IpVersion::V4 => MAX_IP_LEN_FIELD - version.hdr_len() - UDP_HDR_LEN,
        // The payload length does not count the IPv6 header.
        IpVersion::V6 => MAX_IP_LEN_FIELD - UDP_HDR_LEN,
    }
}

/// A batch being planned, packet by packet: the first packet sets
/// `gso_size`; each further one joins ([`Plan::admit`]) while the one
/// before it is exactly `gso_size` long, it is no longer (a shorter one
/// ends the batch), and the batch stays within [`MAX_SEGMENTS`] and
/// `byte_cap` bytes of RoCE packets (at most [`max_batch_payload`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    gso_size: usize,
    count: usize,
    bytes: usize,
    last: usize,
    byte_cap: usize,
}

impl Plan {
    /// A batch of IP version `version` starting with a packet of RoCE
    /// length `first` (BTH through ICRC), holding at most `byte_cap`
    /// bytes of RoCE packets (a sender's own limit, say on one buffer's
    /// size; the IP length field's limit applies anyway).
    pub fn new(version: IpVersion, first: usize, byte_cap: usize) -> Self {
        Plan {
            gso_size: first,
            count: 1,
            bytes: first,
            last: first,
            byte_cap: byte_cap.min(max_batch_payload(version)),
        }
    }

    /// Adds the next packet, of RoCE length `len`, if it may join; false
    /// (and the plan unchanged) if it must start a batch of its own.
    pub fn admit(&mut self, len: usize) -> bool {
        let fits = self.count < MAX_SEGMENTS
            && self.last == self.gso_size
            && len != 0
            && len <= self.gso_size
            && self.bytes + len <= self.byte_cap;
        if fits {
            self.count += 1;
            self.bytes += len;
            self.last = len;
        }
        fits
    }

    /// Packets in the batch.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The segment size: the first packet's length.
    pub fn gso_size(&self) -> usize {
        self.gso_size
    }

    /// Bytes of RoCE packets in the batch (its UDP payload).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// How many of the packets whose RoCE lengths (BTH through ICRC) are
/// `lens`, in order, one batch may carry from the first on ([`Plan`],
/// limited only by the IP length field and [`MAX_SEGMENTS`]).  1 when
/// the first must go alone (then it is sent as an ordinary packet), 0 for
/// no packets.
pub fn batch_len(lens: &[usize], version: IpVersion) -> usize {
    let Some((&first, rest)) = lens.split_first() else {
        return 0;
    };
    let mut plan = Plan::new(version, first, usize::MAX);
    for &len in rest {
        if !plan.admit(len) {
            break;
        }
    }
    plan.count()
}

/// The seed of the UDP checksum of a batch from `ips` whose UDP length
/// (header included) is `udp_len`: the one's-complement sum of the IPv4
/// or IPv6 pseudo-header, folded to 16 bits, not inverted (what
/// `CHECKSUM_PARTIAL` expects in the checksum field, and what the
/// segmentation adjusts for each segment's own length before it, or the
/// device, adds the segment's bytes).
pub fn udp_pseudo_sum(ips: &IpPair, udp_len: u32) -> u16 {
    let mut sum: u64 = u64::from(IPPROTO_UDP);
    let mut add = |bytes: &[u8]| {
        for w in bytes.chunks(2) {
            sum += u64::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]));
        }
    };
    match ips {
        IpPair::V4 { saddr, daddr } => {
            add(saddr);
            add(daddr);
        }
        IpPair::V6 { saddr, daddr } => {
            add(saddr);
            add(daddr);
        }
    }
    sum += u64::from(udp_len >> 16) + u64::from(udp_len & 0xffff);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The IPv4 identification the kernel's segmentation gives segment
/// `index` of a batch whose IP header has `first` (16-bit arithmetic, as
/// `inet_gso_segment`'s `htons(id++)`).
pub const fn segment_ipv4_id(first: u16, index: usize) -> u16 {
    first.wrapping_add(index as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WRITE of `len` bytes at MTU `mtu`: RoCE lengths of its packets
    /// (FIRST with a RETH, MIDDLE, LAST; no pad for multiples of 4).
    fn write_lens(len: usize, mtu: usize) -> [usize; 256] {
        let mut out = [0usize; 256];
        let n = len.div_ceil(mtu);
        for (k, slot) in out.iter_mut().enumerate().take(n) {
            let payload = mtu.min(len - k * mtu);
            let reth = if k == 0 { 16 } else { 0 };
            *slot = 12 + reth + payload + 4;
        }
        out
    }

    #[test]
    fn a_write_s_first_packet_takes_one_more_and_the_rest_batch_up_to_the_ip_limit() {
        let lens = write_lens(64 * 1024, 1024);
        let n = 64;
        // FIRST (RETH, 1056 bytes) is longer than the middle ones (1040):
        // one of them may follow it as the batch's shorter last segment.
        assert_eq!((lens[0], lens[1]), (1056, 1040));
        assert_eq!(batch_len(&lens[..n], IpVersion::V4), 2);
        // 62 packets of 1040 bytes fit under 65507 bytes, 63 would not.
        assert_eq!(batch_len(&lens[2..n], IpVersion::V4), 62);
        assert!(62 * 1040 <= max_batch_payload(IpVersion::V4));
        assert!(63 * 1040 > max_batch_payload(IpVersion::V4));
        // IPv6's payload length does not count its header: 65527 bytes,
        // so 63 (65520).
        assert_eq!(batch_len(&lens[1..n], IpVersion::V6), 63);
        // A message of 128 KiB: the limit, not the message, ends a batch.
        let lens = write_lens(128 * 1024, 1024);
        assert_eq!(batch_len(&lens[2..128], IpVersion::V4), 62);
    }

    #[test]
    fn a_short_last_packet_ends_the_batch() {
        // SEND of 2.5 MTUs: FIRST, MIDDLE, LAST (half).
        let lens = [1040, 1040, 528, 1040];
        assert_eq!(batch_len(&lens, IpVersion::V4), 3);
        // Nothing follows a shorter packet.
        assert_eq!(batch_len(&lens[2..], IpVersion::V4), 1);
    }

    #[test]
    fn a_longer_packet_does_not_join() {
        // SEND LAST with immediate and a full MTU: 4 bytes longer.
        let lens = [1040, 1040, 1044];
        assert_eq!(batch_len(&lens, IpVersion::V4), 2);
        assert_eq!(batch_len(&[], IpVersion::V4), 0);
        assert_eq!(batch_len(&[1040], IpVersion::V6), 1);
    }

    #[test]
    fn at_most_max_segments() {
        let lens = [60usize; 300];
        assert_eq!(batch_len(&lens, IpVersion::V4), MAX_SEGMENTS);
    }

    #[test]
    fn a_byte_cap_ends_the_batch_and_a_refused_packet_changes_nothing() {
        let mut plan = Plan::new(IpVersion::V4, 1040, 4 * 1040);
        assert!(plan.admit(1040) && plan.admit(1040) && plan.admit(1040));
        let before = plan;
        assert!(!plan.admit(1040));
        assert_eq!(plan, before);
        assert_eq!(
            (plan.count(), plan.bytes(), plan.gso_size()),
            (4, 4160, 1040)
        );
        // A cap above the IP limit is the IP limit.
        let plan = Plan::new(IpVersion::V4, 60, usize::MAX);
        assert_eq!(plan.byte_cap, max_batch_payload(IpVersion::V4));
    }

    /// IPv4 10.77.0.1 to 10.77.0.2, UDP length 64,488.
    const V4_SUM: u16 = 0x1097;
    /// IPv6 fd77::1 to fd77::2, UDP length 65,528.
    const V6_SUM: u16 = 0xfafc;

    #[test]
    fn pseudo_sums_match_independently_computed_ones() {
        // Reference values from a straightforward Python sum of the
        // pseudo-headers (RFC 768, RFC 8200 section 8.1).
        let v4 = IpPair::V4 {
            saddr: [10, 77, 0, 1],
            daddr: [10, 77, 0, 2],
        };
        assert_eq!(udp_pseudo_sum(&v4, 8 + 62 * 1040), V4_SUM);
        let mut saddr = [0u8; 16];
        let mut daddr = [0u8; 16];
        saddr[..2].copy_from_slice(&[0xfd, 0x77]);
        saddr[15] = 1;
        daddr[..2].copy_from_slice(&[0xfd, 0x77]);
        daddr[15] = 2;
        let v6 = IpPair::V6 { saddr, daddr };
        assert_eq!(udp_pseudo_sum(&v6, 8 + 63 * 1040), V6_SUM);
    }

    #[test]
    fn ids_count_up_and_wrap() {
        assert_eq!(segment_ipv4_id(0, 0), 0);
        assert_eq!(segment_ipv4_id(0, 61), 61);
        assert_eq!(segment_ipv4_id(0xfffe, 3), 1);
    }
}
