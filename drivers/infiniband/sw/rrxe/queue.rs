// SPDX-License-Identifier: GPL-2.0

//! The ring shared with librxe (`struct rxe_queue_buf` of
//! include/uapi/rdma/rdma_user_rxe.h): a 384-byte header with the element
//! size, index mask, producer and consumer indices on separate cache lines,
//! then a power-of-two number of slots.  One slot stays empty, so a queue of
//! `n` slots holds `n - 1` elements.  Indices written by the other side are
//! untrusted: every read is masked before use.
//!
//! A kernel consumer's queue (a QP or CQ of an in-kernel user, e.g. the
//! MAD layer) has the same layout in a kernel-only area: its `post_send`
//! and `post_recv` write WQEs the way librxe does, and the engine reads
//! them with the same code and the same checks.

use crate::kapi::rdma::umap::{UserContext, UserMapping};
use crate::kapi::words::{KernelArea, Words};
use crate::param;
use kernel::prelude::*;

/// Byte offsets in the header.
const OFF_LOG2_ELEM_SIZE: usize = 0;
const OFF_INDEX_MASK: usize = 4;
const OFF_PRODUCER: usize = 128;
const OFF_CONSUMER: usize = 256;
/// Size of the header; slots start here.
pub(crate) const HEADER_LEN: usize = 384;

const _: () = {
    // The layout of `struct rxe_queue_buf` in the uapi header librxe uses.
    use crate::kapi::rdma::rxe_uapi as uapi;
    assert!(uapi::QUEUE_LOG2_ELEM_SIZE_OFFSET == OFF_LOG2_ELEM_SIZE);
    assert!(uapi::QUEUE_INDEX_MASK_OFFSET == OFF_INDEX_MASK);
    assert!(uapi::QUEUE_PRODUCER_INDEX_OFFSET == OFF_PRODUCER);
    assert!(uapi::QUEUE_CONSUMER_INDEX_OFFSET == OFF_CONSUMER);
    assert!(uapi::QUEUE_HEADER_SIZE == HEADER_LEN);
};

/// Geometry of a queue able to hold `want` elements of `elem_size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Slots (a power of two).
    pub(crate) slots: u32,
    /// log2 of the slot size.
    pub(crate) log2_elem_size: u32,
}

impl Geometry {
    /// The smallest geometry holding `want` (>= 1) elements of at least
    /// `elem_size` bytes, or `EINVAL` beyond `max` elements.
    pub(crate) fn new(want: u32, elem_size: u32, max: u32) -> Result<Self> {
        if want == 0 || want > max || elem_size == 0 {
            return Err(EINVAL);
        }
        let slots = want
            .checked_add(1)
            .and_then(u32::checked_next_power_of_two)
            .ok_or(EINVAL)?;
        let log2_elem_size = elem_size
            .checked_next_power_of_two()
            .ok_or(EINVAL)?
            .trailing_zeros();
        Ok(Self {
            slots,
            log2_elem_size,
        })
    }

    /// Elements the queue can hold.
    pub(crate) fn capacity(&self) -> u32 {
        self.slots - 1
    }

    /// Total bytes, header included.
    pub(crate) fn byte_len(&self) -> usize {
        HEADER_LEN + ((self.slots as usize) << self.log2_elem_size)
    }
}

/// Where a queue lives.
enum Memory {
    /// Mapped by a user process.
    User(UserMapping),
    /// Kernel only.
    Kernel(KernelArea),
}

/// A queue, user-mapped or kernel-only.
pub(crate) struct Queue {
    mem: Memory,
    geo: Geometry,
}

impl Queue {
    /// Allocates the queue in `ctx` and writes its header.
    pub(crate) fn new(ctx: &UserContext<'_>, geo: Geometry) -> Result<Self> {
        let map = UserMapping::new(ctx, geo.byte_len(), param::MAX_QUEUE_BYTES_PER_CONTEXT)?;
        Self::init(Memory::User(map), geo)
    }

    /// Allocates a kernel consumer's queue and writes its header.
    pub(crate) fn new_kernel(geo: Geometry) -> Result<Self> {
        Self::init(Memory::Kernel(KernelArea::new(geo.byte_len())?), geo)
    }

    fn init(mem: Memory, geo: Geometry) -> Result<Self> {
        let q = Self { mem, geo };
        q.words().store(OFF_LOG2_ELEM_SIZE, geo.log2_elem_size)?;
        q.words().store(OFF_INDEX_MASK, geo.slots - 1)?;
        Ok(q)
    }

