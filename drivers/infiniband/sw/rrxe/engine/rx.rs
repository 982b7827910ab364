// SPDX-License-Identifier: GPL-2.0

//! The receive path, in softirq context (or in a task, for a packet a QP
//! sent to this host).  Everything a packet says is untrusted.  What is
//! cheap is checked here, before any QP state is touched: the IP/UDP/BTH
//! framing and the headers the opcode carries (made linear, the payload is
//! left in place), the header fields, the destination QP (an RCU lookup),
//! that the packet comes from the QP's peer and is addressed to us (C rxe's
//! `check_addr()`, for RC and UC), the QP type and state, the P_Key, the
//! payload length against the QP's path MTU (a datagram's against the
//! largest MTU: nothing longer is ever queued), and last the ICRC over the
//! whole packet (read in place, also from fragments).  The first and middle
//! packets of a user QP's bulk transfer leave their ICRC to the receive
//! task, which checks it before anything else (so that on veth the
//! receiver's CPU does it, not the sender's: `qp/placement.rs`).  A packet
//! that passes is appended to the QP's queue for the task that handles it
//! (requests: the receive task; acknowledgements: the send task), bounded
//! in packets and in bytes, and the task is scheduled; a datagram to a
//! multicast group goes to its members' queues (`rx/multicast.rs`).
//! Everything else, and whatever does not fit a queue, is dropped and
//! counted (`rcv_dropped`).  Nothing is allocated here but the clones of a
//! multicast datagram, and no lock is taken but the queues' and the
//! multicast groups'.

mod multicast;

use kernel::sync::Arc;

use crate::icrc::KernelCrc32;
use crate::kapi::net::skb::SkBuff;
use crate::proto::bth::{BTH_DEF_PKEY, BTH_LEN, MULTICAST_QPN};
use crate::proto::icrc::{icrc_verify_mode, IcrcHasher, IcrcMode, ICRC_LEN};
use crate::proto::ip::{IpVersion, RoceLayout};
use crate::proto::opcode::{RC_FLUSH, UD_SEND_ONLY, UD_SEND_ONLY_WITH_IMMEDIATE};
use crate::proto::qp_state::QpState;
use crate::proto::validate::{check_header, check_payload_fits, check_pkey, check_type_state};
use crate::proto::Packet;
use crate::qp::{DevCore, Qp};
use crate::stats::Counter;

/// Header bytes made linear: IPv6 (40) + UDP (8) + BTH (12) + the longest
/// extension headers (28: AtomicETH) fit.
const MAX_HEADERS: usize = 40 + 8 + BTH_LEN + 28;

/// The most payload a datagram may carry: it has no path MTU, and IBTA's
/// largest MTU is 4096 bytes (what any sender's port MTU is at most).
const MAX_DATAGRAM_PAYLOAD: u32 = 4096;

/// A queued packet being handled: the skb (data from the IP header, headers
/// linear) and where its BTH starts.
pub(crate) struct RxPacket<'a> {
    skb: &'a SkBuff,
    bth_offset: usize,
    version: IpVersion,
}

impl RxPacket<'_> {
    /// The skb (for copying the payload out of it).
    pub(crate) fn skb(&self) -> &SkBuff {
        self.skb
    }

    /// Offset of the payload in the skb's data, for the packet `pkt` of
    /// this skb.
    pub(crate) fn payload_offset(&self, pkt: &Packet<'_>) -> usize {
        self.bth_offset + pkt.payload_offset()
    }

    /// Whether the packet came to `qp` on its armed alternate path (not
    /// from the primary path's peer: the receive path let nothing else
    /// in).  The responder and the completer migrate for such a packet
    /// once they accept it, not before: a stale or out-of-window one
    /// must not move the QP.  Only an armed QP compares addresses.
    pub(crate) fn on_alternate(&self, qp: &Qp) -> bool {
        if !qp.alternate_armed() {
            return false;
        }
        let Some((src, dst)) = ip_addrs(self.skb.linear(), self.version) else {
            return false;
        };
        qp.path.get().is_some_and(|p| !p.ips.accepts(src, dst))
    }
}

