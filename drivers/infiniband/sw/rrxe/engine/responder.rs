// SPDX-License-Identifier: GPL-2.0

//! The responder: requests for a QP, in its receive task.  Each is checked
//! by the protocol core (`proto::validate`: header, QP type and state,
//! keys, PSN, message sequence, access, length), then: a SEND fills the
//! receive WQE taken from the receive ring at its first packet (none
//! there: RNR NAK on RC, message dropped on UC) and completes it at its
//! last packet; an RDMA WRITE checks its rkey once (region, PD, range,
//! remote-write right) and writes each packet; WRITE with immediate also
//! consumes a receive WQE.  Payload goes from the skb straight into the
//! registered pages.  RC acknowledges what the requester asks to have
//! acknowledged (AckReq), coalesced: one ACK, for the last such PSN, at the
//! end of a run of the receive task, before any other acknowledgement, or
//! once it would cover [`ACK_EVERY`] PSNs (IBTA lets one ACK cover several
//! requests; under load this saves the requester most of its wake-ups,
//! and the bound keeps a responder that drains a long queue from holding
//! the requester at a full window); it answers a duplicate with an ACK of
//! the last PSN received, a PSN ahead
//! of the expected one with a single sequence NAK, and fatal errors with
//! their NAK before the QP goes to the error state.

use kernel::{prelude::*, sync::Arc};

use super::fail;
use super::rx::{self, RxPacket};
use crate::kapi::net::skb::SkBuff;
use crate::kapi::rdma::event::QpEvent;
use crate::mr::{AccessError, MrState, REMOTE_WRITE};
use crate::mw::is_window_key;
use crate::proto::aeth::{Aeth, NakCode, RnrTimer, Syndrome};
use crate::proto::bth::{Bth, BTH_DEF_PKEY};
use crate::proto::builder::ExtHeaders;
use crate::proto::cqe::{wc_opcode, Cqe, WcStatus};
use crate::proto::gid::ib_mtu_for_netdev_mtu;
use crate::proto::opcode::{flags, RC_ACKNOWLEDGE};
use crate::proto::psn::Psn;
use crate::proto::qp_state::QpType;
use crate::proto::validate::{validate, Disposition, PsnClass, RecvContext};
use crate::proto::Packet;
use crate::qp::{
    recv::{RecvSide, WriteTarget},
    Qp,
};
use crate::stats::Counter;
use crate::tx::{self, Sent};

mod atomic;
mod datagram;
mod flush;
mod read;

pub(crate) use read::{reply_step, restarts_reply};

/// How a request ended, when not simply accepted.
enum Outcome {
    /// No receive WQE: RNR NAK (RC), message dropped (UC).
    NotReady,
    /// Fatal: NAK with `code`; the receive WQE in progress (if any)
    /// completes with `status`; the QP goes to the error state.
    Fatal {
        code: NakCode,
        status: WcStatus,
        why: &'static str,
    },
    /// Fatal for this QP, but the request itself was received: it is
    /// acknowledged; the receive WQE completes with `status` and the QP
    /// goes to the error state.
    Unacknowledged { status: WcStatus, why: &'static str },
}

impl Outcome {
    /// A remote access the responder refuses (rkey, range, rights): NAK
    /// Remote Access Error.
    fn denied(why: &'static str) -> Self {
        Self::Fatal {
            code: NakCode::RemoteAccessError,
            status: WcStatus::LocAccessErr,
            why,
        }
    }

