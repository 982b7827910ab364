// SPDX-License-Identifier: GPL-2.0

//! Completion queues.  A user CQ is a [`Queue`] of `ib_uverbs_wc`
//! slots that librxe maps and polls itself.  The kernel is the only
//! producer: it keeps its producer index privately (the shared copy is
//! only published, never read back) and reads the user's consumer index
//! masked, to detect a full ring.  Completion events go to the consumer's
//! handler as armed by `req_notify_cq`.
//!
//! A kernel consumer's CQ (the MAD layer's, rdma_cm's, a ULP's) is a
//! bounded ring of completions in kernel memory, [`KernelRing`], under a
//! spinlock taken with interrupts off: ib_core's `poll_cq` and
//! `req_notify_cq` come from softirq (`IB_POLL_SOFTIRQ`), process context
//! or with interrupts disabled.  Its entries carry what `struct ib_wc` has
//! beyond `ib_uverbs_wc` (the QP's identity).

use kernel::{
    new_mutex,
    prelude::*,
    sync::{
        atomic::{Acquire, Atomic, Full},
        barrier::smp_mb,
        Arc, Mutex,
    },
};

use crate::kapi::rdma::cq::{notify, CqEvents, KernelWc, NetworkType};
use crate::kapi::rdma::event::QpHandle;
use crate::kapi::spinlock_irq::SpinLockIrq;
use crate::limit::Charge;
use crate::new_spinlock_irq;
use crate::proto::cqe::{Cqe, NetHdr, CQE_SIZE};
use crate::queue::Queue;
use crate::rrxe_ratelimited;

/// The ring and the kernel's producer index (a running count).
struct Ring {
    /// Taken away when the CQ is destroyed (see [`RrxeCq`]'s drop).
    queue: Option<Queue>,
    producer: u32,
}

/// A kernel consumer's completions: a circular buffer of fixed size.
struct KernelRing {
    slots: KVVec<Option<KernelWc>>,
    /// Index of the oldest entry.
    head: usize,
    /// Entries not yet polled.
    count: usize,
}

impl KernelRing {
    fn new(capacity: usize) -> Result<Self> {
        let mut slots = KVVec::with_capacity(capacity, GFP_KERNEL)?;
        for _ in 0..capacity {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            head: 0,
            count: 0,
        })
    }

    fn pending(&self) -> usize {
        self.count
    }

    /// Appends `wc`; `ENOSPC` if the ring is full.
    fn push(&mut self, wc: KernelWc) -> Result {
        let cap = self.slots.len();
        if self.count >= cap {
            return Err(ENOSPC);
        }
        self.slots[(self.head + self.count) % cap] = Some(wc);
        self.count += 1;
        Ok(())
    }

    /// Removes the oldest entry.
    fn pop(&mut self) -> Option<KernelWc> {
        if self.count == 0 {
            return None;
        }
        let wc = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.count -= 1;
        wc
    }
}

/// What a CQ shares with the QPs that complete into it.  QPs may hold it
/// (through work items) after the CQ is destroyed; the ring is gone then
/// and completions are dropped.
#[pin_data]
pub(crate) struct CqShared {
    #[pin]
    ring: Mutex<Ring>,
    /// A kernel consumer's CQ keeps its completions here instead (and
    /// `ring` has no queue); `None` for user CQs.
    #[pin]
    kring: SpinLockIrq<Option<KernelRing>>,
    /// Armed notification (`IB_CQ_SOLICITED` or `IB_CQ_NEXT_COMP`), 0 if
    /// disarmed.
    notify: Atomic<u32>,
    events: CqEvents,
}

/// Driver data of one CQ.
pub(crate) struct RrxeCq {
    pub(crate) shared: Arc<CqShared>,
    /// The device's count of live CQs (`param::MAX_CQ`).
    _charge: Charge,
}

impl Drop for RrxeCq {
    /// `destroy_cq`: the ring's mmap entry goes now, while the user context
    /// exists, whoever still holds the shared part.
    fn drop(&mut self) {
        let q = self.shared.ring.lock().queue.take();
        drop(q);
    }
}

