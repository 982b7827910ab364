// SPDX-License-Identifier: GPL-2.0
//! Base Transport Header (BTH, IBTA 9.2): the 12 bytes that start every
//! RoCEv2 transport packet, right after the UDP header.
//!
//! ```text
//! byte 0      opcode
//! byte 1      SE(7) M(6) PadCnt(5:4) TVer(3:0)
//! bytes 2-3   P_Key
//! byte 4      FECN(7) BECN(6) resv6a(5:0)    (RoCEv2 masks this byte in the ICRC)
//! bytes 5-7   destination QP
//! byte 8      AckReq(7) resv7(6:0)
//! bytes 9-11  PSN
//! ```

use zerocopy::big_endian::{U16, U32};

use super::header::{wire_header, Header};
use super::psn::Psn;

/// Length of the BTH on the wire.
pub const BTH_LEN: usize = 12;

/// The only transport header version defined (`TVer`).
pub const BTH_TVER: u8 = 0;
/// Default (full-member) partition key.
pub const BTH_DEF_PKEY: u16 = 0xffff;
/// Solicited-event bit of the flags byte.
pub const BTH_SE_MASK: u8 = 0x80;
/// Migration-state bit of the flags byte.
pub const BTH_MIG_MASK: u8 = 0x40;
/// Pad-count field of the flags byte.
pub const BTH_PAD_MASK: u8 = 0x30;
/// Transport-version field of the flags byte.
pub const BTH_TVER_MASK: u8 = 0x0f;
/// FECN bit of the QPN word.
pub const BTH_FECN_MASK: u32 = 0x8000_0000;
/// BECN bit of the QPN word.
pub const BTH_BECN_MASK: u32 = 0x4000_0000;
/// Reserved bits of the QPN word.
pub const BTH_RESV6A_MASK: u32 = 0x3f00_0000;
/// Queue-pair number bits of the QPN word.
pub const BTH_QPN_MASK: u32 = 0x00ff_ffff;
/// AckReq bit of the PSN word.
pub const BTH_ACK_MASK: u32 = 0x8000_0000;
/// Reserved bits of the PSN word.
pub const BTH_RESV7_MASK: u32 = 0x7f00_0000;
/// PSN bits of the PSN word.
pub const BTH_PSN_MASK: u32 = 0x00ff_ffff;
/// Destination QPN that addresses a multicast group.
pub const MULTICAST_QPN: u32 = 0x00ff_ffff;

wire_header! {
    /// Base Transport Header, viewed in place over packet bytes.
    pub struct Bth {
        opcode: u8,
        flags: u8,
        pkey: U16,
        qpn: U32,
        apsn: U32,
    }
}

impl Header for Bth {}

impl Bth {
    /// A BTH with the given opcode, destination QP and PSN; all flags clear,
    /// transport version 0 and the default P_Key.  Refine with the
    /// `with_*` methods.
    pub fn new(opcode: u8, dest_qpn: u32, psn: Psn) -> Self {
        Bth {
            opcode,
            flags: 0,
            pkey: U16::new(BTH_DEF_PKEY),
            qpn: U32::new(dest_qpn & BTH_QPN_MASK),
            apsn: U32::new(psn.get()),
        }
    }

    /// Builder form of [`Bth::set_se`].
    pub fn with_se(mut self, se: bool) -> Self {
        self.set_se(se);
        self
    }

    /// Builder form of [`Bth::set_mig`].
    pub fn with_mig(mut self, mig: bool) -> Self {
        self.set_mig(mig);
        self
    }

    /// Builder form of [`Bth::set_pad`].
    pub fn with_pad(mut self, pad: u8) -> Self {
        self.set_pad(pad);
        self
    }

    /// Builder form of [`Bth::set_pkey`].
    pub fn with_pkey(mut self, pkey: u16) -> Self {
        self.set_pkey(pkey);
        self
    }

    /// Builder form of [`Bth::set_ack_req`].
    pub fn with_ack_req(mut self, ack: bool) -> Self {
        self.set_ack_req(ack);
        self
    }

    /// Builder form of [`Bth::set_becn`].
    pub fn with_becn(mut self, becn: bool) -> Self {
        self.set_becn(becn);
        self
    }

    /// Opcode byte (transport in bits 7:5, operation in bits 4:0).
    pub fn opcode(&self) -> u8 {
        self.opcode
    }

    /// Sets the opcode byte.
    pub fn set_opcode(&mut self, opcode: u8) {
        self.opcode = opcode;
    }

    /// Raw flags byte (SE, M, PadCnt, TVer).
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// Solicited event requested.
    pub fn se(&self) -> bool {
        self.flags & BTH_SE_MASK != 0
    }

    /// Sets the solicited-event bit.
    pub fn set_se(&mut self, se: bool) {
        self.flags = set_bit8(self.flags, BTH_SE_MASK, se);
    }

    /// Migration state bit.
    pub fn mig(&self) -> bool {
        self.flags & BTH_MIG_MASK != 0
    }

    /// Sets the migration state bit.
    pub fn set_mig(&mut self, mig: bool) {
        self.flags = set_bit8(self.flags, BTH_MIG_MASK, mig);
    }

    /// Pad count: bytes (0..=3) appended to the payload to reach a multiple
    /// of 4.
    pub fn pad(&self) -> u8 {
        (self.flags & BTH_PAD_MASK) >> 4
    }

    /// Sets the pad count (only the low two bits of `pad` are used).
    pub fn set_pad(&mut self, pad: u8) {
        self.flags = (self.flags & !BTH_PAD_MASK) | ((pad << 4) & BTH_PAD_MASK);
    }

