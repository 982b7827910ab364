// SPDX-License-Identifier: GPL-2.0
//! Writing transport packets into caller buffers: the BTH and the extension
//! headers the opcode calls for, in wire order, then optionally payload, pad
//! and room for the ICRC.
//!
//! The opcode table decides which headers are written; [`ExtHeaders`] must
//! supply exactly those, so a packet whose headers disagree with its opcode
//! cannot be built.  The BTH pad count is always derived from the payload
//! length.  The ICRC covers the IP and UDP headers too, so it is filled in
//! afterwards over the whole L3 packet (`icrc::icrc_fill`).

use super::aeth::Aeth;
use super::atmack::AtomicAck;
use super::atmeth::AtomicEth;
use super::bth::Bth;
use super::deth::Deth;
use super::feth::Feth;
use super::header::Header;
use super::icrc::ICRC_LEN;
use super::ieth::Ieth;
use super::immdt::Immdt;
use super::opcode::{opcode_info, ExtHeader, OpcodeInfo};
use super::rdeth::Rdeth;
use super::reth::Reth;

/// Values for the extension headers of a packet; set exactly those the
/// opcode carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtHeaders {
    /// RDETH.
    pub rdeth: Option<Rdeth>,
    /// DETH.
    pub deth: Option<Deth>,
    /// FETH.
    pub feth: Option<Feth>,
    /// RETH.
    pub reth: Option<Reth>,
    /// AtomicETH.
    pub atmeth: Option<AtomicEth>,
    /// AETH.
    pub aeth: Option<Aeth>,
    /// AtomicAckETH.
    pub atmack: Option<AtomicAck>,
    /// Immediate data.
    pub immdt: Option<Immdt>,
    /// IETH.
    pub ieth: Option<Ieth>,
}

impl ExtHeaders {
    /// True if a value for `h` is present.
    pub fn has(&self, h: ExtHeader) -> bool {
        match h {
            ExtHeader::Rdeth => self.rdeth.is_some(),
            ExtHeader::Deth => self.deth.is_some(),
            ExtHeader::Feth => self.feth.is_some(),
            ExtHeader::Reth => self.reth.is_some(),
            ExtHeader::AtmEth => self.atmeth.is_some(),
            ExtHeader::Aeth => self.aeth.is_some(),
            ExtHeader::AtmAck => self.atmack.is_some(),
            ExtHeader::Immdt => self.immdt.is_some(),
            ExtHeader::Ieth => self.ieth.is_some(),
        }
    }

    /// Writes header `h` at the start of `dst`, if present.
    fn emit(&self, h: ExtHeader, dst: &mut [u8]) -> Option<usize> {
        let r = match h {
            ExtHeader::Rdeth => self.rdeth?.emit(dst),
            ExtHeader::Deth => self.deth?.emit(dst),
            ExtHeader::Feth => self.feth?.emit(dst),
            ExtHeader::Reth => self.reth?.emit(dst),
            ExtHeader::AtmEth => self.atmeth?.emit(dst),
            ExtHeader::Aeth => self.aeth?.emit(dst),
            ExtHeader::AtmAck => self.atmack?.emit(dst),
            ExtHeader::Immdt => self.immdt?.emit(dst),
            ExtHeader::Ieth => self.ieth?.emit(dst),
        };
        r.ok()
    }
}

/// Why a packet could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// The BTH opcode is not in the opcode table.
    UnknownOpcode(u8),
    /// The opcode needs this header and [`ExtHeaders`] lacks it.
    MissingHeader(ExtHeader),
    /// [`ExtHeaders`] has a header the opcode does not carry.
    UnexpectedHeader(ExtHeader),
    /// Payload given for an opcode without payload.
    PayloadNotAllowed,
    /// The buffer is too small.
    BufferTooShort {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
}

/// Pad bytes (0..=3) that bring `payload_len` to a multiple of 4.
pub const fn pad_for(payload_len: usize) -> u8 {
    (payload_len.wrapping_neg() & 3) as u8
}

/// Transport packet length (BTH .. ICRC, C `paylen`) for `opcode` with
/// `payload_len` payload bytes; `None` for unknown opcodes, payload on an
/// opcode without payload, or overflow.
pub fn packet_len(opcode: u8, payload_len: usize) -> Option<usize> {
    let info = opcode_info(opcode)?;
    if payload_len != 0 && !info.has_payload() {
        return None;
    }
    info.header_len()
        .checked_add(payload_len)?
        .checked_add(usize::from(pad_for(payload_len)))?
        .checked_add(ICRC_LEN)
}

