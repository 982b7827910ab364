// SPDX-License-Identifier: GPL-2.0

//! Kernel copies of work queue entries.  A WQE is copied out of the mapped
//! ring once, decoded and checked (`proto::wqe`), its SGEs resolved to
//! memory regions (PD, range and access rights checked once, the regions
//! held), and from then on the engine works only on its copy: whatever
//! user space later writes into the ring slot cannot change a WQE in
//! flight, and a region deregistered meanwhile stays valid until the WQE
//! is retired.
//!
//! Data moves once: a send WQE's payload is appended from the pinned pages
//! straight into the packet's skb ([`gather`]); a received payload is
//! copied from the skb (its linear part or fragments) straight into the
//! pinned pages ([`scatter`]).

use kernel::{prelude::*, sync::Arc};

use crate::kapi::net::{route::TxPacket, skb::SkBuff};
use crate::kapi::rdma::mr::PdId;
use crate::kapi::rdma::rxe_uapi as uapi;
use crate::mr::{AccessError, MrState, MrTable, LOCAL_WRITE};
use crate::proto::cqe::WcStatus;
use crate::proto::psn::Psn;
use crate::proto::window::WqeSpan;
use crate::proto::wqe::{self, RecvWqeHdr, SendWqeHdr, Sge, WqeError};
use crate::queue::Queue;

/// Largest slot copied (a send WQE with 32 SGEs or 512 inline bytes).
const MAX_SLOT: usize = 1024;

const _: () = {
    // The uapi layout `proto::wqe` decodes.
    assert!(uapi::SEND_WQE_SIZE == wqe::SEND_WQE_HDR);
    assert!(uapi::SEND_WQE_DMA_OFFSET == wqe::SEND_WQE_DMA);
    assert!(uapi::RECV_WQE_SIZE == wqe::RECV_WQE_HDR);
    assert!(uapi::RECV_WQE_DMA_OFFSET == wqe::RECV_WQE_DMA);
    assert!(uapi::DMA_INFO_SIZE == wqe::DMA_DATA);
    assert!(uapi::SGE_SIZE == wqe::SGE_SIZE);
};

/// A piece of a message in a region: `len` bytes at offset `off`.
pub(crate) struct Segment {
    mr: Arc<MrState>,
    off: usize,
    len: u32,
}

/// Where a send WQE's payload comes from.
pub(crate) enum Payload {
    Inline(KVec<u8>),
    Segments(KVec<Segment>),
}

/// A send WQE taken from the send queue.
pub(crate) struct SendWqe {
    pub(crate) hdr: SendWqeHdr,
    pub(crate) payload: Payload,
    /// PSN of its first packet, valid once `started`.
    pub(crate) first_psn: Psn,
    /// Its first packet has been sent (so its PSNs are fixed).
    pub(crate) started: bool,
    /// Packets it takes.
    pub(crate) npkts: u32,
    /// Packets sent in the current pass.
    pub(crate) pkts_sent: u32,
    /// Refused at fetch time (completed in error when its turn comes).
    pub(crate) error: Option<WcStatus>,
}

impl SendWqe {
    /// Its place in the PSN space.
    pub(crate) fn span(&self) -> WqeSpan {
        WqeSpan {
            started: self.started,
            first_psn: self.first_psn,
            npkts: self.npkts,
        }
    }

    /// Every packet has been sent (in the current pass).
    pub(crate) fn fully_sent(&self) -> bool {
        self.pkts_sent >= self.npkts
    }
}

/// Maps a WQE format error to the completion status.
fn wqe_status(e: WqeError) -> WcStatus {
    match e {
        WqeError::Opcode(_) | WqeError::Flags(_) | WqeError::Truncated | WqeError::Flush => {
            WcStatus::LocQpOpErr
        }
        WqeError::SgeCount(_) | WqeError::InlineLength(_) | WqeError::Length => WcStatus::LocLenErr,
    }
}