/// Opens a packet the receive path queued for `qp` (parsing its headers
/// once), hands it to `f`, then frees it as delivered.  A packet that does
/// not parse again (it cannot happen: [`receive`] parsed these very bytes)
/// is dropped and counted.
pub(crate) fn with_queued(qp: &Qp, skb: SkBuff, f: impl FnOnce(&RxPacket<'_>, &Packet<'_>)) {
    let Ok((pkt, lay)) = Packet::parse_l3_prefix(skb.linear(), skb.len()) else {
        qp.count(Counter::RcvDropped);
        return;
    };
    // The receive path left this request's ICRC to us (`qp/placement.rs`).
    if skb.icrc_deferred() {
        qp.count(Counter::IcrcDeferred);
        if !icrc_ok(&skb, &lay) {
            qp.count(Counter::RcvDropped);
            return;
        }
    }
    let rx = RxPacket {
        skb: &skb,
        bth_offset: lay.bth_offset,
        version: lay.version,
    };
    f(&rx, &pkt);
    skb.consume();
}

/// Verifies the ICRC of the RoCE packet at `lay` in `skb` (data from the IP
/// header), reading the payload in place.
fn icrc_ok(skb: &SkBuff, lay: &RoceLayout) -> bool {
    let lin = skb.linear();
    let (Some(ip_udp), Some(bth)) = (
        lin.get(..lay.bth_offset),
        lin.get(lay.bth_offset..lay.bth_offset + BTH_LEN),
    ) else {
        return false;
    };
    let Ok(mut h) = IcrcHasher::<KernelCrc32>::new(lay.version, ip_udp, bth) else {
        return false;
    };
    let start = lay.bth_offset + BTH_LEN;
    let Some(covered) = lay.roce_len.checked_sub(BTH_LEN + ICRC_LEN) else {
        return false;
    };
    if skb.for_each_chunk(start, covered, |c| h.update(c)).is_err() {
        return false;
    }
    let mut stored = [0u8; ICRC_LEN];
    if skb.copy_bits(start + covered, &mut stored).is_err() {
        return false;
    }
    h.finish() == u32::from_le_bytes(stored)
}

/// Whether the FLUSH request in `skb` carries the ICRC C rxe computes for
/// FLUSH (the headers covered twice, see `proto::icrc`): accepted as well,
/// so C rxe's FLUSHes work.  A FLUSH has no payload, so the whole packet is
/// in the linear part; anything longer is refused.
fn rxe_flush_icrc_ok(skb: &SkBuff) -> bool {
    let lin = skb.linear();
    lin.len() == skb.len() && icrc_verify_mode::<KernelCrc32>(lin, IcrcMode::RxeCompat).is_ok()
}

/// Source and destination addresses of the IP header at the start of `l3`.
fn ip_addrs(l3: &[u8], v: IpVersion) -> Option<(&[u8], &[u8])> {
    match v {
        IpVersion::V4 => Some((l3.get(12..16)?, l3.get(16..20)?)),
        IpVersion::V6 => Some((l3.get(8..24)?, l3.get(24..40)?)),
    }
}

/// A packet that failed a check (the caller counts it).
struct Dropped;

/// Where a packet that passed the checks goes.
enum Target {
    /// To a QP, as a request or a response.
    Qp(Arc<Qp>, Arrival),
    /// A datagram to a multicast group (`engine/rx/multicast.rs`).
    Multicast,
}

/// What a packet that passed the checks is to its QP, and so which of its
/// queues and tasks takes it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Arrival {
    /// An acknowledgement or a READ or atomic response: the send task's.
    Response,
    /// A request, its ICRC checked: the receive task's.
    Request,
    /// A first or middle packet of a bulk request, its ICRC left to the
    /// receive task (`qp/placement.rs`).
    RequestIcrcDeferred,
}

/// The checks of a datagram to the multicast QPN: a UD SEND with a good
/// P_Key, length and ICRC (the group's QPs check the rest when it reaches
/// them).
fn check_multicast(
    pkt: &Packet<'_>,
    skb: &SkBuff,
    lay: &RoceLayout,
) -> core::result::Result<Target, Dropped> {
    if !matches!(pkt.opcode(), UD_SEND_ONLY | UD_SEND_ONLY_WITH_IMMEDIATE) {
        return Err(Dropped);
    }
    check_pkey(pkt, BTH_DEF_PKEY).map_err(|_| Dropped)?;
    check_payload_fits(pkt, MAX_DATAGRAM_PAYLOAD).map_err(|_| Dropped)?;
    if !icrc_ok(skb, lay) {
        return Err(Dropped);
    }
    Ok(Target::Multicast)
}

