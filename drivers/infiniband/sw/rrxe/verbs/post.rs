// SPDX-License-Identifier: GPL-2.0

//! Work requests of kernel consumers (the MAD layer, the connection
//! manager, ULPs): `post_send`, `post_recv` and `post_srq_recv` write each
//! request into the QP's (or SRQ's) kernel ring in the uABI layout librxe uses
//! (`proto::post`), publish the producer index, and kick the engine,
//! which then reads, checks and runs it exactly as a user WQE.  There is
//! no second data path.
//!
//! Context: kernel consumers post from process context, softirq, or with
//! interrupts off, and from several CPUs at once, so the rings' producer
//! side is serialised by the QP's `kpost` lock (interrupts off) and
//! nothing here sleeps or allocates.  The engine is never run inline from
//! here: the kick queues its task.
//!
//! What is refused at once, with `bad_wr` pointing at the request (as on
//! C rxe): a QP not yet ready to send (RESET, INIT, RTR) or destroyed,
//! more SGEs than the QP was created with, inline data longer than its
//! `max_inline_data`, opcodes the kernel API carries in containers this
//! driver does not read (memory registration), a full ring (`ENOMEM`).
//! Everything else is for the engine to judge, with a completion.

use kernel::{
    prelude::*,
    sync::{barrier::smp_mb, Arc},
};

use crate::device::RrxeDev;
use crate::engine;
use crate::kapi::rdma::wr::{self, RecvWr, SendWr};
use crate::proto::post::{encode_recv, encode_send, inline_area, Payload, SendFields};
use crate::proto::qp_state::QpState;
use crate::proto::wqe::{send_flags, RegReq, Sge};
use crate::qp::Qp;
use crate::queue::Queue;
use crate::srq::SrqShared;

/// The largest send WQE slot (header and the largest inline area, as a
/// power of two); the WQE is built on the stack, then copied in.
const MAX_SLOT: usize = 1024;

/// Builds one WQE in `buf[..slot_size]` with `build` and appends it to
/// `q`, under the caller's `kpost` lock; `ENOMEM` if the ring is full.
fn append(q: &Queue, build: impl FnOnce(&mut [u8]) -> Result) -> Result {
    let mut buf = [0u8; MAX_SLOT];
    let slot = buf.get_mut(..q.slot_size()).ok_or(EINVAL)?;
    build(slot)?;
    let prod = q.user_producer()?;
    let next = prod.wrapping_add(1) & q.mask();
    if next == q.user_consumer()? {
        return Err(ENOMEM);
    }
    q.write_slot(prod, slot)?;
    q.publish_producer(next)
}

/// Runs `f` on the `n` SGEs of `sges` gathered into an array on the
/// stack, as the WQE holds them (at most `MAX_SGE`, the QP limit the
/// callers checked: `EINVAL` beyond it).
fn with_sges(
    sges: impl Iterator<Item = wr::Sge>,
    n: usize,
    f: impl FnOnce(&[Sge]) -> Result,
) -> Result {
    let mut buf = [Sge::default(); crate::param::MAX_SGE as usize];
    for (d, s) in buf.iter_mut().zip(sges) {
        *d = Sge {
            addr: s.addr,
            length: s.length,
            lkey: s.lkey,
        };
    }
    f(buf.get(..n).ok_or(EINVAL)?)
}

/// `post_send` of one request.
pub(crate) fn post_send(qp: &Qp, wr: &SendWr<'_, RrxeDev>) -> Result {
    if !qp.takes_sends() {
        return Err(EINVAL);
    }
    let caps = &qp.init.caps;
    let mut f = SendFields {
        wr_id: wr.wr_id,
        opcode: wr.opcode,
        flags: wr.flags,
        ex: wr.ex,
        remote_addr: wr.remote_addr,
        rkey: wr.rkey,
        compare_add: wr.compare_add,
        swap: wr.swap,
        ud: None,
        reg: None,
    };
    if let Some(ud) = &wr.ud {
        f.ud = Some((ud.remote_qpn, ud.remote_qkey, ud.ah.num()));
    }
    if let Some(r) = &wr.reg {
        // The region's table index, not a pointer (`proto::wqe::RegReq`).
        f.reg = Some(RegReq {
            mr_index: crate::mr::index(r.mr.state_key()),
            key: r.key,
            access: r.access,
        });
    }
    let inline = wr.flags & send_flags::INLINE != 0;
    if !inline && wr.num_sge() > caps.max_send_sge as usize {
        return Err(EINVAL);
    }
    let k = qp.kpost.lock();
    let sq = k.sq.as_ref().ok_or(EINVAL)?;
    append(sq, |slot| {
        if inline {
            let total = wr
                .sges()
                .try_fold(0usize, |n, s| n.checked_add(s.length as usize));
            let total = total.ok_or(EINVAL)?;
            if total > caps.max_inline_data as usize {
                return Err(EINVAL);
            }
            encode_send(&f, Payload::InlineLen(total), slot)?;
            wr.copy_inline(inline_area(slot, total).ok_or(EINVAL)?)
        } else {
            with_sges(wr.sges(), wr.num_sge(), |sges| {
                Ok(encode_send(&f, Payload::Sges(sges), slot)?)
            })
        }
    })
}