/// Maps a region access error to the completion status.
fn access_status(e: AccessError) -> WcStatus {
    match e {
        AccessError::Range => WcStatus::LocLenErr,
        // A page of an on-demand-paging region that cannot be faulted in
        // is a protection error, as on C rxe.
        AccessError::Key | AccessError::Access | AccessError::Misaligned | AccessError::Fault => {
            WcStatus::LocProtErr
        }
    }
}

/// Resolves `sges` to regions of `pd` allowing `need`.
fn resolve(
    mrs: &MrTable,
    pd: PdId,
    sges: impl Iterator<Item = Sge>,
    n: usize,
    need: u32,
) -> Result<core::result::Result<KVec<Segment>, AccessError>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
    for sge in sges {
        if sge.length == 0 {
            continue;
        }
        let Some(mr) = mrs.lookup(sge.lkey) else {
            return Ok(Err(AccessError::Key));
        };
        let off = match mr.check(pd, sge.addr, u64::from(sge.length), need) {
            Ok(off) => off,
            Err(e) => return Ok(Err(e)),
        };
        v.push(
            Segment {
                mr,
                off,
                len: sge.length,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(Ok(v))
}

/// A send WQE that completes with `status` when its turn comes.
fn failed_send(wr_id: u64, status: WcStatus) -> SendWqe {
    let hdr = SendWqeHdr {
        wr_id,
        op: wqe::SendOp::Send,
        flags: wqe::send_flags::SIGNALED,
        imm: [0; 4],
        remote_addr: 0,
        rkey: 0,
        compare_add: 0,
        swap: 0,
        num_sge: 0,
        length: 0,
        bind: Default::default(),
        flush: Default::default(),
        ud: Default::default(),
        reg: Default::default(),
    };
    SendWqe {
        hdr,
        payload: Payload::Inline(KVec::new()),
        first_psn: Psn::new(0),
        started: false,
        npkts: 1,
        pkts_sent: 0,
        error: Some(status),
    }
}

/// Copies, decodes and resolves send WQE `idx` of `sq` for a QP in `pd`.
/// A malformed WQE, or one naming memory it may not read, comes back
/// marked with its error status, so it completes in order.
pub(crate) fn fetch_send(
    sq: &Queue,
    idx: u32,
    mrs: &MrTable,
    pd: PdId,
    max_sge: u32,
    max_inline: u32,
    pmtu: u32,
) -> Result<SendWqe> {
    let mut buf = [0u8; MAX_SLOT];
    let len = sq.slot_size().min(MAX_SLOT);
    sq.read_slot(idx, &mut buf[..len])?;
    let b = &buf[..len];
    let hdr = match wqe::decode_send(b, max_sge, max_inline) {
        Ok(h) => h,
        Err((wr_id, e)) => {
            crate::rrxe_ratelimited!(
                pr_warn,
                "rrxe: bad send WQE (wr_id {:#x}): {:?}\n",
                wr_id,
                e
            );
            return Ok(failed_send(wr_id, wqe_status(e)));
        }
    };
    let payload = if hdr.op == wqe::SendOp::AtomicWrite {
        let mut v = KVec::with_capacity(8, GFP_KERNEL)?;
        v.extend_from_slice(&wqe::atomic_write_value(b).ok_or(EINVAL)?, GFP_KERNEL)?;
        Payload::Inline(v)
    } else if hdr.flags & wqe::send_flags::INLINE != 0 {
        let mut v = KVec::with_capacity(hdr.length as usize, GFP_KERNEL)?;
        v.extend_from_slice(wqe::send_inline(b, &hdr).ok_or(EINVAL)?, GFP_KERNEL)?;
        Payload::Inline(v)
    } else {
        let sges = (0..hdr.num_sge).filter_map(|i| wqe::send_sge(b, i));
        // READ and atomic responses land in the local buffers.
        let need = if hdr.op.writes_locally() {
            LOCAL_WRITE
        } else {
            0
        };
        if hdr.op.is_atomic() && hdr.length < wqe::ATOMIC_LEN {
            let mut w = failed_send(hdr.wr_id, WcStatus::LocLenErr);
            w.hdr = hdr;
            return Ok(w);
        }
        match resolve(mrs, pd, sges, hdr.num_sge as usize, need)? {
            Ok(v) => Payload::Segments(v),
            Err(e) => {
                crate::rrxe_ratelimited!(
                    pr_warn,
                    "rrxe: send WQE (wr_id {:#x}) names bad memory: {:?}\n",
                    hdr.wr_id,
                    e
                );
                let mut w = failed_send(hdr.wr_id, access_status(e));
                w.hdr = hdr;
                return Ok(w);
            }
        }
    };
    let npkts = crate::proto::segment::psn_span(hdr.op, hdr.length, pmtu);
    Ok(SendWqe {
        hdr,
        payload,
        first_psn: Psn::new(0),
        started: false,
        npkts,
        pkts_sent: 0,
        error: None,
    })
}

/// Walks `segs` from message offset `at` for `len` bytes, calling `f` with
/// each piece (segment, offset in its region, length).
fn walk(
    segs: &[Segment],
    mut at: usize,
    len: usize,
    mut f: impl FnMut(&Segment, usize, usize) -> core::result::Result<(), AccessError>,
) -> core::result::Result<(), AccessError> {
    let mut done = 0usize;
    for seg in segs {
        if done == len {
            break;
        }
        let sl = seg.len as usize;
        if at >= sl {
            at -= sl;
            continue;
        }
        let n = (sl - at).min(len - done);
        f(seg, seg.off + at, n)?;
        done += n;
        at = 0;
    }
    if done == len {
        Ok(())
    } else {
        Err(AccessError::Range)
    }
}

/// Appends `n` payload bytes of `w` from message offset `at` to `pkt`,
/// calling `f` on each piece as written.
pub(crate) fn gather(
    w: &SendWqe,
    at: u32,
    n: usize,
    pkt: &mut TxPacket,
    mut f: impl FnMut(&[u8]),
) -> core::result::Result<(), AccessError> {
    let at = at as usize;
    match &w.payload {
        Payload::Inline(v) => {
            let src = v.get(at..at + n).ok_or(AccessError::Range)?;
            f(pkt.append(src).map_err(|_| AccessError::Range)?);
            Ok(())
        }
        Payload::Segments(segs) => walk(segs, at, n, |seg, off, len| {
            seg.mr.append_to(pkt, off, len, &mut f)
        }),
    }
}

/// Copies `n` bytes of a READ response in `skb` at `skb_off` into the
/// local buffers of READ WQE `w`, at message offset `at`.
pub(crate) fn scatter_response(
    w: &SendWqe,
    at: u32,
    skb: &SkBuff,
    skb_off: usize,
    n: usize,
) -> core::result::Result<(), AccessError> {
    let Payload::Segments(segs) = &w.payload else {
        return Err(AccessError::Access);
    };
    copy_from_skb(segs, at as usize, skb, skb_off, n)
}

/// Copies `n` bytes of `skb` at `skb_off` into `segs` from message offset
/// `at` (straight into the pinned pages).
fn copy_from_skb(
    segs: &[Segment],
    at: usize,
    skb: &SkBuff,
    skb_off: usize,
    n: usize,
) -> core::result::Result<(), AccessError> {
    let mut pos = skb_off;
    walk(segs, at, n, |seg, off, len| {
        seg.mr.write_from_skb(off, skb, pos, len)?;
        pos += len;
        Ok(())
    })
}

/// Writes `src` (an atomic's original value) at the start of the local
/// buffers of WQE `w`.
pub(crate) fn write_response(w: &SendWqe, src: &[u8]) -> core::result::Result<(), AccessError> {
    let Payload::Segments(segs) = &w.payload else {
        return Err(AccessError::Access);
    };
    let mut pos = 0usize;
    walk(segs, 0, src.len(), |seg, off, len| {
        seg.mr
            .write_bytes(off, src.get(pos..pos + len).ok_or(AccessError::Range)?)?;
        pos += len;
        Ok(())
    })
}

/// A receive WQE taken from the receive queue.
pub(crate) struct RecvWqe {
    pub(crate) hdr: RecvWqeHdr,
    segs: KVec<Segment>,
    /// Bytes received so far.
    pub(crate) received: u32,
}

impl RecvWqe {
    /// The stand-in for receive WQE `wr_id` that could not be taken (it
    /// is completed in error, with no buffer).
    pub(crate) fn failed(wr_id: u64) -> Self {
        Self {
            hdr: RecvWqeHdr {
                wr_id,
                num_sge: 0,
                length: 0,
            },
            segs: KVec::new(),
            received: 0,
        }
    }
}

/// A receive WQE that could not be taken: complete it in error.
pub(crate) struct BadRecv {
    pub(crate) wr_id: u64,
    pub(crate) status: WcStatus,
}

/// Copies, decodes and resolves receive WQE `idx` of `rq` for a QP in
/// `pd`; a malformed WQE, or one naming memory it may not write, comes
/// back as [`BadRecv`].
pub(crate) fn fetch_recv(
    rq: &Queue,
    idx: u32,
    mrs: &MrTable,
    pd: PdId,
    max_sge: u32,
) -> Result<core::result::Result<RecvWqe, BadRecv>> {
    let mut buf = [0u8; MAX_SLOT];
    let len = rq.slot_size().min(MAX_SLOT);
    rq.read_slot(idx, &mut buf[..len])?;
    let b = &buf[..len];
    let hdr = match wqe::decode_recv(b, max_sge) {
        Ok(h) => h,
        Err((wr_id, e)) => {
            return Ok(Err(BadRecv {
                wr_id,
                status: wqe_status(e),
            }))
        }
    };
    let sges = (0..hdr.num_sge).filter_map(|i| wqe::recv_sge(b, i));
    match resolve(mrs, pd, sges, hdr.num_sge as usize, LOCAL_WRITE)? {
        Ok(segs) => Ok(Ok(RecvWqe {
            hdr,
            segs,
            received: 0,
        })),
        Err(e) => Ok(Err(BadRecv {
            wr_id: hdr.wr_id,
            status: access_status(e),
        })),
    }
}

/// Writes `src` into the receive WQE's buffers at its current offset (a
/// UD receive's GRH).  `Range` if the buffers are too small.
pub(crate) fn scatter_bytes(r: &mut RecvWqe, src: &[u8]) -> core::result::Result<(), AccessError> {
    let end = (r.received as usize)
        .checked_add(src.len())
        .ok_or(AccessError::Range)?;
    if end > r.hdr.length as usize {
        return Err(AccessError::Range);
    }
    let mut pos = 0usize;
    walk(&r.segs, r.received as usize, src.len(), |seg, off, len| {
        seg.mr
            .write_bytes(off, src.get(pos..pos + len).ok_or(AccessError::Range)?)?;
        pos += len;
        Ok(())
    })?;
    r.received = end as u32;
    Ok(())
}

/// Copies `n` bytes of `skb` at `skb_off` into the receive WQE's buffers
/// at its current offset.  `Range` if the buffers are too small.
pub(crate) fn scatter(
    r: &mut RecvWqe,
    skb: &SkBuff,
    skb_off: usize,
    n: usize,
) -> core::result::Result<(), AccessError> {
    let end = (r.received as usize)
        .checked_add(n)
        .ok_or(AccessError::Range)?;
    if end > r.hdr.length as usize {
        return Err(AccessError::Range);
    }
    copy_from_skb(&r.segs, r.received as usize, skb, skb_off, n)?;
    r.received = end as u32;
    Ok(())
}