    /// Transport header version (must be [`BTH_TVER`] on receive).
    pub fn tver(&self) -> u8 {
        self.flags & BTH_TVER_MASK
    }

    /// Sets the transport header version (low four bits of `tver`).
    pub fn set_tver(&mut self, tver: u8) {
        self.flags = (self.flags & !BTH_TVER_MASK) | (tver & BTH_TVER_MASK);
    }

    /// Partition key.
    pub fn pkey(&self) -> u16 {
        self.pkey.get()
    }

    /// Sets the partition key.
    pub fn set_pkey(&mut self, pkey: u16) {
        self.pkey.set(pkey);
    }

    /// Destination queue-pair number (24 bits).
    pub fn qpn(&self) -> u32 {
        self.qpn.get() & BTH_QPN_MASK
    }

    /// Sets the destination QPN, keeping FECN/BECN/reserved bits.
    pub fn set_qpn(&mut self, qpn: u32) {
        let w = self.qpn.get();
        self.qpn.set((w & !BTH_QPN_MASK) | (qpn & BTH_QPN_MASK));
    }

    /// Forward explicit congestion notification.
    pub fn fecn(&self) -> bool {
        self.qpn.get() & BTH_FECN_MASK != 0
    }

    /// Sets FECN.
    pub fn set_fecn(&mut self, fecn: bool) {
        self.qpn.set(set_bit32(self.qpn.get(), BTH_FECN_MASK, fecn));
    }

    /// Backward explicit congestion notification.
    pub fn becn(&self) -> bool {
        self.qpn.get() & BTH_BECN_MASK != 0
    }

    /// Sets BECN.
    pub fn set_becn(&mut self, becn: bool) {
        self.qpn.set(set_bit32(self.qpn.get(), BTH_BECN_MASK, becn));
    }

    /// The six reserved bits of byte 4 (ignored on receive).
    pub fn resv6a(&self) -> u8 {
        ((self.qpn.get() & BTH_RESV6A_MASK) >> 24) as u8
    }

    /// Acknowledge requested (AckReq).
    pub fn ack_req(&self) -> bool {
        self.apsn.get() & BTH_ACK_MASK != 0
    }

    /// Sets AckReq.
    pub fn set_ack_req(&mut self, ack: bool) {
        self.apsn.set(set_bit32(self.apsn.get(), BTH_ACK_MASK, ack));
    }

    /// Packet sequence number.
    pub fn psn(&self) -> Psn {
        Psn::new(self.apsn.get())
    }

    /// Sets the PSN, keeping AckReq and the reserved bits.
    pub fn set_psn(&mut self, psn: Psn) {
        let w = self.apsn.get();
        self.apsn.set((w & !BTH_PSN_MASK) | psn.get());
    }

    /// Clears both reserved fields (resv6a, resv7), as a sender must.
    pub fn clear_reserved(&mut self) {
        self.qpn.set(self.qpn.get() & !BTH_RESV6A_MASK);
        self.apsn.set(self.apsn.get() & !BTH_RESV7_MASK);
    }
}

fn set_bit8(v: u8, mask: u8, on: bool) -> u8 {
    if on {
        v | mask
    } else {
        v & !mask
    }
}

fn set_bit32(v: u32, mask: u32, on: bool) -> u32 {
    if on {
        v | mask
    } else {
        v & !mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_fields() {
        assert_eq!(<Bth as Header>::LEN, 12);
        let bytes = [
            0x04, 0xb5, 0x12, 0x34, 0xc0, 0x00, 0x00, 0x11, 0x80, 0xab, 0xcd, 0xef,
        ];
        let (b, rest) = Bth::parse(&bytes).unwrap();
        assert!(rest.is_empty());
        assert_eq!(b.opcode(), 0x04);
        assert!(b.se());
        assert!(!b.mig());
        assert_eq!(b.pad(), 3);
        assert_eq!(b.tver(), 5);
        assert_eq!(b.pkey(), 0x1234);
        assert!(b.fecn() && b.becn());
        assert_eq!(b.qpn(), 0x11);
        assert!(b.ack_req());
        assert_eq!(b.psn().get(), 0xabcdef);
    }

    #[test]
    fn build_matches_bytes() {
        let b = Bth::new(0x0a, 0x123456, Psn::new(0x00fe_dcba))
            .with_se(true)
            .with_pad(2)
            .with_ack_req(true);
        let mut buf = [0u8; 12];
        assert_eq!(b.emit(&mut buf), Ok(12));
        assert_eq!(
            buf,
            [0x0a, 0xa0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56, 0x80, 0xfe, 0xdc, 0xba]
        );
    }

    #[test]
    fn short_buffer() {
        assert_eq!(
            Bth::parse(&[0u8; 11]).err(),
            Some(super::super::header::HeaderError::TooShort { need: 12, have: 11 })
        );
    }

    #[test]
    fn setters_keep_neighbours() {
        let mut b = Bth::new(0, 0, Psn::new(0));
        b.set_fecn(true);
        b.set_qpn(0xffff_ffff);
        assert!(b.fecn());
        assert_eq!(b.qpn(), 0xff_ffff);
        b.set_ack_req(true);
        b.set_psn(Psn::new(5));
        assert!(b.ack_req());
        assert_eq!(b.psn().get(), 5);
        b.set_tver(0xf);
        b.set_pad(1);
        assert_eq!((b.tver(), b.pad()), (0xf, 1));
    }
}
