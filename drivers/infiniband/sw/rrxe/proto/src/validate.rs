// SPDX-License-Identifier: GPL-2.0
//! Checks on a received packet before it touches any QP state, each
//! returning a typed [`ValidateError`] that [`ValidateError::disposition`]
//! maps to what the receiver must do: drop silently, drop the rest of the
//! message, or answer with a NAK (and whether that NAK is fatal to the QP).
//!
//! The checks and their order follow C rxe: `rxe_rcv()`/`hdr_check()`
//! (transport version, QPN, QP type vs opcode, QP state, P_Key, Q_Key), then
//! the responder's `check_psn()`, `check_op_seq()`, `check_op_valid()` and
//! `rxe_resp_check_length()` (plus the length rules C applies later in
//! `check_rkey()` for ATOMIC WRITE and atomics).  Added by this crate, per
//! IBTA: an opcode without payload must carry none, and payload + pad must
//! be a multiple of 4; both are silent drops.
//!
//! State that only the caller has (the UC "drop rest of message" flag, the
//! RC "PSN NAK already sent" flag, receive-queue and rkey resources) stays
//! with the caller; see the notes on each item.

use super::aeth::NakCode;
use super::bth::BTH_TVER;
use super::deth::GSI_QKEY;
use super::feth::{FLUSH_GLOBAL, FLUSH_PERSISTENT};
use super::opcode::{flags, opcode_info, Transport};
use super::packet::Packet;
use super::psn::{psn_compare, Psn};
use super::qp_state::{QpState, QpType};
use super::reth::RETH_MAX_DMA_LEN;

/// `enum ib_access_flags` bits the receive checks look at.
pub mod access {
    /// `IB_ACCESS_REMOTE_WRITE`.
    pub const REMOTE_WRITE: u32 = 1 << 1;
    /// `IB_ACCESS_REMOTE_READ`.
    pub const REMOTE_READ: u32 = 1 << 2;
    /// `IB_ACCESS_REMOTE_ATOMIC`.
    pub const REMOTE_ATOMIC: u32 = 1 << 3;
    /// `IB_ACCESS_FLUSH_GLOBAL`.
    pub const FLUSH_GLOBAL: u32 = 1 << 8;
    /// `IB_ACCESS_FLUSH_PERSISTENT`.
    pub const FLUSH_PERSISTENT: u32 = 1 << 9;
}

/// A reason to reject a received packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValidateError {
    /// BTH transport version is not 0.
    BadTransportVersion(u8),
    /// Destination QPN 0 (never valid on RoCE).
    ZeroQpn,
    /// Payload or pad on an opcode that carries no payload.
    UnexpectedPayload,
    /// Payload + pad is not a multiple of 4.
    Misaligned,
    /// Opcode transport does not match the QP type (or the QP type cannot
    /// receive at all).
    WrongTransport,
    /// QP not in a state that accepts this packet (requests need RTR or
    /// later, responses RTS or later, in `enum ib_qp_state` order).
    QpNotReady,
    /// P_Key does not match the port's.
    BadPkey(u16),
    /// Q_Key does not match the QP's (UD/GSI).
    BadQkey(u32),
    /// PSN ahead of the expected one (RC), or a UC packet that is not the
    /// start of a message at an unexpected PSN.
    PsnOutOfSequence,
    /// A middle/last packet with no message in progress.
    MissingFirst,
    /// A message in progress was not continued.
    MissingLast,
    /// The operation is not enabled by the QP's access flags.
    AccessDenied,
    /// Payload length against PMTU/opcode, RETH DMA length above 2^31, or an
    /// ATOMIC WRITE that is not exactly 8 bytes.
    Length,
    /// Atomic target address not 8-byte aligned.
    MisalignedAtomic,
}

