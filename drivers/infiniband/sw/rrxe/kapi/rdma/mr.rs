// SPDX-License-Identifier: GPL-2.0

//! Memory regions: pinned user memory ([`UserMemory`], `ib_umem`) and the
//! MR object the driver allocates for `reg_user_mr` (`struct ib_mr`
//! followed by the driver's [`Driver::Mr`]), freed by `dereg_mr`.

use core::ptr::NonNull;
use kernel::{bindings, error::from_err_ptr, ffi::c_int, prelude::*, types::Opaque};

use super::device::{Device, Driver};
use super::udata::UData;

/// User memory pinned by ib_core (`ib_umem_get`), released on drop.
pub(crate) struct UserMemory {
    umem: NonNull<bindings::ib_umem>,
}

// SAFETY: An `ib_umem` is immutable after pinning and may be released from
// any thread.
unsafe impl Send for UserMemory {}
// SAFETY: See above.
unsafe impl Sync for UserMemory {}

impl UserMemory {
    /// Pins `len` bytes of the calling process's memory at `addr` with
    /// `IB_ACCESS_*` flags `access` (write access pins for writing).
    pub(crate) fn pin<T: Driver>(dev: &Device<T>, addr: u64, len: u64, access: u32) -> Result<Self> {
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: Called in the context of the process whose memory is
        // pinned (a uverbs command); ib_core validates the range.
        let umem = from_err_ptr(unsafe {
            bindings::ib_umem_get_attr_or_va(dev.as_raw(), core::ptr::null(), 0, addr, len, access as c_int)
        })?;
        Ok(Self { umem: NonNull::new(umem).ok_or(ENOMEM)? })
    }

}

impl Drop for UserMemory {
    fn drop(&mut self) {
        // SAFETY: We own the pin; nothing uses the umem after this.
        unsafe { bindings::ib_umem_release(self.umem.as_ptr()) };
    }
}

/// An MR as this driver allocates it.
#[repr(C)]
struct MrObj<T: Driver> {
    ib: Opaque<bindings::ib_mr>,
    data: T::Mr,
}

/// `reg_user_mr`.
///
/// # Safety
///
/// Only called by ib_core with a live PD of our device and a valid or null
/// udata.
pub(super) unsafe extern "C" fn reg_user_mr<T: Driver>(
    pd: *mut bindings::ib_pd,
    start: u64,
    length: u64,
    iova: u64,
    access: c_int,
    _dmah: *mut bindings::ib_dmah,
    udata: *mut bindings::ib_udata,
) -> *mut bindings::ib_mr {
    let res = (|| -> Result<*mut bindings::ib_mr> {
        // SAFETY: ib_core's contract (see above).
        let (dev, udata) = unsafe { (Device::<T>::from_raw((*pd).device), UData::from_raw(udata)) };
        let (data, key) = T::reg_user_mr(dev, start, length, iova, access as u32, udata)?;
        let obj = KBox::new(
            MrObj::<T> {
                // SAFETY: All-zeroes is a valid `ib_mr`; ib_core fills in the
                // rest after we return.
                ib: Opaque::new(unsafe { core::mem::zeroed() }),
                data,
            },
            GFP_KERNEL,
        )?;
        let obj = KBox::into_raw(obj);
        // SAFETY: `obj` is a fresh allocation we own; ib_core takes the
        // pointer and hands it back to `dereg_mr`.
        unsafe {
            let ib = (*obj).ib.get();
            (*ib).lkey = key;
            (*ib).rkey = key;
            Ok(ib)
        }
    })();
    match res {
        Ok(p) => p,
        Err(e) => e.to_ptr(),
    }
}

/// `dereg_mr`.
///
/// # Safety
///
/// Only called by ib_core, once, for an MR returned by `reg_user_mr`.
pub(super) unsafe extern "C" fn dereg_mr<T: Driver>(mr: *mut bindings::ib_mr, _u: *mut bindings::ib_udata) -> c_int {
    // SAFETY: `mr` is the first field of an `MrObj<T>` from `KBox::into_raw`
    // and ib_core never uses it again; `device` was set by ib_core.
    unsafe {
        let dev = Device::<T>::from_raw((*mr).device);
        let obj = KBox::from_raw(mr.cast::<MrObj<T>>());
        T::dereg_mr(dev, KBox::into_inner(obj).data);
    }
    0
}
