// SPDX-License-Identifier: GPL-2.0
//! Requester segmentation: how a message becomes packets.  A message of
//! `len` bytes takes `max(1, ceil(len / pmtu))` packets, each carrying
//! `pmtu` bytes except the last; the opcode of each packet follows from the
//! operation and its place in the message (first/middle/last/only), with
//! the immediate on the last or only packet.

use super::opcode::*;
use super::qp_state::QpType;
use super::wqe::SendOp;

/// Packets a message of `len` bytes takes at path MTU `pmtu` (> 0).
pub const fn packets(len: u32, pmtu: u32) -> u32 {
    let n = len.div_ceil(pmtu);
    if n == 0 {
        1
    } else {
        n
    }
}

/// Offset and length of packet `k` of a `len`-byte message.
pub const fn payload_of(k: u32, len: u32, pmtu: u32) -> (u32, u32) {
    let off = k.saturating_mul(pmtu);
    if off >= len {
        return (len, 0);
    }
    let rest = len - off;
    (off, if rest < pmtu { rest } else { pmtu })
}

/// The opcode of packet `k` of `n` of an `op` message on a `qp_type` QP
/// (RC, UC, or UD: a SEND, with or without immediate, of one packet);
/// `None` for what the QP type cannot send.
pub fn request_opcode(qp_type: QpType, op: SendOp, k: u32, n: u32) -> Option<u8> {
    let first = k == 0;
    let last = k + 1 >= n;
    if matches!(qp_type, QpType::Ud) {
        return match op {
            _ if !(first && last) => None,
            SendOp::Send => Some(UD_SEND_ONLY),
            SendOp::SendImm => Some(UD_SEND_ONLY_WITH_IMMEDIATE),
            _ => None,
        };
    }
    let rc = matches!(qp_type, QpType::Rc);
    if !rc && !matches!(qp_type, QpType::Uc) {
        return None;
    }
    let pick = |r: u8, u: u8| if rc { r } else { u };
    // READ and atomics exist on RC only.
    match op {
        SendOp::Read => return rc.then_some(RC_RDMA_READ_REQUEST),
        SendOp::CompareSwap => return rc.then_some(RC_COMPARE_SWAP),
        SendOp::FetchAdd => return rc.then_some(RC_FETCH_ADD),
        SendOp::AtomicWrite => return rc.then_some(RC_ATOMIC_WRITE),
        SendOp::Flush => return rc.then_some(RC_FLUSH),
        // IBTA defines SEND with Invalidate for RC only.
        SendOp::SendInv if last => {
            return rc.then_some(if first {
                RC_SEND_ONLY_WITH_INVALIDATE
            } else {
                RC_SEND_LAST_WITH_INVALIDATE
            })
        }
        SendOp::SendInv if !rc => return None,
        SendOp::LocalInv | SendOp::BindMw => return None,
        _ => {}
    }
    let imm = op.has_imm();
    Some(match (op.is_write(), first, last) {
        (false, true, true) if imm => {
            pick(RC_SEND_ONLY_WITH_IMMEDIATE, UC_SEND_ONLY_WITH_IMMEDIATE)
        }
        (false, true, true) => pick(RC_SEND_ONLY, UC_SEND_ONLY),
        (false, true, false) => pick(RC_SEND_FIRST, UC_SEND_FIRST),
        (false, false, false) => pick(RC_SEND_MIDDLE, UC_SEND_MIDDLE),
        (false, false, true) if imm => {
            pick(RC_SEND_LAST_WITH_IMMEDIATE, UC_SEND_LAST_WITH_IMMEDIATE)
        }
        (false, false, true) => pick(RC_SEND_LAST, UC_SEND_LAST),
        (true, true, true) if imm => pick(
            RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
        ),
        (true, true, true) => pick(RC_RDMA_WRITE_ONLY, UC_RDMA_WRITE_ONLY),
        (true, true, false) => pick(RC_RDMA_WRITE_FIRST, UC_RDMA_WRITE_FIRST),
        (true, false, false) => pick(RC_RDMA_WRITE_MIDDLE, UC_RDMA_WRITE_MIDDLE),
        (true, false, true) if imm => pick(
            RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
            UC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
        ),
        (true, false, true) => pick(RC_RDMA_WRITE_LAST, UC_RDMA_WRITE_LAST),
    })
}

/// PSNs a request of `op` for `len` bytes takes: a local operation none,
/// an atomic one, anything else one per packet (for READ: per response
/// packet).
pub const fn psn_span(op: SendOp, len: u32, pmtu: u32) -> u32 {
    if op.is_local() {
        0
    } else if op.is_atomic() || op.empty_read_response() {
        1
    } else {
        packets(len, pmtu)
    }
}

/// The opcode of packet `j` of a READ response of `n` packets.
pub const fn read_response_opcode(j: u32, n: u32) -> u8 {
    if n <= 1 {
        RC_RDMA_READ_RESPONSE_ONLY
    } else if j == 0 {
        RC_RDMA_READ_RESPONSE_FIRST
    } else if j + 1 >= n {
        RC_RDMA_READ_RESPONSE_LAST
    } else {
        RC_RDMA_READ_RESPONSE_MIDDLE
    }
}

