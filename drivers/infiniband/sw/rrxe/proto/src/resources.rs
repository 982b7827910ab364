// SPDX-License-Identifier: GPL-2.0
//! The responder's resources for RDMA READ and atomic requests (IBTA's
//! "responder resources", `max_dest_rd_atomic` of them per QP): what the
//! responder remembers of each executed READ and atomic so that a
//! duplicate request, resent because a response was lost, is answered
//! without being executed again.
//!
//! * A duplicate READ is executed again from the PSN it names: it must
//!   fall inside a remembered READ and ask for exactly the rest of it
//!   (address and length moved on by whole PMTUs, as a requester resends
//!   after a lost response packet).  The region it reads was checked
//!   when the READ first arrived; the entry keeps it.
//! * A duplicate atomic is answered from the value saved when it was
//!   executed, never executed twice: the replay cache that makes an
//!   atomic exactly-once under retransmission.  A duplicate ATOMIC WRITE
//!   is acknowledged again without writing.
//!
//! The entries form a ring: a new request takes the oldest slot.  A
//! requester that keeps at most `max_rd_atomic` (<= the responder's
//! `max_dest_rd_atomic`) outstanding never needs an entry that was
//! overwritten; one that sends more only loses the ability to have its
//! oldest duplicates answered (they are dropped).  A duplicate that names
//! no entry, or asks for another part of a READ, is dropped.

use core::marker::PhantomData;
use core::ops::DerefMut;

use super::psn::Psn;
use super::segment::read_resume;

/// An executed READ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadResource<M> {
    /// PSN of its first response packet (the request's PSN).
    pub first_psn: Psn,
    /// Response packets (PSNs) it takes.
    pub npkts: u32,
    /// Remote address and length the request named.
    pub va: u64,
    /// Length in bytes.
    pub len: u32,
    /// What the responder reads from (the checked region and offset).
    pub target: M,
}

/// One remembered request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource<M> {
    /// An RDMA READ.
    Read(ReadResource<M>),
    /// An atomic at `psn` that found `orig` at the target address.
    Atomic {
        /// The request's PSN.
        psn: Psn,
        /// The value before the operation (what the ACK carries).
        orig: u64,
    },
    /// An ATOMIC WRITE at this PSN, executed and acknowledged (a duplicate
    /// is acknowledged again, not executed).
    Written(Psn),
}

impl<M> Resource<M> {
    /// The request's (first) PSN.
    pub fn psn(&self) -> Psn {
        match self {
            Resource::Read(r) => r.first_psn,
            Resource::Atomic { psn, .. } => *psn,
            Resource::Written(psn) => *psn,
        }
    }
}

/// A duplicate READ to execute again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay<'a, M> {
    /// The READ as first executed.
    pub read: &'a ReadResource<M>,
    /// Response packets to skip (those before the duplicate's PSN).
    pub skip: u32,
}

/// Why there is no resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoResource {
    /// `max_dest_rd_atomic` is 0: the QP takes no READ or atomic
    /// (IBTA: NAK Invalid Request).
    NoneAllowed,
}

/// The ring of resources over storage `S` (anything that derefs to a
/// slice of `Option`s; the kernel allocates it once per QP).
pub struct Resources<M, S> {
    slots: S,
    /// Slots in use as the ring (`max_dest_rd_atomic`, at most
    /// `slots.len()`).
    cap: usize,
    /// Slot the next entry takes.
    next: usize,
    _m: PhantomData<M>,
}

impl<M, S: DerefMut<Target = [Option<Resource<M>>]>> Resources<M, S> {
    /// A ring over `slots` (all empty), with no slot in use yet.
    pub fn new(slots: S) -> Self {
        Self {
            slots,
            cap: 0,
            next: 0,
            _m: PhantomData,
        }
    }

    /// Forgets every entry and uses `n` slots (at most the storage's).
    pub fn reset(&mut self, n: usize) {
        self.clear();
        self.cap = n.min(self.slots.len());
    }

    /// Forgets every entry (dropping what they hold).
    pub fn clear(&mut self) {
        for s in self.slots.iter_mut() {
            *s = None;
        }
        self.next = 0;
    }

