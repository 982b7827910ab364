// SPDX-License-Identifier: GPL-2.0
//! Every `ValidateError` from a hand-built packet, the checks' order, and
//! the error -> disposition mapping.

mod common;

use common::roce;
use rrxe_proto::aeth::{Aeth, NakCode};
use rrxe_proto::atmeth::AtomicEth;
use rrxe_proto::bth::Bth;
use rrxe_proto::builder::ExtHeaders;
use rrxe_proto::deth::{Deth, GSI_QKEY};
use rrxe_proto::feth::{Feth, FLUSH_GLOBAL, FLUSH_PERSISTENT, FLUSH_RANGE};
use rrxe_proto::opcode::*;
use rrxe_proto::qp_state::{QpState, QpType};
use rrxe_proto::reth::Reth;
use rrxe_proto::validate::{
    access, check_length, check_op_seq, check_payload_fits, validate, Disposition, PsnClass,
    RecvContext, ValidateError as E,
};
use rrxe_proto::{Packet, Psn};

const ALL_ACCESS: u32 = access::REMOTE_WRITE
    | access::REMOTE_READ
    | access::REMOTE_ATOMIC
    | access::FLUSH_GLOBAL
    | access::FLUSH_PERSISTENT;

fn ctx(qp_type: QpType) -> RecvContext {
    RecvContext {
        qp_type,
        qp_state: QpState::Rts,
        pmtu: 256,
        pkey: 0xffff,
        qkey: 0x1234,
        access_flags: ALL_ACCESS,
        expected_psn: Some(Psn::new(100)),
        prev_opcode: None,
    }
}

fn bth(op: u8) -> Bth {
    Bth::new(op, 0x11, Psn::new(100))
}

fn reth(len: u32) -> ExtHeaders {
    ExtHeaders {
        reth: Some(Reth::new(0x1000, 1, len)),
        ..Default::default()
    }
}

fn ud(qkey: u32) -> ExtHeaders {
    ExtHeaders {
        deth: Some(Deth::new(qkey, 7)),
        ..Default::default()
    }
}

fn check(bytes: &[u8], c: &RecvContext) -> Result<PsnClass, E> {
    validate(&Packet::parse(bytes).expect("parse"), c)
}

fn none() -> ExtHeaders {
    ExtHeaders::default()
}

#[test]
fn good_packets_pass() {
    let c = ctx(QpType::Rc);
    assert_eq!(
        check(&roce(&bth(RC_SEND_ONLY), &none(), b"hi"), &c),
        Ok(PsnClass::InOrder)
    );
    assert_eq!(
        check(&roce(&bth(RC_SEND_FIRST), &none(), &[0; 256]), &c),
        Ok(PsnClass::InOrder)
    );
    assert_eq!(
        check(&roce(&bth(RC_RDMA_READ_REQUEST), &reth(1 << 31), b""), &c),
        Ok(PsnClass::InOrder)
    );
    let ack = ExtHeaders {
        aeth: Some(Aeth::new(0x1f, 1)),
        ..Default::default()
    };
    assert_eq!(
        check(&roce(&bth(RC_ACKNOWLEDGE), &ack, b""), &c),
        Ok(PsnClass::InOrder)
    );
    let u = ctx(QpType::Ud);
    assert_eq!(
        check(&roce(&bth(UD_SEND_ONLY), &ud(0x1234), &[0; 1000]), &u),
        Ok(PsnClass::InOrder)
    );
}

