// SPDX-License-Identifier: GPL-2.0
//! The IP and UDP headers that carry RoCEv2, as far as the protocol core
//! needs them: zero-copy views, minimal builders (for tests and tools), and
//! [`locate`], which finds the RoCE transport packet (BTH .. ICRC) inside a
//! full L3 packet.
//!
//! Only what RoCEv2 uses is accepted: IPv4 without options (IHL 5, as C
//! rxe's ICRC code assumes) or IPv6 whose next header is UDP (no extension
//! headers).  The end of the RoCE packet is given by the UDP length, as in C
//! rxe (`paylen = udp->len - 8`); bytes after it (link padding) are ignored.

use zerocopy::big_endian::U16;

use super::header::{wire_header, Header};

/// UDP destination port of RoCEv2.
pub const ROCE_V2_UDP_DPORT: u16 = 4791;
/// IP protocol / next-header number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// IPv4 header length RoCEv2 uses (no options).
pub const IPV4_HDR_LEN: usize = 20;
/// IPv6 header length.
pub const IPV6_HDR_LEN: usize = 40;
/// UDP header length.
pub const UDP_HDR_LEN: usize = 8;

wire_header! {
    /// IPv4 header (without options).
    pub struct Ipv4Hdr {
        ver_ihl: u8,
        tos: u8,
        tot_len: U16,
        id: U16,
        frag_off: U16,
        ttl: u8,
        protocol: u8,
        check: U16,
        saddr: [u8; 4],
        daddr: [u8; 4],
    }
}

impl Header for Ipv4Hdr {}

impl Ipv4Hdr {
    /// A UDP-carrying IPv4 header for `l4_len` bytes of UDP (header
    /// included), DF set, with a correct header checksum.
    pub fn new_udp(saddr: [u8; 4], daddr: [u8; 4], l4_len: u16, tos: u8, ttl: u8, id: u16) -> Self {
        let mut h = Ipv4Hdr {
            ver_ihl: 0x45,
            tos,
            tot_len: U16::new(l4_len.wrapping_add(IPV4_HDR_LEN as u16)),
            id: U16::new(id),
            frag_off: U16::new(0x4000),
            ttl,
            protocol: IPPROTO_UDP,
            check: U16::new(0),
            saddr,
            daddr,
        };
        h.check = U16::new(h.compute_checksum());
        h
    }

    /// IP version (4 for a valid header).
    pub fn version(&self) -> u8 {
        self.ver_ihl >> 4
    }

    /// Header length in 32-bit words.
    pub fn ihl(&self) -> u8 {
        self.ver_ihl & 0x0f
    }

    /// Type of service (DSCP/ECN) byte.
    pub fn tos(&self) -> u8 {
        self.tos
    }

    /// Total length of the IP packet.
    pub fn tot_len(&self) -> u16 {
        self.tot_len.get()
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.ttl
    }

    /// Protocol number of the payload.
    pub fn protocol(&self) -> u8 {
        self.protocol
    }

    /// Header checksum as stored.
    pub fn checksum(&self) -> u16 {
        self.check.get()
    }

    /// Source address.
    pub fn saddr(&self) -> [u8; 4] {
        self.saddr
    }

    /// Destination address.
    pub fn daddr(&self) -> [u8; 4] {
        self.daddr
    }

    /// The checksum the header should carry (computed with the checksum
    /// field taken as zero).
    pub fn compute_checksum(&self) -> u16 {
        let mut c = *self;
        c.check = U16::new(0);
        let mut sum: u32 = 0;
        for pair in zerocopy::IntoBytes::as_bytes(&c).chunks(2) {
            let hi = pair.first().copied().unwrap_or(0);
            let lo = pair.get(1).copied().unwrap_or(0);
            sum += u32::from(u16::from_be_bytes([hi, lo]));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }
}

wire_header! {
    /// IPv6 fixed header.
    pub struct Ipv6Hdr {
        ver_tc_flow: [u8; 4],
        payload_len: U16,
        nexthdr: u8,
        hop_limit: u8,
        saddr: [u8; 16],
        daddr: [u8; 16],
    }
}

impl Header for Ipv6Hdr {}

impl Ipv6Hdr {
    /// A UDP-carrying IPv6 header for `l4_len` bytes of UDP (header
    /// included).
    pub fn new_udp(
        saddr: [u8; 16],
        daddr: [u8; 16],
        l4_len: u16,
        traffic_class: u8,
        flow_label: u32,
        hop_limit: u8,
    ) -> Self {
        let w = (6u32 << 28) | (u32::from(traffic_class) << 20) | (flow_label & 0x000f_ffff);
        Ipv6Hdr {
            ver_tc_flow: w.to_be_bytes(),
            payload_len: U16::new(l4_len),
            nexthdr: IPPROTO_UDP,
            hop_limit,
            saddr,
            daddr,
        }
    }

