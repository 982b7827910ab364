// SPDX-License-Identifier: GPL-2.0
//! Common machinery for the fixed-size wire headers: the [`Header`] trait
//! (zero-copy parse of a prefix, in-place mutable view, serialisation into a
//! caller buffer) and the [`HeaderError`] it reports.
//!
//! Every header type of this crate is a `#[repr(C)]` struct made only of
//! `u8`, byte arrays and zerocopy's big-endian integers, so it has alignment
//! 1, no padding, and any byte pattern is a valid value.  Parsing is a bounds
//! check plus a pointer cast done by zerocopy; nothing here can panic.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// Why a header could not be read from or written to a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// The buffer is shorter than the header.
    TooShort {
        /// Bytes the header needs.
        need: usize,
        /// Bytes the buffer has.
        have: usize,
    },
}

/// A fixed-size, alignment-1 wire header that can be viewed in place.
///
/// All methods are provided; implementors only state the marker traits.
pub trait Header: FromBytes + IntoBytes + KnownLayout + Immutable + Unaligned + Sized {
    /// Size of the header on the wire, in bytes.
    const LEN: usize = core::mem::size_of::<Self>();

    /// Views the first [`Self::LEN`] bytes of `buf` as this header and
    /// returns it together with the bytes that follow it.
    fn parse(buf: &[u8]) -> Result<(&Self, &[u8]), HeaderError> {
        let have = buf.len();
        Self::ref_from_prefix(buf).map_err(|_| HeaderError::TooShort {
            need: Self::LEN,
            have,
        })
    }

    /// Mutable variant of [`Header::parse`], for editing a header in place.
    fn parse_mut(buf: &mut [u8]) -> Result<(&mut Self, &mut [u8]), HeaderError> {
        let have = buf.len();
        Self::mut_from_prefix(buf).map_err(|_| HeaderError::TooShort {
            need: Self::LEN,
            have,
        })
    }

    /// Writes this header at the start of `buf`; returns the bytes written
    /// ([`Self::LEN`]).
    fn emit(&self, buf: &mut [u8]) -> Result<usize, HeaderError> {
        let have = buf.len();
        match self.write_to_prefix(buf) {
            Ok(()) => Ok(Self::LEN),
            Err(_) => Err(HeaderError::TooShort {
                need: Self::LEN,
                have,
            }),
        }
    }
}

/// Declares a wire header: a `repr(C)` struct of byte-aligned big-endian
/// fields with the zerocopy derives that make it a view over packet bytes
/// (and the usual value traits).  Used by every header type.
macro_rules! wire_header {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
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
        pub struct $name { $($body)* }
    };
}
pub(crate) use wire_header;