#[test]
fn header_errors() {
    let c = ctx(QpType::Rc);
    let mut p = roce(&bth(RC_SEND_ONLY), &none(), b"hi");
    p[1] |= 0x01;
    assert_eq!(check(&p, &c), Err(E::BadTransportVersion(1)));
    let p = roce(&Bth::new(RC_SEND_ONLY, 0, Psn::new(100)), &none(), b"");
    assert_eq!(check(&p, &c), Err(E::ZeroQpn));
    let ack = ExtHeaders {
        aeth: Some(Aeth::new(0x1f, 1)),
        ..Default::default()
    };
    let mut p = roce(&bth(RC_ACKNOWLEDGE), &ack, b"");
    p.extend_from_slice(&[0; 4]);
    assert_eq!(check(&p, &c), Err(E::UnexpectedPayload));
    let mut p = roce(&bth(RC_SEND_ONLY), &none(), b"hello"); // pad 3
    p.pop(); // 23 bytes: payload 4 + pad 3 is not a multiple of 4
    assert_eq!(check(&p, &c), Err(E::Misaligned));
}

#[test]
fn transport_and_state() {
    let p = roce(&bth(UC_SEND_ONLY), &none(), b"");
    assert_eq!(check(&p, &ctx(QpType::Rc)), Err(E::WrongTransport));
    let p = roce(&bth(RC_SEND_ONLY), &none(), b"");
    assert_eq!(check(&p, &ctx(QpType::Uc)), Err(E::WrongTransport));
    assert_eq!(check(&p, &ctx(QpType::RawPacket)), Err(E::WrongTransport));
    let rd = ExtHeaders {
        rdeth: Some(rrxe_proto::rdeth::Rdeth::new(1)),
        deth: Some(Deth::new(1, 1)),
        ..Default::default()
    };
    let p = roce(&bth(RD_SEND_ONLY), &rd, b"");
    assert_eq!(check(&p, &ctx(QpType::Rc)), Err(E::WrongTransport));
    assert_eq!(check(&p, &ctx(QpType::Ud)), Err(E::WrongTransport));

    // Requests need RTR, responses RTS; numeric order, so ERR passes (C).
    let req = roce(&bth(RC_SEND_ONLY), &none(), b"");
    let ack = ExtHeaders {
        aeth: Some(Aeth::new(0x1f, 1)),
        ..Default::default()
    };
    let resp = roce(&bth(RC_ACKNOWLEDGE), &ack, b"");
    for (state, req_ok, resp_ok) in [
        (QpState::Reset, false, false),
        (QpState::Init, false, false),
        (QpState::Rtr, true, false),
        (QpState::Rts, true, true),
        (QpState::Sqd, true, true),
        (QpState::Err, true, true),
    ] {
        let c = RecvContext {
            qp_state: state,
            ..ctx(QpType::Rc)
        };
        assert_eq!(check(&req, &c).is_ok(), req_ok, "{state:?}");
        assert_eq!(check(&resp, &c).is_ok(), resp_ok, "{state:?}");
        if !req_ok {
            assert_eq!(check(&req, &c), Err(E::QpNotReady));
        }
    }
}

#[test]
fn keys() {
    let c = ctx(QpType::Rc);
    let p = roce(&bth(RC_SEND_ONLY).with_pkey(0x7fff), &none(), b"");
    assert!(check(&p, &c).is_ok(), "limited member against full default");
    let c_limited = RecvContext { pkey: 0x7fff, ..c };
    assert_eq!(check(&p, &c_limited), Err(E::BadPkey(0x7fff)));
    let p = roce(&bth(RC_SEND_ONLY).with_pkey(0x8001), &none(), b"");
    assert_eq!(check(&p, &c), Err(E::BadPkey(0x8001)));

    let u = ctx(QpType::Ud);
    let p = roce(&bth(UD_SEND_ONLY), &ud(0x9999), b"");
    assert_eq!(check(&p, &u), Err(E::BadQkey(0x9999)));
    // QP1 always uses the GSI Q_Key.
    let g = ctx(QpType::Gsi);
    let p = roce(&Bth::new(UD_SEND_ONLY, 1, Psn::new(0)), &ud(GSI_QKEY), b"");
    assert_eq!(check(&p, &g), Ok(PsnClass::InOrder));
    let p = roce(&Bth::new(UD_SEND_ONLY, 1, Psn::new(0)), &ud(0x1234), b"");
    assert_eq!(check(&p, &g), Err(E::BadQkey(0x1234)));
}

