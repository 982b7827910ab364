// SPDX-License-Identifier: GPL-2.0
//! Datagram Extended Transport Header (DETH, 8 bytes): Q_Key and source QP
//! of UD (and RD) packets.

use zerocopy::big_endian::U32;

use super::header::{wire_header, Header};

/// The well-known Q_Key of the general services QP (QP1).
pub const GSI_QKEY: u32 = 0x8001_0000;
/// Source-QP bits of the second word.
pub const DETH_SQP_MASK: u32 = 0x00ff_ffff;

wire_header! {
    /// Datagram extended transport header.
    pub struct Deth {
        qkey: U32,
        sqp: U32,
    }
}

impl Header for Deth {}

impl Deth {
    /// A DETH with the given Q_Key and source QP (24 bits).
    pub fn new(qkey: u32, src_qpn: u32) -> Self {
        Deth {
            qkey: U32::new(qkey),
            sqp: U32::new(src_qpn & DETH_SQP_MASK),
        }
    }

    /// Queue key.
    pub fn qkey(&self) -> u32 {
        self.qkey.get()
    }

    /// Sets the queue key.
    pub fn set_qkey(&mut self, qkey: u32) {
        self.qkey.set(qkey);
    }

    /// Source queue pair number.
    pub fn src_qpn(&self) -> u32 {
        self.sqp.get() & DETH_SQP_MASK
    }

    /// Sets the source QPN (reserved high byte cleared).
    pub fn set_src_qpn(&mut self, qpn: u32) {
        self.sqp.set(qpn & DETH_SQP_MASK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut b = [0u8; 8];
        Deth::new(GSI_QKEY, 0xff00_0001).emit(&mut b).unwrap();
        assert_eq!(b, [0x80, 0x01, 0, 0, 0, 0, 0, 1]);
        let (d, _) = Deth::parse(&[1, 2, 3, 4, 0xff, 5, 6, 7]).unwrap();
        assert_eq!((d.qkey(), d.src_qpn()), (0x0102_0304, 0x05_0607));
    }
}
