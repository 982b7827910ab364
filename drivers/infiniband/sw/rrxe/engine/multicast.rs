// SPDX-License-Identifier: GPL-2.0

//! Multicast delivery: the receive path queues a datagram to the multicast
//! QPN (checked: UD SEND, P_Key, ICRC) on the device; this work, in
//! process context, finds the group from the packet's destination address
//! (an IPv4 address as its IPv4-mapped GID) and hands a clone of the
//! datagram to each attached UD QP in RTR or RTS, whose receive task
//! checks its Q_Key and places it like any datagram.  So one datagram
//! reaches every QP of the group once, on the device it arrived on
//! (datagrams the device sends to a group it has QPs in come back through
//! the IP stack's multicast loopback).  Bounded per run as the QPs' tasks.

use kernel::sync::Arc;

use super::{schedule_multicast, schedule_recv, BUDGET};
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

/// Runs the device's multicast work.
pub(super) fn run(dev: &Arc<DevCore>) {
    let mut members = [0u32; MAX_MCAST_QP_ATTACH as usize];
    for _ in 0..BUDGET {
        let Some(skb) = dev.mcast_rx.pop() else {
            return;
        };
        let n = dest_gid(skb.linear()).map_or(0, |g| dev.mcast.members(&g, &mut members));
        if n == 0 {
            dev.stats.inc(Counter::RcvDropped);
            continue;
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
            let len = copy.len() as u64;
            match qp.rx_requests.push(copy) {
                Ok(queued) => dev.stats.raise_to(Counter::RcvQueuePeakBytes, queued as u64),
                Err(copy) => {
                    drop(copy);
                    qp.count(Counter::RcvDropped);
                    continue;
                }
            }
            qp.count(Counter::RcvdPkts);
            qp.dev.stats.add(Counter::RcvdBytes, len);
            schedule_recv(&qp);
        }
    }
    schedule_multicast(dev);
}
