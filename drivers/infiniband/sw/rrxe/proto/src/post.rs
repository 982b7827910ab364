// SPDX-License-Identifier: GPL-2.0
//! Work requests written into a ring the way librxe writes them: what
//! `post_send` / `post_recv` of a kernel consumer do, so that the engine
//! reads kernel and user WQEs with the same decoder ([`super::wqe`]) and
//! the same checks.  The layouts are `struct rxe_send_wqe` and
//! `struct rxe_recv_wqe` of the rxe uABI.

use super::wqe::{Sge, RECV_WQE_DMA, RECV_WQE_HDR, SEND_WQE_DMA, SEND_WQE_HDR, SGE_SIZE};

/// Why a work request cannot be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostError {
    /// The slot cannot hold the SGE list or the inline data.
    TooLarge,
}

/// What a send work request carries besides its payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendFields {
    /// The consumer's cookie.
    pub wr_id: u64,
    /// `IB_WR_*` (the values of the uverbs opcodes).
    pub opcode: u32,
    /// `IB_SEND_*`.
    pub flags: u32,
    /// Immediate data (as on the wire) or the rkey to invalidate (host
    /// order), as the union of the WR holds them.
    pub ex: [u8; 4],
    /// RDMA and atomics: the remote address.
    pub remote_addr: u64,
    /// RDMA and atomics: the remote key.
    pub rkey: u32,
    /// Atomics: the compare value or addend.
    pub compare_add: u64,
    /// Atomics: the swap value.
    pub swap: u64,
    /// UD: destination QP, Q_Key and address handle number (then the
    /// RDMA and atomic fields are unused: they share the union).
    pub ud: Option<(u32, u32, u32)>,
    /// REG_MR: the registration (the union's other fields unused).
    pub reg: Option<super::wqe::RegReq>,
}