fn check_headers(info: &OpcodeInfo, ext: &ExtHeaders) -> Result<(), BuildError> {
    for h in ExtHeader::WIRE_ORDER {
        match (info.offset(h).is_some(), ext.has(h)) {
            (true, false) => return Err(BuildError::MissingHeader(h)),
            (false, true) => return Err(BuildError::UnexpectedHeader(h)),
            _ => {}
        }
    }
    Ok(())
}

/// Writes the BTH (with the pad count for `payload_len`) and the extension
/// headers at the start of `buf`; returns the header length, where the
/// payload goes.
pub fn write_headers(
    buf: &mut [u8],
    bth: &Bth,
    ext: &ExtHeaders,
    payload_len: usize,
) -> Result<usize, BuildError> {
    let info = opcode_info(bth.opcode()).ok_or(BuildError::UnknownOpcode(bth.opcode()))?;
    if payload_len != 0 && !info.has_payload() {
        return Err(BuildError::PayloadNotAllowed);
    }
    check_headers(info, ext)?;
    let need = info.header_len();
    let short = BuildError::BufferTooShort {
        need,
        have: buf.len(),
    };
    let hdr = buf.get_mut(..need).ok_or(short)?;
    let mut b = *bth;
    b.set_pad(pad_for(payload_len));
    b.emit(hdr).map_err(|_| short)?;
    for h in ExtHeader::WIRE_ORDER {
        if let Some(off) = info.offset(h) {
            let dst = hdr.get_mut(off..).ok_or(short)?;
            ext.emit(h, dst).ok_or(BuildError::MissingHeader(h))?;
        }
    }
    Ok(need)
}

/// Writes a whole transport packet: headers, `payload`, zeroed pad and a
/// zeroed ICRC placeholder.  Returns the packet length (C `paylen`).
pub fn build_packet(
    buf: &mut [u8],
    bth: &Bth,
    ext: &ExtHeaders,
    payload: &[u8],
) -> Result<usize, BuildError> {
    let total = packet_len(bth.opcode(), payload.len()).ok_or(match opcode_info(bth.opcode()) {
        None => BuildError::UnknownOpcode(bth.opcode()),
        Some(_) => BuildError::PayloadNotAllowed,
    })?;
    let short = BuildError::BufferTooShort {
        need: total,
        have: buf.len(),
    };
    let pkt = buf.get_mut(..total).ok_or(short)?;
    let hdr_len = write_headers(pkt, bth, ext, payload.len())?;
    let rest = pkt.get_mut(hdr_len..).ok_or(short)?;
    let (body, tail) = match payload.len() <= rest.len() {
        true => rest.split_at_mut(payload.len()),
        false => return Err(short),
    };
    body.copy_from_slice(payload);
    tail.fill(0);
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::super::opcode::*;
    use super::super::psn::Psn;
    use super::*;

    #[test]
    fn header_set_must_match_opcode() {
        let mut buf = [0u8; 64];
        let bth = Bth::new(RC_RDMA_WRITE_FIRST, 5, Psn::new(1));
        assert_eq!(
            write_headers(&mut buf, &bth, &ExtHeaders::default(), 0),
            Err(BuildError::MissingHeader(ExtHeader::Reth))
        );
        let ext = ExtHeaders {
            reth: Some(Reth::new(0, 0, 0)),
            immdt: Some(Immdt::from_u32(1)),
            ..Default::default()
        };
        assert_eq!(
            write_headers(&mut buf, &bth, &ext, 0),
            Err(BuildError::UnexpectedHeader(ExtHeader::Immdt))
        );
        let ack = Bth::new(RC_ACKNOWLEDGE, 5, Psn::new(1));
        let ext = ExtHeaders {
            aeth: Some(Aeth::new(0x1f, 0)),
            ..Default::default()
        };
        assert_eq!(
            build_packet(&mut buf, &ack, &ext, b"x"),
            Err(BuildError::PayloadNotAllowed)
        );
        assert_eq!(build_packet(&mut buf, &ack, &ext, b""), Ok(20));
        assert_eq!(
            build_packet(&mut buf[..19], &ack, &ext, b""),
            Err(BuildError::BufferTooShort { need: 20, have: 19 })
        );
    }

    #[test]
    fn pad() {
        assert_eq!(
            [pad_for(0), pad_for(1), pad_for(2), pad_for(3), pad_for(4)],
            [0, 3, 2, 1, 0]
        );
        assert_eq!(packet_len(RC_SEND_ONLY, 5), Some(12 + 5 + 3 + 4));
        assert_eq!(packet_len(RC_ACKNOWLEDGE, 1), None);
        assert_eq!(packet_len(0x15, 0), None);
    }
}
