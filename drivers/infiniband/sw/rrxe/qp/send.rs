// SPDX-License-Identifier: GPL-2.0

//! The send side of a QP, used by its send task (the requester and the
//! completer of `engine`) under the QP's `send` lock: the send ring, the
//! WQEs copied out of it and not yet retired, the PSN window, the retry
//! budgets and the retransmit/RNR timer, and the parameters `modify_qp`
//! gave it.

use kernel::{
    prelude::*,
    sync::Arc,
    time::{hrtimer::ArcHrTimerHandle, Instant, Monotonic},
};

use super::inflight::Inflight;
use super::Qp;
use crate::kapi::net::route::Route;
use crate::kapi::rdma::qp::QpAttr;
use crate::proto::cqe::{wc_opcode, Cqe, WcStatus};
use crate::proto::psn::Psn;
use crate::proto::qp_state::attr;
use crate::proto::wqe::{send_flags, SendOp};
use crate::queue::Queue;
use crate::stats::Counter;
use crate::wqe::SendWqe;

/// Why the QP's timer is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerKind {
    /// Unacknowledged packets: retransmit when it expires.
    Retransmit,
    /// An RNR NAK asked to wait before retrying.
    RnrWait,
}

/// What `modify_qp` set that the send side uses.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SendParams {
    pub(crate) dest_qpn: u32,
    /// Path MTU in bytes.
    pub(crate) pmtu: u32,
    pub(crate) retry_cnt: u8,
    pub(crate) rnr_retry: u8,
    /// READs and atomics it may have outstanding (`max_rd_atomic`).
    pub(crate) max_rd_atomic: u8,
    /// UD: the QP's Q_Key (sent when a WQE's has its high bit set).
    pub(crate) qkey: u32,
}

/// The send side's state.
pub(crate) struct SendSide {
    /// The send ring; taken away (and its mapping removed) by `destroy_qp`.
    pub(crate) sq: Option<Arc<Queue>>,
    pub(crate) params: SendParams,
    /// Send WQEs copied out of the ring (a running count).
    pub(crate) fetched: u32,
    /// Send WQEs retired (the consumer index published to user space).
    pub(crate) done: u32,
    /// Fetched, not retired, oldest first.
    pub(crate) inflight: Inflight,
    /// Position in `inflight` of the WQE the requester sends next.
    pub(crate) next: usize,
    /// Next PSN to send (moves back on a retransmission).
    pub(crate) psn: Psn,
    /// One past the highest PSN sent: it never moves back, so an
    /// acknowledgement of a PSN sent before a rewind stays valid.
    pub(crate) sent_end: Psn,
    /// Packets sent since the last one that asked for an ACK.
    pub(crate) noack: u32,
    /// Oldest unacknowledged PSN.
    pub(crate) comp_psn: Psn,
    pub(crate) retry_left: u8,
    pub(crate) rnr_left: u8,
    /// READ and atomic WQEs started and not retired (at most
    /// `params.max_rd_atomic`).
    pub(crate) rd_atomic_out: u32,
    /// The oldest unacknowledged PSN when a gap in READ responses last
    /// made the completer resend: the later responses of the same burst
    /// are also out of order and must not each cause a resend.
    pub(crate) gap_retry_at: Option<Psn>,
    /// The timer's purpose and deadline, if set.
    pub(crate) timer: Option<(TimerKind, Instant<Monotonic>)>,
    /// `comp_psn` when the retransmit timer was armed: progress since
    /// then makes its expiry re-arm it instead of resending (the timer is
    /// not restarted for each acknowledgement).
    pub(crate) armed_comp: Psn,
    /// A duplicate positive ACK (the responder answering a resend) came
    /// since the retransmit timer was armed: its expiry re-arms it too, as
    /// any acknowledgement restarts C rxe's timer.
    pub(crate) renewed: bool,
    /// The armed hrtimer; dropping it cancels it.
    pub(crate) timer_handle: Option<ArcHrTimerHandle<Qp>>,
    /// The error state's flush ran (reset by `reset`).
    pub(crate) err_flushed: bool,
    /// In SQD: raise `IB_EVENT_SQ_DRAINED` once nothing is outstanding.
    pub(crate) sqd_notify: bool,
    /// The cached route of the QP's path, revalidated before each use
    /// (`dst_check`), looked up again when stale.
    pub(crate) route: Option<Route>,
}

impl SendSide {
    pub(crate) fn new(sq: Arc<Queue>, cap: usize) -> Result<Self> {
        Ok(Self {
            sq: Some(sq),
            params: SendParams {
                pmtu: 256,
                ..Default::default()
            },
            fetched: 0,
            done: 0,
            inflight: Inflight::new(cap)?,
            next: 0,
            psn: Psn::new(0),
            sent_end: Psn::new(0),
            noack: 0,
            comp_psn: Psn::new(0),
            retry_left: 0,
            rnr_left: 0,
            rd_atomic_out: 0,
            gap_retry_at: None,
            timer: None,
            armed_comp: Psn::default(),
            renewed: false,
            timer_handle: None,
            err_flushed: false,
            sqd_notify: false,
            route: None,
        })
    }

