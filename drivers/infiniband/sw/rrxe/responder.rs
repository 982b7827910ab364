// SPDX-License-Identifier: GPL-2.0

//! The responder: requests arriving for a QP.  Each is checked by the
//! protocol core (`proto::validate`: header, QP type and state, keys, PSN,
//! message sequence, access, length), then: a SEND fills the receive WQE
//! taken from the receive queue at its first packet (none there: RNR NAK
//! on RC, message dropped on UC) and completes it at its last packet; an
//! RDMA WRITE checks its rkey once (region, PD, range, remote-write right)
//! and writes each packet; WRITE with immediate also consumes a receive
//! WQE.  RC acknowledges when the requester asks (AckReq), answers a
//! duplicate with an ACK of the last PSN received, a PSN ahead of the
//! expected one with a single sequence NAK, and fatal errors with their
//! NAK before the QP goes to the error state.

use kernel::{prelude::*, sync::Arc};

use crate::mr::{AccessError, MrState, REMOTE_WRITE};
use crate::proto::aeth::{Aeth, NakCode, RnrTimer, Syndrome};
use crate::proto::builder::{packet_len, write_headers, ExtHeaders};
use crate::proto::bth::{Bth, BTH_DEF_PKEY};
use crate::proto::cqe::{wc_opcode, Cqe, WcStatus};
use crate::proto::opcode::{flags, RC_ACKNOWLEDGE};
use crate::proto::psn::Psn;
use crate::proto::qp_state::QpType;
use crate::proto::validate::{validate, Disposition, PsnClass, RecvContext};
use crate::proto::Packet;
use crate::qp::{complete_recv, fail, Engine, QpShared};
use crate::stats::Counter;

/// The target of an RDMA WRITE in progress.
pub(crate) struct WriteTarget {
    /// The region (none for a zero-length write).
    mr: Option<Arc<MrState>>,
    /// Where the next packet goes in the region.
    off: usize,
    /// Bytes the RETH announced and not yet received.
    remaining: u32,
    /// The RETH length.
    total: u32,
}

