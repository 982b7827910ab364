// SPDX-License-Identifier: GPL-2.0
//! Invalidate Extended Transport Header (IETH, 4 bytes): the rkey a
//! SEND with Invalidate asks the responder to invalidate.

use zerocopy::big_endian::U32;

use super::header::Header;

/// Invalidate extended transport header.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    zerocopy_derive::FromBytes,
    zerocopy_derive::IntoBytes,
    zerocopy_derive::KnownLayout,
    zerocopy_derive::Immutable,
    zerocopy_derive::Unaligned,
)]
#[repr(C)]
pub struct Ieth {
    rkey: U32,
}

impl Header for Ieth {}

impl Ieth {
    /// An IETH naming `rkey`.
    pub fn new(rkey: u32) -> Self {
        Ieth {
            rkey: U32::new(rkey),
        }
    }

    /// The rkey to invalidate.
    pub fn rkey(&self) -> u32 {
        self.rkey.get()
    }
}