/// What the receiver must do about a rejected packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Discard the packet silently.
    Drop,
    /// Discard this packet and the rest of its message (UC/UD class D:
    /// C sets `resp.drop_msg`).  With an SRQ, C completes the receive WQE
    /// in error instead (class E); that choice needs SRQ state.
    DropMessage,
    /// UC class D1: abandon the message in progress (rewind its receive
    /// WQE) and discard this packet.
    AbortMessage,
    /// RC: send a NAK with this code for the expected PSN.  `fatal` (class
    /// A/C) means the responder then moves the QP to the error state; a
    /// PSN sequence NAK (class B) is not fatal and is sent only once per
    /// sequence error.
    Nak {
        /// NAK code for the AETH.
        code: NakCode,
        /// The QP goes to the error state afterwards.
        fatal: bool,
    },
}

impl ValidateError {
    /// The action for this error on a QP of type `qp_type`; `is_request`
    /// tells whether the packet went to the responder (only requests are
    /// ever NAKed; a bad response is dropped and left to the retry timer).
    pub fn disposition(self, qp_type: QpType, is_request: bool) -> Disposition {
        use ValidateError::*;
        let fatal_nak = Disposition::Nak {
            code: NakCode::InvalidRequest,
            fatal: true,
        };
        match self {
            BadTransportVersion(_)
            | ZeroQpn
            | UnexpectedPayload
            | Misaligned
            | WrongTransport
            | QpNotReady
            | BadPkey(_)
            | BadQkey(_) => Disposition::Drop,
            _ if !is_request => Disposition::Drop,
            PsnOutOfSequence => match qp_type {
                QpType::Rc => Disposition::Nak {
                    code: NakCode::PsnSequenceError,
                    fatal: false,
                },
                QpType::Uc => Disposition::DropMessage,
                _ => Disposition::Drop,
            },
            MissingLast => match qp_type {
                QpType::Rc => fatal_nak,
                QpType::Uc => Disposition::AbortMessage,
                _ => Disposition::Drop,
            },
            MissingFirst | AccessDenied | Length => match qp_type {
                QpType::Rc => fatal_nak,
                QpType::Uc => Disposition::DropMessage,
                _ => Disposition::Drop,
            },
            MisalignedAtomic => match qp_type {
                QpType::Rc => fatal_nak,
                _ => Disposition::Drop,
            },
        }
    }
}

/// How a request's PSN relates to the expected PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsnClass {
    /// The expected PSN (or a UD packet, which has no sequence).
    InOrder,
    /// RC: an earlier PSN, a retransmission to answer from history.
    Duplicate,
    /// UC: an unexpected PSN on the first packet of a message; accept it
    /// and resynchronise the expected PSN.
    Resync,
}

/// The receive-side context of the destination QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvContext {
    /// QP type.
    pub qp_type: QpType,
    /// Current QP state.
    pub qp_state: QpState,
    /// Path MTU in bytes (256..=4096).
    pub pmtu: u32,
    /// P_Key to match (C rxe uses the default 0xffff).
    pub pkey: u16,
    /// The QP's Q_Key (UD; QP1 always uses [`GSI_QKEY`]).
    pub qkey: u32,
    /// The QP's `qp_access_flags` ([`access`] bits).
    pub access_flags: u32,
    /// Next expected request PSN; `None` skips the PSN check.
    pub expected_psn: Option<Psn>,
    /// Opcode of the last request accepted (C `resp.opcode`); `None` when
    /// no message is in progress.
    pub prev_opcode: Option<u8>,
}

/// C `pkey_match()`: same partition (low 15 bits, not 0) and at least one
/// full member.
pub const fn pkey_match(a: u16, b: u16) -> bool {
    let (pa, pb) = (a & 0x7fff, b & 0x7fff);
    pa != 0 && pa == pb && (a & 0x8000 != 0 || b & 0x8000 != 0)
}

/// Header-level sanity: transport version, QPN, payload/pad consistency.
pub fn check_header(pkt: &Packet<'_>) -> Result<(), ValidateError> {
    let bth = pkt.bth();
    if bth.tver() != BTH_TVER {
        return Err(ValidateError::BadTransportVersion(bth.tver()));
    }
    if bth.qpn() == 0 {
        return Err(ValidateError::ZeroQpn);
    }
    if !pkt.info().has_payload() && (pkt.payload_len() != 0 || pkt.pad() != 0) {
        return Err(ValidateError::UnexpectedPayload);
    }
    if (pkt.payload_len() + pkt.pad()) % 4 != 0 {
        return Err(ValidateError::Misaligned);
    }
    Ok(())
}

