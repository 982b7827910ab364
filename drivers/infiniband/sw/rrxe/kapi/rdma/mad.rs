// SPDX-License-Identifier: GPL-2.0

//! `process_mad`: ib_core's MAD layer offers each management datagram
//! received on QP1 to the driver before its agents see it (and sysfs
//! port counters ask the same way).  The driver answers from the 256-byte
//! MAD into a 256-byte reply; this layer only checks the buffers.

use kernel::{bindings, ffi::c_int};

use super::device::{Device, Driver};

/// Size of an InfiniBand MAD (`struct ib_mad`).
pub(crate) const MAD_SIZE: usize = 256;

/// `process_mad`.
///
/// # Safety
///
/// Only called by ib_core for a live device of driver `T`, with a readable
/// MAD of `MAD_SIZE` bytes at `in_mad` (an InfiniBand MAD: the device has
/// no OPA ports) and `*out_mad_size` writable bytes at `out_mad`.
pub(super) unsafe extern "C" fn process_mad<T: Driver>(
    device: *mut bindings::ib_device,
    _flags: c_int,
    port: u32,
    _in_wc: *const bindings::ib_wc,
    _in_grh: *const bindings::ib_grh,
    in_mad: *const bindings::ib_mad,
    out_mad: *mut bindings::ib_mad,
    out_mad_size: *mut usize,
    _out_mad_pkey_index: *mut u16,
) -> c_int {
    // `IB_MAD_RESULT_FAILURE`.
    const FAILURE: c_int = 0;
    if in_mad.is_null() || out_mad.is_null() || out_mad_size.is_null() {
        return FAILURE;
    }
    // SAFETY: ib_core passes the size of the reply buffer.
    if unsafe { *out_mad_size } < MAD_SIZE {
        return FAILURE;
    }
    // SAFETY: `in_mad` points to a `struct ib_mad` for the call: a
    // 24-byte header and 232 data bytes (an RoCE port's MADs).
    let input = unsafe { &*in_mad.cast::<[u8; MAD_SIZE]>() };
    // SAFETY: At least `MAD_SIZE` writable bytes (checked above), ours for
    // the call.
    let out = unsafe { &mut *out_mad.cast::<[u8; MAD_SIZE]>() };
    // SAFETY: ib_core calls this for a live device of ours.
    let dev = unsafe { Device::<T>::from_raw(device) };
    T::process_mad(dev, port, input, out) as c_int
}
