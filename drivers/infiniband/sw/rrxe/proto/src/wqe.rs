// SPDX-License-Identifier: GPL-2.0
//! Work queue entries as librxe writes them into the mapped send and
//! receive queues (`struct rxe_send_wqe` and `struct rxe_recv_wqe` of
//! include/uapi/rdma/rdma_user_rxe.h, x86-64/any LP64 layout).
//!
//! The slot bytes come from memory user space can rewrite at any time, so
//! the kernel copies a slot first and decodes the copy here: every field is
//! range-checked (opcode, flags, SGE count against the QP's limit and the
//! slot size, total length without overflow, inline length), and nothing
//! the kernel writes into the slot (C rxe keeps its progress there) is read
//! back.  Only the fields a requester or responder needs are decoded.

use super::mw::MwBind;

/// `offsetof(struct rxe_send_wqe, dma)`.
pub const SEND_WQE_DMA: usize = 184;
/// Size of `struct rxe_send_wqe` without its SGE/inline area.
pub const SEND_WQE_HDR: usize = 208;
/// `offsetof(struct rxe_recv_wqe, dma)`.
pub const RECV_WQE_DMA: usize = 16;
/// Size of `struct rxe_recv_wqe` without its SGE area.
pub const RECV_WQE_HDR: usize = 40;
/// `offsetof(struct rxe_dma_info, sge)`: where SGEs/inline data start.
pub const DMA_DATA: usize = 24;
/// `sizeof(struct rxe_sge)`.
pub const SGE_SIZE: usize = 16;

/// `enum ib_wr_opcode` values librxe writes (`IBV_WR_*`).
pub mod wr {
    /// RDMA WRITE.
    pub const RDMA_WRITE: u32 = 0;
    /// RDMA WRITE with immediate.
    pub const RDMA_WRITE_WITH_IMM: u32 = 1;
    /// SEND.
    pub const SEND: u32 = 2;
    /// SEND with immediate.
    pub const SEND_WITH_IMM: u32 = 3;
    /// RDMA READ.
    pub const RDMA_READ: u32 = 4;
    /// Atomic compare-and-swap.
    pub const ATOMIC_CMP_AND_SWP: u32 = 5;
    /// Atomic fetch-and-add.
    pub const ATOMIC_FETCH_AND_ADD: u32 = 6;
    /// Local invalidate of a type 2 memory window.
    pub const LOCAL_INV: u32 = 7;
    /// Bind a memory window.
    pub const BIND_MW: u32 = 8;
    /// SEND with Invalidate.
    pub const SEND_WITH_INV: u32 = 9;
    /// FLUSH (`ibv_wr_flush`, rdma-core 47 and later).
    pub const FLUSH: u32 = 14;
    /// ATOMIC WRITE (8 bytes, `ibv_wr_atomic_write`).
    pub const ATOMIC_WRITE: u32 = 15;
    /// Fast registration of a region (`IB_WR_REG_MR`): kernel consumers
    /// only; librxe has no such opcode.
    pub const REG_MR: u32 = 0x20;
}

/// `IBV_SEND_*` flags.
pub mod send_flags {
    /// Wait for earlier READs/atomics.
    pub const FENCE: u32 = 1 << 0;
    /// Generate a completion.
    pub const SIGNALED: u32 = 1 << 1;
    /// Set the solicited event bit.
    pub const SOLICITED: u32 = 1 << 2;
    /// Payload is inline in the WQE.
    pub const INLINE: u32 = 1 << 3;
    /// Checksum offload (UD/raw only); ignored.
    pub const IP_CSUM: u32 = 1 << 4;
    /// Every flag librxe may set.
    pub const ALL: u32 = FENCE | SIGNALED | SOLICITED | INLINE | IP_CSUM;
}