/// C `check_type_state()`: opcode transport vs QP type, and QP state.
pub fn check_type_state(
    pkt: &Packet<'_>,
    qp_type: QpType,
    state: QpState,
) -> Result<(), ValidateError> {
    let want = match qp_type {
        QpType::Rc => Transport::Rc,
        QpType::Uc => Transport::Uc,
        QpType::Ud | QpType::Gsi => Transport::Ud,
        _ => return Err(ValidateError::WrongTransport),
    };
    if pkt.info().transport() != want {
        return Err(ValidateError::WrongTransport);
    }
    let min = if pkt.info().is_request() {
        QpState::Rtr
    } else {
        QpState::Rts
    };
    if state.raw() < min.raw() {
        return Err(ValidateError::QpNotReady);
    }
    Ok(())
}

/// The P_Key half of [`check_keys`] (what the receive path can check
/// before it holds the QP's Q_Key).
pub fn check_pkey(pkt: &Packet<'_>, pkey: u16) -> Result<(), ValidateError> {
    let pk = pkt.bth().pkey();
    if !pkey_match(pk, pkey) {
        return Err(ValidateError::BadPkey(pk));
    }
    Ok(())
}

/// C `check_keys()`: P_Key always, Q_Key for UD/GSI (QP1 uses
/// [`GSI_QKEY`]).
pub fn check_keys(
    pkt: &Packet<'_>,
    qp_type: QpType,
    pkey: u16,
    qkey: u32,
) -> Result<(), ValidateError> {
    check_pkey(pkt, pkey)?;
    if matches!(qp_type, QpType::Ud | QpType::Gsi) {
        let want = if pkt.dest_qpn() == 1 { GSI_QKEY } else { qkey };
        let got = pkt.deth().map_or(0, |d| d.qkey());
        if pkt.deth().is_none() || got != want {
            return Err(ValidateError::BadQkey(got));
        }
    }
    Ok(())
}

/// C `check_psn()` for requests.  The caller keeps C's two flags: for RC,
/// send the PSN NAK only if none is outstanding; for UC, a packet accepted
/// here is still dropped while "drop rest of message" is set unless it
/// starts a message.
pub fn check_psn(
    pkt: &Packet<'_>,
    qp_type: QpType,
    expected: Psn,
) -> Result<PsnClass, ValidateError> {
    let diff = psn_compare(pkt.psn().get(), expected.get());
    match qp_type {
        QpType::Rc if diff > 0 => Err(ValidateError::PsnOutOfSequence),
        QpType::Rc if diff < 0 => Ok(PsnClass::Duplicate),
        QpType::Uc if diff != 0 => {
            if pkt.info().is_start() {
                Ok(PsnClass::Resync)
            } else {
                Err(ValidateError::PsnOutOfSequence)
            }
        }
        _ => Ok(PsnClass::InOrder),
    }
}

/// C `check_op_seq()`: a message in progress (previous request was a first
/// or middle SEND/WRITE) must be continued by a middle/last packet of the
/// same operation; otherwise the packet must start a message.
pub fn check_op_seq(qp_type: QpType, prev: Option<u8>, opcode: u8) -> Result<(), ValidateError> {
    if !matches!(qp_type, QpType::Rc | QpType::Uc) {
        return Ok(());
    }
    let Some(cur) = opcode_info(opcode) else {
        return Err(ValidateError::WrongTransport);
    };
    let op_class = flags::SEND | flags::WRITE;
    let in_progress = prev.and_then(opcode_info).filter(|p| {
        p.transport() == cur.transport()
            && p.is_request()
            && !p.is_end()
            && p.flags() & op_class != 0
    });
    match in_progress {
        Some(p) => {
            let same_op = p.flags() & op_class == cur.flags() & op_class;
            if cur.is_start() || !same_op {
                return Err(ValidateError::MissingLast);
            }
        }
        None => {
            if !cur.is_start() {
                return Err(ValidateError::MissingFirst);
            }
        }
    }
    Ok(())
}

