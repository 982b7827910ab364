// SPDX-License-Identifier: GPL-2.0

//! RDMA READ at the responder.  A READ request is checked once (rkey,
//! PD, range, remote-read right), remembered in the responder resources
//! and answered by READ RESPONSE packets of the path MTU, PSNs from the
//! request's on, the first and last with an AETH.  The response goes out
//! one packet per step of the receive task ([`reply_step`]), before any
//! later request is handled, so that responses and acknowledgements
//! leave in PSN order; the payload is copied once, from the pinned pages
//! into the skb.
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
use crate::kapi::net::skb::SkBuff;
use crate::mr::{AccessError, REMOTE_READ};
use crate::proto::aeth::{Aeth, NakCode, Syndrome};
use crate::proto::bth::{Bth, BTH_DEF_PKEY};
use crate::proto::builder::ExtHeaders;
use crate::proto::cqe::WcStatus;
use crate::proto::opcode::{flags, opcode_info, RC_RDMA_READ_REQUEST};
use crate::proto::resources::{ReadResource, Resource};
use crate::proto::segment::{packets, payload_of, replay_response_opcode};
use crate::proto::Packet;
use crate::qp::{
    recv::{ReadReply, ReadTarget, RecvSide},
    Qp,
};
use crate::stats::Counter;
use crate::tx::{self, Sent, TxError};

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

/// Sends the next packet of the READ response in progress.  The
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
    let j = rep.sent;
    let (off, len) = payload_of(j, rep.len, r.params.pmtu);
    // Packets of the READ the requester has already: a replay from the
    // middle continues the message.
    let skip = rep.read_psns.0.distance_to(rep.psn);
    let opcode = replay_response_opcode(skip, j, rep.npkts);
    let psn = rep.psn.add(j);
    let bth = Bth::new(opcode, r.params.dest_qpn, psn).with_pkey(BTH_DEF_PKEY);
    let mut ext = ExtHeaders::default();
    if opcode_info(opcode).is_some_and(|i| i.has(flags::AETH)) {
        ext.aeth = Some(Aeth::from_syndrome(Syndrome::ack_unlimited(), r.msn));
    }
    let target = rep.target.clone();
    let at = target.off + off as usize;
    let mut fill =
        |pkt: &mut crate::kapi::net::route::TxPacket, f: &mut dyn FnMut(&[u8])| match &target.mr {
            Some(mr) => mr.append_to(pkt, at, len as usize, f),
            None => Ok(()),
        };
    let sent = tx::send(
        &qp.dev,
        &mut r.route,
        &ep,
        &bth,
        &ext,
        len as usize,
        &mut fill,
    );
    qp.count(Counter::ReadResponses);
    match sent {
        Ok(Sent::Loopback(skb)) => super::rx::receive(&qp.dev, skb),
        Ok(_) => {}
        // The region went away under the READ (deregistered), or a page
        // of an on-demand-paging region could not be faulted in.
        Err(TxError::Fill(e)) => {
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
            return;
        }
        // No route or memory: a lost packet; the requester resends.
        Err(TxError::Net(_)) => {}
    }
    if let Some(rep) = r.reply.as_mut() {
        rep.sent += 1;
        if rep.sent >= rep.npkts {
            r.reply = None;
        }
    }
}
