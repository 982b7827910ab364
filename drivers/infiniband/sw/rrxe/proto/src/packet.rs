// SPDX-License-Identifier: GPL-2.0
//! A parsed RoCE transport packet: a zero-copy view over the bytes from the
//! BTH through the ICRC (C rxe's `pkt->hdr` .. `pkt->hdr + pkt->paylen`).
//!
//! [`Packet::parse`] does what C `rxe_rcv()` does before looking at any QP:
//! the buffer must hold a BTH, the opcode must be known, and the buffer must
//! be at least header length + pad + ICRC long.  After that every accessor
//! is infallible in practice; they still return `Option` rather than index,
//! so no input can make them panic.  Semantic checks live in `validate`.

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
use super::ip::{locate, locate_prefix, L3Error, RoceLayout};
use super::opcode::{opcode_info, ExtHeader, OpcodeInfo};
use super::psn::Psn;
use super::rdeth::Rdeth;
use super::reth::Reth;

/// Why bytes are not a transport packet.  C rxe silently drops all of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Fewer bytes than a BTH.
    TooShort,
    /// An opcode missing from the opcode table.
    UnknownOpcode(u8),
    /// Shorter than the opcode's headers + pad + ICRC.
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        have: usize,
    },
    /// (From [`Packet::parse_l3`]) the IP/UDP framing is unusable.
    L3(L3Error),
}

/// A parsed transport packet.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    bytes: &'a [u8],
    bth: &'a Bth,
    info: &'static OpcodeInfo,
    payload_len: usize,
}

impl<'a> Packet<'a> {
    /// Parses `roce`: BTH through ICRC, nothing after (the UDP payload).
    pub fn parse(roce: &'a [u8]) -> Result<Self, ParseError> {
        let (bth, _) = Bth::parse(roce).map_err(|_| ParseError::TooShort)?;
        let info = opcode_info(bth.opcode()).ok_or(ParseError::UnknownOpcode(bth.opcode()))?;
        let need = info.header_len() + usize::from(bth.pad()) + ICRC_LEN;
        let payload_len = roce.len().checked_sub(need).ok_or(ParseError::Truncated {
            need,
            have: roce.len(),
        })?;
        Ok(Packet {
            bytes: roce,
            bth,
            info,
            payload_len,
        })
    }

    /// Locates the RoCE packet in a full L3 packet (IP header first) and
    /// parses it; also returns the layout.
    pub fn parse_l3(l3: &'a [u8]) -> Result<(Self, RoceLayout), ParseError> {
        let lay = locate(l3).map_err(ParseError::L3)?;
        let roce = l3
            .get(lay.bth_offset..lay.end())
            .ok_or(ParseError::L3(L3Error::BadUdpLength))?;
        Ok((Packet::parse(roce)?, lay))
    }

    /// Parses the headers of a RoCE packet of `l3_len` bytes (from the IP
    /// header) of which `l3` holds a prefix: at least the IP, UDP, BTH and
    /// extension headers.  The payload and ICRC may lie beyond the prefix
    /// (in a received skb's fragments): [`Self::payload_offset`] and
    /// [`Self::payload_len`] say where, relative to the BTH, and
    /// [`Self::payload`] returns only the part the prefix holds.
    pub fn parse_l3_prefix(l3: &'a [u8], l3_len: usize) -> Result<(Self, RoceLayout), ParseError> {
        let lay = locate_prefix(l3, l3_len).map_err(ParseError::L3)?;
        let avail = l3
            .get(lay.bth_offset..)
            .ok_or(ParseError::L3(L3Error::Truncated))?;
        let roce = avail.get(..lay.roce_len.min(avail.len())).unwrap_or(avail);
        let (bth, _) = Bth::parse(roce).map_err(|_| ParseError::TooShort)?;
        let info = opcode_info(bth.opcode()).ok_or(ParseError::UnknownOpcode(bth.opcode()))?;
        let need = info.header_len() + usize::from(bth.pad()) + ICRC_LEN;
        let payload_len = lay
            .roce_len
            .checked_sub(need)
            .ok_or(ParseError::Truncated {
                need,
                have: lay.roce_len,
            })?;
        if roce.len() < info.header_len() {
            return Err(ParseError::Truncated {
                need: info.header_len(),
                have: roce.len(),
            });
        }
        Ok((
            Packet {
                bytes: roce,
                bth,
                info,
                payload_len,
            },
            lay,
        ))
    }

