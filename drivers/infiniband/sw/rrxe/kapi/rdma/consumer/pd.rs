// SPDX-License-Identifier: GPL-2.0

//! A protection domain allocated by a kernel consumer (`ib_alloc_pd`),
//! deallocated (`ib_dealloc_pd`) on drop, after every QP and region made
//! on it, which borrow it.
//!
//! Its local DMA key ([`Pd::local_dma_lkey`]) names any kernel buffer
//! the device reaches by DMA address: ib_core takes it from the device,
//! or makes a local-access-only DMA region for it (rrxe's case).  Remote
//! access is granted per buffer, through a fast-registration region
//! ([`super::fast_mr::FastRegMr`]), never to all of memory.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, error::from_err_ptr, prelude::*};

use super::super::client::IbDevice;

/// A kernel PD on a device that outlives it (`'d`); deallocated on drop.
///
/// # Invariants
///
/// `pd` is a PD made by `__ib_alloc_pd` on a device borrowed for `'d`,
/// owned by `self` and deallocated only by its drop; every QP and region
/// made on it borrows `self`.
pub(crate) struct Pd<'d> {
    pd: NonNull<bindings::ib_pd>,
    name: &'static CStr,
    _dev: PhantomData<&'d IbDevice>,
}

impl<'d> Pd<'d> {
    /// Allocates a PD on `dev`.  `name` is the owner ib_core's resource
    /// tracking shows (`rdma resource show pd`).  May sleep.
    pub(crate) fn alloc(dev: &'d IbDevice, name: &'static CStr) -> Result<Self> {
        // SAFETY: `dev` is a registered device valid for `'d`; no flags;
        // `name` is a 'static C string ib_core keeps a pointer to.
        let pd = unsafe { bindings::__ib_alloc_pd(dev.raw(), 0, name.as_char_ptr()) };
        let pd = NonNull::new(from_err_ptr(pd)?).ok_or(ENOMEM)?;
        // INVARIANT: The PD just made on `dev` (borrowed for `'d`), owned by
        // the returned value.
        Ok(Self {
            pd,
            name,
            _dev: PhantomData,
        })
    }

    /// The key that names kernel memory for local access in this PD.
    pub(crate) fn local_dma_lkey(&self) -> u32 {
        // SAFETY: `self.pd` is a live PD (type invariant: owned until
        // drop); the key is set at allocation and not changed after.
        unsafe { (*self.pd.as_ptr()).local_dma_lkey }
    }

    pub(super) fn raw(&self) -> *mut bindings::ib_pd {
        self.pd.as_ptr()
    }

    pub(super) fn owner(&self) -> &'static CStr {
        self.name
    }
}

impl Drop for Pd<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.pd` was allocated by `__ib_alloc_pd` and is ours
        // (type invariant), freed once, here.  The QPs and regions using it borrow `self`, so they
        // are gone already; ib_core's kernel PDs have no user data.
        unsafe { bindings::ib_dealloc_pd_user(self.pd.as_ptr(), core::ptr::null_mut()) };
    }
}