    /// IP version (6 for a valid header).
    pub fn version(&self) -> u8 {
        self.ver_tc_flow[0] >> 4
    }

    /// Traffic class.
    pub fn traffic_class(&self) -> u8 {
        (u32::from_be_bytes(self.ver_tc_flow) >> 20) as u8
    }

    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        u32::from_be_bytes(self.ver_tc_flow) & 0x000f_ffff
    }

    /// Payload length (everything after this header).
    pub fn payload_len(&self) -> u16 {
        self.payload_len.get()
    }

    /// Next header number.
    pub fn nexthdr(&self) -> u8 {
        self.nexthdr
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.hop_limit
    }

    /// Source address.
    pub fn saddr(&self) -> [u8; 16] {
        self.saddr
    }

    /// Destination address.
    pub fn daddr(&self) -> [u8; 16] {
        self.daddr
    }
}

wire_header! {
    /// UDP header.
    pub struct UdpHdr {
        sport: U16,
        dport: U16,
        len: U16,
        check: U16,
    }
}

impl Header for UdpHdr {}

impl UdpHdr {
    /// A UDP header for `payload_len` bytes of payload, checksum 0 (RoCEv2
    /// senders, C rxe included, do not checksum).
    pub fn new(sport: u16, dport: u16, payload_len: u16) -> Self {
        UdpHdr {
            sport: U16::new(sport),
            dport: U16::new(dport),
            len: U16::new(payload_len.wrapping_add(UDP_HDR_LEN as u16)),
            check: U16::new(0),
        }
    }

    /// The same header with checksum field `check` (a UDP GSO batch's
    /// carries the pseudo-header sum, `gso::udp_pseudo_sum`).
    pub fn with_checksum(mut self, check: u16) -> Self {
        self.check = U16::new(check);
        self
    }

    /// Source port.
    pub fn sport(&self) -> u16 {
        self.sport.get()
    }

    /// Destination port.
    pub fn dport(&self) -> u16 {
        self.dport.get()
    }

    /// UDP length (header included).
    pub fn len(&self) -> u16 {
        self.len.get()
    }

    /// True if the UDP length is zero (never valid).
    pub fn is_empty(&self) -> bool {
        self.len.get() == 0
    }

    /// Checksum as stored.
    pub fn checksum(&self) -> u16 {
        self.check.get()
    }
}

/// IP version of an L3 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpVersion {
    /// IPv4 (RoCEv2 GIDs that are IPv4-mapped).
    V4,
    /// IPv6.
    V6,
}

impl IpVersion {
    /// Length of the IP header of this version as RoCEv2 uses it.
    pub const fn hdr_len(self) -> usize {
        match self {
            IpVersion::V4 => IPV4_HDR_LEN,
            IpVersion::V6 => IPV6_HDR_LEN,
        }
    }
}

/// Why an L3 packet is not a RoCEv2 packet this crate can handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L3Error {
    /// Empty buffer or IP version neither 4 nor 6.
    BadIpVersion,
    /// IPv4 header with options (IHL != 5).
    Ipv4Options,
    /// IP protocol / next header is not UDP.
    NotUdp,
    /// The buffer ends before the IP or UDP header does.
    Truncated,
    /// The UDP length is below 8 + BTH + ICRC or past the buffer end.
    BadUdpLength,
}