/// `post_recv` of one request (a QP on an SRQ has no receive ring:
/// `EINVAL`, as ib_core's contract has it).
pub(crate) fn post_recv(qp: &Qp, wr: &RecvWr<'_>) -> Result {
    if !qp.takes_recvs() {
        return Err(EINVAL);
    }
    if wr.num_sge() > qp.init.caps.max_recv_sge as usize {
        return Err(EINVAL);
    }
    let k = qp.kpost.lock();
    append_recv(k.rq.as_ref().ok_or(EINVAL)?, wr)
}

/// Appends receive request `wr` to the receive ring (of a QP or an SRQ)
/// `q`, under the caller's `kpost` lock.
fn append_recv(q: &Queue, wr: &RecvWr<'_>) -> Result {
    append(q, |slot| {
        with_sges(wr.sges(), wr.num_sge(), |sges| {
            Ok(encode_recv(wr.wr_id, sges, slot)?)
        })
    })
}

/// `post_srq_recv` of one request into a kernel SRQ's ring; its WQEs are
/// taken when messages arrive, so nothing is kicked.
pub(crate) fn post_srq_recv(srq: &SrqShared, wr: &RecvWr<'_>) -> Result {
    if wr.num_sge() > srq.max_sge() as usize {
        return Err(EINVAL);
    }
    srq.post_kernel(|q| append_recv(q, wr))
}

/// After requests were posted: the send task runs them (queued, never
/// inline: the caller may hold locks or be in softirq); receive requests
/// posted in the error state are flushed by the receive task.
pub(crate) fn kick(qp: &Arc<Qp>, send: bool) {
    if send {
        engine::schedule_send(qp);
        return;
    }
    // The ring's producer index is published; the engine publishes the
    // error state, then flushes what the ring holds.  A full barrier
    // between the store and the load, on both sides (the engine's is
    // `Qp::enter_error`'s exchange): either this call sees ERR and kicks,
    // or the flush sees the new request.
    smp_mb();
    if qp.state() == QpState::Err {
        engine::schedule_recv(qp);
    }
}

#[kernel::macros::kunit_tests(rrxe_kernel_post)]
mod tests {
    use super::*;
    use crate::proto::wqe::{decode_recv, decode_send, recv_sge, SendOp};
    use crate::queue::Geometry;

    #[test]
    fn a_full_ring_refuses_and_the_engine_reads_what_was_written() -> Result {
        // 3 entries of 256-byte slots (4 slots, one kept free).
        let q = Queue::new_kernel(Geometry::new(3, 256, 16)?)?;
        let sge = [Sge {
            addr: 0xffff_8880_0000_1000,
            length: 64,
            lkey: 5,
        }];
        for i in 0..3u64 {
            append(&q, |slot| Ok(encode_recv(100 + i, &sge, slot)?))?;
        }
        assert_eq!(
            append(&q, |slot| Ok(encode_recv(103, &sge, slot)?)),
            Err(ENOMEM)
        );
        // The engine's view: three entries, the first as posted.
        assert_eq!(q.posted_since(0)?, 3);
        let mut slot = [0u8; 256];
        q.read_slot(0, &mut slot)?;
        let h = decode_recv(&slot, 1).map_err(|_| EINVAL)?;
        assert_eq!((h.wr_id, h.num_sge, h.length), (100, 1, 64));
        assert_eq!(recv_sge(&slot, 0), Some(sge[0]));
        // Once the engine consumed one, there is room again.
        q.publish_consumer(1)?;
        let f = SendFields {
            wr_id: 7,
            opcode: crate::proto::wqe::wr::SEND,
            ..Default::default()
        };
        append(&q, |slot| Ok(encode_send(&f, Payload::Sges(&sge), slot)?))?;
        q.read_slot(3, &mut slot)?;
        let h = decode_send(&slot, 1, 0).map_err(|_| EINVAL)?;
        assert_eq!((h.wr_id, h.op), (7, SendOp::Send));
        Ok(())
    }
}
