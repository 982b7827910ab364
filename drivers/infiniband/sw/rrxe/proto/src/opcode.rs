// SPDX-License-Identifier: GPL-2.0
//! The opcode table: for every BTH opcode rxe understands, which extension
//! headers follow the BTH (in wire order), the total header length, and what
//! kind of packet it is (request/response, first/middle/last/only, send,
//! write, read, atomic, flush, atomic write, immediate, invalidate, payload).
//!
//! The facts are those of C rxe's `rxe_opcode[]` (RC, UC, RD, UD, plus the
//! FLUSH and ATOMIC WRITE extensions).  The flag bits keep the values of C's
//! `enum rxe_hdr_mask`, so a mask can be handed across the C boundary as is.
//! Header offsets are derived from the flags at compile time: extension
//! headers always appear in the order RDETH, DETH, FETH, RETH, AtomicETH,
//! AETH, AtomicAckETH, ImmDt, IETH, and the payload follows the last one.
//! (Unlike C, the payload offset of opcodes without payload is the header
//! length, not 0.)

/// Transport-type bits (7:5) of an opcode.
pub const TRANSPORT_MASK: u8 = 0xe0;

/// The transport service encoded in bits 7:5 of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Reliable connection (0x00).
    Rc,
    /// Unreliable connection (0x20).
    Uc,
    /// Reliable datagram (0x40).
    Rd,
    /// Unreliable datagram (0x60).
    Ud,
    /// Congestion notification packet (0x80).
    Cnp,
    /// Extended reliable connection (0xa0).
    Xrc,
    /// Reserved (0xc0).
    Reserved,
    /// Manufacturer specific (0xe0).
    Msp,
}

impl Transport {
    /// Transport of an opcode.
    pub const fn of(opcode: u8) -> Self {
        match opcode & TRANSPORT_MASK {
            0x00 => Transport::Rc,
            0x20 => Transport::Uc,
            0x40 => Transport::Rd,
            0x60 => Transport::Ud,
            0x80 => Transport::Cnp,
            0xa0 => Transport::Xrc,
            0xc0 => Transport::Reserved,
            _ => Transport::Msp,
        }
    }
}

// Transport bases and operation codes (include/rdma/ib_pack.h).
const RC: u8 = 0x00;
const UC: u8 = 0x20;
const RD: u8 = 0x40;
const UD: u8 = 0x60;
const SEND_FIRST: u8 = 0x00;
const SEND_MIDDLE: u8 = 0x01;
const SEND_LAST: u8 = 0x02;
const SEND_LAST_IMM: u8 = 0x03;
const SEND_ONLY: u8 = 0x04;
const SEND_ONLY_IMM: u8 = 0x05;
const WRITE_FIRST: u8 = 0x06;
const WRITE_MIDDLE: u8 = 0x07;
const WRITE_LAST: u8 = 0x08;
const WRITE_LAST_IMM: u8 = 0x09;
const WRITE_ONLY: u8 = 0x0a;
const WRITE_ONLY_IMM: u8 = 0x0b;
const READ_REQUEST: u8 = 0x0c;
const READ_RESP_FIRST: u8 = 0x0d;
const READ_RESP_MIDDLE: u8 = 0x0e;
const READ_RESP_LAST: u8 = 0x0f;
const READ_RESP_ONLY: u8 = 0x10;
const ACKNOWLEDGE: u8 = 0x11;
const ATOMIC_ACKNOWLEDGE: u8 = 0x12;
const COMPARE_SWAP: u8 = 0x13;
const FETCH_ADD: u8 = 0x14;
const SEND_LAST_INV: u8 = 0x16;
const SEND_ONLY_INV: u8 = 0x17;
const OP_FLUSH: u8 = 0x1c;
const OP_ATOMIC_WRITE: u8 = 0x1d;