/// The operations the requester carries out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOp {
    /// RDMA WRITE.
    Write,
    /// RDMA WRITE with immediate.
    WriteImm,
    /// SEND.
    Send,
    /// SEND with immediate.
    SendImm,
    /// RDMA READ.
    Read,
    /// Atomic compare-and-swap (8 bytes).
    CompareSwap,
    /// Atomic fetch-and-add (8 bytes).
    FetchAdd,
    /// ATOMIC WRITE: 8 bytes placed as one store, acknowledged by an
    /// empty READ response.
    AtomicWrite,
    /// SEND that asks the responder to invalidate an rkey (IETH).
    SendInv,
    /// Local invalidate of an rkey (no packet).
    LocalInv,
    /// Bind a memory window (no packet).
    BindMw,
    /// Fast registration of a region (no packet; kernel QPs only).
    RegMr,
    /// FLUSH: makes earlier placements at the responder visible (or
    /// persistent), acknowledged by an empty READ response.
    Flush,
}

impl SendOp {
    /// The operation for a WR opcode, if supported.
    pub const fn from_wr(op: u32) -> Option<Self> {
        match op {
            wr::RDMA_WRITE => Some(Self::Write),
            wr::RDMA_WRITE_WITH_IMM => Some(Self::WriteImm),
            wr::SEND => Some(Self::Send),
            wr::SEND_WITH_IMM => Some(Self::SendImm),
            wr::RDMA_READ => Some(Self::Read),
            wr::ATOMIC_CMP_AND_SWP => Some(Self::CompareSwap),
            wr::ATOMIC_FETCH_AND_ADD => Some(Self::FetchAdd),
            wr::ATOMIC_WRITE => Some(Self::AtomicWrite),
            wr::SEND_WITH_INV => Some(Self::SendInv),
            wr::LOCAL_INV => Some(Self::LocalInv),
            wr::BIND_MW => Some(Self::BindMw),
            wr::FLUSH => Some(Self::Flush),
            wr::REG_MR => Some(Self::RegMr),
            _ => None,
        }
    }

    /// Carries immediate data.
    pub const fn has_imm(self) -> bool {
        matches!(self, Self::WriteImm | Self::SendImm)
    }

    /// Writes remote memory (needs an rkey and address).
    pub const fn is_write(self) -> bool {
        matches!(self, Self::Write | Self::WriteImm)
    }

    /// A SEND (consumes a receive WQE at the responder).
    pub const fn is_send(self) -> bool {
        matches!(self, Self::Send | Self::SendImm | Self::SendInv)
    }

    /// Carried out by the requester itself, without a packet.
    pub const fn is_local(self) -> bool {
        matches!(self, Self::LocalInv | Self::BindMw | Self::RegMr)
    }

    /// An RDMA READ.
    pub const fn is_read(self) -> bool {
        matches!(self, Self::Read)
    }

    /// An 8-byte atomic (compare-and-swap or fetch-and-add).
    pub const fn is_atomic(self) -> bool {
        matches!(self, Self::CompareSwap | Self::FetchAdd)
    }

    /// Completed by its response (READ, atomics, ATOMIC WRITE, FLUSH),
    /// not by an ACK; counts against `max_rd_atomic` (each takes a
    /// responder resource).
    pub const fn needs_response(self) -> bool {
        self.is_read() || self.is_atomic() || self.empty_read_response()
    }

    /// Acknowledged by a READ RESPONSE ONLY without payload (ATOMIC WRITE,
    /// FLUSH).
    pub const fn empty_read_response(self) -> bool {
        matches!(self, Self::AtomicWrite | Self::Flush)
    }

    /// Its request packets carry the WQE's data (SEND, WRITE, ATOMIC
    /// WRITE).
    pub const fn carries_payload(self) -> bool {
        !(self.writes_locally() || self.is_local() || matches!(self, Self::Flush))
    }

    /// Writes the response's data into its local buffers (READ, atomics).
    pub const fn writes_locally(self) -> bool {
        self.is_read() || self.is_atomic()
    }

