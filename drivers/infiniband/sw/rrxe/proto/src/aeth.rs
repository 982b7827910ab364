// SPDX-License-Identifier: GPL-2.0
//! ACK Extended Transport Header (AETH, 4 bytes) and its syndrome.
//!
//! The AETH is an 8-bit syndrome followed by a 24-bit MSN.  Syndrome bit 7 is
//! reserved, bits 6:5 give the kind and bits 4:0 its value:
//!
//! | bits 6:5 | kind    | bits 4:0                                         |
//! |----------|---------|--------------------------------------------------|
//! | `00`     | ACK     | credit count code ([`credits_from_code`]; 31 = unlimited) |
//! | `01`     | RNR NAK | RNR timer code ([`RnrTimer`])                    |
//! | `10`     | reserved|                                                  |
//! | `11`     | NAK     | [`NakCode`]                                      |

use zerocopy::big_endian::U32;

use super::header::{wire_header, Header};

/// Syndrome bits of the AETH word.
pub const AETH_SYN_MASK: u32 = 0xff00_0000;
/// MSN bits of the AETH word.
pub const AETH_MSN_MASK: u32 = 0x00ff_ffff;
/// Kind bits of the syndrome (C `AETH_TYPE_MASK`).
pub const AETH_TYPE_MASK: u8 = 0xe0;
/// Syndrome kind: ACK.
pub const AETH_ACK: u8 = 0x00;
/// Syndrome kind: RNR NAK.
pub const AETH_RNR_NAK: u8 = 0x20;
/// Syndrome kind: reserved.
pub const AETH_RSVD: u8 = 0x40;
/// Syndrome kind: NAK.
pub const AETH_NAK: u8 = 0x60;
/// ACK syndrome with "unlimited credits" (what rxe always sends).
pub const AETH_ACK_UNLIMITED: u8 = 0x1f;
/// Credit code meaning "no credit information" / unlimited.
pub const CREDITS_UNLIMITED: u8 = 0x1f;

wire_header! {
    /// ACK extended transport header.
    pub struct Aeth {
        smsn: U32,
    }
}

impl Header for Aeth {}

impl Aeth {
    /// An AETH with the given raw syndrome byte and MSN (24 bits).
    pub fn new(syndrome: u8, msn: u32) -> Self {
        Aeth {
            smsn: U32::new((u32::from(syndrome) << 24) | (msn & AETH_MSN_MASK)),
        }
    }

    /// An AETH from a decoded [`Syndrome`].
    pub fn from_syndrome(syn: Syndrome, msn: u32) -> Self {
        Aeth::new(syn.encode(), msn)
    }

    /// Raw syndrome byte.
    pub fn syndrome_raw(&self) -> u8 {
        (self.smsn.get() >> 24) as u8
    }

    /// Decoded syndrome.
    pub fn syndrome(&self) -> Syndrome {
        Syndrome::decode(self.syndrome_raw())
    }

    /// Sets the raw syndrome byte, keeping the MSN.
    pub fn set_syndrome_raw(&mut self, syn: u8) {
        let w = self.smsn.get();
        self.smsn.set((w & AETH_MSN_MASK) | (u32::from(syn) << 24));
    }

    /// Message sequence number.
    pub fn msn(&self) -> u32 {
        self.smsn.get() & AETH_MSN_MASK
    }

    /// Sets the MSN, keeping the syndrome.
    pub fn set_msn(&mut self, msn: u32) {
        let w = self.smsn.get();
        self.smsn.set((w & AETH_SYN_MASK) | (msn & AETH_MSN_MASK));
    }
}

/// NAK codes (syndrome `011x_xxxx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NakCode {
    /// PSN sequence error: the requester must resend from the NAK's PSN.
    PsnSequenceError = 0,
    /// Invalid request.
    InvalidRequest = 1,
    /// Remote access error.
    RemoteAccessError = 2,
    /// Remote operational error.
    RemoteOperationalError = 3,
    /// Invalid RD request.
    InvalidRdRequest = 4,
}

impl NakCode {
    /// Decodes bits 4:0 of a NAK syndrome; `None` for reserved codes.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(NakCode::PsnSequenceError),
            1 => Some(NakCode::InvalidRequest),
            2 => Some(NakCode::RemoteAccessError),
            3 => Some(NakCode::RemoteOperationalError),
            4 => Some(NakCode::InvalidRdRequest),
            _ => None,
        }
    }

    /// The full syndrome byte of this NAK (e.g. `0x60` for a PSN error,
    /// C `AETH_NAK_PSN_SEQ_ERROR`).
    pub const fn syndrome(self) -> u8 {
        AETH_NAK | self as u8
    }
}

/// The 5-bit RNR NAK timer code (IBTA table 45, `enum ib_rnr_timeout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RnrTimer(u8);

/// Microseconds of each RNR timer code.  Code 0 is the longest delay.
const RNR_USEC: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

impl RnrTimer {
    /// The timer with the given code (low five bits of `code`).
    pub const fn new(code: u8) -> Self {
        RnrTimer(code & 0x1f)
    }

    /// The 5-bit code.
    pub const fn code(self) -> u8 {
        self.0
    }

    /// Delay in microseconds, per IBTA.  (C rxe's table has 61410 for code
    /// 25 where the specification says 61.44 ms; this is the specification.)
    pub fn micros(self) -> u32 {
        match RNR_USEC.get(usize::from(self.0)) {
            Some(us) => *us,
            None => RNR_USEC[0],
        }
    }