#[test]
fn psn_classes() {
    let rc = ctx(QpType::Rc);
    let at = |psn: u32, op: u8| roce(&Bth::new(op, 0x11, Psn::new(psn)), &none(), &[0; 256]);
    assert_eq!(
        check(&at(101, RC_SEND_FIRST), &rc),
        Err(E::PsnOutOfSequence)
    );
    assert_eq!(check(&at(99, RC_SEND_FIRST), &rc), Ok(PsnClass::Duplicate));
    // Duplicates skip the sequence checks (a stray middle is fine).
    assert_eq!(check(&at(99, RC_SEND_MIDDLE), &rc), Ok(PsnClass::Duplicate));
    let uc = ctx(QpType::Uc);
    assert_eq!(
        check(&at(105, UC_SEND_MIDDLE), &uc),
        Err(E::PsnOutOfSequence)
    );
    assert_eq!(check(&at(105, UC_SEND_FIRST), &uc), Ok(PsnClass::Resync));
    let uc_mid = RecvContext {
        prev_opcode: Some(UC_SEND_FIRST),
        ..uc
    };
    // A resync starts a new message even if one was in progress.
    assert_eq!(
        check(&at(105, UC_SEND_FIRST), &uc_mid),
        Ok(PsnClass::Resync)
    );
    assert_eq!(check(&at(100, UC_SEND_FIRST), &uc_mid), Err(E::MissingLast));
    // PSN wrap: expected 0 after 0xffffff.
    let wrap = RecvContext {
        expected_psn: Some(Psn::new(0)),
        ..rc
    };
    assert_eq!(
        check(&at(0xff_ffff, RC_SEND_FIRST), &wrap),
        Ok(PsnClass::Duplicate)
    );
    let no_psn = RecvContext {
        expected_psn: None,
        ..rc
    };
    assert_eq!(
        check(&at(12345, RC_SEND_FIRST), &no_psn),
        Ok(PsnClass::InOrder)
    );
}

#[test]
fn op_sequence() {
    let mut c = ctx(QpType::Rc);
    let mid = roce(&bth(RC_SEND_MIDDLE), &none(), &[0; 256]);
    assert_eq!(check(&mid, &c), Err(E::MissingFirst));
    c.prev_opcode = Some(RC_SEND_FIRST);
    assert_eq!(check(&mid, &c), Ok(PsnClass::InOrder));
    let wr = roce(&bth(RC_RDMA_WRITE_MIDDLE), &none(), &[0; 256]);
    assert_eq!(check(&wr, &c), Err(E::MissingLast));
    for (t, prev, op, want) in [
        (
            QpType::Rc,
            Some(RC_SEND_MIDDLE),
            RC_SEND_LAST_WITH_INVALIDATE,
            Ok(()),
        ),
        (
            QpType::Rc,
            Some(RC_RDMA_WRITE_FIRST),
            RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
            Ok(()),
        ),
        (
            QpType::Rc,
            Some(RC_RDMA_WRITE_FIRST),
            RC_RDMA_READ_REQUEST,
            Err(E::MissingLast),
        ),
        (
            QpType::Rc,
            Some(RC_SEND_ONLY),
            RC_SEND_LAST,
            Err(E::MissingFirst),
        ),
        (QpType::Rc, None, RC_FETCH_ADD, Ok(())),
        (
            QpType::Uc,
            Some(UC_SEND_FIRST),
            UC_SEND_LAST_WITH_IMMEDIATE,
            Ok(()),
        ),
        (
            QpType::Uc,
            Some(UC_SEND_FIRST),
            UC_RDMA_WRITE_LAST,
            Err(E::MissingLast),
        ),
        (QpType::Uc, None, UC_RDMA_WRITE_MIDDLE, Err(E::MissingFirst)),
        (QpType::Ud, Some(UD_SEND_ONLY), UD_SEND_ONLY, Ok(())),
    ] {
        assert_eq!(check_op_seq(t, prev, op), want, "{t:?} {prev:?} {op:#x}");
    }
}