    /// The `ib_uverbs_wc_opcode` of its send completion.
    pub const fn wc_opcode(self) -> u32 {
        use super::cqe::wc_opcode;
        match self {
            Self::Write | Self::WriteImm => wc_opcode::RDMA_WRITE,
            Self::Send | Self::SendImm | Self::SendInv => wc_opcode::SEND,
            Self::LocalInv => wc_opcode::LOCAL_INV,
            Self::BindMw => wc_opcode::BIND_MW,
            Self::RegMr => wc_opcode::REG_MR,
            Self::Read => wc_opcode::RDMA_READ,
            Self::CompareSwap => wc_opcode::COMP_SWAP,
            Self::FetchAdd => wc_opcode::FETCH_ADD,
            Self::AtomicWrite => wc_opcode::ATOMIC_WRITE,
            Self::Flush => wc_opcode::FLUSH,
        }
    }
}

/// A scatter/gather element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Virtual address in the region.
    pub addr: u64,
    /// Length in bytes.
    pub length: u32,
    /// Local key of the region.
    pub lkey: u32,
}

/// Why a WQE is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeError {
    /// The slot copy is shorter than the fixed part.
    Truncated,
    /// Opcode not supported (`IB_WC_LOC_QP_OP_ERR`).
    Opcode(u32),
    /// Unknown send flags (`IB_WC_LOC_QP_OP_ERR`).
    Flags(u32),
    /// More SGEs than the QP allows or the slot holds
    /// (`IB_WC_LOC_LEN_ERR`).
    SgeCount(u32),
    /// Inline data longer than the QP allows or the slot holds.
    InlineLength(u32),
    /// Total length above 2^31 (the RoCE message limit).
    Length,
    /// A FLUSH placement type or selectivity level IBTA does not define
    /// (`IB_WC_LOC_QP_OP_ERR`).
    Flush,
}

/// Largest message (`max_msg_sz`).
pub const MAX_MSG_LEN: u64 = 1 << 31;

/// The decoded fixed part of a send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWqeHdr {
    /// The consumer's cookie.
    pub wr_id: u64,
    /// What to do.
    pub op: SendOp,
    /// `IBV_SEND_*` flags.
    pub flags: u32,
    /// Immediate data, as on the wire (big-endian bytes).
    pub imm: [u8; 4],
    /// RDMA target address.
    pub remote_addr: u64,
    /// RDMA target key.
    pub rkey: u32,
    /// Atomics: the compare value (compare-and-swap) or the addend.
    pub compare_add: u64,
    /// Atomics: the swap value (compare-and-swap).
    pub swap: u64,
    /// SGEs to gather from (0 when inline).
    pub num_sge: u32,
    /// Total payload length.
    pub length: u32,
    /// BIND_MW: the bind request (zero for other operations).
    pub bind: MwBind,
    /// FLUSH: placement type and selectivity level (FETH).
    pub flush: FlushReq,
    /// UD: where the datagram goes (`wr.ud`; meaningless on RC/UC).
    pub ud: UdDest,
    /// REG_MR: the registration (zero for other operations).
    pub reg: RegReq,
}

/// A fast registration, in the kernel's `wr.reg` of `struct
/// rxe_send_wr` (not uABI: C rxe keeps an `ib_mr` pointer there; rrxe's
/// post path writes the region's table index instead, so nothing in a
/// ring is ever dereferenced).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegReq {
    /// The region's index in the MR table (`key >> 8`).
    pub mr_index: u32,
    /// The key the registration takes (lkey and rkey).
    pub key: u32,
    /// `IB_ACCESS_*` rights.
    pub access: u32,
}

/// Offsets in `struct rxe_send_wr` of `wr.reg`'s fields.
pub(crate) const REG_MR_FIELD: usize = 24;
pub(crate) const REG_KEY: usize = 32;
pub(crate) const REG_ACCESS: usize = 36;

/// The destination of a UD send (`wr.ud` of `struct rxe_send_wr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdDest {
    /// Destination QP number (24 bits on the wire).
    pub remote_qpn: u32,
    /// Q_Key; with the high bit set, the QP's own Q_Key is sent instead
    /// (IBTA 10.2.5).
    pub remote_qkey: u32,
    /// The address handle's number (`rxe_create_ah_resp.ah_num`); 0 from
    /// providers that embed the address vector instead.
    pub ah_num: u32,
}

/// Offsets in `struct rxe_send_wr` of `wr.ud`'s fields.
const UD_REMOTE_QPN: usize = 24;
const UD_REMOTE_QKEY: usize = 28;
const UD_AH_NUM: usize = 36;

