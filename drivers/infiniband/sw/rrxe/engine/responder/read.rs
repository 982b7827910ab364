// SPDX-License-Identifier: GPL-2.0

//! RDMA READ at the responder.  A READ request is checked once (rkey,
//! PD, range, remote-read right), remembered in the responder resources
//! and answered by READ RESPONSE packets of the path MTU, PSNs from the
//! request's on, the first and last with an AETH.  The response goes out
//! one UDP GSO batch (`tx::Batch`: a FIRST with one MIDDLE, then up to
//! 60 KiB of MIDDLEs) or one packet per step of the receive task
//! ([`reply_step`]), before any later request is handled, so that
//! responses and acknowledgements leave in PSN order; the payload is
//! copied once, from the pinned pages into the skb.
//!
//! A duplicate READ (the requester lost a response packet) is executed
//! again from the PSN it names if it asks for exactly the rest of a
//! remembered READ (`proto::resources`); otherwise it is dropped.  From
//! the middle of the READ, the response continues the message (MIDDLE
//! packets, then LAST), as C rxe answers and requires.  A
//! duplicate of the READ being answered does not wait behind the rest of
//! the response (which the requester discards after a gap): it restarts
//! the response at once ([`restarts_reply`]).  The
//! region was checked when the READ first arrived; if it has been
//! deregistered since, the copy fails and the responder answers with a
//! remote access NAK.

use kernel::sync::Arc;

use super::{flush_ack, remote_region, send_ack, Denial, Outcome};
use crate::kapi::net::route::{Route, TxPacket};
use crate::kapi::net::skb::SkBuff;
use crate::mr::{AccessError, REMOTE_READ};
use crate::proto::aeth::{Aeth, NakCode, Syndrome};
use crate::proto::bth::{Bth, BTH_DEF_PKEY};
use crate::proto::builder::{packet_len, ExtHeaders};
use crate::proto::cqe::WcStatus;
use crate::proto::opcode::{flags, opcode_info, RC_RDMA_READ_REQUEST};
use crate::proto::resources::{ReadResource, Resource};
use crate::proto::segment::{packets, payload_of, replay_response_opcode};
use crate::proto::{Packet, Psn};
use crate::qp::{
    recv::{ReadReply, ReadTarget, RecvSide},
    Endpoints, Qp,
};
use crate::stats::Counter;
use crate::tx::{self, Batch, Sent, TxError};

/// A new READ request (in sequence): checks it, remembers it and starts
/// its response; returns the PSNs it takes.
pub(super) fn execute(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>) -> Result<u32, Outcome> {
    let reth = pkt.reth().ok_or(Outcome::denied("READ without RETH"))?;
    let len = reth.len();
    let target = if len == 0 {
        ReadTarget { mr: None, off: 0 }
    } else {
        let (mr, off) = remote_region(
            qp,
            reth.rkey(),
            reth.va(),
            u64::from(len),
            REMOTE_READ,
            Denial {
                unknown: "READ with an unknown rkey",
                outside: "READ outside the region or its rights",
            },
        )?;
        ReadTarget { mr: Some(mr), off }
    };
    let npkts = packets(len, r.params.pmtu);
    r.res
        .insert(Resource::Read(ReadResource {
            first_psn: pkt.psn(),
            npkts,
            va: reth.va(),
            len,
            target: target.clone(),
        }))
        .map_err(|_| {
            Outcome::invalid("READ on a QP without responder resources (max_dest_rd_atomic 0)")
        })?;
    r.reply = Some(ReadReply {
        target,
        psn: pkt.psn(),
        len,
        npkts,
        sent: 0,
        read_psns: (pkt.psn(), npkts),
    });
    Ok(npkts)
}

/// A duplicate READ request: executes the rest of the READ it repeats
/// again, or drops it.
pub(super) fn replay(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>) {
    let Some(reth) = pkt.reth() else {
        return qp.count(Counter::RcvDropped);
    };
    let pmtu = r.params.pmtu;
    let Some(rp) = r.res.read_replay(pkt.psn(), reth.va(), reth.len(), pmtu) else {
        return qp.count(Counter::RcvDropped);
    };
    let skipped = payload_of(rp.skip, rp.read.len, pmtu).0 as usize;
    let reply = ReadReply {
        target: ReadTarget {
            mr: rp.read.target.mr.clone(),
            off: rp.read.target.off + skipped,
        },
        psn: pkt.psn(),
        len: reth.len(),
        npkts: rp.read.npkts - rp.skip,
        sent: 0,
        read_psns: (rp.read.first_psn, rp.read.npkts),
    };
    qp.count(Counter::ReadReplays);
    r.reply = Some(reply);
}

/// Whether the queued request in `skb` asks again for part of the READ
/// whose response is in progress: it restarts the response at its PSN
/// rather than wait for the end (the requester lost a packet of this
/// response and discards the rest of it).
pub(crate) fn restarts_reply(r: &RecvSide, skb: &SkBuff) -> bool {
    let Some(rep) = r.reply.as_ref() else {
        return false;
    };
    let Ok((pkt, _)) = Packet::parse_l3_prefix(skb.linear(), skb.len()) else {
        return false;
    };
    let (first, n) = rep.read_psns;
    pkt.opcode() == RC_RDMA_READ_REQUEST && pkt.psn().in_window(first, n.max(1))
}

/// A READ response packet: its headers, and where its payload is.
struct ResponsePacket {
    bth: Bth,
    ext: ExtHeaders,
    /// Offset of the payload in the target region.
    at: usize,
    /// Payload bytes.
    len: u32,
}