/// Where the parts of a RoCEv2 L3 packet are (byte offsets into it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoceLayout {
    /// IP version.
    pub version: IpVersion,
    /// Offset of the UDP header (= IP header length).
    pub udp_offset: usize,
    /// Offset of the BTH.
    pub bth_offset: usize,
    /// Length of the RoCE packet, BTH through ICRC (UDP length - 8).
    pub roce_len: usize,
}

impl RoceLayout {
    /// Offset just past the ICRC.
    pub const fn end(&self) -> usize {
        self.bth_offset + self.roce_len
    }
}

/// Finds the RoCE transport packet inside an L3 packet starting at the IP
/// header.  Requires room for at least a BTH and an ICRC.
pub fn locate(l3: &[u8]) -> Result<RoceLayout, L3Error> {
    locate_prefix(l3, l3.len())
}

/// Like [`locate`] for a packet of `l3_len` bytes of which only the first
/// `l3.len()` are at hand (its IP and UDP headers at least): the lengths
/// are checked against `l3_len`.
pub fn locate_prefix(l3: &[u8], l3_len: usize) -> Result<RoceLayout, L3Error> {
    if l3.len() > l3_len {
        return Err(L3Error::BadUdpLength);
    }
    let first = *l3.first().ok_or(L3Error::BadIpVersion)?;
    let version = match first >> 4 {
        4 => {
            if first & 0x0f != 5 {
                return Err(L3Error::Ipv4Options);
            }
            let (ip, _) = Ipv4Hdr::parse(l3).map_err(|_| L3Error::Truncated)?;
            if ip.protocol() != IPPROTO_UDP {
                return Err(L3Error::NotUdp);
            }
            IpVersion::V4
        }
        6 => {
            let (ip, _) = Ipv6Hdr::parse(l3).map_err(|_| L3Error::Truncated)?;
            if ip.nexthdr() != IPPROTO_UDP {
                return Err(L3Error::NotUdp);
            }
            IpVersion::V6
        }
        _ => return Err(L3Error::BadIpVersion),
    };
    let udp_offset = version.hdr_len();
    let rest = l3.get(udp_offset..).ok_or(L3Error::Truncated)?;
    let (udp, _) = UdpHdr::parse(rest).map_err(|_| L3Error::Truncated)?;
    let udp_len = usize::from(udp.len());
    let roce_len = udp_len
        .checked_sub(UDP_HDR_LEN)
        .ok_or(L3Error::BadUdpLength)?;
    let after = l3_len - (udp_offset + UDP_HDR_LEN);
    if roce_len < 12 + 4 || roce_len > after {
        return Err(L3Error::BadUdpLength);
    }
    Ok(RoceLayout {
        version,
        udp_offset,
        bth_offset: udp_offset + UDP_HDR_LEN,
        roce_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_checksum_known_answer() {
        // Classic example header (checksum 0xb861).
        let bytes = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let (h, _) = Ipv4Hdr::parse(&bytes).unwrap();
        assert_eq!(h.compute_checksum(), 0xb861);
        assert_eq!(h.checksum(), 0xb861);
    }

    #[test]
    fn locate_rejects_garbage() {
        assert_eq!(locate(&[]), Err(L3Error::BadIpVersion));
        assert_eq!(locate(&[0x46; 60]), Err(L3Error::Ipv4Options));
        assert_eq!(locate(&[0x45; 10]), Err(L3Error::Truncated));
        let mut p = [0u8; 48];
        Ipv4Hdr::new_udp([1; 4], [2; 4], 28, 0, 64, 0)
            .emit(&mut p)
            .unwrap();
        UdpHdr::new(1, ROCE_V2_UDP_DPORT, 21)
            .emit(&mut p[20..])
            .unwrap();
        assert_eq!(locate(&p), Err(L3Error::BadUdpLength));
        UdpHdr::new(1, ROCE_V2_UDP_DPORT, 16)
            .emit(&mut p[20..])
            .unwrap();
        assert_eq!(locate(&p).map(|l| (l.bth_offset, l.roce_len)), Ok((28, 16)));
    }
}