/// C `check_op_valid()`: the QP's access flags must enable the operation
/// (RC: READ, WRITE/ATOMIC WRITE, ATOMIC, FLUSH placement types; UC:
/// WRITE).
pub fn check_op_valid(
    pkt: &Packet<'_>,
    qp_type: QpType,
    access_flags: u32,
) -> Result<(), ValidateError> {
    let i = pkt.info();
    let denied = |op: u32, need: u32| i.flags() & op != 0 && access_flags & need == 0;
    let bad = match qp_type {
        QpType::Rc => {
            let mut bad = denied(flags::READ, access::REMOTE_READ)
                || denied(flags::WRITE | flags::ATOMIC_WRITE, access::REMOTE_WRITE)
                || denied(flags::ATOMIC, access::REMOTE_ATOMIC);
            if i.has(flags::FLUSH) {
                let plt = pkt.feth().map_or(0, |f| f.placement_type());
                bad |= plt & FLUSH_GLOBAL != 0 && access_flags & access::FLUSH_GLOBAL == 0;
                bad |= plt & FLUSH_PERSISTENT != 0 && access_flags & access::FLUSH_PERSISTENT == 0;
            }
            bad
        }
        QpType::Uc => denied(flags::WRITE, access::REMOTE_WRITE),
        _ => false,
    };
    if bad {
        Err(ValidateError::AccessDenied)
    } else {
        Ok(())
    }
}

/// Length rules: RC/UC payload against the PMTU (only: at most PMTU;
/// first/middle: exactly PMTU; last: 1..=PMTU), RETH DMA length at most
/// 2^31, ATOMIC WRITE payload exactly 8 bytes with no pad, and atomic
/// addresses 8-byte aligned.
pub fn check_length(pkt: &Packet<'_>, qp_type: QpType, pmtu: u32) -> Result<(), ValidateError> {
    let i = pkt.info();
    let p = pkt.payload_len();
    let mtu = usize::try_from(pmtu).unwrap_or(usize::MAX);
    if i.has_payload() && matches!(qp_type, QpType::Rc | QpType::Uc) {
        let ok = if i.is_only() {
            p <= mtu
        } else if i.is_start() || i.is_middle() {
            p == mtu
        } else {
            p != 0 && p <= mtu
        };
        if !ok {
            return Err(ValidateError::Length);
        }
    }
    if let Some(r) = pkt.reth() {
        if r.len() > RETH_MAX_DMA_LEN {
            return Err(ValidateError::Length);
        }
    }
    if i.has(flags::ATOMIC_WRITE) && (p != 8 || pkt.pad() != 0) {
        return Err(ValidateError::Length);
    }
    if let Some(a) = pkt.atmeth() {
        if a.va() & 7 != 0 {
            return Err(ValidateError::MisalignedAtomic);
        }
    }
    Ok(())
}

/// The receive path's length check, made before a packet is queued: its
/// payload is at most `limit` bytes (a connected QP's path MTU; for a
/// datagram, which has none, the largest MTU).  [`check_length`] checks
/// the exact rules later, in the responder.
pub fn check_payload_fits(pkt: &Packet<'_>, limit: u32) -> Result<(), ValidateError> {
    if pkt.payload_len() > usize::try_from(limit).unwrap_or(usize::MAX) {
        return Err(ValidateError::Length);
    }
    Ok(())
}

