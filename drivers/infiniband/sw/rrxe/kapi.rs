// SPDX-License-Identifier: GPL-2.0

//! Thin, safe abstractions over the C APIs rrxe needs that the in-tree
//! `kernel` crate does not cover yet: `ib_core` device registration and verbs
//! callbacks (`kapi::rdma`), network devices and their notifier
//! (`kapi::net`), and rate-limited logging.
//!
//! This layer is the only place in rrxe with `unsafe` code (the crate root
//! denies `unsafe_code`; this module allows it, and so does the module
//! `static_mutex!` generates, from this layer's macro).  It knows
//! nothing about RoCE (it does not use `proto`); it is shaped so that its
//! pieces could move upstream as `kernel::rdma` and `kernel::net`.  Driver
//! logic above it is safe Rust.

#![allow(unsafe_code)]

pub(crate) mod crc32;
pub(crate) mod net;
pub(crate) mod random;
pub(crate) mod ratelimit;
pub(crate) mod rdma;
pub(crate) mod runtime_param;
pub(crate) mod spinlock_irq;
pub(crate) mod static_mutex;
pub(crate) mod words;
pub(crate) mod workqueue;
pub(crate) mod xarray;

/// A NUL-padded C name copied out of a kernel object (an interface or
/// device name that may be renamed concurrently), printable with `{}`.
#[derive(Clone, Copy)]
pub(crate) struct FixedName<const N: usize>(pub(crate) [u8; N]);

impl<const N: usize> kernel::fmt::Display for FixedName<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let len = self.0.iter().position(|&b| b == 0).unwrap_or(N);
        match core::str::from_utf8(&self.0[..len]) {
            Ok(s) => f.write_str(s),
            Err(_) => f.write_str("?"),
        }
    }
}

impl<const N: usize> FixedName<N> {
    /// Copies a C character array.
    pub(crate) fn from_c_chars(chars: &[kernel::ffi::c_char; N]) -> Self {
        let mut out = [0u8; N];
        for (o, c) in out.iter_mut().zip(chars.iter()) {
            *o = *c;
        }
        Self(out)
    }
}

/// `EOPNOTSUPP` (95), "operation not supported": what verbs answer for
/// requests the driver does not implement.  (`kernel::error::code` only has
/// the kernel-internal `ENOTSUPP`, which user space cannot decode.)
pub(crate) fn eopnotsupp() -> kernel::error::Error {
    kernel::error::Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32))
}