/// RC SEND First.
pub const RC_SEND_FIRST: u8 = RC | SEND_FIRST;
/// RC SEND Middle.
pub const RC_SEND_MIDDLE: u8 = RC | SEND_MIDDLE;
/// RC SEND Last.
pub const RC_SEND_LAST: u8 = RC | SEND_LAST;
/// RC SEND Last with Immediate.
pub const RC_SEND_LAST_WITH_IMMEDIATE: u8 = RC | SEND_LAST_IMM;
/// RC SEND Only.
pub const RC_SEND_ONLY: u8 = RC | SEND_ONLY;
/// RC SEND Only with Immediate.
pub const RC_SEND_ONLY_WITH_IMMEDIATE: u8 = RC | SEND_ONLY_IMM;
/// RC RDMA WRITE First.
pub const RC_RDMA_WRITE_FIRST: u8 = RC | WRITE_FIRST;
/// RC RDMA WRITE Middle.
pub const RC_RDMA_WRITE_MIDDLE: u8 = RC | WRITE_MIDDLE;
/// RC RDMA WRITE Last.
pub const RC_RDMA_WRITE_LAST: u8 = RC | WRITE_LAST;
/// RC RDMA WRITE Last with Immediate.
pub const RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 = RC | WRITE_LAST_IMM;
/// RC RDMA WRITE Only.
pub const RC_RDMA_WRITE_ONLY: u8 = RC | WRITE_ONLY;
/// RC RDMA WRITE Only with Immediate.
pub const RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 = RC | WRITE_ONLY_IMM;
/// RC RDMA READ Request.
pub const RC_RDMA_READ_REQUEST: u8 = RC | READ_REQUEST;
/// RC RDMA READ Response First.
pub const RC_RDMA_READ_RESPONSE_FIRST: u8 = RC | READ_RESP_FIRST;
/// RC RDMA READ Response Middle.
pub const RC_RDMA_READ_RESPONSE_MIDDLE: u8 = RC | READ_RESP_MIDDLE;
/// RC RDMA READ Response Last.
pub const RC_RDMA_READ_RESPONSE_LAST: u8 = RC | READ_RESP_LAST;
/// RC RDMA READ Response Only.
pub const RC_RDMA_READ_RESPONSE_ONLY: u8 = RC | READ_RESP_ONLY;
/// RC Acknowledge.
pub const RC_ACKNOWLEDGE: u8 = RC | ACKNOWLEDGE;
/// RC Atomic Acknowledge.
pub const RC_ATOMIC_ACKNOWLEDGE: u8 = RC | ATOMIC_ACKNOWLEDGE;
/// RC CmpSwap.
pub const RC_COMPARE_SWAP: u8 = RC | COMPARE_SWAP;
/// RC FetchAdd.
pub const RC_FETCH_ADD: u8 = RC | FETCH_ADD;
/// RC SEND Last with Invalidate.
pub const RC_SEND_LAST_WITH_INVALIDATE: u8 = RC | SEND_LAST_INV;
/// RC SEND Only with Invalidate.
pub const RC_SEND_ONLY_WITH_INVALIDATE: u8 = RC | SEND_ONLY_INV;
/// RC FLUSH.
pub const RC_FLUSH: u8 = RC | OP_FLUSH;
/// RC ATOMIC WRITE.
pub const RC_ATOMIC_WRITE: u8 = RC | OP_ATOMIC_WRITE;
/// UC SEND First.
pub const UC_SEND_FIRST: u8 = UC | SEND_FIRST;
/// UC SEND Middle.
pub const UC_SEND_MIDDLE: u8 = UC | SEND_MIDDLE;
/// UC SEND Last.
pub const UC_SEND_LAST: u8 = UC | SEND_LAST;
/// UC SEND Last with Immediate.
pub const UC_SEND_LAST_WITH_IMMEDIATE: u8 = UC | SEND_LAST_IMM;
/// UC SEND Only.
pub const UC_SEND_ONLY: u8 = UC | SEND_ONLY;
/// UC SEND Only with Immediate.
pub const UC_SEND_ONLY_WITH_IMMEDIATE: u8 = UC | SEND_ONLY_IMM;
/// UC RDMA WRITE First.
pub const UC_RDMA_WRITE_FIRST: u8 = UC | WRITE_FIRST;
/// UC RDMA WRITE Middle.
pub const UC_RDMA_WRITE_MIDDLE: u8 = UC | WRITE_MIDDLE;
/// UC RDMA WRITE Last.
pub const UC_RDMA_WRITE_LAST: u8 = UC | WRITE_LAST;
/// UC RDMA WRITE Last with Immediate.
pub const UC_RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 = UC | WRITE_LAST_IMM;
/// UC RDMA WRITE Only.
pub const UC_RDMA_WRITE_ONLY: u8 = UC | WRITE_ONLY;
/// UC RDMA WRITE Only with Immediate.
pub const UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 = UC | WRITE_ONLY_IMM;
/// RD SEND First.
pub const RD_SEND_FIRST: u8 = RD | SEND_FIRST;
/// RD SEND Middle.
pub const RD_SEND_MIDDLE: u8 = RD | SEND_MIDDLE;
/// RD SEND Last.
pub const RD_SEND_LAST: u8 = RD | SEND_LAST;
/// RD SEND Last with Immediate.
pub const RD_SEND_LAST_WITH_IMMEDIATE: u8 = RD | SEND_LAST_IMM;
/// RD SEND Only.
pub const RD_SEND_ONLY: u8 = RD | SEND_ONLY;
/// RD SEND Only with Immediate.
pub const RD_SEND_ONLY_WITH_IMMEDIATE: u8 = RD | SEND_ONLY_IMM;
/// RD RDMA WRITE First.
pub const RD_RDMA_WRITE_FIRST: u8 = RD | WRITE_FIRST;
/// RD RDMA WRITE Middle.
pub const RD_RDMA_WRITE_MIDDLE: u8 = RD | WRITE_MIDDLE;
/// RD RDMA WRITE Last.
pub const RD_RDMA_WRITE_LAST: u8 = RD | WRITE_LAST;
/// RD RDMA WRITE Last with Immediate.
pub const RD_RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 = RD | WRITE_LAST_IMM;
/// RD RDMA WRITE Only.
pub const RD_RDMA_WRITE_ONLY: u8 = RD | WRITE_ONLY;
/// RD RDMA WRITE Only with Immediate.
pub const RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 = RD | WRITE_ONLY_IMM;
/// RD RDMA READ Request.
pub const RD_RDMA_READ_REQUEST: u8 = RD | READ_REQUEST;
/// RD RDMA READ Response First.
pub const RD_RDMA_READ_RESPONSE_FIRST: u8 = RD | READ_RESP_FIRST;
/// RD RDMA READ Response Middle.
pub const RD_RDMA_READ_RESPONSE_MIDDLE: u8 = RD | READ_RESP_MIDDLE;
/// RD RDMA READ Response Last.
pub const RD_RDMA_READ_RESPONSE_LAST: u8 = RD | READ_RESP_LAST;
/// RD RDMA READ Response Only.
pub const RD_RDMA_READ_RESPONSE_ONLY: u8 = RD | READ_RESP_ONLY;
/// RD Acknowledge.
pub const RD_ACKNOWLEDGE: u8 = RD | ACKNOWLEDGE;
/// RD Atomic Acknowledge.
pub const RD_ATOMIC_ACKNOWLEDGE: u8 = RD | ATOMIC_ACKNOWLEDGE;
/// RD CmpSwap.
pub const RD_COMPARE_SWAP: u8 = RD | COMPARE_SWAP;
/// RD FetchAdd.
pub const RD_FETCH_ADD: u8 = RD | FETCH_ADD;
/// UD SEND Only.
pub const UD_SEND_ONLY: u8 = UD | SEND_ONLY;
/// UD SEND Only with Immediate.
pub const UD_SEND_ONLY_WITH_IMMEDIATE: u8 = UD | SEND_ONLY_IMM;

