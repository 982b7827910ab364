// SPDX-License-Identifier: GPL-2.0

//! The requester: takes send WQEs from the send queue (copying and
//! checking each, see `wqe`), cuts each message into packets of the path
//! MTU, and sends them with consecutive PSNs.  RC keeps at most
//! [`MAX_UNACKED_PSNS`] unacknowledged and asks for an ACK on the last
//! packet of each message and at least every [`MAX_PKT_PER_ACK`] packets;
//! the retransmit timer runs while anything is unacknowledged.  UC WQEs
//! complete as soon as their last packet is sent.

use kernel::{prelude::*, sync::Arc, time::Delta};

use crate::net::{self, Endpoints};
use crate::proto::builder::{packet_len, write_headers, ExtHeaders};
use crate::proto::bth::{Bth, BTH_DEF_PKEY};
use crate::proto::cqe::WcStatus;
use crate::proto::immdt::Immdt;
use crate::proto::qp_state::{QpState, QpType};
use crate::proto::reth::Reth;
use crate::proto::segment::{payload_of, request_opcode};
use crate::proto::wqe::send_flags;
use crate::qp::{fail, retire_head, set_timer, Engine, QpShared, TimerKind};

/// Unacknowledged PSNs an RC requester may have outstanding.
pub(crate) const MAX_UNACKED_PSNS: u32 = 128;
/// An ACK is requested at least every this many packets.
pub(crate) const MAX_PKT_PER_ACK: u32 = 64;
/// Packets sent per run before yielding the workqueue to other QPs.
const BUDGET: u32 = 64;

/// The local ACK timeout of IBTA: 4.096 us * 2^timeout; `None` for 0
/// (wait forever).
pub(crate) fn ack_timeout(timeout: u8) -> Option<Delta> {
    if timeout == 0 {
        return None;
    }
    let ns = 4096i64 << timeout.min(31);
    Some(Delta::from_nanos(ns))
}

/// (Re)starts the retransmit timer.
pub(crate) fn arm_retransmit(s: &Arc<QpShared>, e: &mut Engine) {
    if let Some(t) = ack_timeout(e.attrs.timeout) {
        set_timer(s, e, TimerKind::Retransmit, t);
    }
}

/// Takes the next WQE from the send queue; false if there is none.
fn fetch(s: &QpShared, e: &mut Engine) -> bool {
    let Some(rings) = e.rings.clone() else { return false };
    let sq = &rings.sq;
    let Ok(p) = sq.user_producer() else { return false };
    if p.wrapping_sub(e.sq_fetched) & sq.mask() == 0 {
        return false;
    }
    let caps = &s.init.caps;
    match crate::wqe::fetch_send(sq, e.sq_fetched, caps.max_send_sge, caps.max_inline_data, e.pmtu) {
        Ok(w) => {
            if e.inflight.push(w, GFP_KERNEL).is_err() {
                return false;
            }
            e.sq_fetched = e.sq_fetched.wrapping_add(1);
            true
        }
        Err(_) => false,
    }
}

/// Sends what the window allows.  Returns true if there is more to send
/// right away (the caller re-queues the run).
pub(crate) fn run(s: &Arc<QpShared>, e: &mut Engine) -> bool {
    if e.dead || e.state != QpState::Rts || matches!(e.timer, Some((TimerKind::RnrWait, _))) {
        return false;
    }
    if s.qp_type == QpType::Ud {
        if fetch(s, e) {
            retire_head(s, e, WcStatus::LocQpOpErr);
            fail(s, e, "UD sends are not implemented");
        }
        return false;
    }
    let Some(ep) = e.ep else {
        fail(s, e, "no path to send on");
        return false;
    };
    for _ in 0..BUDGET {
        if s.qp_type == QpType::Rc && e.comp_psn.distance_to(e.req_psn) >= MAX_UNACKED_PSNS {
            return false;
        }
        if e.req_next == e.inflight.len() && !fetch(s, e) {
            return false;
        }
        let idx = e.req_next;
        if let Some(status) = e.inflight[idx].error {
            // Completed in order: once everything before it is retired.
            if idx == 0 {
                retire_head(s, e, status);
                fail(s, e, "malformed send WQE");
            }
            return false;
        }
        if let Err(status) = send_one(s, e, &ep, idx) {
            e.inflight[idx].error = Some(status);
            if idx == 0 {
                retire_head(s, e, status);
                fail(s, e, "local access error on a send WQE");
            }
            return false;
        }
        if e.state != QpState::Rts {
            return false;
        }
    }
    true
}

