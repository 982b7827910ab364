// SPDX-License-Identifier: GPL-2.0

//! The UD requester: each send WQE is one datagram, a SEND ONLY (with or
//! without immediate) with a DETH, to the QP and address its WQE names.
//! The address comes from the address handle whose number librxe wrote
//! into the WQE (`wr.ud.ah_num`); an AH that does not exist (any more) or
//! belongs to another PD fails the WQE with a local QP operation error and
//! puts the QP in the error state, as on C rxe.  A WQE longer than the
//! port's MTU sends nothing and completes successfully (IBTA C10-93.1.1).
//! A datagram completes when it has been handed to the network: UD has no
//! acknowledgements.
//!
//! Embedded address vectors (`wr.ud.av`, from providers older than the
//! `ah_num` uABI) are not used: the kernel would have to trust addresses
//! user space wrote.  Every librxe that rrxe's uABI serves sends `ah_num`.

use kernel::sync::Arc;

use super::{deliver_sent, fetch, gather_failed, local_op, Step};
use crate::engine::fail_head;
use crate::proto::bth::{Bth, BTH_DEF_PKEY};
use crate::proto::builder::ExtHeaders;
use crate::proto::cqe::WcStatus;
use crate::proto::deth::Deth;
use crate::proto::gid::ib_mtu_for_netdev_mtu;
use crate::proto::immdt::Immdt;
use crate::proto::path::source_port;
use crate::proto::qp_state::{QpState, QpType};
use crate::proto::segment::request_opcode;
use crate::proto::wqe::send_flags;
use crate::qp::{send::SendSide, Endpoints, Qp};
use crate::stats::Counter;
use crate::tx::{self, TxError};

/// One step: sends the oldest WQE, or retires it.
pub(super) fn step(qp: &Arc<Qp>, s: &mut SendSide) -> Step {
    if s.inflight.is_empty() && !fetch(qp, s) {
        return Step::Idle;
    }
    let Some(w) = s.inflight.get(0) else {
        return Step::Idle;
    };
    if let Some(status) = w.error {
        fail_head(qp, s, status, "malformed send WQE");
        return Step::Progress;
    }
    if qp.state() == QpState::Sqd {
        return Step::Idle;
    }
    if w.hdr.op.is_local() {
        return local_op::execute(qp, s);
    }
    let opcode = match request_opcode(QpType::Ud, w.hdr.op, 0, 1) {
        Some(op) => op,
        None => {
            fail_head(qp, s, WcStatus::LocQpOpErr, "UD sends only SENDs");
            return Step::Progress;
        }
    };
    let dest = w.hdr.ud;
    let ah = qp.dev.ahs.get(dest.ah_num).filter(|ah| ah.pd == qp.init.pd);
    let Some(ah) = ah else {
        qp.count(Counter::UdBadAh);
        fail_head(
            qp,
            s,
            WcStatus::LocQpOpErr,
            "UD WQE names no address handle of its PD",
        );
        return Step::Progress;
    };
    let mtu = ib_mtu_for_netdev_mtu(qp.dev.netdev.mtu()).bytes();
    if w.hdr.length > mtu {
        // C10-93.1.1: no packet, and no error.
        qp.count(Counter::UdTooLong);
        s.retire_head(qp, WcStatus::Success);
        return Step::Progress;
    }
    let ep = Endpoints {
        ips: ah.ips,
        sport: source_port(qp.qpn),
        tclass: ah.tclass,
        hop_limit: ah.hop_limit,
        timeout: 0,
        gid_dev: ah.gid_dev,
    };
    send_datagram(qp, s, opcode, &ep)
}

/// Sends the oldest WQE as one datagram (`opcode`) to `ep` and retires it;
/// a datagram the network loses completes as sent, as UD allows.
fn send_datagram(qp: &Arc<Qp>, s: &mut SendSide, opcode: u8, ep: &Endpoints) -> Step {
    let Some(w) = s.inflight.get(0) else {
        return Step::Idle;
    };
    let dest = w.hdr.ud;
    let mut ext = ExtHeaders {
        deth: Some(Deth::new(dest.qkey(s.params.qkey), qp.qpn)),
        ..Default::default()
    };
    if w.hdr.op.has_imm() {
        ext.immdt = Some(Immdt::from_raw(w.hdr.imm));
    }
    let se = w.hdr.flags & send_flags::SOLICITED != 0;
    let bth = Bth::new(opcode, dest.remote_qpn, s.psn)
        .with_pkey(BTH_DEF_PKEY)
        .with_se(se);
    let len = w.hdr.length as usize;
    let wr: &crate::wqe::SendWqe = w;
    let mut fill = |pkt: &mut crate::kapi::net::route::TxPacket, f: &mut dyn FnMut(&[u8])| {
        crate::wqe::gather(wr, 0, len, pkt, f)
    };
    let sent = tx::send(&qp.dev, &mut s.route, ep, &bth, &ext, len, &mut fill);
    match sent {
        Ok(sent) => deliver_sent(qp, sent),
        Err(TxError::Fill(err)) => {
            let status = gather_failed(qp, err);
            fail_head(qp, s, status, "local access error on a send WQE");
            return Step::Progress;
        }
        // No route, no memory: the datagram is lost, as UD allows.
        Err(TxError::Net(_)) => {}
    }
    s.psn = s.psn.next();
    s.retire_head(qp, WcStatus::Success);
    Step::Progress
}