    /// Back to the state of a new QP (RESET); the ring becomes empty.
    pub(crate) fn reset(&mut self) {
        self.clear_timer();
        while self.inflight.pop().is_some() {}
        self.fetched = 0;
        self.done = 0;
        self.next = 0;
        self.noack = 0;
        self.rd_atomic_out = 0;
        self.gap_retry_at = None;
        self.err_flushed = false;
        self.sqd_notify = false;
        self.route = None;
        if let Some(sq) = &self.sq {
            let _ = sq.publish_producer(0);
            let _ = sq.publish_consumer(0);
        }
    }

    /// Takes what `modify_qp` stored in `a` (the attributes `mask`
    /// selected are new), after a reset if the QP moves to RESET.
    pub(crate) fn apply(&mut self, a: &QpAttr, mask: u32, pmtu: u32, to_reset: bool) {
        if to_reset {
            self.reset();
        }
        self.params = SendParams {
            dest_qpn: a.dest_qp_num,
            pmtu,
            retry_cnt: a.retry_cnt,
            rnr_retry: a.rnr_retry,
            max_rd_atomic: a.max_rd_atomic,
            qkey: a.qkey,
        };
        if mask & attr::AV != 0 {
            self.route = None;
        }
        if mask & attr::SQ_PSN != 0 {
            self.psn = Psn::new(a.sq_psn);
            self.comp_psn = self.psn;
            self.sent_end = self.psn;
            // Nothing is outstanding in the new sequence: a retransmit
            // timer from the old one (lazy, left running) must not time it.
            self.clear_timer();
        }
        if mask & attr::RETRY_CNT != 0 {
            self.retry_left = a.retry_cnt;
        }
        if mask & attr::RNR_RETRY != 0 {
            self.rnr_left = a.rnr_retry;
        }
    }

    /// Nothing started is outstanding: every message begun is sent and
    /// acknowledged (what SQD waits for).
    pub(crate) fn drained(&self) -> bool {
        self.comp_psn == self.sent_end && self.inflight.get(0).is_none_or(|w| !w.started)
    }

    /// Cancels the timer.
    pub(crate) fn clear_timer(&mut self) {
        self.timer = None;
        self.timer_handle = None;
    }

    /// Completion of send WQE `w` with `status` (signalled ones, and every
    /// error); false if the CQ overran (the QP is in error then).
    pub(crate) fn complete(&self, qp: &Qp, w: &SendWqe, status: WcStatus) -> bool {
        let signaled = qp.init.sq_sig_all || w.hdr.flags & send_flags::SIGNALED != 0;
        if status == WcStatus::Success
            && matches!(w.hdr.op, SendOp::Send | SendOp::SendImm | SendOp::SendInv)
        {
            qp.count(Counter::RdmaSends);
        }
        if status == WcStatus::Success && !signaled {
            return true;
        }
        let opcode = w.hdr.op.wc_opcode();
        let cqe = Cqe {
            wr_id: w.hdr.wr_id,
            status,
            opcode,
            byte_len: w.hdr.length,
            // As C rxe: a successful WRITE or SEND with immediate reports
            // IB_WC_WITH_IMM (and no data) on the send side too.
            imm: (status == WcStatus::Success && w.hdr.op.has_imm()).then_some([0; 4]),
            invalidated: None,
            qp_num: qp.qpn,
            src_qp: 0,
            grh: None,
            vlan: None,
        };
        qp.post_cqe(&qp.scq, &cqe, false)
    }

    /// Retires the oldest in-flight WQE with `status`.
    pub(crate) fn retire_head(&mut self, qp: &Qp, status: WcStatus) {
        let Some(w) = self.inflight.pop() else { return };
        if w.started && w.hdr.op.needs_response() {
            self.rd_atomic_out = self.rd_atomic_out.saturating_sub(1);
        }
        self.next = self.next.saturating_sub(1);
        self.done = self.done.wrapping_add(1);
        if let Some(sq) = &self.sq {
            let _ = sq.publish_consumer(self.done);
        }
        self.complete(qp, &w, status);
    }

    /// The error state's flush of the send queue: every WQE in flight, then
    /// up to `budget` not yet fetched, complete with `IB_WC_WR_FLUSH_ERR`,
    /// in order; true if posted WQEs remain (the caller runs again later).
    /// User space can claim a full ring with one index write, so the work
    /// of one run is bounded by `budget`; if the CQ overruns (the QP's
    /// error then has nowhere to go), the rest is retired without
    /// completions, as C rxe does.
    pub(crate) fn flush(&mut self, qp: &Qp, budget: u32) -> bool {
        self.clear_timer();
        while !self.inflight.is_empty() {
            self.retire_head(qp, WcStatus::WrFlushErr);
        }
        self.next = 0;
        let Some(sq) = self.sq.clone() else {
            return false;
        };
        let pending = sq.posted_since(self.done).unwrap_or(0);
        for _ in 0..pending.min(budget) {
            let wr_id = sq.wr_id(self.done);
            self.done = self.done.wrapping_add(1);
            if !qp.post_cqe(&qp.scq, &qp.flush_cqe(wr_id, wc_opcode::SEND), false) {
                self.done = self
                    .done
                    .wrapping_add(sq.posted_since(self.done).unwrap_or(0));
                break;
            }
        }
        let _ = sq.publish_consumer(self.done);
        self.fetched = self.done;
        sq.posted_since(self.done).unwrap_or(0) > 0
    }
}