/// Flag bits of [`OpcodeInfo::flags`]; the values of C's `enum rxe_hdr_mask`.
pub mod flags {
    /// Local routing header (never on RoCEv2).
    pub const LRH: u32 = 1 << 0;
    /// Global routing header (the IP header, on RoCEv2).
    pub const GRH: u32 = 1 << 1;
    /// Base transport header.
    pub const BTH: u32 = 1 << 2;
    /// RDMA extended transport header.
    pub const RETH: u32 = 1 << 3;
    /// ACK extended transport header.
    pub const AETH: u32 = 1 << 4;
    /// Atomic extended transport header.
    pub const ATMETH: u32 = 1 << 5;
    /// Atomic acknowledge extended transport header.
    pub const ATMACK: u32 = 1 << 6;
    /// Invalidate extended transport header.
    pub const IETH: u32 = 1 << 7;
    /// Reliable datagram extended transport header.
    pub const RDETH: u32 = 1 << 8;
    /// Datagram extended transport header.
    pub const DETH: u32 = 1 << 9;
    /// Immediate data.
    pub const IMMDT: u32 = 1 << 10;
    /// Flush extended transport header.
    pub const FETH: u32 = 1 << 11;
    /// The packet may carry payload.
    pub const PAYLOAD: u32 = 1 << 12;
    /// Request (handled by the responder).
    pub const REQ: u32 = 1 << 13;
    /// Response (handled by the completer).
    pub const ACK: u32 = 1 << 14;
    /// SEND operation.
    pub const SEND: u32 = 1 << 15;
    /// RDMA WRITE operation.
    pub const WRITE: u32 = 1 << 16;
    /// RDMA READ request.
    pub const READ: u32 = 1 << 17;
    /// Atomic (CmpSwap / FetchAdd).
    pub const ATOMIC: u32 = 1 << 18;
    /// FLUSH.
    pub const FLUSH: u32 = 1 << 19;
    /// Consumes a receive work request.
    pub const RWR: u32 = 1 << 20;
    /// Completes a receive work request.
    pub const COMP: u32 = 1 << 21;
    /// First or only packet of a message.
    pub const START: u32 = 1 << 22;
    /// Middle packet of a message.
    pub const MIDDLE: u32 = 1 << 23;
    /// Last or only packet of a message.
    pub const END: u32 = 1 << 24;
    /// Looped back locally (set per packet, never in the table).
    pub const LOOPBACK: u32 = 1 << 25;
    /// ATOMIC WRITE.
    pub const ATOMIC_WRITE: u32 = 1 << 27;
    /// READ or ATOMIC.
    pub const READ_OR_ATOMIC: u32 = READ | ATOMIC;
    /// WRITE or SEND.
    pub const WRITE_OR_SEND: u32 = WRITE | SEND;
    /// READ or WRITE.
    pub const READ_OR_WRITE: u32 = READ | WRITE;
    /// Every operation that targets remote memory.
    pub const RDMA_OP: u32 = READ | WRITE | ATOMIC_WRITE | FLUSH | ATOMIC;
}