impl UdDest {
    /// The Q_Key a datagram carries, given the QP's `qp_qkey`.
    pub const fn qkey(&self, qp_qkey: u32) -> u32 {
        if self.remote_qkey & 0x8000_0000 != 0 {
            qp_qkey
        } else {
            self.remote_qkey
        }
    }
}

/// What a FLUSH asks for (`wr.flush.type` and `.level`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlushReq {
    /// Placement type bits (`IB_FLUSH_GLOBAL`, `IB_FLUSH_PERSISTENT`).
    pub placement_type: u8,
    /// Selectivity level (`IB_FLUSH_RANGE`, `IB_FLUSH_MR`).
    pub selectivity: u8,
}

impl SendWqeHdr {
    /// SEND with Invalidate and LOCAL_INV: the rkey to invalidate (host
    /// order, in the union that holds the immediate data).
    pub fn invalidate_rkey(&self) -> u32 {
        u32::from_ne_bytes(self.imm)
    }
}

pub(super) fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

pub(super) fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

/// The SGE at index `i` of an SGE area starting at `base`.
fn sge_at(b: &[u8], base: usize, i: usize) -> Option<Sge> {
    let off = base + i * SGE_SIZE;
    Some(Sge {
        addr: u64_at(b, off)?,
        length: u32_at(b, off + 8)?,
        lkey: u32_at(b, off + 12)?,
    })
}

/// Sum of the lengths of `n` SGEs at `base`, at most [`MAX_MSG_LEN`].
fn total_len(b: &[u8], base: usize, n: usize) -> Result<u32, WqeError> {
    let mut sum = 0u64;
    for i in 0..n {
        sum += u64::from(sge_at(b, base, i).ok_or(WqeError::Truncated)?.length);
    }
    if sum > MAX_MSG_LEN {
        return Err(WqeError::Length);
    }
    Ok(sum as u32)
}

/// Decodes a send WQE from a copy of its slot.  `max_sge` and `max_inline`
/// are the QP's limits; the slot copy bounds both as well.  On error the
/// `wr_id` (if readable) comes back so the WQE can be completed in error.
pub fn decode_send(b: &[u8], max_sge: u32, max_inline: u32) -> Result<SendWqeHdr, (u64, WqeError)> {
    let wr_id = u64_at(b, 0).ok_or((0, WqeError::Truncated))?;
    let err = |e| (wr_id, e);
    if b.len() < SEND_WQE_HDR {
        return Err(err(WqeError::Truncated));
    }
    let opcode = u32_at(b, 12).ok_or(err(WqeError::Truncated))?;
    let op = SendOp::from_wr(opcode).ok_or(err(WqeError::Opcode(opcode)))?;
    let flags = u32_at(b, 16).ok_or(err(WqeError::Truncated))?;
    if flags & !send_flags::ALL != 0 {
        return Err(err(WqeError::Flags(flags)));
    }
    let imm: [u8; 4] = b[20..24].try_into().map_err(|_| err(WqeError::Truncated))?;
    let remote = decode_remote(b, op).map_err(err)?;
    if op.needs_response() && flags & send_flags::INLINE != 0 {
        // Their local buffers are written: inline data makes no sense.
        return Err(err(WqeError::Flags(flags)));
    }
    let ud = UdDest {
        remote_qpn: u32_at(b, UD_REMOTE_QPN).ok_or(err(WqeError::Truncated))? & 0x00ff_ffff,
        remote_qkey: u32_at(b, UD_REMOTE_QKEY).ok_or(err(WqeError::Truncated))?,
        ah_num: u32_at(b, UD_AH_NUM).ok_or(err(WqeError::Truncated))?,
    };
    let body = decode_body(b, op, flags, max_sge, max_inline).map_err(err)?;
    Ok(SendWqeHdr {
        wr_id,
        op,
        flags,
        imm,
        remote_addr: remote.addr,
        rkey: remote.rkey,
        compare_add: remote.compare_add,
        swap: remote.swap,
        num_sge: body.num_sge,
        length: body.length,
        bind: body.bind,
        flush: body.flush,
        ud,
        reg: body.reg,
    })
}

