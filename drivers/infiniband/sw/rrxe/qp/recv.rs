// SPDX-License-Identifier: GPL-2.0

//! The receive side of a QP, used by its receive task (the responder of
//! `engine`) under the QP's `recv` lock: the receive ring, the message
//! being received (its receive WQE, or the target of an RDMA WRITE), the
//! READ response being sent, the responder resources (executed READs and
//! atomics, for duplicates), the expected PSN and message sequence number,
//! and the parameters `modify_qp` gave it.

use kernel::{prelude::*, sync::Arc};

use super::Qp;
use crate::kapi::net::{route::Route, skb::SkBuff};
use crate::kapi::rdma::qp::QpAttr;
use crate::mr::MrState;
use crate::param;
use crate::proto::cqe::{wc_opcode, Cqe, WcStatus};
use crate::proto::psn::Psn;
use crate::proto::qp_state::attr;
use crate::proto::resources::{Resource, Resources};
use crate::queue::Queue;
use crate::stats::Counter;
use crate::wqe::RecvWqe;

/// What `modify_qp` set that the receive side uses.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RecvParams {
    pub(crate) dest_qpn: u32,
    /// Path MTU in bytes.
    pub(crate) pmtu: u32,
    pub(crate) access_flags: u32,
    pub(crate) qkey: u32,
    pub(crate) min_rnr_timer: u8,
}

/// Where a READ reads from: the region (checked against the request's
/// rkey, range and rights when it arrived) and the offset of the
/// address; no region for a zero-length READ.
#[derive(Clone)]
pub(crate) struct ReadTarget {
    pub(crate) mr: Option<Arc<MrState>>,
    pub(crate) off: usize,
}

/// A READ response being sent, one packet per step of the receive task.
pub(crate) struct ReadReply {
    /// Where the first packet's payload starts.
    pub(crate) target: ReadTarget,
    /// PSN of its first packet.
    pub(crate) psn: Psn,
    /// Bytes it carries.
    pub(crate) len: u32,
    /// Packets it takes, and those sent.
    pub(crate) npkts: u32,
    pub(crate) sent: u32,
    /// The PSNs of the whole READ it answers (first, count): a duplicate
    /// of that READ restarts the response instead of waiting for its end.
    pub(crate) read_psns: (Psn, u32),
}

/// The responder resources' storage.
pub(crate) type ResourceTable = Resources<ReadTarget, KVec<Option<Resource<ReadTarget>>>>;

/// The target of an RDMA WRITE in progress.
pub(crate) struct WriteTarget {
    /// The region (none for a zero-length write).
    pub(crate) mr: Option<Arc<MrState>>,
    /// Where the next packet goes in the region.
    pub(crate) off: usize,
    /// Bytes the RETH announced and not yet received.
    pub(crate) remaining: u32,
    /// The RETH length.
    pub(crate) total: u32,
}

/// The receive side's state.
pub(crate) struct RecvSide {
    /// The receive ring; taken away (and its mapping removed) by
    /// `destroy_qp`.
    pub(crate) rq: Option<Arc<Queue>>,
    pub(crate) params: RecvParams,
    /// Receive WQEs retired (the consumer index published to user space).
    pub(crate) done: u32,
    /// Next expected request PSN.
    pub(crate) psn: Psn,
    /// The PSN an acknowledgement of a duplicate SEND or WRITE carries:
    /// that of the last request packet acknowledged by ACKs (SEND,
    /// WRITE), never one of a READ, atomic, ATOMIC WRITE or FLUSH.  A
    /// requester may take an ACK at a READ's last PSN as the end of that
    /// READ (C rxe does), so acknowledging at `psn - 1` after a READ
    /// would retire a READ whose last response it has not received.
    pub(crate) ack_psn: Psn,
    /// Last request opcode accepted (message sequencing).
    pub(crate) last_opcode: Option<u8>,
    /// Message sequence number (count of completed requests).
    pub(crate) msn: u32,
    /// The receive WQE a SEND in progress fills.
    pub(crate) wqe: Option<RecvWqe>,
    /// The target of an RDMA WRITE in progress.
    pub(crate) write: Option<WriteTarget>,
    /// The READ response in progress: sent before any further request
    /// is handled, so responses and acknowledgements leave in PSN order.
    pub(crate) reply: Option<ReadReply>,
    /// Executed READs and atomics (`max_dest_rd_atomic` of them).
    pub(crate) res: ResourceTable,
    /// A request taken from the queue while a READ response was being
    /// sent, handled when it is done (a duplicate of that READ is not
    /// held: it restarts the response at once).
    pub(crate) stash: Option<SkBuff>,
    /// A PSN sequence NAK was sent and not yet resolved.
    pub(crate) nak_sent: bool,
    /// A positive ACK through this PSN is owed and not yet sent: ACKs
    /// are coalesced over one run of the receive task (IBTA allows one
    /// ACK to acknowledge several requests), up to a quarter of the
    /// requester's window (`responder::ACK_EVERY`).
    pub(crate) ack_due: Option<Psn>,
    /// The PSN the last acknowledgement sent carried.
    pub(crate) acked: Psn,
    /// UC: drop packets until the next message starts.
    pub(crate) uc_drop: bool,
    /// The error state's flush ran (reset by `reset`).
    pub(crate) err_flushed: bool,
    /// The cached route for acknowledgements (see `SendSide::route`).
    pub(crate) route: Option<Route>,
}

