// SPDX-License-Identifier: GPL-2.0

//! READ responses and atomic acknowledgements, for the oldest WQE.
//!
//! A response at PSN `p` first acknowledges every request before `p`.
//! Then it must be for the oldest WQE, a READ or atomic started at or
//! before `p`, and at exactly the oldest unacknowledged PSN: a later one
//! means a response packet was lost (resend, see `gap_retry`), an earlier
//! one is a duplicate (dropped).  Each READ response packet must have the
//! length its place in the message gives and be a first/middle packet
//! except at the end (a resent READ's responses start again with FIRST);
//! its payload goes straight from the skb into the WQE's local buffers.
//! An atomic acknowledgement writes the original value it carries (in
//! host byte order, as C rxe) into the WQE's buffer.  An ATOMIC WRITE is
//! acknowledged by a READ RESPONSE ONLY without payload.  A response that
//! breaks these rules completes the WQE with a bad response error.

use kernel::sync::Arc;

use super::super::fail_head;
use super::super::rx::RxPacket;
use super::{advance_comp, bad_response, gap_retry, retire_acked, settle};
use crate::proto::cqe::WcStatus;
use crate::proto::opcode::{RC_RDMA_READ_RESPONSE_LAST, RC_RDMA_READ_RESPONSE_ONLY};
use crate::proto::psn::Psn;
use crate::proto::segment::payload_of;
use crate::proto::Packet;
use crate::qp::{send::SendSide, Qp};
use crate::stats::Counter;
use crate::wqe::{scatter_response, write_response, SendWqe};

/// What the oldest WQE makes of a response at `psn`.
enum Fit {
    /// It is the response the oldest WQE waits for.
    Expected,
    /// An earlier response was lost.
    Gap,
    /// Not for anything outstanding.
    Stray,
}

/// Acknowledges what precedes `psn`, then tells whether a response at
/// `psn` is the one the oldest WQE (for which `is_for` must hold) waits
/// for.
fn fit(qp: &Arc<Qp>, s: &mut SendSide, psn: Psn, is_for: fn(&SendWqe) -> bool) -> Fit {
    if psn.compare(s.comp_psn) < 0 {
        return Fit::Stray;
    }
    retire_acked(qp, s, psn.prev());
    let Some(h) = s.inflight.get(0) else {
        return Fit::Stray;
    };
    if !h.started || !h.hdr.op.needs_response() {
        return Fit::Stray;
    }
    if !is_for(h) || !psn.in_window(h.first_psn, h.npkts.max(1)) {
        // Past the oldest READ/atomic: its response was lost.
        return if h.span().last_psn().compare(psn) < 0 {
            Fit::Gap
        } else {
            Fit::Stray
        };
    }
    if psn != s.comp_psn {
        return Fit::Gap;
    }
    Fit::Expected
}

/// The response at `psn` arrived: the oldest WQE moves on, and completes
/// if `last`.
fn progress(qp: &Arc<Qp>, s: &mut SendSide, psn: Psn, last: bool) {
    // `fit` made `psn` the oldest unacknowledged PSN: this moves it on.
    advance_comp(s, psn.next());
    if last {
        s.retire_head(qp, WcStatus::Success);
    }
    settle(qp, s);
}

/// A READ response packet.
pub(super) fn read(qp: &Arc<Qp>, s: &mut SendSide, rx: &RxPacket<'_>, pkt: &Packet<'_>) {
    let psn = pkt.psn();
    match fit(qp, s, psn, |w| {
        w.hdr.op.is_read() || w.hdr.op.empty_read_response()
    }) {
        Fit::Expected => {}
        Fit::Gap => return gap_retry(qp, s),
        Fit::Stray => return qp.count(Counter::RcvDropped),
    }
    let pmtu = s.params.pmtu;
    let Some(h) = s.inflight.get(0) else { return };
    let k = h.first_psn.distance_to(psn);
    // An ATOMIC WRITE or FLUSH is acknowledged by an empty READ RESPONSE
    // ONLY.
    let (off, len) = if h.hdr.op.empty_read_response() {
        (0, 0)
    } else {
        payload_of(k, h.hdr.length, pmtu)
    };
    let last = k + 1 >= h.npkts;
    let ends = matches!(
        pkt.opcode(),
        RC_RDMA_READ_RESPONSE_LAST | RC_RDMA_READ_RESPONSE_ONLY
    );
    if ends != last || pkt.payload_len() != len as usize {
        return bad_response(qp, s, "READ response of the wrong kind or length");
    }
    if len > 0 && scatter_response(h, off, rx.skb(), rx.payload_offset(pkt), len as usize).is_err()
    {
        return fail_head(
            qp,
            s,
            WcStatus::LocProtErr,
            "READ response for a region deregistered meanwhile",
        );
    }
    progress(qp, s, psn, last);
}

/// An atomic acknowledgement.
pub(super) fn atomic(qp: &Arc<Qp>, s: &mut SendSide, pkt: &Packet<'_>) {
    let psn = pkt.psn();
    match fit(qp, s, psn, |w| w.hdr.op.is_atomic()) {
        Fit::Expected => {}
        Fit::Gap => return gap_retry(qp, s),
        Fit::Stray => return qp.count(Counter::RcvDropped),
    }
    let Some(ack) = pkt.atmack() else {
        return bad_response(qp, s, "atomic acknowledgement without its value");
    };
    let Some(h) = s.inflight.get(0) else { return };
    if write_response(h, &ack.orig().to_ne_bytes()).is_err() {
        return fail_head(
            qp,
            s,
            WcStatus::LocProtErr,
            "atomic result for a region deregistered meanwhile",
        );
    }
    progress(qp, s, psn, true);
}