    /// The shortest timer whose delay is at least `us` microseconds (the
    /// longest, code 0, if none is).
    pub fn from_micros_at_least(us: u32) -> Self {
        // Code 0 is the longest delay, so it is the fallback.
        let mut best = RnrTimer(0);
        for code in 1u8..32 {
            let t = RnrTimer(code);
            if t.micros() >= us && t.micros() < best.micros() {
                best = t;
            }
        }
        best
    }
}

/// End-to-end flow-control credits of an ACK credit code (IBTA table 44):
/// `None` for code 31 (unlimited / invalid credit count).
pub fn credits_from_code(code: u8) -> Option<u32> {
    const CREDITS: [u32; 31] = [
        0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
        2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
    ];
    CREDITS.get(usize::from(code & 0x1f)).copied()
}

/// A decoded AETH syndrome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syndrome {
    /// Positive acknowledgement with a credit code (31 = unlimited).
    Ack {
        /// Credit count code; see [`credits_from_code`].
        credit_code: u8,
    },
    /// Receiver not ready: retry after the timer.
    RnrNak(RnrTimer),
    /// Negative acknowledgement.
    Nak(NakCode),
    /// A NAK with a reserved code (bits 4:0 not in [`NakCode`]).
    NakReserved(u8),
    /// Reserved kind `10` or reserved bit 7 set; the raw byte.
    Reserved(u8),
}

impl Syndrome {
    /// Decodes a raw syndrome byte.
    pub const fn decode(syn: u8) -> Self {
        if syn & 0x80 != 0 {
            return Syndrome::Reserved(syn);
        }
        let low = syn & 0x1f;
        match syn & AETH_TYPE_MASK {
            AETH_ACK => Syndrome::Ack { credit_code: low },
            AETH_RNR_NAK => Syndrome::RnrNak(RnrTimer::new(low)),
            AETH_NAK => match NakCode::from_code(low) {
                Some(c) => Syndrome::Nak(c),
                None => Syndrome::NakReserved(low),
            },
            _ => Syndrome::Reserved(syn),
        }
    }

    /// Encodes to the raw syndrome byte.
    pub const fn encode(self) -> u8 {
        match self {
            Syndrome::Ack { credit_code } => AETH_ACK | (credit_code & 0x1f),
            Syndrome::RnrNak(t) => AETH_RNR_NAK | t.code(),
            Syndrome::Nak(c) => c.syndrome(),
            Syndrome::NakReserved(low) => AETH_NAK | (low & 0x1f),
            Syndrome::Reserved(raw) => raw,
        }
    }

    /// ACK with unlimited credits, as rxe sends.
    pub const fn ack_unlimited() -> Self {
        Syndrome::Ack {
            credit_code: CREDITS_UNLIMITED,
        }
    }

    /// True for a positive ACK.
    pub const fn is_ack(self) -> bool {
        matches!(self, Syndrome::Ack { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_syndrome_values() {
        assert_eq!(NakCode::PsnSequenceError.syndrome(), 0x60);
        assert_eq!(NakCode::InvalidRequest.syndrome(), 0x61);
        assert_eq!(NakCode::RemoteAccessError.syndrome(), 0x62);
        assert_eq!(NakCode::RemoteOperationalError.syndrome(), 0x63);
        assert_eq!(NakCode::InvalidRdRequest.syndrome(), 0x64);
        assert_eq!(Syndrome::ack_unlimited().encode(), AETH_ACK_UNLIMITED);
        assert_eq!(Syndrome::RnrNak(RnrTimer::new(14)).encode(), 0x2e);
    }

    #[test]
    fn decode_all_bytes_round_trip() {
        for b in 0u8..=255 {
            assert_eq!(Syndrome::decode(b).encode(), b, "byte {b:#x}");
        }
        assert_eq!(Syndrome::decode(0x45), Syndrome::Reserved(0x45));
        assert_eq!(Syndrome::decode(0x7f), Syndrome::NakReserved(0x1f));
    }

    #[test]
    fn rnr_table() {
        assert_eq!(RnrTimer::new(0).micros(), 655_360);
        assert_eq!(RnrTimer::new(1).micros(), 10);
        assert_eq!(RnrTimer::new(14).micros(), 1_280);
        assert_eq!(RnrTimer::new(25).micros(), 61_440);
        assert_eq!(RnrTimer::new(31).micros(), 491_520);
        assert_eq!(RnrTimer::from_micros_at_least(0).code(), 1);
        assert_eq!(RnrTimer::from_micros_at_least(1_000).code(), 14);
        assert_eq!(RnrTimer::from_micros_at_least(500_000).code(), 0);
        assert_eq!(RnrTimer::from_micros_at_least(700_000).code(), 0);
    }

    #[test]
    fn credits() {
        assert_eq!(credits_from_code(0), Some(0));
        assert_eq!(credits_from_code(5), Some(6));
        assert_eq!(credits_from_code(30), Some(32768));
        assert_eq!(credits_from_code(31), None);
    }

    #[test]
    fn header() {
        let a = Aeth::from_syndrome(Syndrome::Nak(NakCode::RemoteAccessError), 0x0102_0304);
        let mut b = [0u8; 4];
        a.emit(&mut b).unwrap();
        assert_eq!(b, [0x62, 0x02, 0x03, 0x04]);
        let mut a = a;
        a.set_msn(7);
        a.set_syndrome_raw(0x1f);
        assert_eq!((a.msn(), a.syndrome()), (7, Syndrome::ack_unlimited()));
    }
}