    /// A request the responder cannot carry out as sent: NAK Invalid
    /// Request.
    fn invalid(why: &'static str) -> Self {
        Self::Fatal {
            code: NakCode::InvalidRequest,
            status: WcStatus::RemInvReqErr,
            why,
        }
    }
}

/// The rkey checks of a remote access, refused with a remote access
/// error: a message for an unknown key and one for a range or right the
/// region does not give.
struct Denial {
    unknown: &'static str,
    outside: &'static str,
}

/// The region a request names by `rkey`, if the key is current, the
/// region (or memory window) in the QP's PD allows `access` and contains
/// `[va, va + len)`; with the offset of `va` in the region.
fn remote_region(
    qp: &Qp,
    rkey: u32,
    va: u64,
    len: u64,
    access: u32,
    d: Denial,
) -> Result<(Arc<MrState>, usize), Outcome> {
    let pd = qp.init.pd;
    let found = if is_window_key(rkey) {
        qp.dev.mws.resolve(rkey, pd, qp.ident, va, len, access)
    } else {
        match qp.dev.mrs.lookup(rkey) {
            Some(mr) => mr.check(pd, va, len, access).map(|off| (mr, off)),
            None => Err(AccessError::Key),
        }
    };
    found.map_err(|e| match e {
        AccessError::Key => Outcome::denied(d.unknown),
        _ => Outcome::denied(d.outside),
    })
}

/// A coalesced ACK goes out as soon as it covers this many PSNs since the
/// last acknowledgement: as often as our requester asks for one, a
/// quarter of its window.
pub(crate) const ACK_EVERY: u32 = super::requester::MAX_PKT_PER_ACK;

/// Sends the coalesced ACK, if one is owed (see `RecvSide::ack_due`).
/// The receive task calls it at the end of each run.
pub(crate) fn flush_ack(qp: &Qp, r: &mut RecvSide) {
    if let Some(psn) = r.ack_due.take() {
        transmit_ack(qp, r, Syndrome::ack_unlimited(), psn);
    }
}

/// Sends an ACK or NAK with `syn` for `psn`, after the ACK owed for
/// earlier requests (acknowledgements leave in PSN order).
fn send_ack(qp: &Qp, r: &mut RecvSide, syn: Syndrome, psn: Psn) {
    flush_ack(qp, r);
    transmit_ack(qp, r, syn, psn);
}

fn transmit_ack(qp: &Qp, r: &mut RecvSide, syn: Syndrome, psn: Psn) {
    r.acked = psn;
    let ext = ExtHeaders {
        aeth: Some(Aeth::from_syndrome(syn, r.msn)),
        ..Default::default()
    };
    transmit(qp, r, RC_ACKNOWLEDGE, psn, &ext);
}

/// Sends a response without payload (`opcode` with `ext`) at `psn`.
fn transmit(qp: &Qp, r: &mut RecvSide, opcode: u8, psn: Psn, ext: &ExtHeaders) {
    let Some(ep) = qp.path.get() else { return };
    let bth = Bth::new(opcode, r.params.dest_qpn, psn).with_pkey(BTH_DEF_PKEY);
    if let Ok(Sent::Loopback(skb)) = tx::send_header_only(&qp.dev, &mut r.route, &ep, &bth, ext) {
        rx::receive(&qp.dev, skb);
    }
}

/// Takes the next receive WQE, if any, into `r.wqe`: from the QP's
/// receive ring, or from its SRQ.
fn take_recv(qp: &Qp, r: &mut RecvSide) -> Result<(), Outcome> {
    if r.wqe.is_some() {
        return Ok(());
    }
    let fetched = if let Some(srq) = &qp.srq {
        match srq.take(&qp.dev.mrs) {
            Ok(None) => return Err(Outcome::NotReady),
            Ok(Some(w)) => Ok(w),
            Err(e) => Err(e),
        }
    } else {
        let Some(rq) = r.rq.as_deref() else {
            return Err(Outcome::NotReady);
        };
        if rq.posted_since(r.done).unwrap_or(0) == 0 {
            return Err(Outcome::NotReady);
        }
        crate::wqe::fetch_recv(
            rq,
            r.done,
            &qp.dev.mrs,
            qp.init.pd,
            qp.init.caps.max_recv_sge,
        )
    };
    match fetched {
        Ok(Ok(w)) => {
            r.wqe = Some(w);
            Ok(())
        }
        Ok(Err(bad)) => {
            // Completed in error by `fail_request`, after the QP entered
            // the error state.
            r.wqe = Some(crate::wqe::RecvWqe::failed(bad.wr_id));
            Err(Outcome::Fatal {
                code: NakCode::RemoteOperationalError,
                status: bad.status,
                why: "bad receive WQE",
            })
        }
        Err(_) => Err(Outcome::Fatal {
            code: NakCode::RemoteOperationalError,
            status: WcStatus::LocQpOpErr,
            why: "cannot read the receive queue",
        }),
    }
}

/// Completes the receive WQE in progress.
fn finish_recv(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>, opcode: u32, byte_len: Option<u32>) {
    if let Some(w) = r.wqe.take() {
        let cqe = Cqe {
            wr_id: w.hdr.wr_id,
            status: WcStatus::Success,
            opcode,
            byte_len: byte_len.unwrap_or(w.received),
            imm: pkt.immdt().map(|i| i.raw()),
            invalidated: pkt.ieth().map(|i| i.rkey()),
            qp_num: qp.qpn,
            src_qp: r.params.dest_qpn,
            grh: None,
            vlan: None,
        };
        r.complete(qp, &cqe, pkt.bth().se());
    }
}

fn scatter_failed(err: AccessError) -> Outcome {
    match err {
        AccessError::Range => Outcome::Fatal {
            code: NakCode::InvalidRequest,
            status: WcStatus::LocLenErr,
            why: "message longer than the receive buffers",
        },
        AccessError::Fault => Outcome::Fatal {
            code: NakCode::RemoteOperationalError,
            status: WcStatus::LocProtErr,
            why: "receive buffer in on-demand-paging memory that cannot be faulted in",
        },
        _ => Outcome::Fatal {
            code: NakCode::RemoteOperationalError,
            status: WcStatus::LocProtErr,
            why: "receive WQE names a bad region",
        },
    }
}

fn do_send(qp: &Qp, r: &mut RecvSide, rx: &RxPacket<'_>, pkt: &Packet<'_>) -> Result<(), Outcome> {
    let info = pkt.info();
    if info.is_start() {
        take_recv(qp, r)?;
        if let Some(w) = r.wqe.as_mut() {
            w.received = 0;
        }
    }
    let w = r
        .wqe
        .as_mut()
        .ok_or(Outcome::invalid("SEND continues without a receive WQE"))?;
    crate::wqe::scatter(w, rx.skb(), rx.payload_offset(pkt), pkt.payload_len())
        .map_err(scatter_failed)?;
    if let Some(ieth) = pkt.ieth() {
        invalidate(qp, ieth.rkey())?;
    }
    if info.is_end() {
        finish_recv(qp, r, pkt, wc_opcode::RECV, None);
    }
    Ok(())
}

/// SEND with Invalidate: invalidates the memory window `rkey` (a type 2
/// window in the QP's PD, bound through this QP) or the fast registration
/// it names (a region in the QP's PD).  A failure completes the receive
/// WQE with `IB_WC_REM_INV_REQ_ERR` and puts the QP in the error state;
/// the requester still gets its ACK, since the message itself was
/// received (IBTA class J, as on C rxe).
fn invalidate(qp: &Qp, rkey: u32) -> Result<(), Outcome> {
    super::invalidate::rkey(qp, rkey, Some(qp.ident)).map_err(|why| Outcome::Unacknowledged {
        status: WcStatus::RemInvReqErr,
        why,
    })
}

fn do_write(qp: &Qp, r: &mut RecvSide, rx: &RxPacket<'_>, pkt: &Packet<'_>) -> Result<(), Outcome> {
    let info = pkt.info();
    let denied = Outcome::denied;
    if info.is_start() {
        let reth = pkt.reth().ok_or(denied("WRITE without RETH"))?;
        let total = reth.len();
        let (mr, off) = if total == 0 {
            (None, 0)
        } else {
            let (mr, off) = remote_region(
                qp,
                reth.rkey(),
                reth.va(),
                u64::from(total),
                REMOTE_WRITE,
                Denial {
                    unknown: "WRITE with an unknown rkey",
                    outside: "WRITE outside the region or its rights",
                },
            )?;
            (Some(mr), off)
        };
        r.write = Some(WriteTarget {
            mr,
            off,
            remaining: total,
            total,
        });
    }
    // The receive WQE a WRITE with immediate consumes must be there before
    // any of its data is placed (RNR otherwise).
    let consumes = info.is_end() && pkt.immdt().is_some();
    if consumes {
        take_recv(qp, r)?;
    }
    let t = r
        .write
        .as_mut()
        .ok_or(denied("WRITE continues without a first packet"))?;
    let n = pkt.payload_len();
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    if n32 > t.remaining || (info.is_end() && n32 != t.remaining) {
        return Err(Outcome::invalid(
            "WRITE payload does not match its RETH length",
        ));
    }
    if let Some(mr) = &t.mr {
        mr.write_from_skb(t.off, rx.skb(), rx.payload_offset(pkt), n)
            .map_err(|e| match e {
                AccessError::Key => denied("WRITE into a region deregistered meanwhile"),
                AccessError::Fault => {
                    denied("WRITE into on-demand-paging memory that cannot be faulted in")
                }
                _ => denied("WRITE outside the region"),
            })?;
    }
    t.off += n;
    t.remaining -= n32;
    let total = t.total;
    if info.is_end() {
        r.write = None;
        if consumes {
            finish_recv(qp, r, pkt, wc_opcode::RECV_RDMA_WITH_IMM, Some(total));
        }
    }
    Ok(())
}

/// Handles a request the receive path queued for `qp`.
pub(crate) fn handle(qp: &Arc<Qp>, r: &mut RecvSide, skb: SkBuff) {
    rx::with_queued(qp, skb, |rx, pkt| handle_packet(qp, r, rx, pkt));
}

/// One request, as C rxe's responder takes it state by state: the checks
/// (`proto::validate`), a refusal or a duplicate, the operation of its
/// opcode class, then the PSN, MSN and acknowledgement bookkeeping.
fn handle_packet(qp: &Arc<Qp>, r: &mut RecvSide, rx: &RxPacket<'_>, pkt: &Packet<'_>) {
    let ud = qp.is_datagram();
    let class = match validate(pkt, &recv_context(qp, r)) {
        Ok(c) => c,
        Err(_) if ud => {
            // Wrong Q_Key, too long, not a UD SEND: dropped, never
            // answered.
            qp.count(Counter::RcvDropped);
            return;
        }
        Err(err) => return refuse(qp, r, pkt, err.disposition(qp.qp_type, true)),
    };
    if ud {
        datagram::receive(qp, r, rx, pkt);
        return;
    }
    // Accepted from the peer on the armed alternate path: it migrated; so
    // do we, before answering.
    if rx.on_alternate(qp) {
        qp.migrate();
    }
    let info = pkt.info();
    match class {
        PsnClass::Duplicate => return duplicate(qp, r, pkt),
        PsnClass::Resync => {
            // UC: a new message at an unexpected PSN; drop any partial one.
            r.psn = pkt.psn();
            r.write = None;
        }
        PsnClass::InOrder => {}
    }
    r.nak_sent = false;
    if qp.qp_type == QpType::Uc && r.uc_drop {
        if !info.is_start() {
            r.psn = r.psn.next();
            return;
        }
        r.uc_drop = false;
    }
    match execute(qp, r, rx, pkt) {
        Ok(psns) => accepted(qp, r, pkt, psns),
        Err(outcome) => failed(qp, r, pkt, outcome),
    }
}

/// What the checks of a request on `qp` compare it with.
fn recv_context(qp: &Qp, r: &RecvSide) -> RecvContext {
    let ud = qp.is_datagram();
    RecvContext {
        qp_type: qp.qp_type,
        qp_state: qp.state(),
        // UD has no path MTU: datagrams up to the port's.
        pmtu: if ud {
            ib_mtu_for_netdev_mtu(qp.dev.netdev.mtu()).bytes()
        } else {
            r.params.pmtu
        },
        pkey: BTH_DEF_PKEY,
        qkey: r.params.qkey,
        access_flags: r.params.access_flags,
        // UD has no PSN sequence.
        expected_psn: (!ud).then_some(r.psn),
        prev_opcode: if ud { None } else { r.last_opcode },
    }
}

/// A request (RC or UC) the checks refused: what IBTA says to do with it.
fn refuse(qp: &Arc<Qp>, r: &mut RecvSide, pkt: &Packet<'_>, disposition: Disposition) {
    match disposition {
        Disposition::Drop => qp.count(Counter::RcvDropped),
        Disposition::DropMessage => r.uc_drop = true,
        Disposition::AbortMessage => {
            if let Some(w) = r.wqe.as_mut() {
                w.received = 0;
            }
            r.write = None;
            r.last_opcode = None;
            r.uc_drop = true;
        }
        Disposition::Nak {
            code: NakCode::PsnSequenceError,
            ..
        } => {
            qp.count(Counter::OutOfSeqRequest);
            if !r.nak_sent {
                r.nak_sent = true;
                let psn = r.psn;
                send_ack(qp, r, Syndrome::Nak(NakCode::PsnSequenceError), psn);
            }
        }
        Disposition::Nak { code, fatal } => {
            // The QP is in the error state before the requester can see
            // the NAK.
            if fatal {
                fail_request(qp, r, WcStatus::RemInvReqErr, "invalid request");
            }
            send_ack(qp, r, Syndrome::Nak(code), pkt.psn());
        }
    }
}

/// A duplicate request (RC): a READ or atomic is answered again from the
/// responder resources, anything else acknowledged again.
fn duplicate(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>) {
    qp.count(Counter::DuplicateRequest);
    let info = pkt.info();
    if info.has(flags::READ) {
        read::replay(qp, r, pkt);
    } else if info.has(flags::ATOMIC) {
        atomic::replay(qp, r, pkt);
    } else if info.has(flags::ATOMIC_WRITE) || info.has(flags::FLUSH) {
        atomic::replay_write(qp, r, pkt);
    } else if r.res.any_after(pkt.psn()) {
        // A READ or atomic executed after it: the requester resends that
        // too, and its response acknowledges this duplicate; an ACK of its
        // own would reach the requester after responses to later requests
        // (see `proto::resources::Resources::any_after`).
        qp.count(Counter::DupAckCovered);
    } else {
        // IBTA C9-105: acknowledged again, at the last PSN an ACK may
        // carry (see `RecvSide::ack_psn`), which covers the duplicate (it
        // was received, so it is not after it).  Coalesced like other
        // ACKs: a requester's go-back-N resends a run of requests, and one
        // ACK answers the run (C rxe's requester takes each surplus ACK
        // that reaches it in the middle of a READ response as the end of
        // that response's sequence, and then fails the READ).
        r.ack_due = Some(r.ack_psn);
    }
}

/// Executes a new request by its opcode class; returns the PSNs it takes
/// (a READ: one per response packet).
fn execute(
    qp: &Arc<Qp>,
    r: &mut RecvSide,
    rx: &RxPacket<'_>,
    pkt: &Packet<'_>,
) -> Result<u32, Outcome> {
    let info = pkt.info();
    if info.has(flags::SEND) {
        do_send(qp, r, rx, pkt).map(|()| 1)
    } else if info.has(flags::WRITE) {
        do_write(qp, r, rx, pkt).map(|()| 1)
    } else if info.has(flags::READ) {
        read::execute(qp, r, pkt)
    } else if info.has(flags::ATOMIC) {
        atomic::execute(qp, r, pkt).map(|()| 1)
    } else if info.has(flags::ATOMIC_WRITE) {
        atomic::write(qp, r, rx, pkt).map(|()| 1)
    } else if info.has(flags::FLUSH) {
        flush::execute(qp, r, pkt).map(|()| 1)
    } else {
        Err(Outcome::invalid("operation not supported by rrxe"))
    }
}

/// A request that could not be executed: an RNR NAK, the error state, a
/// NAK, or (UC) the rest of the message dropped.
fn failed(qp: &Arc<Qp>, r: &mut RecvSide, pkt: &Packet<'_>, outcome: Outcome) {
    let rc = qp.qp_type == QpType::Rc;
    match outcome {
        Outcome::NotReady => {
            if rc {
                qp.count(Counter::SendRnrNak);
                let t = RnrTimer::new(r.params.min_rnr_timer);
                send_ack(qp, r, Syndrome::RnrNak(t), pkt.psn());
            } else {
                r.uc_drop = true;
                r.psn = r.psn.next();
            }
        }
        Outcome::Unacknowledged { status, why } => {
            fail_request(qp, r, status, why);
            if rc {
                send_ack(qp, r, Syndrome::ack_unlimited(), pkt.psn());
            }
        }
        Outcome::Fatal { code, status, why } if !rc && code != NakCode::RemoteOperationalError => {
            drop_uc_message(qp, r, status, why);
        }
        Outcome::Fatal { code, status, why } => {
            // The QP enters the error state (and the receive in progress
            // completes in error) before the requester can see the NAK.
            // UC has no NAKs: the rest of the message is dropped.
            fail_request(qp, r, status, why);
            if rc {
                send_ack(qp, r, Syndrome::Nak(code), pkt.psn());
                // IBTA C9-222.1: an rkey violation that no receive WQE
                // reports (only a WRITE with immediate has one) is an
                // asynchronous event at the responder.
                if code == NakCode::RemoteAccessError && pkt.immdt().is_none() {
                    qp.raise(QpEvent::AccessErr);
                }
            }
        }
    }
}

/// A request executed, taking `psns` PSNs: the expected PSN and the MSN
/// move on, and the acknowledgement it asks for is due (coalesced).
fn accepted(qp: &Qp, r: &mut RecvSide, pkt: &Packet<'_>, psns: u32) {
    let info = pkt.info();
    r.psn = r.psn.add(psns);
    r.last_opcode = Some(pkt.opcode());
    if info.is_end() {
        r.msn = r.msn.wrapping_add(1);
    }
    // READs, atomics, ATOMIC WRITEs and FLUSHes are answered by their
    // responses, never by an ACK (which would tell the requester that
    // their responses were lost).
    let answered = flags::READ | flags::ATOMIC | flags::ATOMIC_WRITE | flags::FLUSH;
    if info.flags() & answered == 0 {
        r.ack_psn = pkt.psn();
        if qp.qp_type == QpType::Rc && pkt.bth().ack_req() {
            r.ack_due = Some(pkt.psn());
            if r.acked.distance_to(pkt.psn()) >= ACK_EVERY {
                flush_ack(qp, r);
            }
        }
    }
}

/// UC: a message refused for what it says (an unknown rkey, a range or
/// right the region does not give, a length: IBTA classes D and E) is
/// dropped, and the QP lives on (only a local fault, class A, is fatal on
/// UC).  As on C rxe: with an SRQ, the receive WQE in progress (taken
/// from the SRQ) completes with `status`, the status RC's responder
/// reports for the same error; without one, nothing completes and the
/// WQE waits for the next message.  The rest of the message is dropped
/// up to the next first or only packet.
fn drop_uc_message(qp: &Arc<Qp>, r: &mut RecvSide, status: WcStatus, why: &str) {
    crate::rrxe_ratelimited!(
        pr_info,
        "rrxe: QP {:#x}: UC message dropped: {}\n",
        qp.qpn,
        why
    );
    r.uc_drop = true;
    r.write = None;
    r.psn = r.psn.next();
    if qp.srq.is_some() {
        complete_in_error(qp, r, status);
    } else if let Some(w) = r.wqe.as_mut() {
        w.received = 0;
    }
}

/// A request failed fatally: the QP goes to the error state, then the
/// receive WQE in progress completes with `status` (so a consumer who
/// sees that completion finds the QP in the error state).
fn fail_request(qp: &Arc<Qp>, r: &mut RecvSide, status: WcStatus, why: &str) {
    fail(qp, why);
    complete_in_error(qp, r, status);
}

/// Completes the receive WQE in progress, if any, with error `status`.
fn complete_in_error(qp: &Qp, r: &mut RecvSide, status: WcStatus) {
    if let Some(w) = r.wqe.take() {
        let cqe = Cqe {
            wr_id: w.hdr.wr_id,
            status,
            opcode: wc_opcode::RECV,
            byte_len: w.received,
            imm: None,
            invalidated: None,
            qp_num: qp.qpn,
            src_qp: r.params.dest_qpn,
            grh: None,
            vlan: None,
        };
        r.complete(qp, &cqe, false);
    }
}
