// SPDX-License-Identifier: GPL-2.0

//! Memory windows: ib_core allocates `struct ib_mw` with room for the
//! driver's [`Driver::Mw`] after it (`size_ib_mw`), fills in the device,
//! PD and type, and calls `alloc_mw`; the driver gives the window its
//! rkey.  `dealloc_mw` ends the driver data; ib_core frees the memory.

use kernel::{bindings, error::from_result, ffi::c_int, prelude::*, types::Opaque};

use super::device::{Device, Driver};
use super::mr::PdId;
use super::udata::UData;

/// The type of a memory window (`enum ib_mw_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwType {
    /// Type 1: bound by `ibv_bind_mw`, PD-wide, invalidated only by
    /// rebinding or deallocation.
    One,
    /// Type 2 (2B): bound through a QP's send queue, usable only through
    /// that QP, invalidated by LOCAL_INV or SEND with Invalidate.
    Two,
}

/// An MW object as ib_core allocates it for driver `T`.
///
/// # Invariants
///
/// Never made in Rust: ib_core allocates it (`size_ib_mw` bytes, zeroed)
/// and frees it, and `ib` is the `ib_mw` it passes to the MW verbs.
/// `data` is initialised from the success of `alloc_mw` until `dealloc_mw`
/// reads it out.
#[repr(C)]
pub(super) struct MwObj<T: Driver> {
    ib: Opaque<bindings::ib_mw>,
    data: core::mem::MaybeUninit<T::Mw>,
}

/// `alloc_mw`.
///
/// # Safety
///
/// Only called by ib_core with a zeroed `ib_mw` of `size_ib_mw` bytes whose
/// device, PD and type are set, and a valid or null udata.
pub(super) unsafe extern "C" fn alloc_mw<T: Driver>(
    mw: *mut bindings::ib_mw,
    udata: *mut bindings::ib_udata,
) -> c_int {
    // SAFETY: `mw` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*mw).device) };
    // SAFETY: `pd` was set by ib_core and holds a use count for the MW.
    let pd = PdId::from_raw(unsafe { (*mw).pd });
    // SAFETY: `type` was set by ib_core (which admits only 1 and 2).
    let raw_type = unsafe { (*mw).type_ };
    // SAFETY: ib_core passes a valid or null udata.
    let udata = unsafe { UData::from_raw(udata) };
    from_result(|| {
        let kind = match raw_type {
            bindings::ib_mw_type_IB_MW_TYPE_1 => MwType::One,
            bindings::ib_mw_type_IB_MW_TYPE_2 => MwType::Two,
            _ => return Err(EINVAL),
        };
        let (data, rkey) = T::alloc_mw(dev, pd, kind, udata)?;
        let obj = mw.cast::<MwObj<T>>();
        // INVARIANT: `data` is initialised from here until `dealloc_mw`.
        // SAFETY: `obj` has `size_ib_mw` bytes; the data slot is written
        // once, here, and read back only by `dealloc_mw`.
        unsafe { (*obj).data.write(data) };
        // SAFETY: `mw` is live; ib_core reports `rkey` to the caller.
        unsafe { (*mw).rkey = rkey };
        Ok(0)
    })
}

/// `dealloc_mw`.
///
/// # Safety
///
/// Only called by ib_core, once, for an MW `alloc_mw` succeeded on.
pub(super) unsafe extern "C" fn dealloc_mw<T: Driver>(mw: *mut bindings::ib_mw) -> c_int {
    // SAFETY: `mw` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*mw).device) };
    let obj = mw.cast::<MwObj<T>>();
    // INVARIANT: The data ends here; ib_core frees the memory after this
    // returns.
    // SAFETY: `alloc_mw` initialised the data (type invariant of `MwObj`);
    // this is its only read.
    let data = unsafe { (*obj).data.assume_init_read() };
    T::dealloc_mw(dev, data);
    0
}
