// SPDX-License-Identifier: GPL-2.0

//! A bounded queue of skbs (`struct sk_buff_head`, whose own spinlock is
//! taken with interrupts disabled), filled in softirq context and drained
//! in process context.  The bound is checked before every append, so
//! whatever arrives from the network, the queue holds at most `limit`
//! packets and at most `byte_limit` bytes of memory (the sum of its skbs'
//! `truesize`: one reassembled 64 KiB datagram holds as much as dozens of
//! ordinary packets); what does not fit is handed back to the caller to
//! drop and count.  The bytes are charged before the append (an atomic
//! add, taken back if it went past the limit) and released on removal,
//! so the byte bound holds exactly, whatever the number of producers.

use kernel::{
    bindings,
    prelude::*,
    sync::atomic::{Atomic, Relaxed},
    types::Opaque,
};

use super::skb::SkBuff;

/// A bounded skb queue.
///
/// # Invariants
///
/// `head` is an initialised, pinned `sk_buff_head` for the whole life of
/// the queue; it owns one reference on each skb it holds, and `bytes` is
/// at least the sum of their `truesize`.
#[pin_data(PinnedDrop)]
pub(crate) struct SkbQueue {
    #[pin]
    head: Opaque<bindings::sk_buff_head>,
    limit: u32,
    byte_limit: usize,
    /// The `truesize` of the queued skbs, summed (and of skbs being
    /// appended).
    bytes: Atomic<usize>,
}

// SAFETY: `sk_buff_head` operations are internally locked (irqsave).
unsafe impl Send for SkbQueue {}
// SAFETY: Every operation through a shared reference takes the queue's
// internal lock (irqsave).
unsafe impl Sync for SkbQueue {}

impl SkbQueue {
    /// An empty queue holding at most `limit` skbs and `byte_limit` bytes.
    pub(crate) fn new(limit: u32, byte_limit: usize) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `h` is valid memory for an `sk_buff_head`.
            // INVARIANT: initialised here, empty.
            head <- Opaque::ffi_init(|h| unsafe { bindings::skb_queue_head_init(h) }),
            limit,
            byte_limit,
            bytes: Atomic::new(0),
        })
    }

    /// Memory the queued skbs hold (their `truesize`, summed).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Relaxed)
    }

    /// Packets queued (a racy snapshot, as `skb_queue_len_lockless`).
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: Valid head (type invariant); `qlen` is read once, as the
        // C lockless accessor does.
        unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*self.head.get()).qlen)) }
    }

    /// Appends `skb`, or gives it back if the queue is full; on success,
    /// the bytes queued with it ([`Self::bytes`]).  Any context.
    pub(crate) fn push(&self, skb: SkBuff) -> core::result::Result<usize, SkBuff> {
        // The count check and the append are not one atomic step:
        // concurrent producers (one per CPU at most, in softirq) may
        // overshoot the count by their number, which keeps it bounded.
        if self.len() >= self.limit {
            return Err(skb);
        }
        let size = skb.truesize();
        let queued = self.bytes.fetch_add(size, Relaxed).saturating_add(size);
        if queued > self.byte_limit {
            self.bytes.fetch_sub(size, Relaxed);
            return Err(skb);
        }
        // INVARIANT: The queue takes over the skb's reference; its size was
        // charged to `bytes` above.
        // SAFETY: Valid head (type invariant); the queue takes over our
        // reference.
        unsafe { bindings::skb_queue_tail(self.head.get(), skb.into_raw()) };
        Ok(queued)
    }

    /// Takes the oldest skb, if any.  Any context.
    pub(crate) fn pop(&self) -> Option<SkBuff> {
        // SAFETY: Valid head (type invariant); a dequeued skb's reference
        // is ours (the queue owned it).
        let skb = unsafe { SkBuff::from_raw(bindings::skb_dequeue(self.head.get())) }?;
        // Nobody changes a queued skb: this is what `push` charged.
        self.bytes.fetch_sub(skb.truesize(), Relaxed);
        Some(skb)
    }

    /// Drops every queued skb; returns how many.
    pub(crate) fn purge(&self) -> u32 {
        let mut n = 0;
        while let Some(skb) = self.pop() {
            drop(skb);
            n += 1;
        }
        n
    }
}

#[pinned_drop]
impl PinnedDrop for SkbQueue {
    fn drop(self: Pin<&mut Self>) {
        self.purge();
    }
}

// rrxe runs these; the samples that compile kapi too (samples/rust,
// built with --cfg rrxe_sample) do not register them a second time.
#[cfg(not(rrxe_sample))]
#[kernel::macros::kunit_tests(rrxe_skb_queue)]
mod tests {
    use super::*;

    /// A small skb whose first byte is `tag`.
    fn skb(tag: u8) -> Result<SkBuff> {
        let mut s = SkBuff::alloc(0, 1)?;
        s.put_bytes(&[tag])?;
        Ok(s)
    }

    #[test]
    fn holds_at_most_its_limit_in_order() -> Result {
        let q = KBox::pin_init(SkbQueue::new(3, usize::MAX), GFP_KERNEL)?;
        let mut refused = 0;
        let mut charged = 0;
        for tag in 0..5u8 {
            let s = skb(tag)?;
            let size = s.truesize();
            match q.push(s) {
                Ok(queued) => {
                    charged += size;
                    assert_eq!(queued, charged);
                }
                Err(_) => refused += 1,
            }
        }
        assert_eq!(refused, 2);
        assert_eq!(q.len(), 3);
        assert_eq!(q.bytes(), charged);
        let first = q.pop().ok_or(EINVAL)?;
        assert_eq!(first.linear(), &[0u8]);
        assert_eq!(q.bytes(), charged - first.truesize());
        assert_eq!(q.purge(), 2);
        assert_eq!(q.len(), 0);
        assert_eq!(q.bytes(), 0);
        assert!(q.pop().is_none());
        Ok(())
    }

    /// Big skbs (a reassembled datagram's worth each) are refused once
    /// their memory would pass the byte bound, long before the count
    /// bound; what is removed makes room again.
    #[test]
    fn holds_at_most_its_byte_limit() -> Result {
        let big = || SkBuff::alloc(0, 60 * 1024);
        let size = big()?.truesize();
        let limit = 3 * size + size / 2;
        let q = KBox::pin_init(SkbQueue::new(1024, limit), GFP_KERNEL)?;
        let mut taken = 0;
        for _ in 0..10 {
            if q.push(big()?).is_ok() {
                taken += 1;
            }
            assert!(q.bytes() <= limit);
        }
        assert_eq!(taken, 3);
        assert_eq!(q.len(), 3);
        // A small skb still fits; a removal makes room again.
        assert!(q.push(skb(1)?).is_ok());
        drop(q.pop());
        assert!(q.push(big()?).is_ok());
        assert!(q.push(big()?).is_err());
        assert_eq!(q.purge(), 4);
        assert_eq!(q.bytes(), 0);
        Ok(())
    }
}
