// SPDX-License-Identifier: GPL-2.0

//! The completer: acknowledgements for an RC requester.  An ACK retires
//! (completes, in order) every WQE whose last PSN it covers; an RNR NAK
//! acknowledges what precedes it and makes the requester wait the RNR
//! time, then resend; a PSN sequence NAK or a retransmit timeout makes it
//! resend from the oldest unacknowledged PSN, counting down the retry
//! budget; the other NAKs are fatal: the WQE completes with the remote
//! error and the QP goes to the error state.  Responses to requests rrxe
//! does not send (RDMA READ, atomics) are dropped.

use kernel::{sync::Arc, time::Delta};

use crate::proto::aeth::{NakCode, Syndrome};
use crate::proto::cqe::WcStatus;
use crate::proto::opcode::RC_ACKNOWLEDGE;
use crate::proto::psn::Psn;
use crate::proto::qp_state::QpType;
use crate::proto::Packet;
use crate::qp::{fail, retire_head, set_timer, Engine, QpShared, TimerKind};
use crate::requester::arm_retransmit;
use crate::stats::Counter;
use crate::wqe::SendWqe;

/// Retries: 7 means "forever" for RNR (IBTA), a plain count otherwise.
const RNR_INFINITE: u8 = 7;

/// How many WQEs at the head of `inflight` an acknowledgement of every
/// PSN up to `psn` completes: those sent whose last PSN it covers.
pub(crate) fn acked_wqes(inflight: &[SendWqe], psn: Psn) -> usize {
    inflight.iter().take_while(|w| w.started && w.last_psn().compare(psn) <= 0).count()
}

/// Rewinds the WQEs to resend from `comp`: the head restarts at the packet
/// `comp` names, the others from their first packet (their PSNs do not
/// change: segmentation is deterministic).
pub(crate) fn rewind_wqes(inflight: &mut [SendWqe], comp: Psn) {
    for (i, w) in inflight.iter_mut().enumerate() {
        w.pkts_sent = if i == 0 && w.started && w.first_psn.compare(comp) <= 0 {
            w.first_psn.distance_to(comp).min(w.npkts)
        } else {
            0
        };
    }
}

/// Everything up to and including `psn` is acknowledged.
fn ack_through(s: &Arc<QpShared>, e: &mut Engine, psn: Psn) {
    for _ in 0..acked_wqes(&e.inflight, psn) {
        retire_head(s, e, WcStatus::Success);
    }
    if psn.next().compare(e.comp_psn) > 0 {
        e.comp_psn = psn.next();
        e.retry_left = e.attrs.retry_cnt;
    }
    match e.timer {
        Some((TimerKind::RnrWait, _)) => {}
        _ if e.comp_psn == e.req_psn => e.timer = None,
        _ => arm_retransmit(s, e),
    }
}

/// Rewinds the requester to the oldest unacknowledged PSN.
fn rewind(s: &QpShared, e: &mut Engine) {
    s.core.stats.inc(Counter::Retransmits);
    e.req_psn = e.comp_psn;
    e.req_next = 0;
    e.noack = 0;
    let comp = e.comp_psn;
    rewind_wqes(&mut e.inflight, comp);
}

/// Handles a response packet for QP `s`.
pub(crate) fn handle(s: &Arc<QpShared>, e: &mut Engine, pkt: &Packet<'_>) {
    if s.qp_type != QpType::Rc || pkt.opcode() != RC_ACKNOWLEDGE {
        s.core.stats.inc(Counter::RcvDropped);
        return;
    }
    let Some(aeth) = pkt.aeth() else { return };
    let psn = pkt.psn();
    // Not yet sent: bogus.  Before the oldest unacknowledged one: stale.
    if psn.compare(e.req_psn) >= 0 || psn.compare(e.comp_psn.prev()) < 0 {
        s.core.stats.inc(Counter::RcvDropped);
        return;
    }
    match aeth.syndrome() {
        Syndrome::Ack { .. } => ack_through(s, e, psn),
        Syndrome::RnrNak(t) => {
            s.core.stats.inc(Counter::RcvRnrNak);
            ack_through(s, e, psn.prev());
            if e.rnr_left == 0 {
                s.core.stats.inc(Counter::RnrRetryExceeded);
                retire_head(s, e, WcStatus::RnrRetryExcErr);
                fail(s, e, "RNR retries exhausted");
                return;
            }
            if e.rnr_left != RNR_INFINITE {
                e.rnr_left -= 1;
            }
            rewind(s, e);
            set_timer(s, e, TimerKind::RnrWait, Delta::from_micros(i64::from(t.micros())));
        }
        Syndrome::Nak(NakCode::PsnSequenceError) => {
            s.core.stats.inc(Counter::RcvSeqErr);
            ack_through(s, e, psn.prev());
            retry(s, e);
        }
        Syndrome::Nak(code) => {
            ack_through(s, e, psn.prev());
            let status = match code {
                NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                NakCode::RemoteOperationalError => WcStatus::RemOpErr,
                _ => WcStatus::RemInvReqErr,
            };
            retire_head(s, e, status);
            fail(s, e, "the responder NAKed a request");
        }
        Syndrome::NakReserved(_) | Syndrome::Reserved(_) => s.core.stats.inc(Counter::RcvDropped),
    }
}

