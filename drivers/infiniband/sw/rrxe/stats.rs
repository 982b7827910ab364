// SPDX-License-Identifier: GPL-2.0

//! Per-device packet engine counters, shown by `rdma statistic show link
//! DEV/1` (names as C rxe's where the event is the same).

use core::sync::atomic::{AtomicU64, Ordering};

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
}

/// Number of counters.
pub(crate) const NUM: usize = Counter::CompletionErrors as usize + 1;

/// Counter names, in [`Counter`] order.
pub(crate) const NAMES: [&kernel::str::CStr; NUM] = [
    c"sent_pkts",
    c"rcvd_pkts",
    c"rcv_dropped",
    c"duplicate_request",
    c"out_of_seq_request",
    c"send_rnr_err",
    c"rcvd_rnr_err",
    c"rcvd_seq_err",
    c"retry_timeout",
    c"retransmits",
    c"retry_exceeded_err",
    c"retry_rnr_exceeded_err",
    c"completion_errors",
];

/// One device's counters.
pub(crate) struct Stats([AtomicU64; NUM]);

impl Stats {
    pub(crate) const fn new() -> Self {
        Self([const { AtomicU64::new(0) }; NUM])
    }

    pub(crate) fn inc(&self, c: Counter) {
        self.0[c as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self, i: usize) -> u64 {
        self.0.get(i).map_or(0, |c| c.load(Ordering::Relaxed))
    }
}