/// The opcode of packet `j` of the `n` packets that answer again a READ
/// from its packet `skip` on (a resent READ: the requester has the
/// packets before).  From its first packet (`skip` 0) the response is
/// new ([`read_response_opcode`]); from the middle it continues the
/// message the requester is in, MIDDLE up to a LAST, as C rxe's responder
/// answers it, and as C rxe's requester requires: it takes a FIRST or
/// ONLY in the middle of a READ response for a fatal error.
pub const fn replay_response_opcode(skip: u32, j: u32, n: u32) -> u8 {
    if skip == 0 {
        read_response_opcode(j, n)
    } else if j + 1 >= n {
        RC_RDMA_READ_RESPONSE_LAST
    } else {
        RC_RDMA_READ_RESPONSE_MIDDLE
    }
}

/// The remote address and length of a READ of `len` bytes at `va`
/// resent from its response packet `k` (those before arrived): the rest
/// of the message.  `None` if `k` is past its last packet.
pub const fn read_resume(va: u64, len: u32, k: u32, pmtu: u32) -> Option<(u64, u32)> {
    if k >= packets(len, pmtu) {
        return None;
    }
    let (off, _) = payload_of(k, len, pmtu);
    Some((va.wrapping_add(off as u64), len - off))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_from_the_middle_continues_the_message() {
        // From the start: a new response.
        assert_eq!(replay_response_opcode(0, 0, 3), RC_RDMA_READ_RESPONSE_FIRST);
        assert_eq!(replay_response_opcode(0, 0, 1), RC_RDMA_READ_RESPONSE_ONLY);
        // From packet 5 on: MIDDLE ... LAST, a lone rest is LAST, never
        // FIRST or ONLY.
        assert_eq!(
            replay_response_opcode(5, 0, 3),
            RC_RDMA_READ_RESPONSE_MIDDLE
        );
        assert_eq!(
            replay_response_opcode(5, 1, 3),
            RC_RDMA_READ_RESPONSE_MIDDLE
        );
        assert_eq!(replay_response_opcode(5, 2, 3), RC_RDMA_READ_RESPONSE_LAST);
        assert_eq!(replay_response_opcode(5, 0, 1), RC_RDMA_READ_RESPONSE_LAST);
    }

    #[test]
    fn packet_counts() {
        assert_eq!(packets(0, 1024), 1);
        assert_eq!(packets(1, 1024), 1);
        assert_eq!(packets(1024, 1024), 1);
        assert_eq!(packets(1025, 1024), 2);
        assert_eq!(packets(1 << 20, 4096), 256);
        assert_eq!(packets(u32::MAX, 256), u32::MAX.div_ceil(256));
    }

    #[test]
    fn payload_split() {
        assert_eq!(payload_of(0, 2500, 1024), (0, 1024));
        assert_eq!(payload_of(2, 2500, 1024), (2048, 452));
        assert_eq!(payload_of(3, 2500, 1024), (2500, 0));
        assert_eq!(payload_of(0, 0, 1024), (0, 0));
        let total: u32 = (0..packets(70000, 4096))
            .map(|k| payload_of(k, 70000, 4096).1)
            .sum();
        assert_eq!(total, 70000);
    }

    #[test]
    fn send_with_invalidate_flush_and_local_ops() {
        let ops: [u8; 3] = core::array::from_fn(|k| {
            request_opcode(QpType::Rc, SendOp::SendInv, k as u32, 3).unwrap()
        });
        assert_eq!(
            ops,
            [RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST_WITH_INVALIDATE]
        );
        assert_eq!(
            request_opcode(QpType::Rc, SendOp::SendInv, 0, 1),
            Some(RC_SEND_ONLY_WITH_INVALIDATE)
        );
        assert_eq!(request_opcode(QpType::Uc, SendOp::SendInv, 0, 1), None);
        assert_eq!(request_opcode(QpType::Uc, SendOp::SendInv, 0, 2), None);
        assert_eq!(
            request_opcode(QpType::Rc, SendOp::Flush, 0, 1),
            Some(RC_FLUSH)
        );
        assert_eq!(request_opcode(QpType::Uc, SendOp::Flush, 0, 1), None);
        assert_eq!(request_opcode(QpType::Rc, SendOp::BindMw, 0, 1), None);
        assert_eq!(
            request_opcode(QpType::Ud, SendOp::Send, 0, 1),
            Some(UD_SEND_ONLY)
        );
        assert_eq!(
            request_opcode(QpType::Ud, SendOp::SendImm, 0, 1),
            Some(UD_SEND_ONLY_WITH_IMMEDIATE)
        );
        // UD: one packet, SENDs only.
        assert_eq!(request_opcode(QpType::Ud, SendOp::Send, 0, 2), None);
        assert_eq!(request_opcode(QpType::Ud, SendOp::Write, 0, 1), None);
        assert_eq!(request_opcode(QpType::Ud, SendOp::SendInv, 0, 1), None);
        assert_eq!(request_opcode(QpType::Ud, SendOp::Read, 0, 1), None);
        assert_eq!(psn_span(SendOp::Flush, 1 << 20, 1024), 1);
        assert_eq!(psn_span(SendOp::LocalInv, 0, 1024), 0);
        assert_eq!(psn_span(SendOp::SendInv, 3000, 1024), 3);
    }

    #[test]
    fn opcodes_follow_position() {
        let ops: [u8; 3] = core::array::from_fn(|k| {
            request_opcode(QpType::Rc, SendOp::SendImm, k as u32, 3).unwrap()
        });
        assert_eq!(
            ops,
            [RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST_WITH_IMMEDIATE]
        );
        assert_eq!(
            request_opcode(QpType::Uc, SendOp::Send, 0, 1),
            Some(UC_SEND_ONLY)
        );
        assert_eq!(
            request_opcode(QpType::Rc, SendOp::Write, 0, 2),
            Some(RC_RDMA_WRITE_FIRST)
        );
        assert_eq!(
            request_opcode(QpType::Uc, SendOp::WriteImm, 1, 2),
            Some(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE)
        );
        assert_eq!(
            request_opcode(QpType::Rc, SendOp::WriteImm, 0, 1),
            Some(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE)
        );
        assert_eq!(request_opcode(QpType::Gsi, SendOp::Send, 0, 1), None);
    }

    #[test]
    fn reads_and_atomics() {
        assert_eq!(
            request_opcode(QpType::Rc, SendOp::Read, 0, 9),
            Some(RC_RDMA_READ_REQUEST)
        );
        assert_eq!(request_opcode(QpType::Uc, SendOp::Read, 0, 1), None);
        assert_eq!(request_opcode(QpType::Uc, SendOp::FetchAdd, 0, 1), None);
        assert_eq!(
            request_opcode(QpType::Rc, SendOp::CompareSwap, 0, 1),
            Some(RC_COMPARE_SWAP)
        );
        assert_eq!(psn_span(SendOp::Read, 5000, 1024), 5);
        assert_eq!(psn_span(SendOp::Read, 0, 1024), 1);
        assert_eq!(psn_span(SendOp::FetchAdd, 8, 256), 1);
        assert_eq!(psn_span(SendOp::AtomicWrite, 8, 256), 1);
        assert_eq!(
            request_opcode(QpType::Rc, SendOp::AtomicWrite, 0, 1),
            Some(RC_ATOMIC_WRITE)
        );
        assert_eq!(request_opcode(QpType::Uc, SendOp::AtomicWrite, 0, 1), None);
        let ops: [u8; 4] = core::array::from_fn(|j| read_response_opcode(j as u32, 4));
        assert_eq!(
            ops,
            [
                RC_RDMA_READ_RESPONSE_FIRST,
                RC_RDMA_READ_RESPONSE_MIDDLE,
                RC_RDMA_READ_RESPONSE_MIDDLE,
                RC_RDMA_READ_RESPONSE_LAST
            ]
        );
        assert_eq!(read_response_opcode(0, 1), RC_RDMA_READ_RESPONSE_ONLY);
        for j in 0..4 {
            let i = opcode_info(read_response_opcode(j, 4)).unwrap();
            assert!(!i.is_request());
            assert_eq!(i.has(flags::AETH), j == 0 || j == 3);
        }
    }

    #[test]
    fn read_resumes_at_whole_packets() {
        assert_eq!(read_resume(0x1000, 5000, 0, 1024), Some((0x1000, 5000)));
        assert_eq!(
            read_resume(0x1000, 5000, 3, 1024),
            Some((0x1000 + 3072, 1928))
        );
        assert_eq!(
            read_resume(0x1000, 5000, 4, 1024),
            Some((0x1000 + 4096, 904))
        );
        assert_eq!(read_resume(0x1000, 5000, 5, 1024), None);
        assert_eq!(read_resume(0x1000, 0, 0, 1024), Some((0x1000, 0)));
        assert_eq!(read_resume(u64::MAX, 4096, 1, 1024), Some((1023, 3072)));
    }

    #[test]
    fn every_opcode_parses_as_a_request() {
        for t in [QpType::Rc, QpType::Uc] {
            for op in [
                SendOp::Send,
                SendOp::SendImm,
                SendOp::Write,
                SendOp::WriteImm,
            ] {
                for (k, n) in [(0, 1), (0, 3), (1, 3), (2, 3)] {
                    let o = request_opcode(t, op, k, n).unwrap();
                    let info = opcode_info(o).unwrap();
                    assert!(info.is_request());
                    assert_eq!(info.is_start(), k == 0);
                    assert_eq!(info.is_end(), k + 1 == n);
                }
            }
        }
    }
}
