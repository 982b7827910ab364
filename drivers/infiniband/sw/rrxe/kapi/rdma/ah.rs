// SPDX-License-Identifier: GPL-2.0

//! Address handles: ib_core allocates `struct ib_ah` with room for the
//! driver's [`Driver::Ah`] after it (`size_ib_ah`), fills in the device,
//! PD and source GID attribute, and calls `create_ah` (kernel callers) or
//! `create_user_ah` (uverbs), both served here.  `destroy_ah` ends the
//! driver data; ib_core frees the memory.  `query_ah` reports the address
//! vector back.

use kernel::{bindings, error::from_result, ffi::c_int, types::Opaque};

use super::device::{Device, Driver};
use super::mr::PdId;
use super::qp::QpPath;
use super::udata::UData;

/// An AH object as ib_core allocates it for driver `T`.
///
/// # Invariants
///
/// Never made in Rust: ib_core allocates it (`size_ib_ah` bytes, zeroed)
/// and frees it, and `ib` is the `ib_ah` it passes to the AH verbs.
/// `data` is initialised from the success of `create_ah` until
/// `destroy_ah` reads it out; only verbs between the two reach it.
#[repr(C)]
pub(super) struct AhObj<T: Driver> {
    ib: Opaque<bindings::ib_ah>,
    data: core::mem::MaybeUninit<T::Ah>,
}

/// `create_ah` and `create_user_ah`.
///
/// # Safety
///
/// Only called by ib_core with a zeroed `ib_ah` of `size_ib_ah` bytes whose
/// device and PD are set, a valid `init` whose `ah_attr` (with its GID
/// attribute referenced) lives for the call, and a valid or null udata.
pub(super) unsafe extern "C" fn create_ah<T: Driver>(
    ah: *mut bindings::ib_ah,
    init: *mut bindings::rdma_ah_init_attr,
    udata: *mut bindings::ib_udata,
) -> c_int {
    // SAFETY: `ah` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*ah).device) };
    // SAFETY: `pd` was set by ib_core and holds a use count for the AH.
    let pd = PdId::from_raw(unsafe { (*ah).pd });
    // SAFETY: `init` is valid for the call.
    let (attr, flags) = unsafe { ((*init).ah_attr, (*init).flags) };
    // A kernel caller without `RDMA_CREATE_AH_SLEEPABLE` may hold locks.
    let sleepable = flags & bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
    // SAFETY: `ah_attr` points at ib_core's attribute for the call.
    let av = QpPath::from_c(unsafe { &*attr });
    // SAFETY: ib_core passes a valid or null udata.
    let udata = unsafe { UData::from_raw(udata) };
    from_result(|| {
        let data = T::create_ah(dev, pd, &av, udata, sleepable)?;
        let obj = ah.cast::<AhObj<T>>();
        // INVARIANT: `data` is initialised from here until `destroy_ah`.
        // SAFETY: `obj` has `size_ib_ah` bytes; the data slot is written
        // once, here, and read back only by `query_ah` and `destroy_ah`.
        unsafe { (*obj).data.write(data) };
        Ok(0)
    })
}

/// `query_ah`.
///
/// # Safety
///
/// Only called by ib_core for an AH `create_ah` succeeded on, with a valid
/// attribute to fill.
pub(super) unsafe extern "C" fn query_ah<T: Driver>(
    ah: *mut bindings::ib_ah,
    attr: *mut bindings::rdma_ah_attr,
) -> c_int {
    let obj = ah.cast::<AhObj<T>>();
    // SAFETY: `create_ah` succeeded, so the data is initialised until
    // `destroy_ah` (type invariant of `AhObj`); ib_core does not query an
    // AH it is destroying.
    let data = unsafe { (*obj).data.assume_init_ref() };
    // SAFETY: `attr` is valid and exclusively ours for the call.
    let out = unsafe { &mut *attr };
    T::query_ah(data).to_c(out);
    0
}

/// `destroy_ah`.
///
/// # Safety
///
/// Only called by ib_core, once, for an AH `create_ah` succeeded on.
pub(super) unsafe extern "C" fn destroy_ah<T: Driver>(
    ah: *mut bindings::ib_ah,
    _flags: u32,
) -> c_int {
    // SAFETY: `ah` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*ah).device) };
    let obj = ah.cast::<AhObj<T>>();
    // INVARIANT: The data ends here; ib_core frees the memory after this
    // returns.
    // SAFETY: `create_ah` initialised the data (type invariant of
    // `AhObj`); this is its only read by value.
    let data = unsafe { (*obj).data.assume_init_read() };
    T::destroy_ah(dev, data);
    0
}

/// The driver data of an AH a kernel consumer names in a UD work request.
///
/// # Safety
///
/// `ah` is an AH of driver `T` between a successful `create_ah` and its
/// `destroy_ah`.
pub(super) unsafe fn data<'a, T: Driver>(ah: *mut bindings::ib_ah) -> &'a T::Ah {
    // SAFETY: Per the function's contract and the type invariant of
    // `AhObj`, `data` is initialised while the AH lives.
    unsafe { (*ah.cast::<AhObj<T>>()).data.assume_init_ref() }
}