    /// The number of slots in use as the ring.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Remembers `r`, replacing the oldest entry when the ring is full.
    pub fn insert(&mut self, r: Resource<M>) -> Result<(), NoResource> {
        if self.cap == 0 {
            return Err(NoResource::NoneAllowed);
        }
        let i = self.next;
        if let Some(s) = self.slots.get_mut(i) {
            *s = Some(r);
        }
        self.next = if i + 1 == self.cap { 0 } else { i + 1 };
        Ok(())
    }

    /// The entries, newest first.
    fn newest_first(&self) -> impl Iterator<Item = &Resource<M>> {
        let slots = self.slots.get(..self.cap).unwrap_or(&[]);
        let (older, newer) = slots.split_at(self.next);
        older.iter().rev().chain(newer.iter().rev()).flatten()
    }

    /// The saved result of the atomic at `psn`, if remembered.
    pub fn atomic(&self, psn: Psn) -> Option<u64> {
        self.newest_first().find_map(|r| match r {
            Resource::Atomic { psn: p, orig } if *p == psn => Some(*orig),
            _ => None,
        })
    }

    /// Whether the ATOMIC WRITE at `psn` was executed and is remembered.
    pub fn written(&self, psn: Psn) -> bool {
        self.newest_first()
            .any(|r| matches!(r, Resource::Written(p) if *p == psn))
    }

    /// Whether a READ, atomic, ATOMIC WRITE or FLUSH executed after `psn`
    /// is remembered.  The newest entry is the last one executed, so if
    /// any such request followed `psn`, the newest did (PSNs compared in
    /// the 2^23 window).
    ///
    /// A duplicate SEND or WRITE at `psn` is then not acknowledged
    /// again: the requester resends (go-back-N) that later request too,
    /// and the response to it (a READ response with its AETH, an atomic
    /// or RDMA READ response ACK) acknowledges the duplicate.  A
    /// separate ACK can only arrive stale, after responses to later
    /// requests: C rxe's completer, in the middle of a READ response,
    /// takes an ACK older than its expected PSN as the end of that
    /// response, then fails the READ at its next packet (found with NVMe
    /// between the two drivers under loss).
    pub fn any_after(&self, psn: Psn) -> bool {
        self.newest_first()
            .next()
            .is_some_and(|r| r.psn().is_after(psn))
    }