/// The payload of a send work request.
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    /// Gathered from these SGEs when the request runs.
    Sges(&'a [Sge]),
    /// Copied into the WQE now (`IB_SEND_INLINE`).
    Inline(&'a [u8]),
    /// Inline data of this length that the caller copies into the slot
    /// itself, right after the header ([`inline_area`]).
    InlineLen(usize),
}

/// Where the inline data of an encoded send WQE goes.
pub fn inline_area(slot: &mut [u8], len: usize) -> Option<&mut [u8]> {
    slot.get_mut(SEND_WQE_HDR..SEND_WQE_HDR.checked_add(len)?)
}

fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

fn put_sges(b: &mut [u8], base: usize, sges: &[Sge]) -> u64 {
    let mut total = 0u64;
    for (i, s) in sges.iter().enumerate() {
        let o = base + i * SGE_SIZE;
        put64(b, o, s.addr);
        put32(b, o + 8, s.length);
        put32(b, o + 12, s.lkey);
        total += u64::from(s.length);
    }
    total
}

/// Writes a send WQE into `slot` (zeroed first).  The total length is
/// clamped to 32 bits here; the decoder refuses what is too long.
pub fn encode_send(f: &SendFields, payload: Payload<'_>, slot: &mut [u8]) -> Result<(), PostError> {
    let room = slot
        .len()
        .checked_sub(SEND_WQE_HDR)
        .ok_or(PostError::TooLarge)?;
    let need = match payload {
        Payload::Sges(s) => s.len() * SGE_SIZE,
        Payload::Inline(d) => d.len(),
        Payload::InlineLen(n) => n,
    };
    if need > room {
        return Err(PostError::TooLarge);
    }
    slot.fill(0);
    put64(slot, 0, f.wr_id);
    put32(slot, 12, f.opcode);
    put32(slot, 16, f.flags);
    slot[20..24].copy_from_slice(&f.ex);
    if let Some((qpn, qkey, ah)) = f.ud {
        put32(slot, 24, qpn);
        put32(slot, 28, qkey);
        put32(slot, 36, ah);
    } else if let Some(r) = f.reg {
        put64(slot, super::wqe::REG_MR_FIELD, u64::from(r.mr_index));
        put32(slot, super::wqe::REG_KEY, r.key);
        put32(slot, super::wqe::REG_ACCESS, r.access);
    } else {
        put64(slot, 24, f.remote_addr);
        // `wr.rdma.rkey` follows the address; `wr.atomic` has the two
        // operands there and its rkey after them.
        if f.opcode == super::wqe::wr::ATOMIC_CMP_AND_SWP
            || f.opcode == super::wqe::wr::ATOMIC_FETCH_AND_ADD
        {
            put64(slot, 32, f.compare_add);
            put64(slot, 40, f.swap);
            put32(slot, 48, f.rkey);
        } else {
            put32(slot, 32, f.rkey);
        }
    }
    let (length, num_sge) = match payload {
        Payload::Sges(s) => (put_sges(slot, SEND_WQE_HDR, s), s.len() as u32),
        Payload::Inline(d) => {
            slot[SEND_WQE_HDR..SEND_WQE_HDR + d.len()].copy_from_slice(d);
            (d.len() as u64, 0)
        }
        Payload::InlineLen(n) => (n as u64, 0),
    };
    let length = length.min(u64::from(u32::MAX)) as u32;
    put32(slot, SEND_WQE_DMA, length);
    put32(slot, SEND_WQE_DMA + 4, length);
    put32(slot, SEND_WQE_DMA + 12, num_sge);
    Ok(())
}

/// Writes a receive WQE into `slot` (zeroed first).
pub fn encode_recv(wr_id: u64, sges: &[Sge], slot: &mut [u8]) -> Result<(), PostError> {
    let room = slot
        .len()
        .checked_sub(RECV_WQE_HDR)
        .ok_or(PostError::TooLarge)?;
    if sges.len() * SGE_SIZE > room {
        return Err(PostError::TooLarge);
    }
    slot.fill(0);
    put64(slot, 0, wr_id);
    let length = put_sges(slot, RECV_WQE_HDR, sges).min(u64::from(u32::MAX)) as u32;
    put32(slot, RECV_WQE_DMA, length);
    put32(slot, RECV_WQE_DMA + 4, length);
    put32(slot, RECV_WQE_DMA + 12, sges.len() as u32);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::wqe::{
        decode_recv, decode_send, recv_sge, send_flags, send_inline, send_sge, wr, SendOp,
    };
    use super::*;

    const SGES: [Sge; 2] = [
        Sge {
            addr: 0xffff_8880_0000_1000,
            length: 100,
            lkey: 7,
        },
        Sge {
            addr: 0xffff_8880_0000_9000,
            length: 28,
            lkey: 7,
        },
    ];

    #[test]
    fn send_round_trips_through_the_decoder() {
        let mut slot = [0xa5u8; 256];
        let f = SendFields {
            wr_id: 42,
            opcode: wr::RDMA_WRITE_WITH_IMM,
            flags: send_flags::SIGNALED,
            ex: [1, 2, 3, 4],
            remote_addr: 0x1000,
            rkey: 0x99,
            ..Default::default()
        };
        encode_send(&f, Payload::Sges(&SGES), &mut slot).unwrap();
        let h = decode_send(&slot, 2, 0).unwrap();
        assert_eq!(
            (h.wr_id, h.op, h.flags),
            (42, SendOp::WriteImm, send_flags::SIGNALED)
        );
        assert_eq!((h.remote_addr, h.rkey, h.imm), (0x1000, 0x99, [1, 2, 3, 4]));
        assert_eq!((h.num_sge, h.length), (2, 128));
        assert_eq!(send_sge(&slot, 1), Some(SGES[1]));
        // The decoder's limits still apply.
        assert!(decode_send(&slot, 1, 0).is_err());
    }

    #[test]
    fn a_fast_registration_round_trips() {
        let mut slot = [0xa5u8; 256];
        let reg = super::super::wqe::RegReq {
            mr_index: 0x12_3456,
            key: 0x1234_567f,
            access: 7,
        };
        let f = SendFields {
            wr_id: 9,
            opcode: wr::REG_MR,
            flags: send_flags::SIGNALED,
            reg: Some(reg),
            ..Default::default()
        };
        encode_send(&f, Payload::Sges(&[]), &mut slot).unwrap();
        let h = decode_send(&slot, 0, 0).unwrap();
        assert_eq!(
            (h.op, h.reg, h.num_sge, h.length),
            (SendOp::RegMr, reg, 0, 0)
        );
        // An MR field that is no table index decodes to none (0).
        slot[24..32].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert_eq!(decode_send(&slot, 0, 0).unwrap().reg.mr_index, 0);
    }

    #[test]
    fn atomics_ud_and_inline() {
        let mut slot = [0u8; 256];
        let f = SendFields {
            opcode: wr::ATOMIC_CMP_AND_SWP,
            remote_addr: 0x2000,
            rkey: 5,
            compare_add: 11,
            swap: 22,
            ..Default::default()
        };
        encode_send(&f, Payload::Sges(&SGES[..1]), &mut slot).unwrap();
        let h = decode_send(&slot, 1, 0).unwrap();
        assert_eq!(
            (h.op, h.rkey, h.compare_add, h.swap),
            (SendOp::CompareSwap, 5, 11, 22)
        );
        let f = SendFields {
            opcode: wr::SEND,
            flags: send_flags::INLINE,
            ud: Some((1, 0x8001_0000, 3)),
            ..Default::default()
        };
        encode_send(&f, Payload::Inline(b"hello, world"), &mut slot).unwrap();
        let h = decode_send(&slot, 0, 64).unwrap();
        assert_eq!(
            (h.ud.remote_qpn, h.ud.remote_qkey, h.ud.ah_num),
            (1, 0x8001_0000, 3)
        );
        assert_eq!(send_inline(&slot, &h), Some(&b"hello, world"[..]));
        encode_send(&f, Payload::InlineLen(5), &mut slot).unwrap();
        inline_area(&mut slot, 5).unwrap().copy_from_slice(b"howdy");
        let h = decode_send(&slot, 0, 64).unwrap();
        assert_eq!(send_inline(&slot, &h), Some(&b"howdy"[..]));
        // Too much inline data for the slot.
        assert_eq!(
            encode_send(&f, Payload::Inline(&[0; 49]), &mut slot),
            Err(PostError::TooLarge)
        );
    }

    #[test]
    fn recv_round_trips_through_the_decoder() {
        let mut slot = [0xffu8; 72];
        encode_recv(9, &SGES, &mut slot).unwrap();
        let h = decode_recv(&slot, 2).unwrap();
        assert_eq!((h.wr_id, h.num_sge, h.length), (9, 2, 128));
        assert_eq!(recv_sge(&slot, 0), Some(SGES[0]));
        assert_eq!(
            encode_recv(9, &SGES, &mut [0u8; 71]),
            Err(PostError::TooLarge)
        );
    }
}
