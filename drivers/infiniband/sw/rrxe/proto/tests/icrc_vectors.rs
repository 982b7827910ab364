// SPDX-License-Identifier: GPL-2.0
//! ICRC known answers: a hardware capture, scapy's example, and packets
//! built by the independent Python generator (tests/vectors/gen_icrc.py);
//! plus the builders reproducing the generator's packets byte for byte.

mod common;

use common::{l3v4, l3v6, roce, vectors, FastCrc};
use rrxe_proto::aeth::Aeth;
use rrxe_proto::atmeth::AtomicEth;
use rrxe_proto::bth::Bth;
use rrxe_proto::builder::ExtHeaders;
use rrxe_proto::deth::{Deth, GSI_QKEY};
use rrxe_proto::feth::{Feth, FLUSH_GLOBAL, FLUSH_RANGE};
use rrxe_proto::icrc::{
    icrc_compute_mode, icrc_verify, icrc_verify_mode, Crc32, IcrcError, IcrcMode, SoftCrc32,
    ICRC_SEED,
};
use rrxe_proto::immdt::Immdt;
use rrxe_proto::opcode::*;
use rrxe_proto::reth::Reth;
use rrxe_proto::Psn;

fn mode(m: &str) -> IcrcMode {
    match m {
        "ibta" => IcrcMode::Ibta,
        "rxe" => IcrcMode::RxeCompat,
        other => panic!("unknown mode {other}"),
    }
}

#[test]
fn crc32fast_adapter_matches_kernel_semantics() {
    assert_eq!(!FastCrc::crc32_le(!0, b"123456789"), 0xcbf4_3926);
    assert_eq!(FastCrc::crc32_le(!0, &[0xff; 8]), ICRC_SEED);
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
    for seed in [0, 1, !0, 0xdead_beef] {
        assert_eq!(
            FastCrc::crc32_le(seed, &data),
            SoftCrc32::crc32_le(seed, &data)
        );
        let chained = FastCrc::crc32_le(FastCrc::crc32_le(seed, &data[..333]), &data[333..]);
        assert_eq!(chained, FastCrc::crc32_le(seed, &data));
    }
}

#[test]
fn all_vectors_verify_with_both_crcs() {
    let vs = vectors();
    assert!(vs.len() >= 9);
    for v in &vs {
        let m = mode(&v.mode);
        let want = u32::from_le_bytes(v.icrc_wire.clone().try_into().unwrap());
        assert_eq!(
            icrc_compute_mode::<SoftCrc32>(&v.packet, m),
            Ok(want),
            "{}",
            v.name
        );
        assert_eq!(
            icrc_compute_mode::<FastCrc>(&v.packet, m),
            Ok(want),
            "{}",
            v.name
        );
        assert_eq!(
            icrc_verify_mode::<FastCrc>(&v.packet, m),
            Ok(()),
            "{}",
            v.name
        );
    }
}

#[test]
fn hardware_capture() {
    let v = vectors()
        .into_iter()
        .find(|v| v.name == "cx4lx_cnp_capture")
        .unwrap();
    assert_eq!(v.icrc_wire, [0x82, 0xfd, 0x00, 0x2a]);
    assert_eq!(icrc_verify::<FastCrc>(&v.packet), Ok(()));
    let mut bad = v.packet.clone();
    bad[40] ^= 1; // a CNP padding byte: covered
    assert!(matches!(
        icrc_verify::<FastCrc>(&bad),
        Err(IcrcError::Mismatch { .. })
    ));
    let mut masked = v.packet.clone();
    masked[8] = 1; // TTL: masked
    masked[1] = 0; // TOS: masked
    masked[10] ^= 0xff; // IP checksum: masked
    masked[26] = 0x12; // UDP checksum: masked
    masked[32] |= 0x80; // FECN: masked
    assert_eq!(icrc_verify::<FastCrc>(&masked), Ok(()));
}