use flags::*;

/// An extension header that may follow the BTH, in wire order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExtHeader {
    /// Reliable datagram ETH (4 bytes).
    Rdeth,
    /// Datagram ETH (8 bytes).
    Deth,
    /// Flush ETH (4 bytes).
    Feth,
    /// RDMA ETH (16 bytes).
    Reth,
    /// Atomic ETH (28 bytes).
    AtmEth,
    /// ACK ETH (4 bytes).
    Aeth,
    /// Atomic acknowledge ETH (8 bytes).
    AtmAck,
    /// Immediate data (4 bytes).
    Immdt,
    /// Invalidate ETH (4 bytes).
    Ieth,
}

impl ExtHeader {
    /// All extension headers, in the order they appear on the wire.
    pub const WIRE_ORDER: [ExtHeader; 9] = [
        ExtHeader::Rdeth,
        ExtHeader::Deth,
        ExtHeader::Feth,
        ExtHeader::Reth,
        ExtHeader::AtmEth,
        ExtHeader::Aeth,
        ExtHeader::AtmAck,
        ExtHeader::Immdt,
        ExtHeader::Ieth,
    ];

    /// Length on the wire.
    pub const fn wire_len(self) -> usize {
        match self {
            ExtHeader::Rdeth => 4,
            ExtHeader::Deth => 8,
            ExtHeader::Feth => 4,
            ExtHeader::Reth => 16,
            ExtHeader::AtmEth => 28,
            ExtHeader::Aeth => 4,
            ExtHeader::AtmAck => 8,
            ExtHeader::Immdt => 4,
            ExtHeader::Ieth => 4,
        }
    }

    /// The [`flags`] bit that says an opcode carries this header.
    pub const fn flag(self) -> u32 {
        match self {
            ExtHeader::Rdeth => RDETH,
            ExtHeader::Deth => DETH,
            ExtHeader::Feth => FETH,
            ExtHeader::Reth => RETH,
            ExtHeader::AtmEth => ATMETH,
            ExtHeader::Aeth => AETH,
            ExtHeader::AtmAck => ATMACK,
            ExtHeader::Immdt => IMMDT,
            ExtHeader::Ieth => IETH,
        }
    }