/// The remote side of a send WQE: `wr.rdma`, `wr.atomic` or `wr.flush`.
struct Remote {
    addr: u64,
    rkey: u32,
    compare_add: u64,
    swap: u64,
}

/// Decodes the remote address, rkey and atomic operands of a WQE of kind
/// `op`: `wr.rdma` and `wr.atomic` share the remote address; the rkey
/// follows the address (rdma), the two operands (atomic) or an unused
/// 32-bit length (flush).
fn decode_remote(b: &[u8], op: SendOp) -> Result<Remote, WqeError> {
    let t = WqeError::Truncated;
    let addr = u64_at(b, 24).ok_or(t)?;
    let (rkey, compare_add, swap) = if op == SendOp::Flush {
        (u32_at(b, 36).ok_or(t)?, 0, 0)
    } else if op.is_atomic() {
        (
            u32_at(b, 48).ok_or(t)?,
            u64_at(b, 32).ok_or(t)?,
            u64_at(b, 40).ok_or(t)?,
        )
    } else {
        (u32_at(b, 32).ok_or(t)?, 0, 0)
    };
    Ok(Remote {
        addr,
        rkey,
        compare_add,
        swap,
    })
}

/// What a send WQE carries after its header, by kind.
#[derive(Default)]
struct Body {
    num_sge: u32,
    length: u32,
    bind: MwBind,
    flush: FlushReq,
    reg: RegReq,
}

/// Decodes what a WQE of kind `op` with `flags` carries: a FLUSH's range,
/// a local operation's request, an ATOMIC WRITE's value, inline data or
/// SGEs (within the QP's `max_sge` and `max_inline` and the slot).
fn decode_body(
    b: &[u8],
    op: SendOp,
    flags: u32,
    max_sge: u32,
    max_inline: u32,
) -> Result<Body, WqeError> {
    let t = WqeError::Truncated;
    let room = b.len() - SEND_WQE_HDR;
    let mut body = Body::default();
    if op == SendOp::Flush {
        // No payload: the length of the range to flush is `dma.length`.
        body.flush = FlushReq {
            placement_type: *b.get(40).ok_or(t)?,
            selectivity: *b.get(41).ok_or(t)?,
        };
        if body.flush.placement_type & !3 != 0 || body.flush.selectivity > 1 {
            return Err(WqeError::Flush);
        }
        body.length = u32_at(b, SEND_WQE_DMA).ok_or(t)?;
        if u64::from(body.length) > MAX_MSG_LEN {
            return Err(WqeError::Length);
        }
    } else if op.is_local() {
        // No payload; a bind carries its request in `wr.mw`.
        if op == SendOp::BindMw {
            body.bind = MwBind::decode(b).ok_or(t)?;
        }
        if op == SendOp::RegMr {
            let mr = u64_at(b, REG_MR_FIELD).ok_or(t)?;
            body.reg = RegReq {
                // Not an index (0 is none): the lookup fails.
                mr_index: u32::try_from(mr).unwrap_or(0),
                key: u32_at(b, REG_KEY).ok_or(t)?,
                access: u32_at(b, REG_ACCESS).ok_or(t)?,
            };
        }
    } else if op == SendOp::AtomicWrite {
        // librxe puts the 8 bytes where the SGEs would be
        // (`dma.atomic_wr`), with no SGE.
        if room < ATOMIC_WRITE_LEN as usize {
            return Err(t);
        }
        body.length = ATOMIC_WRITE_LEN;
    } else if flags & send_flags::INLINE != 0 {
        let len = u32_at(b, SEND_WQE_DMA).ok_or(t)?;
        if len > max_inline || len as usize > room {
            return Err(WqeError::InlineLength(len));
        }
        body.length = len;
    } else {
        let n = u32_at(b, SEND_WQE_DMA + 12).ok_or(t)?;
        if n > max_sge || n as usize > room / SGE_SIZE {
            return Err(WqeError::SgeCount(n));
        }
        body.num_sge = n;
        body.length = total_len(b, SEND_WQE_HDR, n as usize)?;
    }
    Ok(body)
}