/// Sends the next packet of WQE `idx`.  A network error counts as a lost
/// packet (the retransmit timer recovers it); a local error (bad lkey,
/// access or range) is returned as the WQE's completion status.
fn send_one(s: &Arc<QpShared>, e: &mut Engine, ep: &Endpoints, idx: usize) -> Result<(), WcStatus> {
    let pmtu = e.pmtu;
    let psn = e.req_psn;
    let dest_qpn = e.attrs.dest_qp_num;
    let noack = e.noack;
    let w = &mut e.inflight[idx];
    if w.pkts_sent == 0 {
        w.first_psn = psn;
        w.started = true;
    }
    let k = w.pkts_sent;
    let (off, len) = payload_of(k, w.hdr.length, pmtu);
    let opcode = request_opcode(s.qp_type, w.hdr.op, k, w.npkts).ok_or(WcStatus::LocQpOpErr)?;
    let last = k + 1 >= w.npkts;
    let ack_req = s.qp_type == QpType::Rc && (last || noack + 1 >= MAX_PKT_PER_ACK);
    let se = last && !w.hdr.op.is_write() && w.hdr.flags & send_flags::SOLICITED != 0;
    let bth = Bth::new(opcode, dest_qpn, psn).with_pkey(BTH_DEF_PKEY).with_se(se).with_ack_req(ack_req);
    let mut ext = ExtHeaders::default();
    if k == 0 && w.hdr.op.is_write() {
        ext.reth = Some(Reth::new(w.hdr.remote_addr, w.hdr.rkey, w.hdr.length));
    }
    if last && w.hdr.op.has_imm() {
        ext.immdt = Some(Immdt::from_raw(w.hdr.imm));
    }
    let total = packet_len(opcode, len as usize).ok_or(WcStatus::LocQpOpErr)?;
    let mut local = None;
    let pd = s.init.pd;
    let core = &s.core;
    let wr: &crate::wqe::SendWqe = w;
    let sent = net::xmit(core, ep, total, |buf| {
        let h = write_headers(buf, &bth, &ext, len as usize).map_err(|_| EINVAL)?;
        let body = buf.get_mut(h..h + len as usize).ok_or(EINVAL)?;
        crate::wqe::gather(core, pd, wr, off, body).map_err(|err| {
            local = Some(err);
            EFAULT
        })
    });
    if let Some(err) = local {
        crate::rrxe_ratelimited!(pr_warn, "rrxe: QP {:#x}: send WQE gather failed: {:?}\n", s.qpn, err);
        return Err(WcStatus::LocProtErr);
    }
    // Anything else (no route, allocation, the stack dropping it) is a
    // lost packet: counted as sent, recovered by the retransmit timer.
    let _ = sent;
    let w = &mut e.inflight[idx];
    w.pkts_sent += 1;
    let done = w.fully_sent();
    e.req_psn = psn.next();
    e.noack = if ack_req { 0 } else { noack + 1 };
    if done {
        e.req_next += 1;
        if s.qp_type == QpType::Uc && idx == 0 {
            retire_head(s, e, WcStatus::Success);
        }
    }
    if s.qp_type == QpType::Rc && e.timer.is_none() {
        arm_retransmit(s, e);
    }
    Ok(())
}
