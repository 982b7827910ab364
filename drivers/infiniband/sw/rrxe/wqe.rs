// SPDX-License-Identifier: GPL-2.0

//! Kernel copies of work queue entries.  A WQE is copied out of the mapped
//! ring once, decoded and checked (`proto::wqe`), and from then on the
//! engine works only on its copy: whatever user space later writes into
//! the ring slot cannot change a WQE in flight.  Also: gathering payload
//! from, and scattering it into, the regions the SGEs name, each access
//! checked against the region's PD, range and access rights.

use kernel::{bindings, prelude::*, sync::Arc};

use crate::engine::DevCore;
use crate::kapi::rdma::mr::PdId;
use crate::mr::{AccessError, MrState};
use crate::proto::cqe::WcStatus;
use crate::proto::psn::Psn;
use crate::proto::wqe::{self, RecvWqeHdr, SendWqeHdr, Sge, WqeError};
use crate::queue::UserQueue;

/// Largest slot copied (a send WQE with 32 SGEs or 512 inline bytes).
const MAX_SLOT: usize = 1024;

const _: () = {
    // The uapi layout `proto::wqe` decodes.
    assert!(core::mem::size_of::<bindings::rxe_send_wqe>() == wqe::SEND_WQE_HDR);
    assert!(core::mem::offset_of!(bindings::rxe_send_wqe, dma) == wqe::SEND_WQE_DMA);
    assert!(core::mem::size_of::<bindings::rxe_recv_wqe>() == wqe::RECV_WQE_HDR);
    assert!(core::mem::offset_of!(bindings::rxe_recv_wqe, dma) == wqe::RECV_WQE_DMA);
    assert!(core::mem::size_of::<bindings::rxe_dma_info>() == wqe::DMA_DATA);
    assert!(core::mem::size_of::<bindings::rxe_sge>() == wqe::SGE_SIZE);
};

/// Where a send WQE's payload comes from.
pub(crate) enum Payload {
    Inline(KVec<u8>),
    Sges(KVec<Sge>),
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
    /// PSN of its last packet.
    pub(crate) fn last_psn(&self) -> Psn {
        self.first_psn.add(self.npkts - 1)
    }

    /// Every packet has been sent (in the current pass).
    pub(crate) fn fully_sent(&self) -> bool {
        self.pkts_sent >= self.npkts
    }
}

/// Maps a WQE format error to the completion status.
fn wqe_status(e: WqeError) -> WcStatus {
    match e {
        WqeError::Opcode(_) | WqeError::Flags(_) | WqeError::Truncated => WcStatus::LocQpOpErr,
        WqeError::SgeCount(_) | WqeError::InlineLength(_) | WqeError::Length => WcStatus::LocLenErr,
    }
}

/// Copies and decodes send WQE `idx` of `sq`.  A malformed WQE comes back
/// as a WQE marked with its error status, so it completes in order.
pub(crate) fn fetch_send(sq: &UserQueue, idx: u32, max_sge: u32, max_inline: u32, pmtu: u32) -> Result<SendWqe> {
    let mut buf = [0u8; MAX_SLOT];
    let len = sq.slot_size().min(MAX_SLOT);
    sq.read_slot(idx, &mut buf[..len])?;
    let b = &buf[..len];
    let (hdr, payload, error) = match wqe::decode_send(b, max_sge, max_inline) {
        Ok(h) => {
            let payload = if h.flags & wqe::send_flags::INLINE != 0 {
                let mut v = KVec::with_capacity(h.length as usize, GFP_KERNEL)?;
                v.extend_from_slice(wqe::send_inline(b, &h).ok_or(EINVAL)?, GFP_KERNEL)?;
                Payload::Inline(v)
            } else {
                let mut v = KVec::with_capacity(h.num_sge as usize, GFP_KERNEL)?;
                for i in 0..h.num_sge {
                    v.push(wqe::send_sge(b, i).ok_or(EINVAL)?, GFP_KERNEL)?;
                }
                Payload::Sges(v)
            };
            (h, payload, None)
        }
        Err((wr_id, e)) => {
            crate::rrxe_ratelimited!(pr_warn, "rrxe: bad send WQE (wr_id {:#x}): {:?}\n", wr_id, e);
            let h = SendWqeHdr {
                wr_id,
                op: wqe::SendOp::Send,
                flags: wqe::send_flags::SIGNALED,
                imm: [0; 4],
                remote_addr: 0,
                rkey: 0,
                num_sge: 0,
                length: 0,
            };
            (h, Payload::Sges(KVec::new()), Some(wqe_status(e)))
        }
    };
    let npkts = crate::proto::segment::packets(hdr.length, pmtu);
    Ok(SendWqe { hdr, payload, first_psn: Psn::new(0), started: false, npkts, pkts_sent: 0, error })
}