impl RecvSide {
    /// `rq`: the QP's receive ring, none if it takes receive WQEs from an
    /// SRQ.
    pub(crate) fn new(rq: Option<Arc<Queue>>) -> Result<Self> {
        let mut slots = KVec::with_capacity(param::MAX_QP_RD_ATOM as usize, GFP_KERNEL)?;
        for _ in 0..param::MAX_QP_RD_ATOM {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            rq,
            params: RecvParams {
                pmtu: 256,
                ..Default::default()
            },
            done: 0,
            psn: Psn::new(0),
            ack_psn: Psn::new(0).prev(),
            last_opcode: None,
            msn: 0,
            wqe: None,
            write: None,
            reply: None,
            res: Resources::new(slots),
            stash: None,
            nak_sent: false,
            ack_due: None,
            acked: Psn::new(0).prev(),
            uc_drop: false,
            err_flushed: false,
            route: None,
        })
    }

    /// Back to the state of a new QP (RESET); the ring becomes empty.
    pub(crate) fn reset(&mut self) {
        self.done = 0;
        self.last_opcode = None;
        self.msn = 0;
        self.wqe = None;
        self.write = None;
        self.reply = None;
        self.res.clear();
        self.stash = None;
        self.nak_sent = false;
        self.ack_due = None;
        self.uc_drop = false;
        self.err_flushed = false;
        self.route = None;
        if let Some(rq) = &self.rq {
            let _ = rq.publish_producer(0);
            let _ = rq.publish_consumer(0);
        }
    }

    /// Takes what `modify_qp` stored in `a` (see `SendSide::apply`).
    pub(crate) fn apply(&mut self, a: &QpAttr, mask: u32, pmtu: u32, to_reset: bool) {
        if to_reset {
            self.reset();
        }
        self.params = RecvParams {
            dest_qpn: a.dest_qp_num,
            pmtu,
            access_flags: a.access_flags,
            qkey: a.qkey,
            min_rnr_timer: a.min_rnr_timer,
        };
        if mask & attr::AV != 0 {
            self.route = None;
        }
        if mask & attr::RQ_PSN != 0 {
            self.psn = Psn::new(a.rq_psn);
            self.ack_psn = self.psn.prev();
            self.acked = self.ack_psn;
        }
        if mask & attr::MAX_DEST_RD_ATOMIC != 0 {
            self.res.reset(a.max_dest_rd_atomic.into());
        }
    }

    /// Posts `cqe` for the receive queue and retires its WQE; false if the
    /// CQ overran (the QP is in error then).
    pub(crate) fn complete(&mut self, qp: &Qp, cqe: &Cqe, solicited: bool) -> bool {
        if cqe.status == WcStatus::Success {
            qp.count(Counter::RdmaRecvs);
        }
        self.done = self.done.wrapping_add(1);
        if let Some(rq) = &self.rq {
            let _ = rq.publish_consumer(self.done);
        }
        qp.post_cqe(&qp.rcq, cqe, solicited)
    }

    /// The error state's flush of the receive queue: the WQE in progress
    /// and up to `budget` posted ones complete with `IB_WC_WR_FLUSH_ERR`,
    /// in order; true if posted WQEs remain.  Bounded per run as the send
    /// queue's flush (`SendSide::flush`), and the same on a CQ overrun.
    pub(crate) fn flush(&mut self, qp: &Qp, budget: u32) -> bool {
        self.write = None;
        self.reply = None;
        self.res.clear();
        self.ack_due = None;
        if let Some(r) = self.wqe.take() {
            self.complete(qp, &qp.flush_cqe(r.hdr.wr_id, wc_opcode::RECV), false);
        }
        let Some(rq) = self.rq.clone() else {
            return false;
        };
        let pending = rq.posted_since(self.done).unwrap_or(0);
        for _ in 0..pending.min(budget) {
            let wr_id = rq.wr_id(self.done);
            if !self.complete(qp, &qp.flush_cqe(wr_id, wc_opcode::RECV), false) {
                self.done = self
                    .done
                    .wrapping_add(rq.posted_since(self.done).unwrap_or(0));
                let _ = rq.publish_consumer(self.done);
                break;
            }
        }
        rq.posted_since(self.done).unwrap_or(0) > 0
    }
}
