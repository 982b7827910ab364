// SPDX-License-Identifier: GPL-2.0

//! The send WQEs a QP has copied out of its send ring and not retired yet,
//! oldest first: a ring of fixed capacity (the send queue's), allocated
//! when the QP is created, so that fetching and retiring a WQE neither
//! allocates nor moves the others.

use kernel::prelude::*;

use crate::proto::window::WqeSpan;
use crate::wqe::SendWqe;

/// In-flight send WQEs (generic for the tests).
pub(crate) struct Inflight<T = SendWqe> {
    slots: KVec<Option<T>>,
    /// Index of the oldest.
    head: usize,
    len: usize,
}

impl<T> Inflight<T> {
    /// An empty ring for up to `cap` WQEs.
    pub(crate) fn new(cap: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(cap.max(1), GFP_KERNEL)?;
        for _ in 0..cap.max(1) {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            head: 0,
            len: 0,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether another WQE fits.
    pub(crate) fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }

    /// The slot of the `i`-th oldest (`i` < capacity): `head + i` wrapped
    /// once, without a division.
    fn slot(&self, i: usize) -> usize {
        let s = self.head + i;
        if s >= self.slots.len() {
            s - self.slots.len()
        } else {
            s
        }
    }

    /// Appends `w` as the newest; gives it back if the ring is full.
    pub(crate) fn push(&mut self, w: T) -> core::result::Result<(), T> {
        if self.is_full() {
            return Err(w);
        }
        let s = self.slot(self.len);
        self.slots[s] = Some(w);
        self.len += 1;
        Ok(())
    }

    /// Removes and returns the oldest.
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let w = self.slots[self.head].take();
        self.head = self.slot(1);
        self.len -= 1;
        w
    }

    /// The `i`-th oldest.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        self.slots[self.slot(i)].as_ref()
    }

    /// The `i`-th oldest, mutably.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        let s = self.slot(i);
        self.slots[s].as_mut()
    }

    /// Applies `f` to every WQE, oldest first, with its position.
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(usize, &mut T)) {
        for i in 0..self.len {
            let s = self.slot(i);
            if let Some(w) = self.slots[s].as_mut() {
                f(i, w);
            }
        }
    }
}

impl Inflight<SendWqe> {
    /// The PSN spans of the oldest WQEs up to the first READ or atomic
    /// (which only its response completes), oldest first: those an
    /// acknowledgement can complete.
    pub(crate) fn ackable_spans(&self) -> impl Iterator<Item = WqeSpan> + '_ {
        (0..self.len)
            .map_while(move |i| self.get(i).filter(|w| !w.hdr.op.needs_response()))
            .map(SendWqe::span)
    }
}

#[kernel::macros::kunit_tests(rrxe_inflight)]
mod tests {
    use super::*;

    #[test]
    fn fifo_across_the_wrap() -> Result {
        let mut r = Inflight::<u32>::new(3)?;
        assert!(r.is_empty());
        for round in 0..5u32 {
            assert!(r.push(round * 10).is_ok());
            assert!(r.push(round * 10 + 1).is_ok());
            assert_eq!(r.get(1), Some(&(round * 10 + 1)));
            assert_eq!(r.pop(), Some(round * 10));
            assert_eq!(r.pop(), Some(round * 10 + 1));
        }
        assert_eq!(r.pop(), None);
        Ok(())
    }

    #[test]
    fn full_ring_gives_the_entry_back() -> Result {
        let mut r = Inflight::<u32>::new(2)?;
        assert!(r.push(1).is_ok());
        assert!(r.push(2).is_ok());
        assert!(r.is_full());
        assert_eq!(r.push(3), Err(3));
        assert_eq!(r.get(2), None);
        let mut seen = 0;
        r.for_each_mut(|i, v| {
            *v += 100;
            seen += i + 1;
        });
        assert_eq!(seen, 3);
        assert_eq!(r.pop(), Some(101));
        assert_eq!(r.len(), 1);
        Ok(())
    }
}
