// SPDX-License-Identifier: GPL-2.0

//! Atomics at the responder: compare-and-swap and fetch-and-add on an
//! 8-byte value.  The request is checked (rkey, PD, range, remote-atomic
//! right; `proto::validate` already checked the address alignment), the
//! operation runs as one atomic instruction on the pinned page, the value
//! found is remembered in the responder resources and sent back in an
//! ATOMIC ACKNOWLEDGE.  A duplicate (its acknowledgement was lost) is
//! answered from the remembered value and never executed again, so an
//! atomic takes effect exactly once however often it is resent; a
//! duplicate that is no longer remembered is dropped.
//!
//! ATOMIC WRITE (IBTA 1.5): the request's 8 bytes are stored at the
//! target as one aligned 8-byte store (remote-write right, the address
//! 8-byte aligned in memory), exactly as they came (no byte swap, as C
//! rxe), and acknowledged by a READ RESPONSE ONLY without payload; a
//! duplicate is acknowledged again, not written again.

use super::rx::RxPacket;
use super::{flush_ack, remote_region, transmit, Denial, Outcome};
use crate::kapi::rdma::mr::Atomic64Op;
use crate::mr::{AccessError, REMOTE_ATOMIC, REMOTE_WRITE};
use crate::proto::aeth::{Aeth, Syndrome};
use crate::proto::atmack::AtomicAck;
use crate::proto::builder::ExtHeaders;
use crate::proto::opcode::{RC_ATOMIC_ACKNOWLEDGE, RC_COMPARE_SWAP, RC_RDMA_READ_RESPONSE_ONLY};
use crate::proto::psn::Psn;
use crate::proto::resources::Resource;
use crate::proto::Packet;
use crate::qp::{recv::RecvSide, Qp};
use crate::stats::Counter;

/// Bytes an atomic or ATOMIC WRITE operates on.
const ATOMIC_LEN: u64 = crate::proto::wqe::ATOMIC_LEN as u64;

/// Sends the ATOMIC ACKNOWLEDGE for `psn` carrying `orig`.
fn acknowledge(qp: &Qp, r: &mut RecvSide, psn: Psn, orig: u64) {
    flush_ack(qp, r);
    let ext = ExtHeaders {
        aeth: Some(Aeth::from_syndrome(Syndrome::ack_unlimited(), r.msn)),
        atmack: Some(AtomicAck::new(orig)),
        ..Default::default()
    };
    transmit(qp, r, RC_ATOMIC_ACKNOWLEDGE, psn, &ext);
}

/// A new atomic request (in sequence): executes it once and acknowledges
/// it with the value found.
pub(super) fn execute(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>) -> Result<(), Outcome> {
    let a = pkt
        .atmeth()
        .ok_or(Outcome::invalid("atomic without AtomicETH"))?;
    if r.res.capacity() == 0 {
        return Err(Outcome::invalid(
            "atomic on a QP without responder resources (max_dest_rd_atomic 0)",
        ));
    }
    let (mr, off) = remote_region(
        qp,
        a.rkey(),
        a.va(),
        ATOMIC_LEN,
        REMOTE_ATOMIC,
        Denial {
            unknown: "atomic with an unknown rkey",
            outside: "atomic outside the region or its rights",
        },
    )?;
    let op = if pkt.opcode() == RC_COMPARE_SWAP {
        Atomic64Op::CompareSwap {
            compare: a.comp(),
            swap: a.swap_add(),
        }
    } else {
        Atomic64Op::FetchAdd(a.swap_add())
    };
    let orig = mr.atomic(off, op).map_err(|e| match e {
        AccessError::Misaligned => Outcome::invalid("atomic target not 8-byte aligned in memory"),
        AccessError::Fault => {
            Outcome::denied("atomic on on-demand-paging memory that cannot be faulted in")
        }
        _ => Outcome::denied("atomic on a region deregistered meanwhile"),
    })?;
    qp.count(Counter::AtomicsExecuted);
    let psn = pkt.psn();
    // Cannot fail: the capacity was checked above.
    let _ = r.res.insert(Resource::Atomic { psn, orig });
    acknowledge(qp, r, psn, orig);
    Ok(())
}

/// Sends the empty READ RESPONSE ONLY that acknowledges the ATOMIC WRITE
/// (or FLUSH) at `psn`.
pub(super) fn acknowledge_write(qp: &Qp, r: &mut RecvSide, psn: Psn) {
    flush_ack(qp, r);
    let ext = ExtHeaders {
        aeth: Some(Aeth::from_syndrome(Syndrome::ack_unlimited(), r.msn)),
        ..Default::default()
    };
    transmit(qp, r, RC_RDMA_READ_RESPONSE_ONLY, psn, &ext);
}

/// A new ATOMIC WRITE (in sequence): stores its 8 bytes once and
/// acknowledges it.
pub(super) fn write(
    qp: &Qp,
    r: &mut RecvSide,
    rx: &RxPacket<'_>,
    pkt: &Packet<'_>,
) -> Result<(), Outcome> {
    let reth = pkt
        .reth()
        .ok_or(Outcome::invalid("ATOMIC WRITE without RETH"))?;
    if r.res.capacity() == 0 {
        return Err(Outcome::invalid(
            "ATOMIC WRITE on a QP without responder resources (max_dest_rd_atomic 0)",
        ));
    }
    let (mr, off) = remote_region(
        qp,
        reth.rkey(),
        reth.va(),
        ATOMIC_LEN,
        REMOTE_WRITE,
        Denial {
            unknown: "ATOMIC WRITE with an unknown rkey",
            outside: "ATOMIC WRITE outside the region or its rights",
        },
    )?;
    // `proto::validate` checked: exactly 8 bytes of payload, no pad.
    let mut value = [0u8; 8];
    rx.skb()
        .copy_bits(rx.payload_offset(pkt), &mut value)
        .map_err(|_| Outcome::invalid("ATOMIC WRITE payload unreadable"))?;
    mr.atomic(off, Atomic64Op::Store(u64::from_ne_bytes(value)))
        .map_err(|e| match e {
            AccessError::Misaligned => {
                Outcome::invalid("ATOMIC WRITE target not 8-byte aligned in memory")
            }
            AccessError::Fault => {
                Outcome::denied("ATOMIC WRITE on on-demand-paging memory that cannot be faulted in")
            }
            _ => Outcome::denied("ATOMIC WRITE on a region deregistered meanwhile"),
        })?;
    let psn = pkt.psn();
    // Cannot fail: the capacity was checked above.
    let _ = r.res.insert(Resource::Written(psn));
    acknowledge_write(qp, r, psn);
    Ok(())
}

/// A duplicate ATOMIC WRITE (or FLUSH): acknowledged again if
/// remembered, else dropped.
pub(super) fn replay_write(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>) {
    let psn = pkt.psn();
    if r.res.written(psn) {
        qp.count(Counter::AtomicReplays);
        acknowledge_write(qp, r, psn);
    } else {
        qp.count(Counter::RcvDropped);
    }
}

/// A duplicate atomic request: answered from the remembered value, or
/// dropped.
pub(super) fn replay(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>) {
    let psn = pkt.psn();
    match r.res.atomic(psn) {
        Some(orig) => {
            qp.count(Counter::AtomicReplays);
            acknowledge(qp, r, psn, orig);
        }
        None => qp.count(Counter::RcvDropped),
    }
}