/// How a request ended, when not simply accepted.
enum Outcome {
    /// No receive WQE: RNR NAK (RC), message dropped (UC).
    NotReady,
    /// Fatal: NAK with `code`; the receive WQE in progress (if any)
    /// completes with `status`; the QP goes to the error state.
    Fatal { code: NakCode, status: WcStatus, why: &'static str },
}

/// Sends an ACK or NAK with `syn` for `psn`.
fn send_ack(s: &QpShared, e: &Engine, syn: Syndrome, psn: Psn) {
    let Some(ep) = e.ep else { return };
    let bth = Bth::new(RC_ACKNOWLEDGE, e.attrs.dest_qp_num, psn).with_pkey(BTH_DEF_PKEY);
    let ext = ExtHeaders { aeth: Some(Aeth::from_syndrome(syn, e.msn)), ..Default::default() };
    let Some(len) = packet_len(RC_ACKNOWLEDGE, 0) else { return };
    let _ = crate::net::xmit(&s.core, &ep, len, |buf| {
        write_headers(buf, &bth, &ext, 0).map(|_| ()).map_err(|_| EINVAL)
    });
}

/// Takes the next receive WQE, if any, into `e.recv`.
fn take_recv(s: &QpShared, e: &mut Engine) -> Result<(), Outcome> {
    if e.recv.is_some() {
        return Ok(());
    }
    let Some(rings) = e.rings.clone() else { return Err(Outcome::NotReady) };
    let rq = &rings.rq;
    let avail = rq.user_producer().map_or(0, |p| p.wrapping_sub(e.rq_done) & rq.mask());
    if avail == 0 {
        return Err(Outcome::NotReady);
    }
    match crate::wqe::fetch_recv(rq, e.rq_done, s.init.caps.max_recv_sge) {
        Ok(Ok(r)) => {
            e.recv = Some(r);
            Ok(())
        }
        Ok(Err((wr_id, status))) => {
            let cqe = Cqe { wr_id, status, opcode: wc_opcode::RECV, byte_len: 0, imm: None, qp_num: s.qpn, src_qp: 0 };
            complete_recv(s, e, &cqe, false);
            Err(Outcome::Fatal { code: NakCode::RemoteOperationalError, status, why: "malformed receive WQE" })
        }
        Err(_) => Err(Outcome::Fatal {
            code: NakCode::RemoteOperationalError,
            status: WcStatus::LocQpOpErr,
            why: "cannot read the receive queue",
        }),
    }
}

/// Completes the receive WQE in progress.
fn finish_recv(s: &QpShared, e: &mut Engine, pkt: &Packet<'_>, opcode: u32, byte_len: Option<u32>) {
    if let Some(r) = e.recv.take() {
        let cqe = Cqe {
            wr_id: r.hdr.wr_id,
            status: WcStatus::Success,
            opcode,
            byte_len: byte_len.unwrap_or(r.received),
            imm: pkt.immdt().map(|i| i.raw()),
            qp_num: s.qpn,
            src_qp: e.attrs.dest_qp_num,
        };
        complete_recv(s, e, &cqe, pkt.bth().se());
    }
}

fn scatter_failed(err: AccessError) -> Outcome {
    match err {
        AccessError::Range => Outcome::Fatal {
            code: NakCode::InvalidRequest,
            status: WcStatus::LocLenErr,
            why: "message longer than the receive buffers",
        },
        _ => Outcome::Fatal {
            code: NakCode::RemoteOperationalError,
            status: WcStatus::LocProtErr,
            why: "receive WQE names a bad region",
        },
    }
}

fn do_send(s: &QpShared, e: &mut Engine, pkt: &Packet<'_>) -> Result<(), Outcome> {
    let info = pkt.info();
    if info.is_start() {
        take_recv(s, e)?;
        if let Some(r) = e.recv.as_mut() {
            r.received = 0;
        }
    }
    let pd = s.init.pd;
    let r = e.recv.as_mut().ok_or(Outcome::Fatal {
        code: NakCode::InvalidRequest,
        status: WcStatus::RemInvReqErr,
        why: "SEND continues without a receive WQE",
    })?;
    crate::wqe::scatter(&s.core, pd, r, pkt.payload()).map_err(scatter_failed)?;
    if info.is_end() {
        finish_recv(s, e, pkt, wc_opcode::RECV, None);
    }
    Ok(())
}

fn do_write(s: &QpShared, e: &mut Engine, pkt: &Packet<'_>) -> Result<(), Outcome> {
    let info = pkt.info();
    let denied = |why| Outcome::Fatal { code: NakCode::RemoteAccessError, status: WcStatus::LocAccessErr, why };
    if info.is_start() {
        let reth = pkt.reth().ok_or(denied("WRITE without RETH"))?;
        let total = reth.len();
        let (mr, off) = if total == 0 {
            (None, 0)
        } else {
            let mr = s.core.mrs.lookup(reth.rkey()).ok_or(denied("WRITE with an unknown rkey"))?;
            let off = mr
                .check(s.init.pd, reth.va(), u64::from(total), REMOTE_WRITE)
                .map_err(|_| denied("WRITE outside the region or its rights"))?;
            (Some(mr), off)
        };
        e.write = Some(WriteTarget { mr, off, remaining: total, total });
    }
    // The receive WQE a WRITE with immediate consumes must be there before
    // any of its data is placed (RNR otherwise).
    let consumes = info.is_end() && pkt.immdt().is_some();
    if consumes {
        take_recv(s, e)?;
    }
    let t = e.write.as_mut().ok_or(denied("WRITE continues without a first packet"))?;
    let data = pkt.payload();
    let n = u32::try_from(data.len()).unwrap_or(u32::MAX);
    if n > t.remaining || (info.is_end() && n != t.remaining) {
        return Err(Outcome::Fatal {
            code: NakCode::InvalidRequest,
            status: WcStatus::RemInvReqErr,
            why: "WRITE payload does not match its RETH length",
        });
    }
    if let Some(mr) = &t.mr {
        mr.write(t.off, data).map_err(|_| denied("WRITE outside the region"))?;
    }
    t.off += data.len();
    t.remaining -= n;
    let total = t.total;
    if info.is_end() {
        e.write = None;
        if consumes {
            finish_recv(s, e, pkt, wc_opcode::RECV_RDMA_WITH_IMM, Some(total));
        }
    }
    Ok(())
}

/// Handles a request packet for QP `s`.
pub(crate) fn handle(s: &Arc<QpShared>, e: &mut Engine, pkt: &Packet<'_>) {
    let ctx = RecvContext {
        qp_type: s.qp_type,
        qp_state: e.state,
        pmtu: e.pmtu,
        pkey: BTH_DEF_PKEY,
        qkey: e.attrs.qkey,
        access_flags: e.attrs.access_flags,
        expected_psn: Some(e.resp_psn),
        prev_opcode: e.resp_opcode,
    };
    let rc = s.qp_type == QpType::Rc;
    let class = match validate(pkt, &ctx) {
        Ok(c) => c,
        Err(err) => {
            match err.disposition(s.qp_type, true) {
                Disposition::Drop => s.core.stats.inc(Counter::RcvDropped),
                Disposition::DropMessage => e.uc_drop = true,
                Disposition::AbortMessage => {
                    e.recv.as_mut().map(|r| r.received = 0);
                    e.write = None;
                    e.resp_opcode = None;
                    e.uc_drop = true;
                }
                Disposition::Nak { code: NakCode::PsnSequenceError, .. } => {
                    s.core.stats.inc(Counter::OutOfSeqRequest);
                    if !e.nak_sent {
                        e.nak_sent = true;
                        send_ack(s, e, Syndrome::Nak(NakCode::PsnSequenceError), e.resp_psn);
                    }
                }
                Disposition::Nak { code, fatal } => {
                    send_ack(s, e, Syndrome::Nak(code), pkt.psn());
                    if fatal {
                        fail_request(s, e, WcStatus::RemInvReqErr, "invalid request");
                    }
                }
            }
            return;
        }
    };
    match class {
        PsnClass::Duplicate => {
            s.core.stats.inc(Counter::DuplicateRequest);
            send_ack(s, e, Syndrome::ack_unlimited(), e.resp_psn.prev());
            return;
        }
        PsnClass::Resync => {
            // UC: a new message at an unexpected PSN; drop any partial one.
            e.resp_psn = pkt.psn();
            e.write = None;
        }
        PsnClass::InOrder => {}
    }
    e.nak_sent = false;
    let info = pkt.info();
    if s.qp_type == QpType::Uc && e.uc_drop {
        if !info.is_start() {
            e.resp_psn = e.resp_psn.next();
            return;
        }
        e.uc_drop = false;
    }
    let res = if info.has(flags::SEND) {
        do_send(s, e, pkt)
    } else if info.has(flags::WRITE) {
        do_write(s, e, pkt)
    } else {
        Err(Outcome::Fatal {
            code: NakCode::InvalidRequest,
            status: WcStatus::RemInvReqErr,
            why: "operation not supported by rrxe (RDMA READ/atomic)",
        })
    };
    match res {
        Ok(()) => {}
        Err(Outcome::NotReady) => {
            if rc {
                s.core.stats.inc(Counter::SendRnrNak);
                send_ack(s, e, Syndrome::RnrNak(RnrTimer::new(e.attrs.min_rnr_timer)), pkt.psn());
            } else {
                e.uc_drop = true;
                e.resp_psn = e.resp_psn.next();
            }
            return;
        }
        Err(Outcome::Fatal { code, status, why }) => {
            if rc {
                send_ack(s, e, Syndrome::Nak(code), pkt.psn());
                fail_request(s, e, status, why);
            } else {
                // UC has no NAKs: complete the receive in error, drop the
                // rest of the message.
                fail_request(s, e, status, why);
            }
            return;
        }
    }
    e.resp_psn = e.resp_psn.next();
    e.resp_opcode = Some(pkt.opcode());
    if info.is_end() {
        e.msn = e.msn.wrapping_add(1);
    }
    if rc && pkt.bth().ack_req() {
        send_ack(s, e, Syndrome::ack_unlimited(), pkt.psn());
    }
}

/// A request failed fatally: the receive WQE in progress completes with
/// `status`, then the QP goes to the error state.
fn fail_request(s: &QpShared, e: &mut Engine, status: WcStatus, why: &str) {
    if let Some(r) = e.recv.take() {
        let cqe = Cqe {
            wr_id: r.hdr.wr_id,
            status,
            opcode: wc_opcode::RECV,
            byte_len: r.received,
            imm: None,
            qp_num: s.qpn,
            src_qp: e.attrs.dest_qp_num,
        };
        complete_recv(s, e, &cqe, false);
    }
    fail(s, e, why);
}
