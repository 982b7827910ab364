// SPDX-License-Identifier: GPL-2.0

//! The UD responder: a datagram (SEND ONLY, with or without immediate,
//! that passed the Q_Key and length checks) fills the next receive WQE:
//! first the 40-byte GRH built from the packet's IP header
//! (`proto::grh`), then the payload.  Its completion carries the sender's
//! QP number (from the DETH), `IB_WC_GRH` and a byte count that includes
//! the GRH, as IBTA and C rxe have it.
//!
//! UD has no acknowledgements and no PSN sequence: with no receive WQE
//! posted, or a datagram that does not fit the WQE's buffers, the
//! datagram is dropped and counted (IBTA's class D; the WQE stays for
//! the next datagram), and nothing else happens.  A malformed receive
//! WQE is fatal, as on RC.

use kernel::sync::Arc;

use super::{fail_request, take_recv, Outcome};
use crate::engine::rx::RxPacket;
use crate::proto::cqe::{wc_opcode, Cqe, NetHdr, WcStatus};
use crate::proto::grh::{from_ip_header, GRH_LEN};
use crate::proto::Packet;
use crate::qp::{recv::RecvSide, Qp};
use crate::stats::Counter;

/// Receives datagram `pkt`.
pub(super) fn receive(qp: &Arc<Qp>, r: &mut RecvSide, rx: &RxPacket<'_>, pkt: &Packet<'_>) {
    let l3 = rx.skb().linear();
    let net = if l3.first().is_some_and(|b| b >> 4 == 6) {
        NetHdr::Ipv6
    } else {
        NetHdr::Ipv4
    };
    let (Some(deth), Some(grh)) = (pkt.deth(), from_ip_header(l3)) else {
        qp.count(Counter::RcvDropped);
        return;
    };
    match take_recv(qp, r) {
        Ok(()) => {}
        Err(Outcome::NotReady) => {
            qp.count(Counter::RcvDropped);
            return;
        }
        Err(Outcome::Fatal { status, why, .. } | Outcome::Unacknowledged { status, why }) => {
            fail_request(qp, r, status, why);
            return;
        }
    }
    let Some(w) = r.wqe.as_mut() else { return };
    let len = pkt.payload_len();
    if GRH_LEN + len > w.hdr.length as usize {
        // Dropped; the WQE waits for the next datagram.
        qp.count(Counter::UdRecvTooLong);
        return;
    }
    w.received = 0;
    let placed = crate::wqe::scatter_bytes(w, &grh)
        .and_then(|()| crate::wqe::scatter(w, rx.skb(), rx.payload_offset(pkt), len));
    if let Err(e) = placed {
        crate::rrxe_ratelimited!(
            pr_warn,
            "rrxe: QP {:#x}: receive WQE names bad memory: {:?}\n",
            qp.qpn,
            e
        );
        fail_request(
            qp,
            r,
            WcStatus::LocProtErr,
            "receive WQE names a bad region",
        );
        return;
    }
    let Some(w) = r.wqe.take() else { return };
    let cqe = Cqe {
        wr_id: w.hdr.wr_id,
        status: WcStatus::Success,
        opcode: wc_opcode::RECV,
        byte_len: w.received,
        imm: pkt.immdt().map(|i| i.raw()),
        invalidated: None,
        qp_num: qp.qpn,
        src_qp: deth.src_qpn(),
        grh: Some(net),
        vlan: rx.skb().rx_vlan(),
    };
    r.complete(qp, &cqe, pkt.bth().se());
}