#[test]
fn access_flags() {
    let c = RecvContext {
        access_flags: 0,
        ..ctx(QpType::Rc)
    };
    for p in [
        roce(&bth(RC_RDMA_READ_REQUEST), &reth(8), b""),
        roce(&bth(RC_RDMA_WRITE_ONLY), &reth(8), &[0; 8]),
        roce(&bth(RC_ATOMIC_WRITE), &reth(8), &[0; 8]),
        roce(
            &bth(RC_FETCH_ADD),
            &ExtHeaders {
                atmeth: Some(AtomicEth::new(0x1000, 1, 1, 0)),
                ..Default::default()
            },
            b"",
        ),
    ] {
        assert_eq!(check(&p, &c), Err(E::AccessDenied));
    }
    let flush = |plt| {
        roce(
            &bth(RC_FLUSH),
            &ExtHeaders {
                feth: Some(Feth::new(plt, FLUSH_RANGE)),
                reth: Some(Reth::new(0, 1, 64)),
                ..Default::default()
            },
            b"",
        )
    };
    let only_global = RecvContext {
        access_flags: access::FLUSH_GLOBAL,
        ..c
    };
    assert_eq!(
        check(&flush(FLUSH_GLOBAL), &only_global),
        Ok(PsnClass::InOrder)
    );
    assert_eq!(
        check(&flush(FLUSH_PERSISTENT), &only_global),
        Err(E::AccessDenied)
    );
    // SEND needs no access flag; UC checks only WRITE.
    assert!(check(&roce(&bth(RC_SEND_ONLY), &none(), b""), &c).is_ok());
    let uc = RecvContext {
        access_flags: 0,
        ..ctx(QpType::Uc)
    };
    assert_eq!(
        check(&roce(&bth(UC_RDMA_WRITE_ONLY), &reth(1), b"x"), &uc),
        Err(E::AccessDenied)
    );
}

#[test]
fn lengths() {
    let c = ctx(QpType::Rc);
    let p = |op, n: usize| roce(&bth(op), &none(), &vec![0; n]);
    assert_eq!(check(&p(RC_SEND_FIRST, 252), &c), Err(E::Length));
    assert_eq!(check(&p(RC_SEND_ONLY, 257), &c), Err(E::Length));
    assert_eq!(check(&p(RC_SEND_ONLY, 0), &c), Ok(PsnClass::InOrder));
    let mid = RecvContext {
        prev_opcode: Some(RC_SEND_FIRST),
        ..c
    };
    assert_eq!(check(&p(RC_SEND_MIDDLE, 260), &mid), Err(E::Length));
    assert_eq!(check(&p(RC_SEND_LAST, 0), &mid), Err(E::Length));
    assert_eq!(check(&p(RC_SEND_LAST, 1), &mid), Ok(PsnClass::InOrder));
    assert_eq!(check(&p(RC_SEND_LAST, 257), &mid), Err(E::Length));
    let big = roce(&bth(RC_RDMA_READ_REQUEST), &reth((1 << 31) + 1), b"");
    assert_eq!(check(&big, &c), Err(E::Length));
    let aw = roce(&bth(RC_ATOMIC_WRITE), &reth(8), &[0; 4]);
    assert_eq!(check(&aw, &c), Err(E::Length));
    let aw = roce(&bth(RC_ATOMIC_WRITE), &reth(8), &[0; 8]);
    assert_eq!(check(&aw, &c), Ok(PsnClass::InOrder));
    let cs = |va| {
        roce(
            &bth(RC_COMPARE_SWAP),
            &ExtHeaders {
                atmeth: Some(AtomicEth::new(va, 1, 1, 2)),
                ..Default::default()
            },
            b"",
        )
    };
    assert_eq!(check(&cs(0x1004), &c), Err(E::MisalignedAtomic));
    assert_eq!(check(&cs(0x1008), &c), Ok(PsnClass::InOrder));
    // UD is bounded by the receive buffer, not the PMTU (as in C).
    let ud_big = roce(&bth(UD_SEND_ONLY), &ud(0x1234), &[0; 2000]);
    assert_eq!(
        check_length(&Packet::parse(&ud_big).unwrap(), QpType::Ud, 256),
        Ok(())
    );
}