    /// Offset of the payload from the BTH (the header length).
    pub fn payload_offset(&self) -> usize {
        self.info.header_len()
    }

    /// All bytes at hand, BTH through ICRC for a whole packet, possibly
    /// less for one from [`Self::parse_l3_prefix`].
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Length from the BTH through the ICRC (C `paylen`).
    pub fn len(&self) -> usize {
        self.header_len() + self.payload_len + self.pad() + ICRC_LEN
    }

    /// Never true for a parsed packet (it has at least a BTH and an ICRC).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The BTH.
    pub fn bth(&self) -> &'a Bth {
        self.bth
    }

    /// Opcode byte.
    pub fn opcode(&self) -> u8 {
        self.bth.opcode()
    }

    /// Opcode table entry.
    pub fn info(&self) -> &'static OpcodeInfo {
        self.info
    }

    /// Packet sequence number.
    pub fn psn(&self) -> Psn {
        self.bth.psn()
    }

    /// Destination QP number.
    pub fn dest_qpn(&self) -> u32 {
        self.bth.qpn()
    }

    /// Length of BTH plus extension headers.
    pub fn header_len(&self) -> usize {
        self.info.header_len()
    }

    /// Pad count from the BTH.
    pub fn pad(&self) -> usize {
        usize::from(self.bth.pad())
    }

    /// Payload length, pad excluded (C `payload_size()`).
    pub fn payload_len(&self) -> usize {
        self.payload_len
    }

    /// Payload bytes, pad excluded (the part at hand, see
    /// [`Self::parse_l3_prefix`]).
    pub fn payload(&self) -> &'a [u8] {
        let rest = self.bytes.get(self.header_len()..).unwrap_or(&[]);
        rest.get(..self.payload_len).unwrap_or(rest)
    }

    /// ICRC as stored (the `u32` whose little-endian bytes are on the
    /// wire); 0 if it is not at hand.
    pub fn icrc(&self) -> u32 {
        if self.bytes.len() != self.len() {
            return 0;
        }
        let mut le = [0u8; ICRC_LEN];
        let start = self.bytes.len().saturating_sub(ICRC_LEN);
        if let Some(b) = self.bytes.get(start..) {
            if b.len() == ICRC_LEN {
                le.copy_from_slice(b);
            }
        }
        u32::from_le_bytes(le)
    }

    fn ext<T: Header>(&self, h: ExtHeader) -> Option<&'a T> {
        let off = self.info.offset(h)?;
        let (t, _) = T::parse(self.bytes.get(off..)?).ok()?;
        Some(t)
    }

    /// RDETH, if the opcode carries one.
    pub fn rdeth(&self) -> Option<&'a Rdeth> {
        self.ext(ExtHeader::Rdeth)
    }

    /// DETH, if the opcode carries one.
    pub fn deth(&self) -> Option<&'a Deth> {
        self.ext(ExtHeader::Deth)
    }

    /// FETH, if the opcode carries one.
    pub fn feth(&self) -> Option<&'a Feth> {
        self.ext(ExtHeader::Feth)
    }

    /// RETH, if the opcode carries one.
    pub fn reth(&self) -> Option<&'a Reth> {
        self.ext(ExtHeader::Reth)
    }

    /// AtomicETH, if the opcode carries one.
    pub fn atmeth(&self) -> Option<&'a AtomicEth> {
        self.ext(ExtHeader::AtmEth)
    }

    /// AETH, if the opcode carries one.
    pub fn aeth(&self) -> Option<&'a Aeth> {
        self.ext(ExtHeader::Aeth)
    }

    /// AtomicAckETH, if the opcode carries one.
    pub fn atmack(&self) -> Option<&'a AtomicAck> {
        self.ext(ExtHeader::AtmAck)
    }

    /// Immediate data, if the opcode carries it.
    pub fn immdt(&self) -> Option<&'a Immdt> {
        self.ext(ExtHeader::Immdt)
    }

    /// IETH, if the opcode carries one.
    pub fn ieth(&self) -> Option<&'a Ieth> {
        self.ext(ExtHeader::Ieth)
    }
}

