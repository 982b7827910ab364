// SPDX-License-Identifier: GPL-2.0

//! Multicast delivery, in the receive path (softirq context): a datagram
//! to the multicast QPN that passed the receive checks (UD SEND, P_Key,
//! length, ICRC) is looked up by its destination address (an IPv4 address
//! as its IPv4-mapped GID) in the device's groups before anything is
//! queued.  With no group, it is dropped and counted (`rcv_dropped`) at
//! once, as C rxe does; otherwise a clone goes to the receive queue of
//! each attached UD QP in RTR or RTS (bounded like any, in packets and
//! bytes), whose receive task checks its Q_Key and places it like any
//! datagram.  So one datagram reaches every QP of the group once, on the
//! device it arrived on (datagrams the device sends to a group it has QPs
//! in come back through the IP stack's multicast loopback), and datagrams
//! to groups nobody joined never hold memory.

use kernel::sync::Arc;

use super::{enqueue, Arrival};
use crate::kapi::net::skb::SkBuff;
use crate::param::MAX_MCAST_QP_ATTACH;
use crate::proto::path::gid_of_ip;
use crate::proto::qp_state::{QpState, QpType};
use crate::qp::DevCore;
use crate::stats::Counter;

/// The GID of the destination address of the packet whose IP header
/// starts `l3`.
fn dest_gid(l3: &[u8]) -> Option<[u8; 16]> {
    match l3.first()? >> 4 {
        4 => gid_of_ip(l3.get(16..20)?),
        6 => gid_of_ip(l3.get(24..40)?),
        _ => None,
    }
}

/// Hands datagram `skb` (checked, data from the IP header) to the members
/// of its group on `dev`.  Any context; never sleeps.
pub(super) fn deliver(dev: &Arc<DevCore>, skb: SkBuff) {
    let mut members = [0u32; MAX_MCAST_QP_ATTACH as usize];
    let n = dest_gid(skb.linear()).map_or(0, |g| dev.mcast.members(&g, &mut members));
    if n == 0 {
        drop(skb);
        dev.stats.inc(Counter::RcvDropped);
        return;
    }
    for &qpn in &members[..n] {
        let Some(qp) = dev.qps.get(qpn) else { continue };
        if qp.is_dead()
            || qp.qp_type != QpType::Ud
            || !matches!(qp.state(), QpState::Rtr | QpState::Rts)
        {
            continue;
        }
        let Some(copy) = skb.clone_shared() else {
            qp.count(Counter::RcvDropped);
            continue;
        };
        enqueue(&qp, copy, Arrival::Request);
    }
    skb.consume();
}