/// Packet `j` of response `rep` on a path of MTU `pmtu` to QP `dest_qpn`;
/// `msn` for the AETH of the first and last.
fn response_packet(
    rep: &ReadReply,
    j: u32,
    (pmtu, dest_qpn): (u32, u32),
    msn: u32,
) -> ResponsePacket {
    let (off, len) = payload_of(j, rep.len, pmtu);
    // Packets of the READ the requester has already: a replay from the
    // middle continues the message.
    let skip = rep.read_psns.0.distance_to(rep.psn);
    let opcode = replay_response_opcode(skip, j, rep.npkts);
    let bth = Bth::new(opcode, dest_qpn, rep.psn.add(j)).with_pkey(BTH_DEF_PKEY);
    let mut ext = ExtHeaders::default();
    if opcode_info(opcode).is_some_and(|i| i.has(flags::AETH)) {
        ext.aeth = Some(Aeth::from_syndrome(Syndrome::ack_unlimited(), msn));
    }
    ResponsePacket {
        bth,
        ext,
        at: rep.target.off + off as usize,
        len,
    }
}

/// How sending response packets went.
enum Replied {
    /// This many went out (or were lost on the way: the requester asks
    /// again).
    Sent(u32),
    /// The payload of the packet with this PSN could not be read.
    Failed(AccessError, Psn),
}

/// Appends `p`'s payload from `target` to `pkt`.
fn fill_from(
    target: &ReadTarget,
    p: &ResponsePacket,
    pkt: &mut TxPacket,
    f: &mut dyn FnMut(&[u8]),
) -> Result<(), AccessError> {
    match &target.mr {
        Some(mr) => mr.append_to(pkt, p.at, p.len as usize, f),
        None => Ok(()),
    }
}

/// Sends the next packets of the READ response in progress: a UDP GSO
/// batch of as many as it admits (`tx::Batch`), or one packet.  The
/// acknowledgement owed for earlier requests goes first.
pub(crate) fn reply_step(qp: &Arc<Qp>, r: &mut RecvSide) {
    if r.reply.as_ref().is_some_and(|p| p.sent == 0) {
        flush_ack(qp, r);
    }
    let Some(rep) = r.reply.as_ref() else { return };
    let Some(ep) = qp.path.get() else {
        r.reply = None;
        return;
    };
    let path = (r.params.pmtu, r.params.dest_qpn);
    let replied = match send_batch(qp, rep, (path, r.msn), &mut r.route, &ep) {
        Some(replied) => replied,
        None => send_one(qp, rep, (path, r.msn), &mut r.route, &ep),
    };
    match replied {
        Replied::Sent(n) => {
            if let Some(rep) = r.reply.as_mut() {
                rep.sent += n;
                if rep.sent >= rep.npkts {
                    r.reply = None;
                }
            }
        }
        // The region went away under the READ (deregistered), or a page
        // of an on-demand-paging region could not be faulted in.
        Replied::Failed(e, psn) => {
            r.reply = None;
            super::fail_request(
                qp,
                r,
                WcStatus::LocAccessErr,
                if e == AccessError::Fault {
                    "READ from on-demand-paging memory that cannot be faulted in"
                } else {
                    "READ from a region deregistered meanwhile"
                },
            );
            send_ack(qp, r, Syndrome::Nak(NakCode::RemoteAccessError), psn);
        }
    }
}

/// Sends the next packet of response `rep`.
fn send_one(
    qp: &Arc<Qp>,
    rep: &ReadReply,
    (path, msn): ((u32, u32), u32),
    route: &mut Option<Route>,
    ep: &Endpoints,
) -> Replied {
    let p = response_packet(rep, rep.sent, path, msn);
    let mut fill =
        |pkt: &mut TxPacket, f: &mut dyn FnMut(&[u8])| fill_from(&rep.target, &p, pkt, f);
    let sent = tx::send(
        &qp.dev,
        route,
        ep,
        &p.bth,
        &p.ext,
        p.len as usize,
        &mut fill,
    );
    qp.count(Counter::ReadResponses);
    match sent {
        Ok(Sent::Loopback(skb)) => super::rx::receive(&qp.dev, skb),
        Ok(_) => {}
        Err(TxError::Fill(e)) => return Replied::Failed(e, p.bth.psn()),
        // No route or memory: a lost packet; the requester resends.
        Err(TxError::Net(_)) => {}
    }
    Replied::Sent(1)
}

/// Sends the next packets of response `rep` as one batch; `None` if they
/// are not batched (nothing was sent).
fn send_batch(
    qp: &Arc<Qp>,
    rep: &ReadReply,
    (path, msn): ((u32, u32), u32),
    route: &mut Option<Route>,
    ep: &Endpoints,
) -> Option<Replied> {
    let first = rep.sent;
    let plan = Batch::plan(ep, rep.npkts.saturating_sub(first), |i| {
        let p = response_packet(rep, first + i, path, msn);
        packet_len(p.bth.opcode(), p.len as usize)
    })?;
    let mut batch = Batch::begin(&qp.dev, route, ep, plan)?;
    for i in 0..plan.count() as u32 {
        let p = response_packet(rep, first + i, path, msn);
        let mut fill =
            |pkt: &mut TxPacket, f: &mut dyn FnMut(&[u8])| fill_from(&rep.target, &p, pkt, f);
        match batch.push(&p.bth, &p.ext, p.len as usize, &mut fill) {
            Ok(()) => {}
            // Nothing of the batch went out: the NAK names its first
            // PSN, the first the requester lacks.
            Err(TxError::Fill(e)) => return Some(Replied::Failed(e, rep.psn.add(first))),
            // One by one instead (nothing was sent).
            Err(TxError::Net(_)) => return None,
        }
    }
    batch.send().ok()?;
    qp.dev
        .stats
        .add(Counter::ReadResponses, plan.count() as u64);
    Some(Replied::Sent(plan.count() as u32))
}