/// Bytes of the value an atomic operates on (and returns).
pub const ATOMIC_LEN: u32 = 8;

/// Bytes an ATOMIC WRITE carries.
pub const ATOMIC_WRITE_LEN: u32 = ATOMIC_LEN;

/// The 8 bytes of a decoded ATOMIC WRITE, as the application gave them.
pub fn atomic_write_value(b: &[u8]) -> Option<[u8; 8]> {
    b.get(SEND_WQE_HDR..SEND_WQE_HDR + 8)?.try_into().ok()
}

/// SGE `i` of a decoded send WQE (`i < num_sge`).
pub fn send_sge(b: &[u8], i: u32) -> Option<Sge> {
    sge_at(b, SEND_WQE_HDR, i as usize)
}

/// The inline payload of a decoded inline send WQE.
pub fn send_inline<'a>(b: &'a [u8], hdr: &SendWqeHdr) -> Option<&'a [u8]> {
    b.get(SEND_WQE_HDR..SEND_WQE_HDR + hdr.length as usize)
}

/// The decoded fixed part of a receive WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWqeHdr {
    /// The consumer's cookie.
    pub wr_id: u64,
    /// SGEs to scatter into.
    pub num_sge: u32,
    /// Their total length.
    pub length: u32,
}

/// Decodes a receive WQE from a copy of its slot.
pub fn decode_recv(b: &[u8], max_sge: u32) -> Result<RecvWqeHdr, (u64, WqeError)> {
    let wr_id = u64_at(b, 0).ok_or((0, WqeError::Truncated))?;
    let err = |e| (wr_id, e);
    if b.len() < RECV_WQE_HDR {
        return Err(err(WqeError::Truncated));
    }
    let n = u32_at(b, RECV_WQE_DMA + 12).ok_or(err(WqeError::Truncated))?;
    if n > max_sge || n as usize > (b.len() - RECV_WQE_HDR) / SGE_SIZE {
        return Err(err(WqeError::SgeCount(n)));
    }
    let length = total_len(b, RECV_WQE_HDR, n as usize).map_err(err)?;
    Ok(RecvWqeHdr {
        wr_id,
        num_sge: n,
        length,
    })
}