/// Resends from the oldest unacknowledged PSN if the retry budget allows.
fn retry(s: &Arc<QpShared>, e: &mut Engine) {
    if e.comp_psn == e.req_psn {
        return;
    }
    if e.retry_left == 0 {
        s.core.stats.inc(Counter::RetryExceeded);
        retire_head(s, e, WcStatus::RetryExcErr);
        fail(s, e, "transport retries exhausted");
        return;
    }
    e.retry_left -= 1;
    rewind(s, e);
}

/// The QP's timer fired (already cleared by the caller).
pub(crate) fn timer_expired(s: &Arc<QpShared>, e: &mut Engine, kind: TimerKind) {
    match kind {
        // The RNR wait is over: the rewind was done when the NAK came.
        TimerKind::RnrWait => {}
        TimerKind::Retransmit => {
            if e.comp_psn != e.req_psn {
                s.core.stats.inc(Counter::RetryTimeout);
                retry(s, e);
            }
        }
    }
}

#[kernel::macros::kunit_tests(rrxe_engine)]
mod tests {
    use super::*;
    use crate::net::Endpoints;
    use crate::proto::wqe::{SendOp, SendWqeHdr};
    use crate::requester::ack_timeout;
    use crate::wqe::Payload;
    use kernel::prelude::*;

    fn wqe(first: u32, len: u32, pmtu: u32) -> SendWqe {
        let hdr = SendWqeHdr { wr_id: 0, op: SendOp::Send, flags: 0, imm: [0; 4], remote_addr: 0, rkey: 0, num_sge: 0, length: len };
        let npkts = crate::proto::segment::packets(len, pmtu);
        SendWqe { hdr, payload: Payload::Sges(KVec::new()), first_psn: Psn::new(first), started: true, npkts, pkts_sent: npkts, error: None }
    }

    fn three() -> KVec<SendWqe> {
        // PSNs 0xfffffe..=0xffffff, 0..=3 (wrapping), 4 (one zero-length).
        let mut v = KVec::new();
        v.push(wqe(0xff_fffe, 2048, 1024), GFP_KERNEL).unwrap();
        v.push(wqe(0, 4000, 1024), GFP_KERNEL).unwrap();
        v.push(wqe(4, 0, 1024), GFP_KERNEL).unwrap();
        v
    }

    #[test]
    fn an_ack_completes_the_wqes_it_covers() {
        let v = three();
        assert_eq!(acked_wqes(&v, Psn::new(0xff_fffe)), 0);
        assert_eq!(acked_wqes(&v, Psn::new(0xff_ffff)), 1);
        assert_eq!(acked_wqes(&v, Psn::new(2)), 1);
        assert_eq!(acked_wqes(&v, Psn::new(3)), 2);
        assert_eq!(acked_wqes(&v, Psn::new(4)), 3);
    }

    #[test]
    fn unsent_wqes_are_never_acked() {
        let mut v = three();
        v[1].started = false;
        assert_eq!(acked_wqes(&v, Psn::new(4)), 1);
    }

    #[test]
    fn rewind_restarts_at_the_unacked_packet() {
        let mut v = three();
        v.remove(0).unwrap();
        rewind_wqes(&mut v, Psn::new(2));
        assert_eq!(v[0].pkts_sent, 2);
        assert!(!v[0].fully_sent());
        assert_eq!(v[1].pkts_sent, 0);
        rewind_wqes(&mut v, Psn::new(0));
        assert_eq!(v[0].pkts_sent, 0);
    }

    #[test]
    fn local_ack_timeout_follows_ibta() {
        assert!(ack_timeout(0).is_none());
        // 4.096 us * 2^14 = 67.1 ms
        assert_eq!(ack_timeout(14).unwrap().as_micros_ceil(), 67_109);
        assert!(ack_timeout(31).unwrap().as_millis() > 8_000_000);
    }

    #[test]
    fn endpoints_from_gids() {
        let mut s4 = [0u8; 16];
        s4[10] = 0xff;
        s4[11] = 0xff;
        s4[12..].copy_from_slice(&[10, 0, 0, 1]);
        let mut d4 = s4;
        d4[15] = 2;
        let ep = Endpoints::from_gids(&s4, &d4, 0xc001).unwrap();
        assert_eq!(ep.ips, crate::kapi::net::route::IpPair::V4 { saddr: [10, 0, 0, 1], daddr: [10, 0, 0, 2] });
        let mut s6 = [0u8; 16];
        s6[0] = 0xfe;
        s6[1] = 0x80;
        assert!(matches!(Endpoints::from_gids(&s6, &s6, 1).unwrap().ips, crate::kapi::net::route::IpPair::V6 { .. }));
        assert!(Endpoints::from_gids(&s4, &s6, 1).is_none());
    }

    #[test]
    fn source_ports_are_in_the_rocev2_range() {
        for qpn in [16u32, 17, 1000, 0xff_ffff] {
            let p = crate::qp::source_port(qpn);
            assert!(p >= 0xc000);
        }
    }
}
