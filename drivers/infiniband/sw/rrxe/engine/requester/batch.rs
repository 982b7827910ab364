// SPDX-License-Identifier: GPL-2.0

//! RC and UC SEND and WRITE messages several packets per step: the
//! packets the window allows, from the WQE's next one on, go out as one
//! UDP GSO batch (`tx::Batch`, `proto::gso`) when at least two of them
//! can share it, with the PSNs, ACK requests and ICRCs they would have
//! had one by one.  The protocol state moves as if they had been sent in
//! a row (`packet_sent` per packet), so acknowledgements, the retransmit
//! timer and go-back-N (which resends from the PSN asked for, building a
//! new batch from there) are unchanged.
//!
//! Not batched (the caller sends one packet): the module parameter `gso`
//! off, READ, atomic and FLUSH requests (one packet each), the last
//! packet of a message alone, a window with room for one packet, a
//! longer packet after the first (a last packet with immediate data), a
//! route to this host, and a batch whose buffer cannot be allocated.

use kernel::{prelude::*, sync::Arc};

use super::{gather_failed, packet_sent, plan_packet, MAX_UNACKED_PSNS};
use crate::kapi::net::route::TxPacket;
use crate::proto::builder::packet_len;
use crate::proto::cqe::WcStatus;
use crate::proto::gso::Plan;
use crate::proto::qp_state::QpType;
use crate::qp::{send::SendSide, Endpoints, Qp};
use crate::tx::{Batch, TxError};

/// Sends the next packets of WQE `idx` as one batch; `None` if they are
/// not batched (see the module's comment), and nothing was done.  A local
/// error (the WQE's memory) is returned as the WQE's completion status,
/// with nothing sent.
pub(super) fn send(
    qp: &Arc<Qp>,
    s: &mut SendSide,
    ep: &Endpoints,
    idx: usize,
) -> Option<Result<(), WcStatus>> {
    if !matches!(qp.qp_type, QpType::Rc | QpType::Uc) {
        return None;
    }
    let plan = plan_batch(qp, s, ep, idx)?;
    let path = (s.params.pmtu, s.params.dest_qpn);
    let (first_psn, mut noack) = (s.psn, s.noack);
    let w = s.inflight.get(idx)?;
    let k = w.pkts_sent;
    let mut batch = Batch::begin(&qp.dev, &mut s.route, ep, plan)?;
    // Bit i: packet i asks for an ACK.
    let mut acks = 0u128;
    for i in 0..plan.count() {
        let psn = first_psn.add(i as u32);
        let p = match plan_packet(qp.qp_type, w, k + i as u32, path, psn, noack) {
            Ok(p) => p,
            Err(status) => return Some(Err(status)),
        };
        noack = if p.ack_req { 0 } else { noack + 1 };
        acks |= u128::from(p.ack_req) << i;
        let mut fill = |pkt: &mut TxPacket, f: &mut dyn FnMut(&[u8])| {
            crate::wqe::gather(w, p.off, p.len as usize, pkt, f)
        };
        match batch.push(&p.bth, &p.ext, p.len as usize, &mut fill) {
            Ok(()) => {}
            Err(TxError::Fill(err)) => return Some(Err(gather_failed(qp, err))),
            // Packet by packet instead (nothing was sent).
            Err(TxError::Net(_)) => return None,
        }
    }
    batch.send().ok()?;
    if let Some(w) = s.inflight.get_mut(idx) {
        if !w.started {
            w.first_psn = first_psn;
            w.started = true;
        }
    }
    for i in 0..plan.count() {
        packet_sent(qp, s, idx, acks >> i & 1 != 0);
    }
    Some(Ok(()))
}

/// The batch the next packets of WQE `idx` would make: as many as the
/// message has left and the window allows (`Batch::plan`).  `None` if
/// fewer than two, or the WQE is not a SEND or WRITE.
fn plan_batch(qp: &Qp, s: &SendSide, ep: &Endpoints, idx: usize) -> Option<Plan> {
    let w = s.inflight.get(idx)?;
    let op = w.hdr.op;
    if !op.carries_payload() || op.needs_response() {
        return None;
    }
    let k = w.pkts_sent;
    let room = match qp.qp_type {
        QpType::Rc => MAX_UNACKED_PSNS.saturating_sub(s.comp_psn.distance_to(s.psn)),
        _ => u32::MAX,
    };
    let path = (s.params.pmtu, s.params.dest_qpn);
    Batch::plan(ep, w.npkts.saturating_sub(k).min(room), |i| {
        // Lengths do not depend on the PSN or the ACK request.
        let p = plan_packet(qp.qp_type, w, k + i, path, s.psn, 0).ok()?;
        packet_len(p.bth.opcode(), p.len as usize)
    })
}
