// SPDX-License-Identifier: GPL-2.0
//! A UDP GSO batch of RoCE packets (`gso`), cut the way the kernel's
//! segmentation cuts it, gives segments that are each a valid RoCEv2
//! packet: every packet's ICRC is computed for the header its segment
//! will carry (its own lengths, IPv4 ID = the batch's + its index).
//!
//! The segmentation here is a model written from `inet_gso_segment`,
//! `ipv6_gso_segment` and `__udp_gso_segment` (net/ipv4/af_inet.c,
//! net/ipv6/ip6_offload.c, net/ipv4/udp_offload.c of 7.2): the UDP
//! payload cut every `gso_size` bytes, each segment given a copy of the
//! headers with its IP length, IPv4 identification (incremented per
//! segment, no fixed-ID flag for UDP), IPv4 header checksum, UDP length
//! and a UDP checksum.  The VM test checks the same on packets the kernel
//! itself cut.

mod common;

use common::{l3v4, l3v6, roce};
use rrxe_proto::bth::Bth;
use rrxe_proto::builder::ExtHeaders;
use rrxe_proto::gso::{batch_len, segment_ipv4_id};
use rrxe_proto::icrc::{icrc_verify, SoftCrc32};
use rrxe_proto::ip::{IpVersion, UDP_HDR_LEN};
use rrxe_proto::opcode::*;
use rrxe_proto::Psn;

const SPORT: u16 = 0xc123;
const FIRST_ID: u16 = 0xfffe;

/// The RoCE packets (BTH through ICRC placeholder) of the tail of a WRITE:
/// three MIDDLE packets of 1024 bytes and a LAST of 500 (with pad).
fn packets() -> Vec<Vec<u8>> {
    let payload =
        |k: usize, n: usize| -> Vec<u8> { (0..n).map(|i| (i * 7 + k * 13) as u8).collect() };
    let mut out = Vec::new();
    for k in 0..4u32 {
        let (op, len) = if k < 3 {
            (RC_RDMA_WRITE_MIDDLE, 1024)
        } else {
            (RC_RDMA_WRITE_LAST, 500)
        };
        let bth = Bth::new(op, 0x11, Psn::new(100 + k)).with_ack_req(k == 3);
        out.push(roce(
            &bth,
            &ExtHeaders::default(),
            &payload(k as usize, len),
        ));
    }
    out
}

/// Each packet as sent alone with the header its segment will carry (so
/// with its ICRC), then the batch: one IP and UDP header for all, the
/// packets' RoCE bytes back to back.
fn batch(version: IpVersion, pkts: &[Vec<u8>]) -> Vec<u8> {
    let hdr = version.hdr_len() + UDP_HDR_LEN;
    let mut body = Vec::new();
    for (i, p) in pkts.iter().enumerate() {
        let alone = match version {
            IpVersion::V4 => l3v4(p, 0, 64, segment_ipv4_id(FIRST_ID, i), SPORT),
            IpVersion::V6 => l3v6(p, 0, 0, 64, SPORT),
        };
        body.extend_from_slice(&alone[hdr..]);
    }
    // The batch's own header: any packet's, with the batch's lengths.
    let mut out = match version {
        IpVersion::V4 => l3v4(&body, 0, 64, FIRST_ID, SPORT),
        IpVersion::V6 => l3v6(&body, 0, 0, 64, SPORT),
    };
    // l3v4/l3v6 filled an ICRC over the whole body's tail: put the last
    // packet's own back.
    let n = out.len();
    out[n - 4..].copy_from_slice(&body[body.len() - 4..]);
    out
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

fn fold(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

fn ones_sum(b: &[u8]) -> u32 {
    b.chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum()
}

/// The kernel's segmentation of `l3` at `gso_size` (see the file's doc).
fn segment(l3: &[u8], version: IpVersion, gso_size: usize) -> Vec<Vec<u8>> {
    let ip = version.hdr_len();
    let hdr = ip + UDP_HDR_LEN;
    let id = u16::from_be_bytes([l3[4], l3[5]]);
    l3[hdr..]
        .chunks(gso_size)
        .enumerate()
        .map(|(i, chunk)| {
            let mut s = l3[..hdr].to_vec();
            s.extend_from_slice(chunk);
            let udp_len = (UDP_HDR_LEN + chunk.len()) as u16;
            match version {
                IpVersion::V4 => {
                    put16(&mut s, 2, (ip + udp_len as usize) as u16);
                    put16(&mut s, 4, id.wrapping_add(i as u16));
                    put16(&mut s, 10, 0);
                    let c = !fold(ones_sum(&s[..ip]));
                    put16(&mut s, 10, c);
                }
                IpVersion::V6 => put16(&mut s, 4, udp_len),
            }
            put16(&mut s, ip + 4, udp_len);
            // A real UDP checksum over the pseudo header and the segment
            // (the ICRC masks it).
            put16(&mut s, ip + 6, 0);
            let addrs = match version {
                IpVersion::V4 => &s[12..20],
                IpVersion::V6 => &s[8..40],
            };
            let pseudo = ones_sum(addrs) + 17 + u32::from(udp_len);
            let c = match !fold(pseudo + ones_sum(&s[ip..])) {
                0 => 0xffff,
                c => c,
            };
            put16(&mut s, ip + 6, c);
            s
        })
        .collect()
}

fn check(version: IpVersion) {
    let pkts = packets();
    let lens: Vec<usize> = pkts.iter().map(Vec::len).collect();
    assert_eq!(
        batch_len(&lens, version),
        4,
        "three full packets and a shorter last batch up"
    );
    let gso_size = lens[0];
    let l3 = batch(version, &pkts);
    let segs = segment(&l3, version, gso_size);
    assert_eq!(segs.len(), 4);
    for (i, s) in segs.iter().enumerate() {
        assert_eq!(
            icrc_verify::<SoftCrc32>(s),
            Ok(()),
            "segment {i} ({version:?})"
        );
        // The packet as built, up to its ICRC.
        let hdr = version.hdr_len() + UDP_HDR_LEN;
        assert_eq!(&s[hdr..s.len() - 4], &pkts[i][..pkts[i].len() - 4]);
    }
}

#[test]
fn every_segment_of_an_ipv4_batch_is_a_valid_rocev2_packet() {
    check(IpVersion::V4);
}

#[test]
fn every_segment_of_an_ipv6_batch_is_a_valid_rocev2_packet() {
    check(IpVersion::V6);
}

#[test]
fn the_icrc_depends_on_the_segment_s_ipv4_id() {
    // Had the sender not counted the ID up, segments after the first
    // would fail the receiver's ICRC check.
    let pkts = packets();
    let mut l3 = batch(IpVersion::V4, &pkts);
    put16(&mut l3, 4, FIRST_ID.wrapping_add(1));
    let segs = segment(&l3, IpVersion::V4, pkts[0].len());
    assert!(segs.iter().all(|s| icrc_verify::<SoftCrc32>(s).is_err()));
}
