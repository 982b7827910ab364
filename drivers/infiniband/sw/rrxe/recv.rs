// SPDX-License-Identifier: GPL-2.0

//! The receive path, in the engine's workqueue: a packet is parsed
//! (IP/UDP/BTH and the headers its opcode carries), its ICRC checked, its
//! destination QP looked up, then it goes to the responder (requests) or
//! the completer (acknowledgements).  Malformed packets are counted and
//! dropped; nothing in a packet is trusted before these checks.

use kernel::sync::Arc;

use crate::engine::DevCore;
use crate::icrc::KernelCrc32;
use crate::kapi::net::skb::SkBuff;
use crate::proto::bth::BTH_DEF_PKEY;
use crate::proto::icrc::icrc_verify;
use crate::proto::qp_state::{QpState, QpType};
use crate::proto::validate::{check_header, check_keys, check_type_state};
use crate::proto::Packet;
use crate::stats::Counter;

/// Processes one received packet for `core`'s device.
pub(crate) fn process(core: &Arc<DevCore>, skb: &SkBuff) {
    let l3 = skb.network_bytes();
    let dropped = || core.stats.inc(Counter::RcvDropped);
    let Ok((pkt, _)) = Packet::parse_l3(l3) else { return dropped() };
    if icrc_verify::<KernelCrc32>(l3).is_err() || check_header(&pkt).is_err() {
        return dropped();
    }
    let Some(qp) = core.qps.get_if(pkt.dest_qpn(), |_| true) else { return dropped() };
    if qp.qp_type == QpType::Ud {
        // UD receive (GRH placement, Q_Key) is not implemented.
        return dropped();
    }
    let mut e = qp.eng.lock();
    if e.dead {
        return;
    }
    if check_type_state(&pkt, qp.qp_type, e.state).is_err()
        || check_keys(&pkt, qp.qp_type, BTH_DEF_PKEY, e.attrs.qkey).is_err()
    {
        return dropped();
    }
    core.stats.inc(Counter::RcvdPkts);
    if pkt.info().is_request() {
        crate::responder::handle(&qp, &mut e, &pkt);
    } else {
        crate::completer::handle(&qp, &mut e, &pkt);
        if e.state == QpState::Rts && crate::requester::run(&qp, &mut e) {
            drop(e);
            crate::qp::schedule(&qp);
        }
    }
}
