// SPDX-License-Identifier: GPL-2.0
//! Property tests: build -> parse round trips for every opcode over IPv4 and
//! IPv6, ICRC fill/verify, masked fields, and corruption detection.

mod common;

use common::{l3v4, l3v6, FastCrc};
use proptest::prelude::*;
use rrxe_proto::aeth::Aeth;
use rrxe_proto::atmack::AtomicAck;
use rrxe_proto::atmeth::AtomicEth;
use rrxe_proto::bth::Bth;
use rrxe_proto::builder::{build_packet, packet_len, pad_for, ExtHeaders};
use rrxe_proto::deth::Deth;
use rrxe_proto::feth::Feth;
use rrxe_proto::icrc::{icrc_verify, IcrcError};
use rrxe_proto::ieth::Ieth;
use rrxe_proto::immdt::Immdt;
use rrxe_proto::opcode::{all_opcodes, ExtHeader};
use rrxe_proto::rdeth::Rdeth;
use rrxe_proto::reth::Reth;
use rrxe_proto::{Header, Packet, Psn};

#[derive(Debug, Clone)]
struct Fields {
    op_index: usize,
    qpn: u32,
    psn: u32,
    pkey: u16,
    se: bool,
    mig: bool,
    ack: bool,
    words: [u64; 4],
    payload: Vec<u8>,
    v6: bool,
    tos: u8,
    ttl: u8,
    flow: u32,
}

fn fields() -> impl Strategy<Value = Fields> {
    (
        (
            0..all_opcodes().count(),
            any::<u32>(),
            any::<u32>(),
            any::<u16>(),
        ),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        any::<[u64; 4]>(),
        proptest::collection::vec(any::<u8>(), 0..600),
        (any::<bool>(), any::<u8>(), any::<u8>(), any::<u32>()),
    )
        .prop_map(
            |((op_index, qpn, psn, pkey), (se, mig, ack), words, payload, (v6, tos, ttl, flow))| {
                Fields {
                    op_index,
                    qpn,
                    psn,
                    pkey,
                    se,
                    mig,
                    ack,
                    words,
                    payload,
                    v6,
                    tos,
                    ttl,
                    flow,
                }
            },
        )
}

fn ext_for(flags_of: impl Fn(ExtHeader) -> bool, w: &[u64; 4]) -> ExtHeaders {
    let lo = |x: u64| x as u32;
    fn on<T>(present: bool, v: T) -> Option<T> {
        if present {
            Some(v)
        } else {
            None
        }
    }
    ExtHeaders {
        rdeth: on(flags_of(ExtHeader::Rdeth), Rdeth::new(lo(w[0]))),
        deth: on(flags_of(ExtHeader::Deth), Deth::new(lo(w[1]), lo(w[2]))),
        feth: on(
            flags_of(ExtHeader::Feth),
            Feth::new(lo(w[3]), lo(w[0] >> 32)),
        ),
        reth: on(
            flags_of(ExtHeader::Reth),
            Reth::new(w[0], lo(w[1]), lo(w[2])),
        ),
        atmeth: on(
            flags_of(ExtHeader::AtmEth),
            AtomicEth::new(w[0], lo(w[1]), w[2], w[3]),
        ),
        aeth: on(
            flags_of(ExtHeader::Aeth),
            Aeth::new((w[3] >> 56) as u8, lo(w[3])),
        ),
        atmack: on(flags_of(ExtHeader::AtmAck), AtomicAck::new(w[2])),
        immdt: on(flags_of(ExtHeader::Immdt), Immdt::from_u32(lo(w[1] >> 16))),
        ieth: on(flags_of(ExtHeader::Ieth), Ieth::new(lo(w[3] >> 8))),
    }
}

