// SPDX-License-Identifier: GPL-2.0

//! Hardware counters (`alloc_hw_port_stats` / `get_hw_stats`), read by
//! `rdma statistic show link DEV/PORT` and sysfs `hw_counters`.  The driver
//! names its counters in a static table of [`StatDesc`]s and fills their
//! values on request.

use kernel::{bindings, prelude::*};

use super::device::{Device, Driver};

/// One counter's description (`struct rdma_stat_desc`).
///
/// # Invariants
///
/// `self.0.name` points to a `'static` NUL-terminated string, `priv_` is
/// null and `flags` is 0.
#[repr(transparent)]
pub(crate) struct StatDesc(bindings::rdma_stat_desc);

// SAFETY: The descriptor only holds a pointer to a `'static` C string
// (type invariant), which is immutable.
unsafe impl Sync for StatDesc {}

impl StatDesc {
    /// A counter called `name`.
    pub(crate) const fn new(name: &'static CStr) -> Self {
        // `as_char_ptr` is not `const`: the same pointer, through the
        // bytes (terminator included).
        let name = core::ffi::CStr::to_bytes_with_nul(name).as_ptr().cast();
        // INVARIANT: `name` is a `'static` C string; no private data.
        Self(bindings::rdma_stat_desc {
            name,
            flags: 0,
            priv_: core::ptr::null(),
        })
    }
}

/// `alloc_hw_port_stats`.
///
/// # Safety
///
/// Only called by ib_core for a live device of driver `T`.
pub(super) unsafe extern "C" fn alloc_hw_port_stats<T: Driver>(
    _ib: *mut bindings::ib_device,
    _port: u32,
) -> *mut bindings::rdma_hw_stats {
    let descs = T::hw_stat_descs();
    // SAFETY: `descs` is a static array of `rdma_stat_desc` (transparent),
    // which outlives every stats struct, with `'static` names (type
    // invariant of `StatDesc`); ib_core frees the struct.
    unsafe {
        bindings::rdma_alloc_hw_stats_struct(
            descs.as_ptr().cast(),
            descs.len() as i32,
            bindings::RDMA_HW_STATS_DEFAULT_LIFESPAN as kernel::ffi::c_ulong,
        )
    }
}

/// `get_hw_stats`: fills every counter, returns their number.
///
/// # Safety
///
/// Only called by ib_core for a live device of driver `T` with a stats
/// struct from `alloc_hw_port_stats`.
pub(super) unsafe extern "C" fn get_hw_stats<T: Driver>(
    ib: *mut bindings::ib_device,
    stats: *mut bindings::rdma_hw_stats,
    _port: u32,
    _index: kernel::ffi::c_int,
) -> kernel::ffi::c_int {
    // SAFETY: `stats` is valid for the call (the function's contract).
    let n = unsafe { (*stats).num_counters }.max(0) as usize;
    // SAFETY: `stats` comes from `alloc_hw_port_stats`, so its flexible
    // `value` array has `num_counters` entries, exclusively ours for the
    // call (ib_core calls this under the stats' `lock`).
    let values = unsafe { core::slice::from_raw_parts_mut((*stats).value.as_mut_ptr(), n) };
    // SAFETY: ib_core passes a live device of ours for the call.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    T::hw_stats(dev, values);
    n as kernel::ffi::c_int
}