/// The checks; on success, where the packet goes.
fn check(dev: &DevCore, skb: &mut SkBuff) -> core::result::Result<Target, Dropped> {
    let n = skb.len().min(MAX_HEADERS);
    if !skb.make_linear(n) {
        return Err(Dropped);
    }
    let (pkt, lay) = Packet::parse_l3_prefix(skb.linear(), skb.len()).map_err(|_| Dropped)?;
    check_header(&pkt).map_err(|_| Dropped)?;
    let qpn = pkt.dest_qpn();
    if qpn == MULTICAST_QPN {
        return check_multicast(&pkt, skb, &lay);
    }
    let request = pkt.info().is_request();
    let qp = dev.qps.get(qpn).ok_or(Dropped)?;
    if qp.is_dead() {
        return Err(Dropped);
    }
    let state = qp.state();
    // ERR: nothing is received (IBTA: the QP drops what arrives); SQE: the
    // send side is in error, its acknowledgements are meaningless.
    if state == QpState::Err || (state == QpState::Sqe && !request) {
        return Err(Dropped);
    }
    check_type_state(&pkt, qp.qp_type, state).map_err(|_| Dropped)?;
    // The Q_Key (UD) is the responder's to check: it holds the QP's.
    check_pkey(&pkt, BTH_DEF_PKEY).map_err(|_| Dropped)?;
    // A connected QP takes packets from its peer only; a UD QP from
    // anyone (the DETH says who).  From the peer on the alternate path
    // (armed only): the peer may have migrated, which the responder or
    // completer decides (`RxPacket::on_alternate`).
    if !qp.is_datagram() {
        let path = qp.path.get().ok_or(Dropped)?;
        let (src, dst) = ip_addrs(skb.linear(), lay.version).ok_or(Dropped)?;
        if !path.ips.accepts(src, dst) && !qp.alternate_accepts(src, dst) {
            qp.count(Counter::RcvForeign);
            return Err(Dropped);
        }
    }
    // Nothing longer than the path MTU is queued: a reassembled 64 KiB
    // datagram would hold the memory of dozens of real packets.  (C rxe
    // checks RC and UC requests in its responder, and NAKs them there.)
    let limit = if qp.is_datagram() {
        MAX_DATAGRAM_PAYLOAD
    } else {
        qp.pmtu()
    };
    check_payload_fits(&pkt, limit).map_err(|_| Dropped)?;
    // Last: the most expensive check, on packets that passed all others
    // (a FLUSH may carry C rxe's ICRC instead of IBTA's); left to the
    // receive task for the first and middle packets of a bulk transfer
    // (`qp/placement.rs`).
    if request && qp.placement.note_request(qp.user, pkt.info()) {
        return Ok(Target::Qp(qp, Arrival::RequestIcrcDeferred));
    }
    let icrc_good = icrc_ok(skb, &lay) || (pkt.opcode() == RC_FLUSH && rxe_flush_icrc_ok(skb));
    if !icrc_good {
        return Err(Dropped);
    }
    let arrival = if request {
        Arrival::Request
    } else {
        Arrival::Response
    };
    Ok(Target::Qp(qp, arrival))
}

/// Handles a received skb for device `dev`; its data starts at the IP
/// header.  Any context; never sleeps.
pub(crate) fn receive(dev: &Arc<DevCore>, mut skb: SkBuff) {
    match check(dev, &mut skb) {
        Ok(Target::Qp(qp, arrival)) => enqueue(&qp, skb, arrival),
        Ok(Target::Multicast) => multicast::deliver(dev, skb),
        Err(Dropped) => {
            drop(skb);
            dev.stats.inc(Counter::RcvDropped);
        }
    }
}

/// Appends `skb`, a packet that passed the checks, to `qp`'s queue of
/// requests (for the receive task) or of acknowledgements (for the send
/// task), and schedules that task; a packet the queue has no room for is
/// dropped and counted.
pub(super) fn enqueue(qp: &Arc<Qp>, mut skb: SkBuff, arrival: Arrival) {
    skb.set_icrc_deferred(arrival == Arrival::RequestIcrcDeferred);
    let request = arrival != Arrival::Response;
    let queue = if request {
        &qp.rx_requests
    } else {
        &qp.rx_responses
    };
    let len = skb.len() as u64;
    match queue.push(skb) {
        Ok(queued) => qp
            .dev
            .stats
            .raise_to(Counter::RcvQueuePeakBytes, queued as u64),
        Err(skb) => {
            drop(skb);
            qp.count(Counter::RcvDropped);
            return;
        }
    }
    qp.count(Counter::RcvdPkts);
    qp.dev.stats.add(Counter::RcvdBytes, len);
    if !request && queue.len() > 1 {
        // The completer has not taken the previous response yet.
        qp.count(Counter::AckDeferred);
    }
    if request {
        super::schedule_recv(qp);
    } else {
        super::schedule_send(qp);
    }
}
