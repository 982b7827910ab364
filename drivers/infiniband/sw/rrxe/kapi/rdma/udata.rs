// SPDX-License-Identifier: GPL-2.0

//! `struct ib_udata`: the driver-private part of a uverbs command, i.e. the
//! user-space buffers that follow the core command and response.  Every
//! access goes through ib_core's copy helpers, which validate lengths and
//! user pointers.

use kernel::{bindings, error::to_result, prelude::*};

/// A borrowed user-data descriptor; absent (`None` at the call sites) for
/// kernel callers.
///
/// # Invariants
///
/// `raw` is the `ib_udata` ib_core passed to the verb being called, valid
/// and accessed by nobody else for `'a`.  Its `inbuf` and `outbuf` are
/// user-space addresses, reached only through ib_core's and
/// `kernel::uaccess`'s checked copies.
pub(crate) struct UData<'a> {
    raw: &'a mut bindings::ib_udata,
}

impl<'a> UData<'a> {
    /// Wraps a possibly-null pointer from ib_core.
    ///
    /// # Safety
    ///
    /// If non-null, `raw` points to an `ib_udata` that is valid and not
    /// otherwise accessed for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::ib_udata) -> Option<Self> {
        // INVARIANT: Per the function's safety requirements.
        // SAFETY: Per the function's contract.
        unsafe { raw.as_mut() }.map(|raw| Self { raw })
    }

    /// Fails with `EOPNOTSUPP` unless the driver input is empty or all
    /// zeroes: for verbs that define no driver request.
    pub(crate) fn require_empty_input(&mut self) -> Result {
        // SAFETY: `raw` is a valid udata (type invariant).
        to_result(unsafe { bindings::ib_is_udata_in_empty(self.raw) })
    }

    /// Zero-fills the user's response buffer: for verbs that define no
    /// driver response (forward compatibility of the uAPI).
    pub(crate) fn respond_empty(&mut self) -> Result {
        // SAFETY: `raw` is a valid udata (type invariant).
        to_result(unsafe { bindings::ib_respond_empty_udata(self.raw) })
    }

    /// Copies the driver's request (`inbuf`) into `dst`; `EINVAL` if the
    /// caller sent less, `EFAULT` if it cannot be read.
    pub(crate) fn read_input(&mut self, dst: &mut [u8]) -> Result {
        if self.raw.inlen < dst.len() {
            return Err(EINVAL);
        }
        let src = kernel::uaccess::UserPtr::from_ptr(self.raw.inbuf.cast_mut());
        kernel::uaccess::UserSlice::new(src, dst.len())
            .reader()
            .read_slice(dst)
    }

    /// Copies `resp` to the user's response buffer, truncated or
    /// zero-padded to its length (ib_core's forward-compatibility rule).
    pub(crate) fn respond(&mut self, resp: &[u8]) -> Result {
        // SAFETY: `raw` is a valid udata (type invariant); `resp` is
        // readable for its length.
        to_result(unsafe {
            bindings::_ib_respond_udata(self.raw, resp.as_ptr().cast(), resp.len())
        })
    }

    /// The user context of the process making the call.
    ///
    /// # Safety
    ///
    /// `self` must be the `driver_udata` of a `uverbs_attr_bundle`, which
    /// is what ib_core passes to every verb it calls for user space.
    pub(crate) unsafe fn user_context(&self) -> Option<super::umap::UserContext<'a>> {
        let off = core::mem::offset_of!(
            bindings::uverbs_attr_bundle__bindgen_ty_1__bindgen_ty_1,
            driver_udata
        );
        let udata = core::ptr::from_ref::<bindings::ib_udata>(self.raw).cast::<u8>();
        // SAFETY: Per the function's contract the udata sits at `off` in the
        // bundle's leading union, so `off` bytes back is still inside the
        // bundle, at the start of that union.
        let b = unsafe { udata.sub(off) }
            .cast::<bindings::uverbs_attr_bundle__bindgen_ty_1__bindgen_ty_1>();
        // SAFETY: `b` is the bundle's leading union (above), valid for the
        // call; uverbs fills in this member.
        let ctx = unsafe { (*b).context };
        if ctx.is_null() {
            return None;
        }
        // SAFETY: A bundle's non-null `context` is the caller's live user
        // context on the device the verb runs on (one with this module's
        // ops), valid as long as the bundle, so for `'a`.
        Some(unsafe { super::umap::UserContext::from_raw(ctx) })
    }
}