    /// The READ a duplicate at `psn` asking for `len` bytes at `va`
    /// repeats, if remembered and the request asks for exactly its rest
    /// from `psn` on (path MTU `pmtu`).
    pub fn read_replay(&self, psn: Psn, va: u64, len: u32, pmtu: u32) -> Option<Replay<'_, M>> {
        self.newest_first().find_map(|r| match r {
            Resource::Read(read) if psn.in_window(read.first_psn, read.npkts.max(1)) => {
                let skip = read.first_psn.distance_to(psn);
                (read_resume(read.va, read.len, skip, pmtu) == Some((va, len)))
                    .then_some(Replay { read, skip })
            }
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Ring = Resources<u32, &'static mut [Option<Resource<u32>>]>;

    fn ring(cap: usize) -> Ring {
        extern crate std;
        let slots = std::boxed::Box::leak(std::boxed::Box::new([None, None, None, None]));
        let mut r = Resources::new(&mut slots[..]);
        r.reset(cap);
        r
    }

    fn read(psn: u32, npkts: u32, va: u64, len: u32) -> Resource<u32> {
        Resource::Read(ReadResource {
            first_psn: Psn::new(psn),
            npkts,
            va,
            len,
            target: psn,
        })
    }

    #[test]
    fn zero_resources_refuse() {
        let mut r = ring(0);
        assert_eq!(
            r.insert(Resource::Atomic {
                psn: Psn::new(1),
                orig: 2
            }),
            Err(NoResource::NoneAllowed)
        );
        assert_eq!(r.atomic(Psn::new(1)), None);
    }

    #[test]
    fn atomic_replay_returns_the_saved_value() {
        let mut r = ring(2);
        for (psn, orig) in [(10, 100), (11, 101)] {
            r.insert(Resource::Atomic {
                psn: Psn::new(psn),
                orig,
            })
            .unwrap();
        }
        assert_eq!(r.atomic(Psn::new(10)), Some(100));
        assert_eq!(r.atomic(Psn::new(11)), Some(101));
        assert_eq!(r.atomic(Psn::new(12)), None);
        // A third overwrites the oldest.
        r.insert(Resource::Atomic {
            psn: Psn::new(12),
            orig: 102,
        })
        .unwrap();
        assert_eq!(r.atomic(Psn::new(10)), None);
        assert_eq!(r.atomic(Psn::new(12)), Some(102));
        assert_eq!(r.capacity(), 2);
    }

    #[test]
    fn atomic_writes_are_remembered_by_psn() {
        let mut r = ring(2);
        r.insert(Resource::Written(Psn::new(9))).unwrap();
        assert!(r.written(Psn::new(9)));
        assert!(!r.written(Psn::new(10)));
        assert_eq!(r.atomic(Psn::new(9)), None);
        r.insert(read(10, 1, 0, 8)).unwrap();
        r.insert(read(11, 1, 0, 8)).unwrap();
        assert!(!r.written(Psn::new(9)), "overwritten by newer entries");
    }

    #[test]
    fn newest_entry_wins_after_the_psn_space_wraps() {
        let mut r = ring(3);
        r.insert(Resource::Atomic {
            psn: Psn::new(5),
            orig: 1,
        })
        .unwrap();
        r.insert(Resource::Atomic {
            psn: Psn::new(5),
            orig: 2,
        })
        .unwrap();
        assert_eq!(r.atomic(Psn::new(5)), Some(2));
    }

    #[test]
    fn read_replays_only_the_rest_of_a_read() {
        let mut r = ring(4);
        // 5000 bytes at 1024: PSNs 0xfffffe ..= 2 across the wrap.
        r.insert(read(0xff_fffe, 5, 0x10_000, 5000)).unwrap();
        r.insert(Resource::Atomic {
            psn: Psn::new(3),
            orig: 0,
        })
        .unwrap();
        let p = |v| Psn::new(v);
        let rp = r.read_replay(p(0xff_fffe), 0x10_000, 5000, 1024).unwrap();
        assert_eq!((rp.skip, rp.read.target), (0, 0xff_fffe));
        let rp = r.read_replay(p(1), 0x10_000 + 3072, 1928, 1024).unwrap();
        assert_eq!(rp.skip, 3);
        // Another part, another length, beyond its PSNs, or unknown.
        assert!(r.read_replay(p(1), 0x10_000, 1928, 1024).is_none());
        assert!(r.read_replay(p(1), 0x10_000 + 3072, 5000, 1024).is_none());
        assert!(r.read_replay(p(3), 0x10_000 + 5120, 0, 1024).is_none());
        assert!(r.read_replay(p(0xff_fff0), 0x10_000, 5000, 1024).is_none());
    }

    #[test]
    fn a_later_read_or_atomic_covers_a_duplicate() {
        let mut r = ring(2);
        let p = |v| Psn::new(v);
        assert!(!r.any_after(p(5)), "nothing executed");
        r.insert(read(6, 2, 0, 2048)).unwrap();
        assert!(r.any_after(p(5)));
        assert!(!r.any_after(p(6)), "the READ itself");
        assert!(!r.any_after(p(9)), "a SEND after the READ");
        // The newest entry decides, across the PSN wrap too.
        r.insert(Resource::Atomic { psn: p(0), orig: 0 }).unwrap();
        assert!(r.any_after(p(0xff_fff0)));
        assert!(!r.any_after(p(1)));
        r.insert(Resource::Written(p(3))).unwrap();
        assert!(r.any_after(p(2)) && !r.any_after(p(3)));
    }

    #[test]
    fn zero_length_read_is_one_psn() {
        let mut r = ring(1);
        r.insert(read(7, 1, 0, 0)).unwrap();
        assert_eq!(r.read_replay(Psn::new(7), 0, 0, 256).unwrap().skip, 0);
        assert!(r.read_replay(Psn::new(8), 0, 0, 256).is_none());
        r.reset(1);
        assert!(r.read_replay(Psn::new(7), 0, 0, 256).is_none());
    }
}