    const fn index(self) -> usize {
        match self {
            ExtHeader::Rdeth => 0,
            ExtHeader::Deth => 1,
            ExtHeader::Feth => 2,
            ExtHeader::Reth => 3,
            ExtHeader::AtmEth => 4,
            ExtHeader::Aeth => 5,
            ExtHeader::AtmAck => 6,
            ExtHeader::Immdt => 7,
            ExtHeader::Ieth => 8,
        }
    }
}

/// BTH length.
pub const BTH_LEN: usize = 12;

/// What the opcode table knows about one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpcodeInfo {
    opcode: u8,
    name: &'static str,
    flags: u32,
    length: u8,
    /// Offset of each extension header (indexed by `ExtHeader::index`);
    /// 0 means absent (nothing but the BTH can be at offset 0).
    offsets: [u8; 9],
}

impl OpcodeInfo {
    const fn new(opcode: u8, name: &'static str, flags: u32) -> Self {
        let mut offsets = [0u8; 9];
        let mut off = BTH_LEN;
        let mut i = 0;
        while i < ExtHeader::WIRE_ORDER.len() {
            let h = ExtHeader::WIRE_ORDER[i];
            if flags & h.flag() != 0 {
                offsets[h.index()] = off as u8;
                off += h.wire_len();
            }
            i += 1;
        }
        OpcodeInfo {
            opcode,
            name,
            flags: flags | BTH,
            length: off as u8,
            offsets,
        }
    }

    /// The opcode byte.
    pub const fn opcode(&self) -> u8 {
        self.opcode
    }

    /// IBTA-style name, e.g. `"RC_SEND_FIRST"`.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// [`flags`] bits (C's `rxe_opcode[].mask`).
    pub const fn flags(&self) -> u32 {
        self.flags
    }

    /// True if every bit of `mask` is set in [`OpcodeInfo::flags`].
    pub const fn has(&self, mask: u32) -> bool {
        self.flags & mask == mask
    }

    /// Length of the BTH plus all extension headers; the payload starts here.
    pub const fn header_len(&self) -> usize {
        self.length as usize
    }

    /// Offset of an extension header from the start of the BTH, if the
    /// opcode carries it.
    pub fn offset(&self, h: ExtHeader) -> Option<usize> {
        match self.offsets.get(h.index()) {
            None | Some(0) => None,
            Some(o) => Some(usize::from(*o)),
        }
    }

    /// Transport service of this opcode.
    pub const fn transport(&self) -> Transport {
        Transport::of(self.opcode)
    }

    /// A request (goes to the responder).
    pub const fn is_request(&self) -> bool {
        self.has(REQ)
    }

    /// A response (goes to the completer).
    pub const fn is_response(&self) -> bool {
        self.has(ACK)
    }

    /// May carry payload.
    pub const fn has_payload(&self) -> bool {
        self.has(PAYLOAD)
    }

    /// Carries immediate data.
    pub const fn has_immediate(&self) -> bool {
        self.has(IMMDT)
    }

    /// Carries an rkey to invalidate.
    pub const fn has_invalidate(&self) -> bool {
        self.has(IETH)
    }

    /// First or only packet of a message.
    pub const fn is_start(&self) -> bool {
        self.has(START)
    }

    /// Middle packet of a message.
    pub const fn is_middle(&self) -> bool {
        self.has(MIDDLE)
    }

    /// Last or only packet of a message.
    pub const fn is_end(&self) -> bool {
        self.has(END)
    }

    /// Whole message in one packet.
    pub const fn is_only(&self) -> bool {
        self.has(START | END)
    }

    /// First packet of a multi-packet message.
    pub const fn is_first(&self) -> bool {
        self.is_start() && !self.is_end()
    }

    /// Last packet of a multi-packet message.
    pub const fn is_last(&self) -> bool {
        self.is_end() && !self.is_start()
    }
}

const fn op(opcode: u8, name: &'static str, flags: u32) -> OpcodeInfo {
    OpcodeInfo::new(opcode, name, flags)
}

