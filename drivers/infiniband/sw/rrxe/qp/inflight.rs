// SPDX-License-Identifier: GPL-2.0

//! The send WQEs a QP has copied out of its send ring and not retired yet,
//! oldest first: a ring of fixed capacity (the send queue's), allocated
//! when the QP is created, so that fetching and retiring a WQE neither
//! allocates nor moves the others.

use kernel::prelude::*;

use crate::proto::window::WqeSpan;
use crate::wqe::SendWqe;

/// In-flight send WQEs.
pub(crate) struct Inflight {
    slots: KVec<Option<SendWqe>>,
    /// Index of the oldest.
    head: usize,
    len: usize,
}

impl Inflight {
    /// An empty ring for up to `cap` WQEs.
    pub(crate) fn new(cap: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(cap.max(1), GFP_KERNEL)?;
        for _ in 0..cap.max(1) {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self { slots, head: 0, len: 0 })
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

    fn slot(&self, i: usize) -> usize {
        (self.head + i) % self.slots.len()
    }

    /// Appends `w` as the newest; gives it back if the ring is full.
    pub(crate) fn push(&mut self, w: SendWqe) -> core::result::Result<(), SendWqe> {
        if self.is_full() {
            return Err(w);
        }
        let s = self.slot(self.len);
        self.slots[s] = Some(w);
        self.len += 1;
        Ok(())
    }

    /// Removes and returns the oldest.
    pub(crate) fn pop(&mut self) -> Option<SendWqe> {
        if self.len == 0 {
            return None;
        }
        let w = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        w
    }

    /// The `i`-th oldest.
    pub(crate) fn get(&self, i: usize) -> Option<&SendWqe> {
        if i >= self.len {
            return None;
        }
        self.slots[self.slot(i)].as_ref()
    }

    /// The `i`-th oldest, mutably.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut SendWqe> {
        if i >= self.len {
            return None;
        }
        let s = self.slot(i);
        self.slots[s].as_mut()
    }

    /// The PSN spans, oldest first.
    pub(crate) fn spans(&self) -> impl Iterator<Item = WqeSpan> + '_ {
        (0..self.len).filter_map(move |i| self.get(i).map(SendWqe::span))
    }

    /// Applies `f` to every WQE, oldest first, with its position.
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(usize, &mut SendWqe)) {
        for i in 0..self.len {
            let s = self.slot(i);
            if let Some(w) = self.slots[s].as_mut() {
                f(i, w);
            }
        }
    }
}