impl RrxeCq {
    /// A CQ completing into `queue`, a ring user space maps, or, for a
    /// kernel consumer (`None`), into a kernel ring of `capacity` entries.
    pub(crate) fn new(
        queue: Option<Queue>,
        capacity: u32,
        events: CqEvents,
        charge: Charge,
    ) -> Result<Self> {
        let kring = match queue {
            Some(_) => None,
            None => Some(KernelRing::new(capacity as usize)?),
        };
        let shared = Arc::pin_init(
            pin_init!(CqShared {
                ring <- new_mutex!(Ring { queue, producer: 0 }),
                kring <- new_spinlock_irq!(kring),
                notify: Atomic::new(0),
                events,
            }),
            GFP_KERNEL,
        )?;
        Ok(Self {
            shared,
            _charge: charge,
        })
    }

    /// Replaces a user CQ's ring with `new`, empty and of `capacity`
    /// entries, which takes the completions not yet polled, in order;
    /// `EINVAL` if they do not fit (the old ring stays) or the CQ is a
    /// kernel consumer's.  The ring lock is held only to move them: the
    /// caller makes `new`, and writes its mmap info, before.
    pub(crate) fn replace_ring(&self, new: Queue, capacity: u32) -> Result {
        let mut ring = self.shared.ring.lock();
        let old = ring.queue.as_ref().ok_or(EINVAL)?;
        let consumer = old.user_consumer()?;
        let pending = ring.producer.wrapping_sub(consumer) & old.mask();
        if pending > capacity {
            rrxe_ratelimited!(
                pr_warn,
                "rrxe: resize_cq: a ring of {} entries cannot hold the {} not polled\n",
                capacity,
                pending
            );
            return Err(EINVAL);
        }
        let mut slot = [0u8; CQE_SIZE];
        for i in 0..pending {
            old.read_slot(consumer.wrapping_add(i), &mut slot)?;
            new.write_slot(i, &slot)?;
        }
        new.publish_consumer(0)?;
        new.publish_producer(pending)?;
        let old = ring.queue.replace(new);
        ring.producer = pending;
        drop(ring);
        // The old ring's mmap entry goes outside the lock as well.
        drop(old);
        Ok(())
    }

    /// Arms the CQ for `arm` (`notify::NEXT_COMP` or `notify::SOLICITED`,
    /// 0 to leave it as it is).  NEXT_COMP wins over SOLICITED if both
    /// requests race, as in C rxe.
    pub(crate) fn arm(&self, arm: u32) {
        let word = &self.shared.notify;
        // Full ordering (as `post`'s barrier on the other side): the arm
        // must be visible before the consumer's next look at the ring, or
        // a completion appended meanwhile could find the CQ disarmed while
        // the consumer finds the ring empty, and wait for an event forever.
        if arm == notify::NEXT_COMP {
            word.xchg(arm, Full);
        } else if arm != 0 {
            let _ = word.cmpxchg(0, arm, Full);
        }
    }

    /// Whether completions wait to be polled.
    pub(crate) fn any_pending(&self) -> Result<bool> {
        let cq = &self.shared;
        // A kernel consumer may be in softirq context: its ring's lock only.
        if let Some(k) = Option::as_ref(&*cq.kring.lock()) {
            return Ok(k.pending() != 0);
        }
        let pending = match &cq.ring.lock().queue {
            Some(q) => q.count()?,
            None => 0,
        };
        Ok(pending != 0)
    }

    /// `poll_cq` of a kernel consumer: up to `max` completions to `f`,
    /// oldest first.  `EINVAL` on a user CQ (librxe polls its ring itself).
    pub(crate) fn poll(&self, max: usize, f: &mut dyn FnMut(&KernelWc)) -> Result {
        let mut guard = self.shared.kring.lock();
        let k = Option::as_mut(&mut *guard).ok_or(EINVAL)?;
        for _ in 0..max {
            let Some(wc) = k.pop() else { break };
            f(&wc);
        }
        Ok(())
    }
}

impl CqShared {
    /// Appends `cqe`, then raises an event if the CQ is armed for it
    /// (`solicited` completions also satisfy `IB_CQ_SOLICITED`).  `ENOSPC`
    /// if the ring is full: the completion is lost and the caller must
    /// treat the QP as failed (IBTA: CQ overrun is a fatal error); the
    /// CQ's consumer gets `IB_EVENT_CQ_ERR`.
    pub(crate) fn post(&self, cqe: &Cqe, qp: QpHandle, solicited: bool) -> Result {
        let overrun = self.append(cqe, qp);
        if overrun == Err(ENOSPC) {
            self.events.error();
        }
        overrun?;
        // The completion published (the producer index), then the arm
        // read: a full barrier between the two (see `RrxeCq::arm`).
        smp_mb();
        let armed = self.notify.load(Acquire);
        let fire = armed == notify::NEXT_COMP || (solicited && armed == notify::SOLICITED);
        if fire && self.notify.cmpxchg(armed, 0, Full).is_ok() {
            self.events.notify();
        }
        Ok(())
    }