/// SGE `i` of a decoded receive WQE (`i < num_sge`).
pub fn recv_sge(b: &[u8], i: u32) -> Option<Sge> {
    sge_at(b, RECV_WQE_HDR, i as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_slot(op: u32, flags: u32, sges: &[(u64, u32, u32)]) -> [u8; 256] {
        let mut b = [0u8; 256];
        b[0..8].copy_from_slice(&0x1122u64.to_ne_bytes());
        b[12..16].copy_from_slice(&op.to_ne_bytes());
        b[16..20].copy_from_slice(&flags.to_ne_bytes());
        b[20..24].copy_from_slice(&[1, 2, 3, 4]);
        b[24..32].copy_from_slice(&0xdead_0000u64.to_ne_bytes());
        b[32..36].copy_from_slice(&0x77u32.to_ne_bytes());
        b[SEND_WQE_DMA + 12..SEND_WQE_DMA + 16].copy_from_slice(&(sges.len() as u32).to_ne_bytes());
        for (i, &(a, l, k)) in sges.iter().enumerate() {
            let o = SEND_WQE_HDR + i * SGE_SIZE;
            b[o..o + 8].copy_from_slice(&a.to_ne_bytes());
            b[o + 8..o + 12].copy_from_slice(&l.to_ne_bytes());
            b[o + 12..o + 16].copy_from_slice(&k.to_ne_bytes());
        }
        b
    }

    #[test]
    fn decodes_a_send() {
        let b = send_slot(
            wr::SEND_WITH_IMM,
            send_flags::SIGNALED,
            &[(0x1000, 100, 5), (0x2000, 28, 6)],
        );
        let h = decode_send(&b, 3, 0).unwrap();
        assert_eq!(h.wr_id, 0x1122);
        assert_eq!(h.op, SendOp::SendImm);
        assert_eq!(h.imm, [1, 2, 3, 4]);
        assert_eq!(h.num_sge, 2);
        assert_eq!(h.length, 128);
        assert_eq!(
            send_sge(&b, 1),
            Some(Sge {
                addr: 0x2000,
                length: 28,
                lkey: 6
            })
        );
        assert_eq!((h.remote_addr, h.rkey), (0xdead_0000, 0x77));
        assert_eq!(h.op.wc_opcode(), super::super::cqe::wc_opcode::SEND);
    }

    #[test]
    fn decodes_atomics_and_reads() {
        let mut b = send_slot(wr::ATOMIC_CMP_AND_SWP, 0, &[(0x1000, 8, 5)]);
        b[32..40].copy_from_slice(&11u64.to_ne_bytes());
        b[40..48].copy_from_slice(&22u64.to_ne_bytes());
        b[48..52].copy_from_slice(&0x99u32.to_ne_bytes());
        let h = decode_send(&b, 1, 0).unwrap();
        assert_eq!(h.op, SendOp::CompareSwap);
        assert!(h.op.needs_response() && h.op.is_atomic());
        assert_eq!((h.remote_addr, h.rkey), (0xdead_0000, 0x99));
        assert_eq!((h.compare_add, h.swap), (11, 22));
        let h = decode_send(&send_slot(wr::RDMA_READ, 0, &[(0, 64, 1)]), 1, 0).unwrap();
        assert_eq!((h.op, h.rkey, h.length), (SendOp::Read, 0x77, 64));
        assert_eq!((h.compare_add, h.swap), (0, 0));
        assert!(h.op.needs_response() && !h.op.is_atomic());
        let mut b = send_slot(wr::ATOMIC_WRITE, send_flags::SIGNALED, &[]);
        b[SEND_WQE_HDR..SEND_WQE_HDR + 8].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let h = decode_send(&b, 1, 0).unwrap();
        assert_eq!(
            (h.op, h.length, h.num_sge, h.rkey),
            (SendOp::AtomicWrite, 8, 0, 0x77)
        );
        assert!(h.op.needs_response() && !h.op.writes_locally());
        assert_eq!(atomic_write_value(&b), Some([1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(
            decode_send(&b[..SEND_WQE_HDR + 4], 1, 0),
            Err((0x1122, WqeError::Truncated))
        );
        let inline = send_slot(wr::RDMA_READ, send_flags::INLINE, &[]);
        assert_eq!(
            decode_send(&inline, 1, 16),
            Err((0x1122, WqeError::Flags(send_flags::INLINE)))
        );
    }

    #[test]
    fn decodes_flush_and_memory_window_ops() {
        let mut b = send_slot(wr::FLUSH, send_flags::SIGNALED, &[]);
        b[36..40].copy_from_slice(&0x4242u32.to_ne_bytes());
        b[40] = 1; // IB_FLUSH_GLOBAL
        b[41] = 1; // IB_FLUSH_MR
        b[SEND_WQE_DMA..SEND_WQE_DMA + 4].copy_from_slice(&4096u32.to_ne_bytes());
        let h = decode_send(&b, 1, 0).unwrap();
        assert_eq!(
            (h.op, h.rkey, h.length, h.num_sge),
            (SendOp::Flush, 0x4242, 4096, 0)
        );
        assert_eq!(
            h.flush,
            FlushReq {
                placement_type: 1,
                selectivity: 1
            }
        );
        assert!(h.op.needs_response() && h.op.empty_read_response() && !h.op.carries_payload());
        assert_eq!(h.op.wc_opcode(), super::super::cqe::wc_opcode::FLUSH);
        b[40] = 4;
        assert_eq!(decode_send(&b, 1, 0), Err((0x1122, WqeError::Flush)));
        b[40] = 1;
        b[41] = 2;
        assert_eq!(decode_send(&b, 1, 0), Err((0x1122, WqeError::Flush)));

        let b = send_slot(wr::LOCAL_INV, send_flags::SIGNALED, &[(0, 64, 1)]);
        let h = decode_send(&b, 1, 0).unwrap();
        assert_eq!((h.op, h.length, h.num_sge), (SendOp::LocalInv, 0, 0));
        assert_eq!(h.invalidate_rkey(), u32::from_ne_bytes([1, 2, 3, 4]));
        assert!(h.op.is_local() && !h.op.carries_payload() && !h.op.needs_response());
        let h = decode_send(&send_slot(wr::BIND_MW, 0, &[]), 1, 0).unwrap();
        assert_eq!((h.op, h.bind.addr), (SendOp::BindMw, 0xdead_0000));
        let h = decode_send(&send_slot(wr::SEND_WITH_INV, 0, &[(0, 64, 1)]), 1, 0).unwrap();
        assert!(h.op.is_send() && h.op.carries_payload() && h.length == 64);
    }

    #[test]
    fn refuses_what_it_cannot_trust() {
        let b = send_slot(99, 0, &[]);
        assert_eq!(decode_send(&b, 1, 0), Err((0x1122, WqeError::Opcode(99))));
        let b = send_slot(wr::SEND, 1 << 9, &[]);
        assert_eq!(
            decode_send(&b, 1, 0),
            Err((0x1122, WqeError::Flags(1 << 9)))
        );
        let b = send_slot(wr::SEND, 0, &[(0, 1, 1), (0, 1, 1)]);
        assert_eq!(decode_send(&b, 1, 0), Err((0x1122, WqeError::SgeCount(2))));
        // More SGEs than the slot holds, even if the QP limit allows them.
        let mut b = send_slot(wr::SEND, 0, &[]);
        b[SEND_WQE_DMA + 12..SEND_WQE_DMA + 16].copy_from_slice(&4u32.to_ne_bytes());
        assert_eq!(decode_send(&b, 32, 0), Err((0x1122, WqeError::SgeCount(4))));
        let b = send_slot(wr::SEND, 0, &[(0, u32::MAX, 1)]);
        assert_eq!(decode_send(&b, 1, 0), Err((0x1122, WqeError::Length)));
        assert_eq!(
            decode_send(&b[..100], 1, 0),
            Err((0x1122, WqeError::Truncated))
        );
        assert_eq!(decode_send(&b[..4], 1, 0), Err((0, WqeError::Truncated)));
    }

    #[test]
    fn inline_length_is_bounded() {
        let mut b = send_slot(wr::SEND, send_flags::INLINE, &[]);
        b[SEND_WQE_DMA..SEND_WQE_DMA + 4].copy_from_slice(&16u32.to_ne_bytes());
        b[SEND_WQE_HDR..SEND_WQE_HDR + 16].copy_from_slice(&[9; 16]);
        let h = decode_send(&b, 1, 16).unwrap();
        assert_eq!(send_inline(&b, &h), Some(&[9u8; 16][..]));
        assert_eq!(
            decode_send(&b, 1, 15),
            Err((0x1122, WqeError::InlineLength(16)))
        );
        b[SEND_WQE_DMA..SEND_WQE_DMA + 4].copy_from_slice(&100u32.to_ne_bytes());
        assert_eq!(
            decode_send(&b, 1, 1000),
            Err((0x1122, WqeError::InlineLength(100)))
        );
    }

    #[test]
    fn decodes_a_recv() {
        let mut b = [0u8; 72];
        b[0..8].copy_from_slice(&7u64.to_ne_bytes());
        b[RECV_WQE_DMA + 12..RECV_WQE_DMA + 16].copy_from_slice(&2u32.to_ne_bytes());
        b[RECV_WQE_HDR + 8..RECV_WQE_HDR + 12].copy_from_slice(&10u32.to_ne_bytes());
        b[RECV_WQE_HDR + 24..RECV_WQE_HDR + 28].copy_from_slice(&20u32.to_ne_bytes());
        let h = decode_recv(&b, 2).unwrap();
        assert_eq!((h.wr_id, h.num_sge, h.length), (7, 2, 30));
        assert_eq!(decode_recv(&b, 1), Err((7, WqeError::SgeCount(2))));
        assert_eq!(decode_recv(&b[..56], 2), Err((7, WqeError::SgeCount(2))));
    }
}
