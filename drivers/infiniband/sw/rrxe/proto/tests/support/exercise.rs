// SPDX-License-Identifier: GPL-2.0
//! Parse + validate driver shared by the fuzz target
//! (fuzz/fuzz_targets/parse_validate.rs) and tests/corpus.rs, so the seed
//! corpus is regression-tested by a plain `cargo test`.
//!
//! Feeds the input both as raw transport bytes (BTH .. ICRC) and as a full
//! L3 packet, checks the parser's invariants, verifies the ICRC in both
//! modes, and validates the packet against a spread of receive contexts.

use rrxe_proto::icrc::{icrc_verify_mode, IcrcMode, SoftCrc32};
use rrxe_proto::opcode::{RC_RDMA_WRITE_FIRST, RC_SEND_FIRST, UC_SEND_MIDDLE};
use rrxe_proto::qp_state::{QpState, QpType};
use rrxe_proto::validate::{validate, RecvContext, ValidateError};
use rrxe_proto::{Packet, ParseError, Psn};

/// What happened to one input, for tests to assert on.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Result of parsing the input as raw transport bytes.
    pub raw: Option<Result<(), ParseError>>,
    /// Result of parsing the input as an L3 packet.
    pub l3: Option<Result<(), ParseError>>,
    /// ICRC check (IBTA mode) of the L3 parse, when it parsed.
    pub icrc_ok: Option<bool>,
    /// Validation against an RC QP in RTS expecting the packet's PSN, when
    /// the L3 parse succeeded.
    pub rc_validate: Option<Result<(), ValidateError>>,
}

fn check_invariants(p: &Packet<'_>) {
    let i = p.info();
    assert_eq!(i.opcode(), p.opcode());
    assert_eq!(p.payload().len(), p.payload_len());
    assert_eq!(p.header_len() + p.payload_len() + p.pad() + 4, p.len());
    // Exactly the opcode's extension headers are reachable.
    assert_eq!(p.reth().is_some(), i.has(rrxe_proto::opcode::flags::RETH));
    assert_eq!(p.aeth().is_some(), i.has(rrxe_proto::opcode::flags::AETH));
    assert_eq!(p.deth().is_some(), i.has(rrxe_proto::opcode::flags::DETH));
    assert_eq!(
        p.atmeth().is_some(),
        i.has(rrxe_proto::opcode::flags::ATMETH)
    );
    let _ = (
        p.rdeth(),
        p.feth(),
        p.atmack(),
        p.immdt(),
        p.ieth(),
        p.icrc(),
    );
}

fn contexts(p: &Packet<'_>) -> impl Iterator<Item = RecvContext> {
    let psn = p.psn();
    let types = [
        QpType::Rc,
        QpType::Uc,
        QpType::Ud,
        QpType::Gsi,
        QpType::XrcTgt,
    ];
    let states = [QpState::Init, QpState::Rts];
    let mtus = [256u32, 4096];
    let prevs = [
        None,
        Some(RC_SEND_FIRST),
        Some(RC_RDMA_WRITE_FIRST),
        Some(UC_SEND_MIDDLE),
    ];
    let psns = [None, Some(psn), Some(psn.add(1)), Some(psn.sub(1))];
    let mut out = Vec::new();
    for qp_type in types {
        for qp_state in states {
            for pmtu in mtus {
                for prev_opcode in prevs {
                    for expected_psn in psns {
                        for access_flags in [0, !0] {
                            out.push(RecvContext {
                                qp_type,
                                qp_state,
                                pmtu,
                                pkey: 0xffff,
                                qkey: 0x1234,
                                access_flags,
                                expected_psn,
                                prev_opcode,
                            });
                        }
                    }
                }
            }
        }
    }
    out.into_iter()
}

fn validate_all(p: &Packet<'_>) {
    for ctx in contexts(p) {
        if let Err(e) = validate(p, &ctx) {
            let _ = e.disposition(ctx.qp_type, p.info().is_request());
        }
    }
}

/// Runs one input through everything; never panics unless an invariant of
/// the crate is broken.
pub fn exercise(data: &[u8]) -> Outcome {
    let mut out = Outcome::default();
    match Packet::parse(data) {
        Ok(p) => {
            check_invariants(&p);
            validate_all(&p);
            out.raw = Some(Ok(()));
        }
        Err(e) => out.raw = Some(Err(e)),
    }
    match Packet::parse_l3(data) {
        Ok((p, lay)) => {
            assert_eq!(p.len(), lay.roce_len);
            check_invariants(&p);
            validate_all(&p);
            out.icrc_ok = Some(icrc_verify_mode::<SoftCrc32>(data, IcrcMode::Ibta).is_ok());
            let _ = icrc_verify_mode::<SoftCrc32>(data, IcrcMode::RxeCompat);
            let rc = RecvContext {
                qp_type: QpType::Rc,
                qp_state: QpState::Rts,
                pmtu: 4096,
                pkey: 0xffff,
                qkey: 0,
                access_flags: !0,
                expected_psn: Some(p.psn()),
                prev_opcode: None,
            };
            out.rc_validate = Some(validate(&p, &rc).map(|_| ()));
            out.l3 = Some(Ok(()));
        }
        Err(e) => out.l3 = Some(Err(e)),
    }
    let _ = Psn::new(0);
    out
}
