// SPDX-License-Identifier: GPL-2.0
//! Known-answer tests against real RoCEv2 packets sent by the kernel's C
//! `rdma_rxe`, captured in the test VM (tests/captures/README.md): every
//! packet must parse, carry a correct ICRC, decode to the expected opcodes
//! and headers, and pass the header checks a receiver makes.

mod common;

use common::FastCrc;
use rrxe_proto::aeth::{NakCode, Syndrome};
use rrxe_proto::icrc::icrc_verify;
use rrxe_proto::opcode::*;
use rrxe_proto::Packet;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The L3 (IPv4/IPv6) packets of a classic pcap file of Ethernet frames.
fn read_pcap(name: &str) -> Vec<Vec<u8>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/captures")
        .join(format!("{name}.pcap"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(data.len() >= 24, "{name}: short pcap");
    let magic = u32::from_le_bytes(data[0..4].try_into().unwrap());
    let le = match magic {
        0xa1b2_c3d4 | 0xa1b2_3c4d => true,
        0xd4c3_b2a1 | 0x4d3c_b2a1 => false,
        m => panic!("{name}: not a pcap file (magic {m:#x})"),
    };
    let rd = |b: &[u8]| {
        let a: [u8; 4] = b.try_into().unwrap();
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    assert_eq!(rd(&data[20..24]), 1, "{name}: link type is not Ethernet");
    let mut off = 24;
    let mut out = Vec::new();
    while off + 16 <= data.len() {
        let incl = rd(&data[off + 8..off + 12]) as usize;
        let orig = rd(&data[off + 12..off + 16]) as usize;
        let frame = &data[off + 16..off + 16 + incl];
        assert_eq!(incl, orig, "{name}: truncated capture (snaplen)");
        let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
        assert!(
            ethertype == 0x0800 || ethertype == 0x86dd,
            "{name}: ethertype {ethertype:#x}"
        );
        out.push(frame[14..].to_vec());
        off += 16 + incl;
    }
    assert_eq!(off, data.len(), "{name}: trailing bytes");
    out
}

/// Parses and ICRC-checks every packet; returns them with their opcodes.
fn check_all(name: &str, want_v6: bool) -> Vec<Vec<u8>> {
    let pkts = read_pcap(name);
    assert!(!pkts.is_empty(), "{name}: no packets");
    for (i, l3) in pkts.iter().enumerate() {
        assert_eq!(l3[0] >> 4 == 6, want_v6, "{name}#{i}: IP version");
        let (p, _layout) = Packet::parse_l3(l3).unwrap_or_else(|e| panic!("{name}#{i}: {e:?}"));
        icrc_verify::<FastCrc>(l3).unwrap_or_else(|e| panic!("{name}#{i}: ICRC {e:?}"));
        assert_eq!(p.bth().tver(), 0, "{name}#{i}: transport version");
        assert_eq!(p.bth().pkey(), 0xffff, "{name}#{i}: P_Key");
        assert_eq!(
            (p.payload_len() + p.pad()) % 4,
            0,
            "{name}#{i}: payload not 4-byte padded"
        );
    }
    pkts
}

fn opcodes(pkts: &[Vec<u8>]) -> BTreeSet<u8> {
    pkts.iter()
        .map(|l3| Packet::parse_l3(l3).unwrap().0.opcode())
        .collect()
}

fn has_all(name: &str, got: &BTreeSet<u8>, want: &[u8]) {
    for op in want {
        assert!(
            got.contains(op),
            "{name}: no opcode {op:#04x} among {got:02x?}"
        );
    }
}

#[test]
fn rc_send_ipv4() {
    let pkts = check_all("v4_rc_send", false);
    let ops = opcodes(&pkts);
    has_all("v4_rc_send", &ops, &[RC_SEND_ONLY, RC_ACKNOWLEDGE]);
    for l3 in &pkts {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        match p.opcode() {
            RC_SEND_ONLY => assert_eq!(p.payload_len(), 64),
            RC_ACKNOWLEDGE => {
                assert!(matches!(p.aeth().unwrap().syndrome(), Syndrome::Ack { .. }));
                assert_eq!(p.payload_len(), 0);
            }
            op => panic!("unexpected opcode {op:#x}"),
        }
    }
}

#[test]
fn rc_send_ipv6_segmented_by_mtu() {
    let pkts = check_all("v6_rc_send", true);
    let ops = opcodes(&pkts);
    // 3000 bytes at path MTU 1024: first, middle, last.
    has_all(
        "v6_rc_send",
        &ops,
        &[RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST, RC_ACKNOWLEDGE],
    );
    let mut total = 0;
    for l3 in &pkts {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        match p.opcode() {
            RC_SEND_FIRST | RC_SEND_MIDDLE => assert_eq!(p.payload_len(), 1024),
            RC_SEND_LAST => {
                assert_eq!(p.payload_len(), 3000 - 2048);
                total += 1;
            }
            _ => {}
        }
    }
    assert!(total >= 1);
}

#[test]
fn uc_and_ud_sends() {
    let uc = check_all("v4_uc_send", false);
    has_all("v4_uc_send", &opcodes(&uc), &[UC_SEND_ONLY]);
    assert!(
        !opcodes(&uc).contains(&RC_ACKNOWLEDGE),
        "UC is unacknowledged"
    );
    let ud = check_all("v4_ud_send", false);
    has_all("v4_ud_send", &opcodes(&ud), &[UD_SEND_ONLY]);
    for l3 in &ud {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        let deth = p.deth().expect("UD carries a DETH");
        assert_ne!(deth.src_qpn(), 0);
    }
}

#[test]
fn rc_write_ipv4_segmented_and_ipv6_only() {
    let w = check_all("v4_rc_write", false);
    has_all(
        "v4_rc_write",
        &opcodes(&w),
        &[
            RC_RDMA_WRITE_FIRST,
            RC_RDMA_WRITE_MIDDLE,
            RC_RDMA_WRITE_LAST,
            RC_ACKNOWLEDGE,
        ],
    );
    for l3 in &w {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        if p.opcode() == RC_RDMA_WRITE_FIRST {
            let reth = p.reth().expect("WRITE FIRST carries a RETH");
            assert_eq!(reth.len(), 2500);
            assert_ne!(reth.rkey(), 0);
        }
    }
    let w6 = check_all("v6_rc_write", true);
    has_all(
        "v6_rc_write",
        &opcodes(&w6),
        &[RC_RDMA_WRITE_ONLY, RC_ACKNOWLEDGE],
    );
    for l3 in &w6 {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        if p.opcode() == RC_RDMA_WRITE_ONLY {
            assert_eq!(p.reth().unwrap().len(), 256);
            assert_eq!(p.payload_len(), 256);
        }
    }
}

#[test]
fn rc_read_request_and_responses() {
    let pkts = check_all("v4_rc_read", false);
    let ops = opcodes(&pkts);
    has_all(
        "v4_rc_read",
        &ops,
        &[
            RC_RDMA_READ_REQUEST,
            RC_RDMA_READ_RESPONSE_FIRST,
            RC_RDMA_READ_RESPONSE_MIDDLE,
            RC_RDMA_READ_RESPONSE_LAST,
        ],
    );
    for l3 in &pkts {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        match p.opcode() {
            RC_RDMA_READ_REQUEST => assert_eq!(p.reth().unwrap().len(), 2500),
            RC_RDMA_READ_RESPONSE_FIRST | RC_RDMA_READ_RESPONSE_LAST => assert!(p.aeth().is_some()),
            RC_RDMA_READ_RESPONSE_MIDDLE => assert!(p.aeth().is_none()),
            _ => {}
        }
    }
}

#[test]
fn rc_atomics() {
    let cs = check_all("v6_rc_atomic", true);
    has_all(
        "v6_rc_atomic",
        &opcodes(&cs),
        &[RC_COMPARE_SWAP, RC_ATOMIC_ACKNOWLEDGE],
    );
    let fa = check_all("v4_rc_fetch_add", false);
    has_all(
        "v4_rc_fetch_add",
        &opcodes(&fa),
        &[RC_FETCH_ADD, RC_ATOMIC_ACKNOWLEDGE],
    );
    for l3 in cs.iter().chain(fa.iter()) {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        match p.opcode() {
            RC_COMPARE_SWAP | RC_FETCH_ADD => assert_eq!(p.atmeth().unwrap().va() % 8, 0),
            RC_ATOMIC_ACKNOWLEDGE => assert!(p.aeth().is_some() && p.atmack().is_some()),
            _ => {}
        }
    }
}

#[test]
fn loss_produces_sequence_nak_and_retransmission() {
    let pkts = check_all("v4_rc_write_loss", false);
    let mut naks = 0;
    let mut psns = BTreeSet::new();
    let mut repeats = 0;
    for l3 in &pkts {
        let (p, _) = Packet::parse_l3(l3).unwrap();
        if p.opcode() == RC_ACKNOWLEDGE {
            if let Syndrome::Nak(NakCode::PsnSequenceError) = p.aeth().unwrap().syndrome() {
                naks += 1;
            }
        } else if p.info().is_request() && !psns.insert((p.dest_qpn(), p.psn().get())) {
            repeats += 1;
        }
    }
    assert!(naks > 0, "no PSN sequence error NAK in a lossy run");
    assert!(repeats > 0, "no retransmitted request PSN");
}