/// A receive WQE taken from the receive queue.
pub(crate) struct RecvWqe {
    pub(crate) hdr: RecvWqeHdr,
    pub(crate) sges: KVec<Sge>,
    /// Bytes received so far.
    pub(crate) received: u32,
}

/// Copies and decodes receive WQE `idx` of `rq`; on a format error the
/// `wr_id` and status come back so it can be completed in error.
pub(crate) fn fetch_recv(rq: &UserQueue, idx: u32, max_sge: u32) -> Result<core::result::Result<RecvWqe, (u64, WcStatus)>> {
    let mut buf = [0u8; MAX_SLOT];
    let len = rq.slot_size().min(MAX_SLOT);
    rq.read_slot(idx, &mut buf[..len])?;
    let b = &buf[..len];
    match wqe::decode_recv(b, max_sge) {
        Ok(hdr) => {
            let mut sges = KVec::with_capacity(hdr.num_sge as usize, GFP_KERNEL)?;
            for i in 0..hdr.num_sge {
                sges.push(wqe::recv_sge(b, i).ok_or(EINVAL)?, GFP_KERNEL)?;
            }
            Ok(Ok(RecvWqe { hdr, sges, received: 0 }))
        }
        Err((wr_id, e)) => Ok(Err((wr_id, wqe_status(e)))),
    }
}

/// Looks up the region of `sge` for an access of `need` in `pd`.
fn region(core: &DevCore, pd: PdId, sge: &Sge, need: u32) -> core::result::Result<(Arc<MrState>, usize), AccessError> {
    let mr = core.mrs.lookup(sge.lkey).ok_or(AccessError::Key)?;
    let off = mr.check(pd, sge.addr, u64::from(sge.length), need)?;
    Ok((mr, off))
}

/// Walks `sges` from message offset `at` for `len` bytes, calling `f` with
/// each region piece (region, offset in region, offset in the piece buffer,
/// length).
fn walk(
    core: &DevCore,
    pd: PdId,
    sges: &[Sge],
    mut at: u32,
    len: usize,
    need: u32,
    mut f: impl FnMut(&MrState, usize, usize, usize) -> core::result::Result<(), AccessError>,
) -> core::result::Result<(), AccessError> {
    let mut done = 0usize;
    for sge in sges {
        if done == len {
            break;
        }
        if at >= sge.length {
            at -= sge.length;
            continue;
        }
        let (mr, off) = region(core, pd, sge, need)?;
        let n = ((sge.length - at) as usize).min(len - done);
        f(&mr, off + at as usize, done, n)?;
        done += n;
        at = 0;
    }
    if done == len {
        Ok(())
    } else {
        Err(AccessError::Range)
    }
}

/// Copies `dst.len()` payload bytes of `wqe` starting at message offset
/// `at` into `dst`.
pub(crate) fn gather(core: &DevCore, pd: PdId, wqe: &SendWqe, at: u32, dst: &mut [u8]) -> core::result::Result<(), AccessError> {
    match &wqe.payload {
        Payload::Inline(v) => {
            let src = v.get(at as usize..at as usize + dst.len()).ok_or(AccessError::Range)?;
            dst.copy_from_slice(src);
            Ok(())
        }
        Payload::Sges(sges) => {
            let len = dst.len();
            walk(core, pd, sges, at, len, 0, |mr, off, pos, n| mr.read(off, &mut dst[pos..pos + n]))
        }
    }
}

/// Copies `src` into the receive WQE's buffers at its current offset.
/// `Range` if the buffers are too small.
pub(crate) fn scatter(core: &DevCore, pd: PdId, r: &mut RecvWqe, src: &[u8]) -> core::result::Result<(), AccessError> {
    let end = (r.received as usize).checked_add(src.len()).ok_or(AccessError::Range)?;
    if end > r.hdr.length as usize {
        return Err(AccessError::Range);
    }
    walk(core, pd, &r.sges, r.received, src.len(), crate::mr::LOCAL_WRITE, |mr, off, pos, n| {
        mr.write(off, &src[pos..pos + n])
    })?;
    r.received = end as u32;
    Ok(())
}