#[test]
fn flush_modes_differ() {
    let vs = vectors();
    let ibta = vs
        .iter()
        .find(|v| v.name == "v4_rc_flush" && v.mode == "ibta")
        .unwrap();
    let rxe = vs
        .iter()
        .find(|v| v.name == "v4_rc_flush" && v.mode == "rxe")
        .unwrap();
    assert_ne!(ibta.icrc_wire, rxe.icrc_wire);
    assert!(icrc_verify_mode::<FastCrc>(&rxe.packet, IcrcMode::Ibta).is_err());
    assert!(icrc_verify_mode::<FastCrc>(&ibta.packet, IcrcMode::RxeCompat).is_err());
    // For every other opcode the modes agree.
    for v in vs.iter().filter(|v| v.name != "v4_rc_flush") {
        assert_eq!(
            icrc_verify_mode::<FastCrc>(&v.packet, IcrcMode::RxeCompat),
            Ok(()),
            "{}",
            v.name
        );
    }
}

fn vector(name: &str) -> Vec<u8> {
    vectors()
        .into_iter()
        .find(|v| v.name == name && v.mode == "ibta")
        .unwrap()
        .packet
}

#[test]
fn builders_reproduce_generator_packets() {
    let b = Bth::new(RC_SEND_ONLY, 0x11, Psn::new(0x100))
        .with_se(true)
        .with_ack_req(true);
    let p = l3v4(
        &roce(&b, &ExtHeaders::default(), b"hello"),
        0x02,
        64,
        0x1234,
        0xc000,
    );
    assert_eq!(p, vector("v4_rc_send_only"));

    let b = Bth::new(RC_RDMA_WRITE_FIRST, 0x123456, Psn::new(0xff_fffe));
    let ext = ExtHeaders {
        reth: Some(Reth::new(0x0000_7f00_1234_5000, 0xabcd, 1024)),
        ..Default::default()
    };
    let pay: Vec<u8> = (0..256u32).map(|i| i as u8).collect();
    let p = l3v6(&roce(&b, &ext, &pay), 0x68, 0x12345, 64, 0xc123);
    assert_eq!(p, vector("v6_rc_write_first"));

    let b = Bth::new(UD_SEND_ONLY_WITH_IMMEDIATE, 1, Psn::new(7)).with_becn(true);
    let mut b = b;
    b.set_fecn(true);
    let ext = ExtHeaders {
        deth: Some(Deth::new(GSI_QKEY, 1)),
        immdt: Some(Immdt::from_u32(0xdead_beef)),
        ..Default::default()
    };
    let p = l3v4(&roce(&b, &ext, b"payload"), 0x03, 1, 0x1234, 0xc000);
    assert_eq!(p, vector("v4_ud_send_imm_ecn"));

    let b = Bth::new(RC_ACKNOWLEDGE, 0x11, Psn::new(0x100));
    let ext = ExtHeaders {
        aeth: Some(Aeth::new(0x1f, 5)),
        ..Default::default()
    };
    let p = l3v4(&roce(&b, &ext, b""), 0, 64, 0x1234, 0xc000);
    assert_eq!(p, vector("v4_rc_ack"));

    let b = Bth::new(RC_COMPARE_SWAP, 0x22, Psn::new(9)).with_ack_req(true);
    let ext = ExtHeaders {
        atmeth: Some(AtomicEth::new(0x1000, 0x42, 0x1111, 0x2222)),
        ..Default::default()
    };
    let p = l3v6(&roce(&b, &ext, b""), 0, 0, 64, 0xc000);
    assert_eq!(p, vector("v6_rc_cmp_swap"));

    let b = Bth::new(RC_FLUSH, 0x33, Psn::new(10)).with_ack_req(true);
    let ext = ExtHeaders {
        feth: Some(Feth::new(FLUSH_GLOBAL, FLUSH_RANGE)),
        reth: Some(Reth::new(0x2000, 7, 64)),
        ..Default::default()
    };
    let p = l3v4(&roce(&b, &ext, b""), 0, 64, 0x1234, 0xc000);
    assert_eq!(p, vector("v4_rc_flush"));
}