fn build(f: &Fields) -> (Vec<u8>, Bth, ExtHeaders, Vec<u8>) {
    let info = all_opcodes().nth(f.op_index).unwrap();
    let payload = if info.has_payload() {
        f.payload.clone()
    } else {
        Vec::new()
    };
    let mut bth = Bth::new(info.opcode(), f.qpn, Psn::new(f.psn))
        .with_pkey(f.pkey)
        .with_se(f.se)
        .with_mig(f.mig)
        .with_ack_req(f.ack);
    bth.clear_reserved();
    let ext = ext_for(|h| info.offset(h).is_some(), &f.words);
    let len = packet_len(info.opcode(), payload.len()).unwrap();
    let mut buf = vec![0xa5u8; len + 8];
    assert_eq!(build_packet(&mut buf, &bth, &ext, &payload), Ok(len));
    buf.truncate(len);
    (buf, bth, ext, payload)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn build_parse_round_trip(f in fields()) {
        let (roce, bth, ext, payload) = build(&f);
        let l3 = if f.v6 {
            l3v6(&roce, f.tos, f.flow & 0xf_ffff, f.ttl, 0xc000)
        } else {
            l3v4(&roce, f.tos, f.ttl, 0x1234, 0xc000)
        };
        let (pkt, lay) = Packet::parse_l3(&l3).unwrap();
        prop_assert_eq!(lay.roce_len, roce.len());
        prop_assert_eq!(&pkt.bytes()[..roce.len() - 4], &roce[..roce.len() - 4]);
        let b = pkt.bth();
        prop_assert_eq!(b.opcode(), bth.opcode());
        prop_assert_eq!(b.qpn(), f.qpn & 0xff_ffff);
        prop_assert_eq!(b.psn(), Psn::new(f.psn));
        prop_assert_eq!(b.pkey(), f.pkey);
        prop_assert_eq!((b.se(), b.mig(), b.ack_req(), b.tver()), (f.se, f.mig, f.ack, 0));
        prop_assert_eq!(usize::from(b.pad()), usize::from(pad_for(payload.len())));
        prop_assert_eq!(pkt.payload(), &payload[..]);
        prop_assert_eq!(pkt.rdeth().copied(), ext.rdeth);
        prop_assert_eq!(pkt.deth().copied(), ext.deth);
        prop_assert_eq!(pkt.feth().copied(), ext.feth);
        prop_assert_eq!(pkt.reth().copied(), ext.reth);
        prop_assert_eq!(pkt.atmeth().copied(), ext.atmeth);
        prop_assert_eq!(pkt.aeth().copied(), ext.aeth);
        prop_assert_eq!(pkt.atmack().copied(), ext.atmack);
        prop_assert_eq!(pkt.immdt().copied(), ext.immdt);
        prop_assert_eq!(pkt.ieth().copied(), ext.ieth);
        prop_assert_eq!(icrc_verify::<FastCrc>(&l3), Ok(()));
        prop_assert_eq!(&pkt.icrc().to_le_bytes()[..], &l3[l3.len() - 4..]);
    }

    #[test]
    fn corruption_is_detected_and_masks_are_ignored(f in fields(), pos in any::<prop::sample::Index>(), bit in 0u8..8) {
        let (roce, _, _, _) = build(&f);
        let l3 = if f.v6 {
            l3v6(&roce, f.tos, f.flow & 0xf_ffff, f.ttl, 0xc000)
        } else {
            l3v4(&roce, f.tos, f.ttl, 0x1234, 0xc000)
        };
        let ip_len = if f.v6 { 40 } else { 20 };
        // Variant fields: any value keeps the ICRC valid.
        let masked: &[usize] = if f.v6 { &[1, 2, 3, 7, 46, 47, 52] } else { &[1, 8, 10, 11, 26, 27, 32] };
        let mut m = l3.clone();
        for &i in masked {
            m[i] ^= 0x5a;
        }
        m[0] ^= if f.v6 { 0x0f } else { 0 };
        prop_assert_eq!(icrc_verify::<FastCrc>(&m), Ok(()));
        // Any other single-bit flip outside the IP length / UDP length
        // fields (which move the packet) breaks it.
        let i = pos.index(l3.len());
        let framing = if f.v6 { i == 0 || (4..=6).contains(&i) } else { i < 4 || i == 9 };
        let udp_len = (ip_len + 4..ip_len + 6).contains(&i);
        prop_assume!(!(masked.contains(&i) || framing || udp_len));
        let mut c = l3.clone();
        c[i] ^= 1 << bit;
        let r = icrc_verify::<FastCrc>(&c);
        prop_assert!(matches!(r, Err(IcrcError::Mismatch { .. })), "byte {} bit {}: {:?}", i, bit, r);
    }

    #[test]
    fn bth_setters_round_trip(op in any::<u8>(), qpn in any::<u32>(), psn in any::<u32>(), pad in 0u8..4, tver in 0u8..16, fecn in any::<bool>(), becn in any::<bool>()) {
        let mut b = Bth::new(0, 0, Psn::new(0));
        b.set_opcode(op);
        b.set_qpn(qpn);
        b.set_psn(Psn::new(psn));
        b.set_pad(pad);
        b.set_tver(tver);
        b.set_fecn(fecn);
        b.set_becn(becn);
        let mut buf = [0u8; 12];
        b.emit(&mut buf).unwrap();
        let (p, _) = Bth::parse(&buf).unwrap();
        prop_assert_eq!((p.opcode(), p.qpn(), p.psn().get()), (op, qpn & 0xff_ffff, psn & 0xff_ffff));
        prop_assert_eq!((p.pad(), p.tver(), p.fecn(), p.becn()), (pad, tver, fecn, becn));
    }

    #[test]
    fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Packet::parse(&bytes);
        let _ = Packet::parse_l3(&bytes);
        let _ = rrxe_proto::icrc::icrc_verify::<rrxe_proto::icrc::SoftCrc32>(&bytes);
    }
}