    fn words(&self) -> Words<'_> {
        match &self.mem {
            Memory::User(m) => m.words(),
            Memory::Kernel(k) => k.words(),
        }
    }

    /// Whether a kernel consumer owns the queue.
    pub(crate) fn is_kernel(&self) -> bool {
        matches!(self.mem, Memory::Kernel(_))
    }

    /// `struct mminfo { u64 offset; u32 size; u32 pad; }` as librxe reads
    /// it from a create response: where to mmap the ring (all zeroes for a
    /// kernel queue).
    pub(crate) fn mminfo(&self) -> [u8; 16] {
        let mut mi = [0u8; 16];
        if let Memory::User(map) = &self.mem {
            mi[..8].copy_from_slice(&map.offset().to_ne_bytes());
            mi[8..12].copy_from_slice(&(map.len() as u32).to_ne_bytes());
        }
        mi
    }

    /// The index mask (slots - 1).
    pub(crate) fn mask(&self) -> u32 {
        self.geo.slots - 1
    }

    /// Bytes per slot.
    pub(crate) fn slot_size(&self) -> usize {
        1usize << self.geo.log2_elem_size
    }

    /// The producer index as user space last published it (masked).
    pub(crate) fn user_producer(&self) -> Result<u32> {
        Ok(self.words().load(OFF_PRODUCER)? & self.mask())
    }

    /// The consumer index as user space last published it (masked).
    pub(crate) fn user_consumer(&self) -> Result<u32> {
        Ok(self.words().load(OFF_CONSUMER)? & self.mask())
    }

    /// Entries user space produced past the kernel's running index `from`
    /// (masked: never more than the ring holds, whatever user space wrote).
    pub(crate) fn posted_since(&self, from: u32) -> Result<u32> {
        Ok(self.user_producer()?.wrapping_sub(from) & self.mask())
    }

    /// The `wr_id` of WQE slot `idx` (its first 8 bytes, in both WQE
    /// layouts), 0 if the slot cannot be read.
    pub(crate) fn wr_id(&self, idx: u32) -> u64 {
        let mut b = [0u8; 8];
        self.read_slot(idx, &mut b)
            .map_or(0, |()| u64::from_ne_bytes(b))
    }

    /// Publishes the kernel's consumer index (release: slot reads first).
    pub(crate) fn publish_consumer(&self, idx: u32) -> Result {
        self.words().store(OFF_CONSUMER, idx & self.mask())
    }

    /// Publishes the kernel's producer index (release: slot writes first).
    pub(crate) fn publish_producer(&self, idx: u32) -> Result {
        self.words().store(OFF_PRODUCER, idx & self.mask())
    }

    fn slot_offset(&self, idx: u32, len: usize) -> Result<usize> {
        if len > self.slot_size() {
            return Err(EINVAL);
        }
        Ok(HEADER_LEN + (((idx & self.mask()) as usize) << self.geo.log2_elem_size))
    }

    /// Copies the first `dst.len()` bytes of slot `idx` (masked).
    pub(crate) fn read_slot(&self, idx: u32, dst: &mut [u8]) -> Result {
        let off = self.slot_offset(idx, dst.len())?;
        self.words().read_bytes(off, dst)
    }

    /// Writes `src` at the start of slot `idx` (masked).
    pub(crate) fn write_slot(&self, idx: u32, src: &[u8]) -> Result {
        let off = self.slot_offset(idx, src.len())?;
        self.words().write_bytes(off, src)
    }

    /// Entries between consumer and producer, from the shared indices
    /// (masked: the user-written one cannot point outside the ring).
    pub(crate) fn count(&self) -> Result<u32> {
        let mask = self.geo.slots - 1;
        let p = self.words().load(OFF_PRODUCER)? & mask;
        let c = self.words().load(OFF_CONSUMER)? & mask;
        Ok(p.wrapping_sub(c) & mask)
    }
}

#[kernel::macros::kunit_tests(rrxe_queue)]
mod tests {
    use super::*;

    #[test]
    fn geometry_keeps_one_slot_free() {
        let g = Geometry::new(100, 48, 32767).unwrap();
        assert_eq!(g.slots, 128);
        assert_eq!(g.capacity(), 127);
        assert_eq!(g.log2_elem_size, 6);
        assert_eq!(g.byte_len(), 384 + 128 * 64);
        assert_eq!(Geometry::new(127, 64, 32767).unwrap().slots, 128);
        assert_eq!(Geometry::new(128, 64, 32767).unwrap().slots, 256);
    }

    #[test]
    fn geometry_rejects_bad_sizes() {
        assert!(Geometry::new(0, 64, 100).is_err());
        assert!(Geometry::new(101, 64, 100).is_err());
        assert!(Geometry::new(u32::MAX, 64, u32::MAX).is_err());
        assert!(Geometry::new(1, 0, 100).is_err());
    }
}