/// The receive path's bound, checked before queueing: payload up to the
/// limit, whatever the opcode (the exact PMTU rules come later).
#[test]
fn payload_fits_the_receive_path_limit() {
    let fits = |op, ext: &ExtHeaders, n: usize, limit| {
        check_payload_fits(
            &Packet::parse(&roce(&bth(op), ext, &vec![0; n])).unwrap(),
            limit,
        )
    };
    assert_eq!(fits(RC_SEND_ONLY, &none(), 1024, 1024), Ok(()));
    assert_eq!(fits(RC_SEND_ONLY, &none(), 1025, 1024), Err(E::Length));
    assert_eq!(fits(RC_RDMA_WRITE_FIRST, &reth(8192), 1024, 1024), Ok(()));
    assert_eq!(fits(RC_SEND_MIDDLE, &none(), 4096, 1024), Err(E::Length));
    assert_eq!(fits(UD_SEND_ONLY, &ud(1), 4096, 4096), Ok(()));
    assert_eq!(fits(UD_SEND_ONLY, &ud(1), 4097, 4096), Err(E::Length));
    assert_eq!(fits(UD_SEND_ONLY, &ud(1), 60000, 4096), Err(E::Length));
    assert_eq!(
        fits(
            RC_ACKNOWLEDGE,
            &ExtHeaders {
                aeth: Some(Aeth::new(0, 0)),
                ..none()
            },
            0,
            256
        ),
        Ok(())
    );
}

#[test]
fn dispositions_follow_c_classes() {
    let nak = |code, fatal| Disposition::Nak { code, fatal };
    let inv = nak(NakCode::InvalidRequest, true);
    let table = [
        (
            E::PsnOutOfSequence,
            nak(NakCode::PsnSequenceError, false),
            Disposition::DropMessage,
        ),
        (E::MissingFirst, inv, Disposition::DropMessage),
        (E::MissingLast, inv, Disposition::AbortMessage),
        (E::AccessDenied, inv, Disposition::DropMessage),
        (E::Length, inv, Disposition::DropMessage),
        (E::MisalignedAtomic, inv, Disposition::Drop),
        (
            E::BadTransportVersion(1),
            Disposition::Drop,
            Disposition::Drop,
        ),
        (E::ZeroQpn, Disposition::Drop, Disposition::Drop),
        (E::UnexpectedPayload, Disposition::Drop, Disposition::Drop),
        (E::Misaligned, Disposition::Drop, Disposition::Drop),
        (E::WrongTransport, Disposition::Drop, Disposition::Drop),
        (E::QpNotReady, Disposition::Drop, Disposition::Drop),
        (E::BadPkey(1), Disposition::Drop, Disposition::Drop),
        (E::BadQkey(1), Disposition::Drop, Disposition::Drop),
    ];
    for (e, rc, uc) in table {
        assert_eq!(e.disposition(QpType::Rc, true), rc, "{e:?} RC");
        assert_eq!(e.disposition(QpType::Uc, true), uc, "{e:?} UC");
        assert_eq!(
            e.disposition(QpType::Ud, true),
            Disposition::Drop,
            "{e:?} UD"
        );
        assert_eq!(
            e.disposition(QpType::Gsi, true),
            Disposition::Drop,
            "{e:?} GSI"
        );
        assert_eq!(
            e.disposition(QpType::Rc, false),
            Disposition::Drop,
            "{e:?} response"
        );
    }
}