#[cfg(test)]
mod tests {
    use super::super::opcode::{RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RC_SEND_ONLY};
    use super::*;

    #[test]
    fn parse_minimal() {
        let mut b = [0u8; 16];
        b[0] = RC_SEND_ONLY;
        let p = Packet::parse(&b).unwrap();
        assert_eq!(p.payload_len(), 0);
        assert!(p.payload().is_empty());
        assert!(p.reth().is_none());
        assert_eq!(
            Packet::parse(&b[..15]).err(),
            Some(ParseError::Truncated { need: 16, have: 15 })
        );
        assert_eq!(Packet::parse(&b[..11]).err(), Some(ParseError::TooShort));
        b[0] = 0x15;
        assert_eq!(
            Packet::parse(&b).err(),
            Some(ParseError::UnknownOpcode(0x15))
        );
    }

    #[test]
    fn prefix_parse_matches_whole_parse() {
        // IPv4 + UDP + RDMA WRITE ONLY (RETH) with 100 bytes of payload.
        let payload = [0x5au8; 100];
        let mut l3 = [0u8; 20 + 8 + 12 + 16 + 100 + 4];
        let roce_len = 12 + 16 + 100 + 4;
        l3[0] = 0x45;
        l3[9] = 17;
        let total = l3.len() as u16;
        l3[2..4].copy_from_slice(&total.to_be_bytes());
        l3[20 + 4..20 + 6].copy_from_slice(&((8 + roce_len) as u16).to_be_bytes());
        l3[28] = super::super::opcode::RC_RDMA_WRITE_ONLY;
        l3[28 + 12 + 15] = 100;
        l3[56..156].copy_from_slice(&payload);
        let (whole, lay) = Packet::parse_l3(&l3).unwrap();
        for cut in [56, 60, 156, l3.len()] {
            let (p, lay2) = Packet::parse_l3_prefix(&l3[..cut], l3.len()).unwrap();
            assert_eq!(lay2, lay);
            assert_eq!(p.len(), whole.len());
            assert_eq!(p.payload_len(), 100);
            assert_eq!(p.payload_offset(), 28);
            assert_eq!(p.reth().map(|r| r.len()), Some(100));
            assert_eq!(p.payload(), &whole.payload()[..(cut - 56).min(100)]);
        }
        // The headers must be at hand, and the prefix cannot exceed the packet.
        assert!(Packet::parse_l3_prefix(&l3[..50], l3.len()).is_err());
        assert!(Packet::parse_l3_prefix(&l3, l3.len() - 1).is_err());
        // A UDP length beyond the packet is refused.
        assert!(Packet::parse_l3_prefix(&l3[..60], l3.len() - 10).is_err());
    }

    #[test]
    fn parse_ext_headers() {
        let mut b = [0u8; 32 + 5 + 3 + 4];
        b[0] = RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
        b[1] = 0x30; // pad 3
        b[12 + 15] = 5; // RETH length 5
        b[28..32].copy_from_slice(&[9, 8, 7, 6]);
        b[32..37].copy_from_slice(b"hello");
        let p = Packet::parse(&b).unwrap();
        assert_eq!(p.reth().map(|r| r.len()), Some(5));
        assert_eq!(p.immdt().map(|i| i.raw()), Some([9, 8, 7, 6]));
        assert_eq!(p.payload(), b"hello");
        assert_eq!(p.pad(), 3);
    }
}
