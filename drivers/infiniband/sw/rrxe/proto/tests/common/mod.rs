// SPDX-License-Identifier: GPL-2.0
//! Helpers shared by the integration tests: a crc32fast-backed [`Crc32`],
//! hex decoding, the committed ICRC vectors, and L3 packet assembly.

#![allow(dead_code)]

use rrxe_proto::bth::Bth;
use rrxe_proto::builder::{build_packet, ExtHeaders};
use rrxe_proto::icrc::{icrc_fill, Crc32, SoftCrc32};
use rrxe_proto::ip::{Ipv4Hdr, Ipv6Hdr, UdpHdr};
use rrxe_proto::Header;

/// [`Crc32`] on top of crc32fast.  crc32fast follows zlib: its state is the
/// *finalised* CRC (pre- and post-inverted), so a raw register `r` is the
/// zlib state `!r`, and the register after the update is `!finalize()`.
pub struct FastCrc;

impl Crc32 for FastCrc {
    fn crc32_le(seed: u32, data: &[u8]) -> u32 {
        let mut h = crc32fast::Hasher::new_with_initial(!seed);
        h.update(data);
        !h.finalize()
    }
}

/// Decodes a hex string (no separators).
pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// One line of tests/vectors/icrc_vectors.txt.
pub struct Vector {
    pub name: String,
    pub mode: String,
    pub icrc_wire: Vec<u8>,
    pub packet: Vec<u8>,
}

/// The vectors written by tests/vectors/gen_icrc.py.
pub fn vectors() -> Vec<Vector> {
    include_str!("../vectors/icrc_vectors.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 4, "bad vector line {l}");
            Vector {
                name: f[0].to_string(),
                mode: f[1].to_string(),
                icrc_wire: unhex(f[2]),
                packet: unhex(f[3]),
            }
        })
        .collect()
}

/// Source and destination of the hand-built IPv4 test packets.
pub const V4_SRC: [u8; 4] = [192, 0, 2, 1];
/// See [`V4_SRC`].
pub const V4_DST: [u8; 4] = [192, 0, 2, 2];

/// 2001:db8::1 / 2001:db8::2.
pub fn v6_addrs() -> ([u8; 16], [u8; 16]) {
    let mut s = [0u8; 16];
    s[0] = 0x20;
    s[1] = 0x01;
    s[2] = 0x0d;
    s[3] = 0xb8;
    let mut d = s;
    s[15] = 1;
    d[15] = 2;
    (s, d)
}

/// Builds a RoCE transport packet with this crate's builder.
pub fn roce(bth: &Bth, ext: &ExtHeaders, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; 64 + payload.len()];
    let n = build_packet(&mut buf, bth, ext, payload).expect("build");
    buf.truncate(n);
    buf
}

/// Wraps a RoCE packet in IPv4 + UDP and fills the ICRC.
pub fn l3v4(roce: &[u8], tos: u8, ttl: u8, id: u16, sport: u16) -> Vec<u8> {
    let udp_len = u16::try_from(8 + roce.len()).unwrap();
    let mut p = vec![0u8; 28 + roce.len()];
    Ipv4Hdr::new_udp(V4_SRC, V4_DST, udp_len, tos, ttl, id)
        .emit(&mut p)
        .unwrap();
    UdpHdr::new(sport, 4791, u16::try_from(roce.len()).unwrap())
        .emit(&mut p[20..])
        .unwrap();
    p[28..].copy_from_slice(roce);
    icrc_fill::<SoftCrc32>(&mut p).unwrap();
    p
}

/// Wraps a RoCE packet in IPv6 + UDP and fills the ICRC.
pub fn l3v6(roce: &[u8], tc: u8, flow: u32, hop: u8, sport: u16) -> Vec<u8> {
    let (s, d) = v6_addrs();
    let udp_len = u16::try_from(8 + roce.len()).unwrap();
    let mut p = vec![0u8; 48 + roce.len()];
    Ipv6Hdr::new_udp(s, d, udp_len, tc, flow, hop)
        .emit(&mut p)
        .unwrap();
    UdpHdr::new(sport, 4791, u16::try_from(roce.len()).unwrap())
        .emit(&mut p[40..])
        .unwrap();
    p[48..].copy_from_slice(roce);
    icrc_fill::<SoftCrc32>(&mut p).unwrap();
    p
}
