// SPDX-License-Identifier: GPL-2.0
//! The RC requester's window: which send WQEs an acknowledgement retires,
//! where a retransmission restarts, and the local ACK timeout.
//!
//! A WQE occupies `npkts` consecutive PSNs from `first_psn` once its first
//! packet has been sent (`started`); segmentation is deterministic, so its
//! PSNs never change, also across retransmissions.

use super::psn::Psn;

/// A send WQE's place in the PSN space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WqeSpan {
    /// Its first packet has been sent (so its PSNs are fixed).
    pub started: bool,
    /// PSN of its first packet (valid once `started`).
    pub first_psn: Psn,
    /// Packets it takes (at least 1: a zero-length message is one packet).
    pub npkts: u32,
}

impl WqeSpan {
    /// PSN of its last packet.
    pub fn last_psn(&self) -> Psn {
        self.first_psn.add(self.npkts.max(1) - 1)
    }
}

/// How many WQEs at the head of `spans` (oldest first) an acknowledgement
/// of every PSN up to and including `psn` completes: those started whose
/// last PSN it covers, in order, stopping at the first that it does not.
pub fn acked(spans: impl IntoIterator<Item = WqeSpan>, psn: Psn) -> usize {
    spans
        .into_iter()
        .take_while(|w| w.started && w.last_psn().compare(psn) <= 0)
        .count()
}

/// Packets of the head WQE `head` that count as sent after rewinding the
/// requester to the oldest unacknowledged PSN `comp`: those before `comp`
/// (acknowledged), so sending resumes at the packet `comp` names.  WQEs
/// after the head restart from their first packet (0).
pub fn rewound_sent(head: WqeSpan, comp: Psn) -> u32 {
    if head.started && head.first_psn.compare(comp) <= 0 {
        head.first_psn.distance_to(comp).min(head.npkts)
    } else {
        0
    }
}

/// The local ACK timeout of IBTA (C9-141): 4.096 us * 2^`timeout`, in
/// nanoseconds; `None` for 0 (wait forever).  Values above 31 are treated
/// as 31 (the attribute is 5 bits; `modify_qp` refuses larger ones).
pub fn ack_timeout_ns(timeout: u8) -> Option<u64> {
    if timeout == 0 {
        return None;
    }
    Some(4096u64 << timeout.min(31))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(first: u32, npkts: u32) -> WqeSpan {
        WqeSpan {
            started: true,
            first_psn: Psn::new(first),
            npkts,
        }
    }

    /// PSNs 0xfffffe..=0xffffff, 0..=3 (wrapping), 4 (a zero-length one).
    fn three() -> [WqeSpan; 3] {
        [span(0xff_fffe, 2), span(0, 4), span(4, 1)]
    }

    #[test]
    fn an_ack_completes_the_wqes_it_covers() {
        let v = three();
        assert_eq!(acked(v, Psn::new(0xff_fffd)), 0);
        assert_eq!(acked(v, Psn::new(0xff_fffe)), 0);
        assert_eq!(acked(v, Psn::new(0xff_ffff)), 1);
        assert_eq!(acked(v, Psn::new(2)), 1);
        assert_eq!(acked(v, Psn::new(3)), 2);
        assert_eq!(acked(v, Psn::new(4)), 3);
        assert_eq!(acked(v, Psn::new(100)), 3);
    }

    #[test]
    fn unsent_wqes_are_never_acked() {
        let mut v = three();
        v[1].started = false;
        assert_eq!(acked(v, Psn::new(4)), 1);
    }

    #[test]
    fn rewind_restarts_at_the_unacked_packet() {
        let head = span(0, 4);
        assert_eq!(rewound_sent(head, Psn::new(2)), 2);
        assert_eq!(rewound_sent(head, Psn::new(0)), 0);
        assert_eq!(rewound_sent(head, Psn::new(9)), 4);
        assert_eq!(
            rewound_sent(span(0xff_fffe, 4), Psn::new(1)),
            3,
            "across the wrap"
        );
        let unsent = WqeSpan {
            started: false,
            ..head
        };
        assert_eq!(rewound_sent(unsent, Psn::new(2)), 0);
    }

    #[test]
    fn zero_packet_span_is_one_psn() {
        let w = WqeSpan {
            started: true,
            first_psn: Psn::new(7),
            npkts: 0,
        };
        assert_eq!(w.last_psn(), Psn::new(7));
    }

    #[test]
    fn local_ack_timeout_follows_ibta() {
        assert_eq!(ack_timeout_ns(0), None);
        assert_eq!(ack_timeout_ns(1), Some(8192));
        // 4.096 us * 2^14 = 67.1 ms
        assert_eq!(ack_timeout_ns(14), Some(67_108_864));
        assert_eq!(ack_timeout_ns(31), ack_timeout_ns(200));
    }
}
