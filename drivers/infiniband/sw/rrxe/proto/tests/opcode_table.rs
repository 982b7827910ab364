// SPDX-License-Identifier: GPL-2.0
//! Invariants of the opcode table, checked over every opcode byte.

use rrxe_proto::opcode::{all_opcodes, flags::*, opcode_info, ExtHeader, Transport, BTH_LEN};

/// Opcodes of C rxe's rxe_opcode[] table.
const C_OPCODES: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d, // RC
    0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, // UC
    0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
    0x50, 0x51, 0x52, 0x53, 0x54, // RD
    0x64, 0x65, // UD
];

#[test]
fn exactly_the_c_opcodes() {
    for op in 0u8..=255 {
        assert_eq!(
            opcode_info(op).is_some(),
            C_OPCODES.contains(&op),
            "opcode {op:#04x}"
        );
        if let Some(i) = opcode_info(op) {
            assert_eq!(i.opcode(), op);
        }
    }
    assert_eq!(all_opcodes().count(), C_OPCODES.len());
}

#[test]
fn header_lengths_and_offsets_are_consistent() {
    for i in all_opcodes() {
        let mut off = BTH_LEN;
        for h in ExtHeader::WIRE_ORDER {
            let present = i.flags() & h.flag() != 0;
            assert_eq!(i.offset(h).is_some(), present, "{} {:?}", i.name(), h);
            if present {
                assert_eq!(i.offset(h), Some(off), "{} {:?}", i.name(), h);
                off += h.wire_len();
            }
        }
        assert_eq!(i.header_len(), off, "{}", i.name());
        assert!(i.header_len() % 4 == 0);
        assert!(i.header_len() <= 80, "RXE_MAX_HDR_LENGTH");
        assert!(i.has(BTH));
    }
}

#[test]
fn kind_flags_are_consistent() {
    for i in all_opcodes() {
        let n = i.name();
        // Exactly one direction.
        assert!(i.is_request() != i.is_response(), "{n}");
        // Middle excludes start and end; everything is start, middle or end.
        assert!(!(i.is_middle() && (i.is_start() || i.is_end())), "{n}");
        assert!(i.is_start() || i.is_middle() || i.is_end(), "{n}");
        assert_eq!(i.is_first(), n.ends_with("FIRST"), "{n}");
        assert_eq!(i.is_middle(), n.ends_with("MIDDLE"), "{n}");
        assert_eq!(i.is_last(), n.contains("_LAST"), "{n}");
        // Names carry the transport.
        let prefix = match i.transport() {
            Transport::Rc => "RC_",
            Transport::Uc => "UC_",
            Transport::Rd => "RD_",
            Transport::Ud => "UD_",
            other => panic!("unexpected transport {other:?}"),
        };
        assert!(n.starts_with(prefix), "{n}");
        assert_eq!(i.has_immediate(), n.contains("IMMEDIATE"), "{n}");
        assert_eq!(i.has_invalidate(), n.contains("INVALIDATE"), "{n}");
        // Headers follow the operation.
        assert_eq!(i.has(RDETH), i.transport() == Transport::Rd, "{n}");
        assert_eq!(
            i.has(DETH),
            matches!(i.transport(), Transport::Ud)
                || (i.transport() == Transport::Rd && i.is_request()),
            "{n}"
        );
        assert_eq!(i.has(ATMETH), i.has(ATOMIC), "{n}");
        assert_eq!(i.has(FETH), i.has(FLUSH), "{n}");
        assert_eq!(i.has(ATMACK), n.ends_with("ATOMIC_ACKNOWLEDGE"), "{n}");
        if i.has(RETH) {
            assert!(
                i.is_start()
                    && (i.has(WRITE) || i.has(READ) || i.has(FLUSH) || i.has(ATOMIC_WRITE)),
                "{n}"
            );
        }
        if i.is_request() && i.has(WRITE) && i.is_start() {
            assert!(i.has(RETH), "{n}");
        }
        // Only one operation per request.
        let ops = [SEND, WRITE, READ, ATOMIC, FLUSH, ATOMIC_WRITE]
            .iter()
            .filter(|&&f| i.has(f))
            .count();
        assert_eq!(ops, usize::from(i.is_request()), "{n}");
        // Receive WQEs: consumed at the start of a send, or by the packet
        // of a write that carries the immediate; completed at the end.
        assert_eq!(
            i.has(RWR),
            (i.is_start() && i.has(SEND)) || (i.has(WRITE) && i.has_immediate()),
            "{n}"
        );
        if i.has(COMP) {
            assert!(i.is_end() && (i.has(SEND) || i.has_immediate()), "{n}");
        }
        // Payload: everything with data, nothing else.
        let data = i.has(SEND)
            || i.has(WRITE)
            || i.has(ATOMIC_WRITE)
            || (i.is_response() && n.contains("READ_RESPONSE"));
        assert_eq!(i.has_payload(), data, "{n}");
        // AETH on responses except read response middle.
        assert_eq!(i.has(AETH), i.is_response() && !i.is_middle(), "{n}");
    }
}

#[test]
fn flags_match_c_mask_values() {
    assert_eq!(PAYLOAD, 1 << 12);
    assert_eq!(REQ, 1 << 13);
    assert_eq!(START, 1 << 22);
    assert_eq!(ATOMIC_WRITE, 1 << 27);
    assert_eq!(RDMA_OP, READ | WRITE | ATOMIC_WRITE | FLUSH | ATOMIC);
}