const P: u32 = PAYLOAD;
const RS: u32 = REQ | SEND;
const RW: u32 = REQ | WRITE;
const ONLY: u32 = START | END;
const RDH: u32 = RDETH | DETH;

/// Every opcode rxe knows (C `rxe_opcode[]`).
#[rustfmt::skip]
static TABLE: [OpcodeInfo; 60] = [
    // RC
    op(RC_SEND_FIRST, "RC_SEND_FIRST", P | RS | RWR | START),
    op(RC_SEND_MIDDLE, "RC_SEND_MIDDLE", P | RS | MIDDLE),
    op(RC_SEND_LAST, "RC_SEND_LAST", P | RS | COMP | END),
    op(RC_SEND_LAST_WITH_IMMEDIATE, "RC_SEND_LAST_WITH_IMMEDIATE", IMMDT | P | RS | COMP | END),
    op(RC_SEND_ONLY, "RC_SEND_ONLY", P | RS | COMP | RWR | ONLY),
    op(RC_SEND_ONLY_WITH_IMMEDIATE, "RC_SEND_ONLY_WITH_IMMEDIATE", IMMDT | P | RS | COMP | RWR | ONLY),
    op(RC_RDMA_WRITE_FIRST, "RC_RDMA_WRITE_FIRST", RETH | P | RW | START),
    op(RC_RDMA_WRITE_MIDDLE, "RC_RDMA_WRITE_MIDDLE", P | RW | MIDDLE),
    op(RC_RDMA_WRITE_LAST, "RC_RDMA_WRITE_LAST", P | RW | END),
    op(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMMDT | P | RW | COMP | RWR | END),
    op(RC_RDMA_WRITE_ONLY, "RC_RDMA_WRITE_ONLY", RETH | P | RW | ONLY),
    op(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMMDT | P | RW | COMP | RWR | ONLY),
    op(RC_RDMA_READ_REQUEST, "RC_RDMA_READ_REQUEST", RETH | REQ | READ | ONLY),
    op(RC_RDMA_READ_RESPONSE_FIRST, "RC_RDMA_READ_RESPONSE_FIRST", AETH | P | ACK | START),
    op(RC_RDMA_READ_RESPONSE_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE", P | ACK | MIDDLE),
    op(RC_RDMA_READ_RESPONSE_LAST, "RC_RDMA_READ_RESPONSE_LAST", AETH | P | ACK | END),
    op(RC_RDMA_READ_RESPONSE_ONLY, "RC_RDMA_READ_RESPONSE_ONLY", AETH | P | ACK | ONLY),
    op(RC_ACKNOWLEDGE, "RC_ACKNOWLEDGE", AETH | ACK | ONLY),
    op(RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE", AETH | ATMACK | ACK | ONLY),
    op(RC_COMPARE_SWAP, "RC_COMPARE_SWAP", ATMETH | REQ | ATOMIC | ONLY),
    op(RC_FETCH_ADD, "RC_FETCH_ADD", ATMETH | REQ | ATOMIC | ONLY),
    op(RC_SEND_LAST_WITH_INVALIDATE, "RC_SEND_LAST_WITH_INVALIDATE", IETH | P | RS | COMP | END),
    op(RC_SEND_ONLY_WITH_INVALIDATE, "RC_SEND_ONLY_WITH_INVALIDATE", IETH | P | RS | COMP | RWR | ONLY),
    op(RC_FLUSH, "RC_FLUSH", FETH | RETH | FLUSH | REQ | ONLY),
    op(RC_ATOMIC_WRITE, "RC_ATOMIC_WRITE", RETH | P | REQ | ATOMIC_WRITE | ONLY),
    // UC
    op(UC_SEND_FIRST, "UC_SEND_FIRST", P | RS | RWR | START),
    op(UC_SEND_MIDDLE, "UC_SEND_MIDDLE", P | RS | MIDDLE),
    op(UC_SEND_LAST, "UC_SEND_LAST", P | RS | COMP | END),
    op(UC_SEND_LAST_WITH_IMMEDIATE, "UC_SEND_LAST_WITH_IMMEDIATE", IMMDT | P | RS | COMP | END),
    op(UC_SEND_ONLY, "UC_SEND_ONLY", P | RS | COMP | RWR | ONLY),
    op(UC_SEND_ONLY_WITH_IMMEDIATE, "UC_SEND_ONLY_WITH_IMMEDIATE", IMMDT | P | RS | COMP | RWR | ONLY),
    op(UC_RDMA_WRITE_FIRST, "UC_RDMA_WRITE_FIRST", RETH | P | RW | START),
    op(UC_RDMA_WRITE_MIDDLE, "UC_RDMA_WRITE_MIDDLE", P | RW | MIDDLE),
    op(UC_RDMA_WRITE_LAST, "UC_RDMA_WRITE_LAST", P | RW | END),
    op(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMMDT | P | RW | COMP | RWR | END),
    op(UC_RDMA_WRITE_ONLY, "UC_RDMA_WRITE_ONLY", RETH | P | RW | ONLY),
    op(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMMDT | P | RW | COMP | RWR | ONLY),
    // RD (parsed for completeness; rxe has no RD QPs, so validation drops them)
    op(RD_SEND_FIRST, "RD_SEND_FIRST", RDH | P | RS | RWR | START),
    op(RD_SEND_MIDDLE, "RD_SEND_MIDDLE", RDH | P | RS | MIDDLE),
    op(RD_SEND_LAST, "RD_SEND_LAST", RDH | P | RS | COMP | END),
    op(RD_SEND_LAST_WITH_IMMEDIATE, "RD_SEND_LAST_WITH_IMMEDIATE", RDH | IMMDT | P | RS | COMP | END),
    op(RD_SEND_ONLY, "RD_SEND_ONLY", RDH | P | RS | COMP | RWR | ONLY),
    op(RD_SEND_ONLY_WITH_IMMEDIATE, "RD_SEND_ONLY_WITH_IMMEDIATE", RDH | IMMDT | P | RS | COMP | RWR | ONLY),
    op(RD_RDMA_WRITE_FIRST, "RD_RDMA_WRITE_FIRST", RDH | RETH | P | RW | START),
    op(RD_RDMA_WRITE_MIDDLE, "RD_RDMA_WRITE_MIDDLE", RDH | P | RW | MIDDLE),
    op(RD_RDMA_WRITE_LAST, "RD_RDMA_WRITE_LAST", RDH | P | RW | END),
    op(RD_RDMA_WRITE_LAST_WITH_IMMEDIATE, "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE", RDH | IMMDT | P | RW | COMP | RWR | END),
    op(RD_RDMA_WRITE_ONLY, "RD_RDMA_WRITE_ONLY", RDH | RETH | P | RW | ONLY),
    op(RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RDH | RETH | IMMDT | P | RW | COMP | RWR | ONLY),
    op(RD_RDMA_READ_REQUEST, "RD_RDMA_READ_REQUEST", RDH | RETH | REQ | READ | ONLY),
    op(RD_RDMA_READ_RESPONSE_FIRST, "RD_RDMA_READ_RESPONSE_FIRST", RDETH | AETH | P | ACK | START),
    op(RD_RDMA_READ_RESPONSE_MIDDLE, "RD_RDMA_READ_RESPONSE_MIDDLE", RDETH | P | ACK | MIDDLE),
    op(RD_RDMA_READ_RESPONSE_LAST, "RD_RDMA_READ_RESPONSE_LAST", RDETH | AETH | P | ACK | END),
    op(RD_RDMA_READ_RESPONSE_ONLY, "RD_RDMA_READ_RESPONSE_ONLY", RDETH | AETH | P | ACK | ONLY),
    op(RD_ACKNOWLEDGE, "RD_ACKNOWLEDGE", RDETH | AETH | ACK | ONLY),
    op(RD_ATOMIC_ACKNOWLEDGE, "RD_ATOMIC_ACKNOWLEDGE", RDETH | AETH | ATMACK | ACK | ONLY),
    op(RD_COMPARE_SWAP, "RD_COMPARE_SWAP", RDH | ATMETH | REQ | ATOMIC | ONLY),
    op(RD_FETCH_ADD, "RD_FETCH_ADD", RDH | ATMETH | REQ | ATOMIC | ONLY),
    // UD
    op(UD_SEND_ONLY, "UD_SEND_ONLY", DETH | P | RS | COMP | RWR | ONLY),
    op(UD_SEND_ONLY_WITH_IMMEDIATE, "UD_SEND_ONLY_WITH_IMMEDIATE", DETH | IMMDT | P | RS | COMP | RWR | ONLY),
];

/// Opcode byte -> index into `TABLE`, `NONE` for unknown opcodes.
static INDEX: [u8; 256] = build_index();
const NONE: u8 = 0xff;

const fn build_index() -> [u8; 256] {
    let mut idx = [NONE; 256];
    let mut i = 0;
    while i < TABLE.len() {
        idx[TABLE[i].opcode as usize] = i as u8;
        i += 1;
    }
    idx
}

/// Looks an opcode up; `None` for opcodes rxe does not know (C rxe drops
/// such packets).
pub fn opcode_info(opcode: u8) -> Option<&'static OpcodeInfo> {
    let i = *INDEX.get(usize::from(opcode))?;
    TABLE.get(usize::from(i))
}

/// Every known opcode, in table order.
pub fn all_opcodes() -> impl Iterator<Item = &'static OpcodeInfo> {
    TABLE.iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_match_c_table() {
        let len = |o| opcode_info(o).map(|i| i.header_len());
        assert_eq!(len(RC_SEND_FIRST), Some(12));
        assert_eq!(len(RC_SEND_LAST_WITH_IMMEDIATE), Some(16));
        assert_eq!(len(RC_RDMA_WRITE_FIRST), Some(28));
        assert_eq!(len(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE), Some(32));
        assert_eq!(len(RC_ATOMIC_ACKNOWLEDGE), Some(24));
        assert_eq!(len(RC_COMPARE_SWAP), Some(40));
        assert_eq!(len(RC_FLUSH), Some(32));
        assert_eq!(len(RC_ATOMIC_WRITE), Some(28));
        assert_eq!(len(RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE), Some(44));
        assert_eq!(len(RD_COMPARE_SWAP), Some(52));
        assert_eq!(len(UD_SEND_ONLY), Some(20));
        assert_eq!(len(UD_SEND_ONLY_WITH_IMMEDIATE), Some(24));
        assert_eq!(len(0x15), None);
        assert_eq!(len(0x81), None);
    }

    #[test]
    fn offsets_match_c_table() {
        let i = opcode_info(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE).unwrap();
        assert_eq!(i.offset(ExtHeader::Reth), Some(12));
        assert_eq!(i.offset(ExtHeader::Immdt), Some(28));
        let i = opcode_info(RC_ATOMIC_ACKNOWLEDGE).unwrap();
        assert_eq!(i.offset(ExtHeader::Aeth), Some(12));
        assert_eq!(i.offset(ExtHeader::AtmAck), Some(16));
        let i = opcode_info(RC_FLUSH).unwrap();
        assert_eq!(i.offset(ExtHeader::Feth), Some(12));
        assert_eq!(i.offset(ExtHeader::Reth), Some(16));
        let i = opcode_info(RD_SEND_LAST_WITH_IMMEDIATE).unwrap();
        assert_eq!(i.offset(ExtHeader::Rdeth), Some(12));
        assert_eq!(i.offset(ExtHeader::Deth), Some(16));
        assert_eq!(i.offset(ExtHeader::Immdt), Some(24));
        let i = opcode_info(UD_SEND_ONLY_WITH_IMMEDIATE).unwrap();
        assert_eq!(i.offset(ExtHeader::Deth), Some(12));
        assert_eq!(i.offset(ExtHeader::Immdt), Some(20));
        assert_eq!(i.offset(ExtHeader::Reth), None);
    }

    #[test]
    fn kinds() {
        let i = opcode_info(UC_SEND_FIRST).unwrap();
        assert!(i.is_first() && !i.is_only() && i.is_request());
        assert_eq!(i.transport(), Transport::Uc);
        assert!(opcode_info(RC_RDMA_READ_RESPONSE_MIDDLE)
            .unwrap()
            .is_middle());
        assert!(opcode_info(RC_ACKNOWLEDGE).unwrap().is_response());
        assert!(opcode_info(RC_SEND_ONLY_WITH_INVALIDATE)
            .unwrap()
            .has_invalidate());
        assert_eq!(opcode_info(RC_FETCH_ADD).unwrap().name(), "RC_FETCH_ADD");
    }
}