/// Runs every check in C's order.  Requests get the PSN check (when
/// `ctx.expected_psn` is set), and unless they are duplicates, the
/// sequence and access checks; duplicates return early with
/// [`PsnClass::Duplicate`] because C answers them from its history without
/// further checks.  Responses get header, type/state, key and length checks
/// (their sequencing belongs to the completer).
pub fn validate(pkt: &Packet<'_>, ctx: &RecvContext) -> Result<PsnClass, ValidateError> {
    check_header(pkt)?;
    check_type_state(pkt, ctx.qp_type, ctx.qp_state)?;
    check_keys(pkt, ctx.qp_type, ctx.pkey, ctx.qkey)?;
    let mut class = PsnClass::InOrder;
    if pkt.info().is_request() {
        if let Some(expected) = ctx.expected_psn {
            class = check_psn(pkt, ctx.qp_type, expected)?;
            if class == PsnClass::Duplicate {
                return Ok(class);
            }
        }
        // A UC resync starts a fresh message: nothing is in progress.
        let prev = if class == PsnClass::Resync {
            None
        } else {
            ctx.prev_opcode
        };
        check_op_seq(ctx.qp_type, prev, pkt.opcode())?;
        check_op_valid(pkt, ctx.qp_type, ctx.access_flags)?;
    }
    check_length(pkt, ctx.qp_type, ctx.pmtu)?;
    Ok(class)
}

#[cfg(test)]
mod tests {
    use super::super::opcode::*;
    use super::*;

    #[test]
    fn pkey_rules() {
        assert!(pkey_match(0xffff, 0xffff));
        assert!(pkey_match(0x7fff, 0xffff));
        assert!(!pkey_match(0x7fff, 0x7fff));
        assert!(!pkey_match(0x8000, 0x8000));
        assert!(!pkey_match(0xffff, 0x8001));
    }

    #[test]
    fn op_seq_rc_matrix() {
        let rc = QpType::Rc;
        assert_eq!(
            check_op_seq(rc, None, RC_SEND_MIDDLE),
            Err(ValidateError::MissingFirst)
        );
        assert_eq!(check_op_seq(rc, None, RC_SEND_ONLY), Ok(()));
        assert_eq!(
            check_op_seq(rc, Some(RC_SEND_LAST), RC_RDMA_WRITE_LAST),
            Err(ValidateError::MissingFirst)
        );
        assert_eq!(
            check_op_seq(rc, Some(RC_SEND_FIRST), RC_SEND_LAST_WITH_INVALIDATE),
            Ok(())
        );
        assert_eq!(
            check_op_seq(rc, Some(RC_SEND_MIDDLE), RC_RDMA_WRITE_MIDDLE),
            Err(ValidateError::MissingLast)
        );
        assert_eq!(
            check_op_seq(rc, Some(RC_RDMA_WRITE_FIRST), RC_SEND_ONLY),
            Err(ValidateError::MissingLast)
        );
        assert_eq!(
            check_op_seq(
                rc,
                Some(RC_RDMA_WRITE_MIDDLE),
                RC_RDMA_WRITE_LAST_WITH_IMMEDIATE
            ),
            Ok(())
        );
        assert_eq!(
            check_op_seq(rc, Some(RC_RDMA_READ_REQUEST), RC_COMPARE_SWAP),
            Ok(())
        );
        assert_eq!(check_op_seq(QpType::Ud, None, UD_SEND_ONLY), Ok(()));
    }

    #[test]
    fn dispositions() {
        let nak = |code, fatal| Disposition::Nak { code, fatal };
        use ValidateError::*;
        assert_eq!(
            PsnOutOfSequence.disposition(QpType::Rc, true),
            nak(NakCode::PsnSequenceError, false)
        );
        assert_eq!(
            PsnOutOfSequence.disposition(QpType::Uc, true),
            Disposition::DropMessage
        );
        assert_eq!(
            MissingLast.disposition(QpType::Uc, true),
            Disposition::AbortMessage
        );
        assert_eq!(
            Length.disposition(QpType::Rc, true),
            nak(NakCode::InvalidRequest, true)
        );
        assert_eq!(Length.disposition(QpType::Rc, false), Disposition::Drop);
        assert_eq!(Length.disposition(QpType::Ud, true), Disposition::Drop);
        assert_eq!(BadPkey(0).disposition(QpType::Rc, true), Disposition::Drop);
    }
}
