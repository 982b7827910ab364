// SPDX-License-Identifier: GPL-2.0

//! Per-device packet engine counters, shown by `rdma statistic show link
//! DEV/1` (names as C rxe's where the event is the same).

use kernel::sync::atomic::{Atomic, Relaxed};

use crate::kapi::rdma::stats::StatDesc;

/// The counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Counter {
    /// Packets handed to the IP stack (or looped back).
    SentPkts,
    /// Packets accepted by the receive path.
    RcvdPkts,
    /// Received packets dropped (bad ICRC, malformed, unknown QP, ...).
    RcvDropped,
    /// Requests that repeated an already-received PSN.
    DuplicateRequest,
    /// Requests ahead of the expected PSN (answered with a sequence NAK).
    OutOfSeqRequest,
    /// RNR NAKs sent for lack of a receive WQE.
    SendRnrNak,
    /// RNR NAKs received.
    RcvRnrNak,
    /// Sequence-error NAKs received.
    RcvSeqErr,
    /// Retransmit timer expirations.
    RetryTimeout,
    /// Retransmissions started (timeout or NAK).
    Retransmits,
    /// Transport retries exhausted.
    RetryExceeded,
    /// RNR retries exhausted.
    RnrRetryExceeded,
    /// WQEs completed in error by the local side.
    CompletionErrors,
    /// Packets for a connected QP from an address other than its peer's,
    /// or to an address other than its own (dropped).
    RcvForeign,
    /// Resends the completer started because a READ or atomic response
    /// was missing.
    CompleterRetry,
    /// Duplicate READ requests executed again (from the PSN they name).
    ReadReplays,
    /// Duplicate atomic requests answered from the saved result.
    AtomicReplays,
    /// Atomic operations executed by the responder.
    AtomicsExecuted,
    /// READ response packets sent.
    ReadResponses,
    /// Memory windows bound (BIND_MW, `ibv_bind_mw`).
    MwBinds,
    /// Memory windows invalidated (LOCAL_INV, SEND with Invalidate).
    MwInvalidations,
    /// FLUSH requests carried out by the responder.
    FlushesExecuted,
    /// UD send WQEs naming no address handle (of their PD).
    UdBadAh,
    /// UD send WQEs longer than the port MTU (completed, nothing sent).
    UdTooLong,
    /// Datagrams longer than the receive WQE's buffers (with the GRH).
    UdRecvTooLong,
    /// Responses queued for a completer that had not yet taken the one
    /// before (C rxe's `ack_deferred`).
    AckDeferred,
    /// Packets the IP stack refused to send.
    SendErr,
    /// Times the port went down (the netdev lost its carrier or went down).
    LinkDowned,
    /// SEND work requests completed successfully (with or without
    /// immediate or invalidate).
    RdmaSends,
    /// Receive work requests completed successfully.
    RdmaRecvs,
    /// Bytes of the packets counted in `SentPkts` (IP header onwards).
    SentBytes,
    /// Bytes of the packets counted in `RcvdPkts` (IP header onwards).
    RcvdBytes,
    /// Duplicate SENDs and WRITEs not acknowledged again because a READ
    /// or atomic executed after them answers for them (see
    /// `proto::resources::Resources::any_after`).
    DupAckCovered,
    /// UDP GSO batches handed to the IP stack (their packets are counted
    /// in `SentPkts`).
    GsoBatches,
    /// Request packets whose ICRC the receive task checked, not the
    /// receive path (a user QP's bulk transfer, `qp/placement.rs`).
    IcrcDeferred,
    /// Not a count: the most memory (`skb->truesize`, summed) one receive
    /// queue of the device has held at once, in bytes.
    RcvQueuePeakBytes,
}

/// Number of counters.
pub(crate) const NUM: usize = Counter::RcvQueuePeakBytes as usize + 1;

/// Counter names, in [`Counter`] order.
pub(crate) static DESCS: [StatDesc; NUM] = [
    StatDesc::new(c"sent_pkts"),
    StatDesc::new(c"rcvd_pkts"),
    StatDesc::new(c"rcv_dropped"),
    StatDesc::new(c"duplicate_request"),
    StatDesc::new(c"out_of_seq_request"),
    StatDesc::new(c"send_rnr_err"),
    StatDesc::new(c"rcvd_rnr_err"),
    StatDesc::new(c"rcvd_seq_err"),
    StatDesc::new(c"retry_timeout"),
    StatDesc::new(c"retransmits"),
    StatDesc::new(c"retry_exceeded_err"),
    StatDesc::new(c"retry_rnr_exceeded_err"),
    StatDesc::new(c"completion_errors"),
    StatDesc::new(c"rcv_foreign"),
    StatDesc::new(c"completer_retry_err"),
    StatDesc::new(c"read_replays"),
    StatDesc::new(c"atomic_replays"),
    StatDesc::new(c"atomics_executed"),
    StatDesc::new(c"read_responses"),
    StatDesc::new(c"mw_binds"),
    StatDesc::new(c"mw_invalidations"),
    StatDesc::new(c"flushes_executed"),
    StatDesc::new(c"ud_bad_ah"),
    StatDesc::new(c"ud_too_long"),
    StatDesc::new(c"ud_recv_too_long"),
    StatDesc::new(c"ack_deferred"),
    StatDesc::new(c"send_err"),
    StatDesc::new(c"link_downed"),
    StatDesc::new(c"rdma_sends"),
    StatDesc::new(c"rdma_recvs"),
    StatDesc::new(c"sent_bytes"),
    StatDesc::new(c"rcvd_bytes"),
    StatDesc::new(c"dup_acks_covered"),
    StatDesc::new(c"gso_batches"),
    StatDesc::new(c"icrc_deferred"),
    StatDesc::new(c"rcv_queue_peak_bytes"),
];

/// One device's counters.
pub(crate) struct Stats([Atomic<u64>; NUM]);

impl Stats {
    pub(crate) const fn new() -> Self {
        Self([const { Atomic::new(0) }; NUM])
    }

    pub(crate) fn inc(&self, c: Counter) {
        self.add(c, 1);
    }

    pub(crate) fn add(&self, c: Counter, n: u64) {
        self.0[c as usize].add(n, Relaxed);
    }

    /// Raises `c` to `v` if it is below (a high-water mark).
    pub(crate) fn raise_to(&self, c: Counter, v: u64) {
        let a = &self.0[c as usize];
        let mut cur = a.load(Relaxed);
        while cur < v {
            match a.cmpxchg(cur, v, Relaxed) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    pub(crate) fn get(&self, c: Counter) -> u64 {
        self.0[c as usize].load(Relaxed)
    }

    /// Copies the values into `out` (in [`Counter`] order).
    pub(crate) fn read(&self, out: &mut [u64]) {
        for (o, c) in out.iter_mut().zip(self.0.iter()) {
            *o = c.load(Relaxed);
        }
    }
}