    /// Appends `cqe` to the ring; `ENOSPC` if it is full.
    fn append(&self, cqe: &Cqe, qp: QpHandle) -> Result {
        if let Some(k) = Option::as_mut(&mut *self.kring.lock()) {
            return k.push(kernel_wc(cqe, qp)).inspect_err(|_| {
                rrxe_ratelimited!(pr_warn, "rrxe: CQ overrun (QP {:#x})\n", cqe.qp_num);
            });
        }
        {
            let mut ring = self.ring.lock();
            let prod = ring.producer;
            let Some(q) = &ring.queue else {
                return Err(ENODEV);
            };
            let next = prod.wrapping_add(1);
            if next & q.mask() == q.user_consumer()? {
                rrxe_ratelimited!(pr_warn, "rrxe: CQ overrun (QP {:#x})\n", cqe.qp_num);
                return Err(ENOSPC);
            }
            q.write_slot(prod, &cqe.encode())?;
            q.publish_producer(next)?;
            ring.producer = next;
        }
        Ok(())
    }
}

/// `cqe` as a kernel consumer reads it (kernel opcodes and statuses have
/// the uverbs values).
fn kernel_wc(cqe: &Cqe, qp: QpHandle) -> KernelWc {
    KernelWc {
        wr_id: cqe.wr_id,
        status: cqe.status as u32,
        opcode: cqe.opcode,
        byte_len: cqe.byte_len,
        imm: cqe.imm,
        invalidated: cqe.invalidated,
        src_qp: cqe.src_qp,
        grh: cqe.grh.map(|n| match n {
            NetHdr::Ipv4 => NetworkType::Ipv4,
            NetHdr::Ipv6 => NetworkType::Ipv6,
        }),
        vlan: cqe.vlan,
        qp,
    }
}

#[kernel::macros::kunit_tests(rrxe_kernel_cq)]
mod tests {
    use super::*;
    use crate::proto::cqe::WcStatus;

    fn wc(wr_id: u64) -> KernelWc {
        let cqe = Cqe {
            wr_id,
            status: WcStatus::Success,
            opcode: 0,
            byte_len: 0,
            imm: None,
            invalidated: None,
            qp_num: 0x11,
            src_qp: 0,
            grh: None,
            vlan: None,
        };
        kernel_wc(&cqe, QpHandle::default())
    }

    #[test]
    fn a_kernel_completion_keeps_what_the_entry_says() {
        let cqe = Cqe {
            wr_id: 7,
            status: WcStatus::RemAccessErr,
            opcode: 0x80,
            byte_len: 100,
            imm: Some([1, 2, 3, 4]),
            invalidated: None,
            qp_num: 0x11,
            src_qp: 0x22,
            grh: Some(NetHdr::Ipv6),
            vlan: Some(5),
        };
        let w = kernel_wc(&cqe, QpHandle::default());
        assert_eq!(
            (w.wr_id, w.opcode, w.byte_len, w.src_qp),
            (7, 0x80, 100, 0x22)
        );
        assert_eq!(w.status, WcStatus::RemAccessErr as u32);
        assert_eq!(
            (w.imm, w.invalidated, w.vlan),
            (Some([1, 2, 3, 4]), None, Some(5))
        );
        assert_eq!(w.grh, Some(NetworkType::Ipv6));
    }

    #[test]
    fn holds_its_capacity_in_order_and_wraps() -> Result {
        let mut r = KernelRing::new(3)?;
        assert!(r.pop().is_none());
        for i in 0..3 {
            r.push(wc(i))?;
        }
        // Full: the completion is refused (the caller's CQ overrun).
        assert_eq!(r.push(wc(9)), Err(ENOSPC));
        assert_eq!(r.pending(), 3);
        assert_eq!(r.pop().map(|w| w.wr_id), Some(0));
        // Around the end of the buffer, still oldest first.
        r.push(wc(3))?;
        r.push(wc(4)).unwrap_err();
        let ids: [Option<u64>; 4] = core::array::from_fn(|_| r.pop().map(|w| w.wr_id));
        assert_eq!(ids, [Some(1), Some(2), Some(3), None]);
        assert_eq!(r.pending(), 0);
        Ok(())
    }
}
