// SPDX-License-Identifier: GPL-2.0

//! A completion queue a kernel consumer polls itself (`ib_alloc_cq` with
//! `IB_POLL_DIRECT`): no interrupt context, no work item; the consumer
//! calls [`Cq::poll`] when it wants completions.  The CQ is freed
//! (`ib_free_cq`) on drop, after every QP using it, which borrows it.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, error::from_err_ptr, prelude::*};

use super::super::client::IbDevice;

/// Completions [`Cq::poll`] takes from the device in one call at most.
const POLL_BATCH: usize = 8;

/// One work completion, copied out of `struct ib_wc` (not its QP
/// pointer: the QP may be destroyed while its completions wait here).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Completion {
    /// The consumer's tag of the work request.
    pub(crate) wr_id: u64,
    /// `IB_WC_*` status: 0 is success.
    pub(crate) status: u32,
    /// `IB_WC_*` opcode (`IB_WC_RECV` is 128).
    pub(crate) opcode: u32,
    /// Bytes received (receive completions) or moved (READ).
    pub(crate) byte_len: u32,
}

impl Completion {
    /// The request succeeded.
    pub(crate) fn ok(&self) -> bool {
        self.status == bindings::ib_wc_status_IB_WC_SUCCESS
    }

    /// ib_core's name of the status ("success", "remote access error"...).
    pub(crate) fn status_str(&self) -> &'static CStr {
        // SAFETY: `ib_wc_status_msg` returns a static string for any
        // value, "unrecognized status" for unknown ones.
        unsafe { CStr::from_char_ptr(bindings::ib_wc_status_msg(self.status)) }
    }
}

/// A directly polled CQ on a device that outlives it; freed on drop.
///
/// # Invariants
///
/// `cq` is a CQ made by `__ib_alloc_cq` (`IB_POLL_DIRECT`) on a device
/// borrowed for `'d`, owned by `self` and freed only by its drop; every QP
/// using it borrows `self`.
pub(crate) struct Cq<'d> {
    cq: NonNull<bindings::ib_cq>,
    _dev: PhantomData<&'d IbDevice>,
}

impl<'d> Cq<'d> {
    /// Allocates a CQ of at least `entries` entries on `dev`, on
    /// completion vector 0.  `name` is the owner ib_core's resource
    /// tracking shows.  May sleep.
    pub(crate) fn alloc(dev: &'d IbDevice, entries: u32, name: &'static CStr) -> Result<Self> {
        let nr = i32::try_from(entries)?;
        // SAFETY: `dev` is a registered device valid for `'d`; a direct
        // CQ has no private data or handler; `name` is 'static.
        let cq = unsafe {
            bindings::__ib_alloc_cq(
                dev.raw(),
                core::ptr::null_mut(),
                nr,
                0,
                bindings::ib_poll_context_IB_POLL_DIRECT,
                name.as_char_ptr(),
            )
        };
        let cq = NonNull::new(from_err_ptr(cq)?).ok_or(ENOMEM)?;
        // INVARIANT: The CQ just made on `dev` (borrowed for `'d`), owned by
        // the returned value.
        Ok(Self {
            cq,
            _dev: PhantomData,
        })
    }

    pub(super) fn raw(&self) -> *mut bindings::ib_cq {
        self.cq.as_ptr()
    }

    /// Moves up to `out.len()` completions (at most 8 a call) into `out`
    /// and returns how many.  Any context.
    pub(crate) fn poll(&self, out: &mut [Completion]) -> Result<usize> {
        let mut wcs = [bindings::ib_wc::default(); POLL_BATCH];
        let want = out.len().min(POLL_BATCH);
        // SAFETY: `self.cq` is a live CQ (type invariant); its device and
        // ops table stay until the device is unregistered, which the `'d`
        // borrow of the device rules out while `self` lives.
        let poll = unsafe { (*(*self.cq.as_ptr()).device).ops.poll_cq }
            .ok_or_else(crate::kapi::eopnotsupp)?;
        // SAFETY: `poll_cq` is the driver's, called as `ib_poll_cq` does:
        // a live CQ (type invariant) and room for `want` (at most
        // `POLL_BATCH`) entries.
        let n = unsafe { poll(self.cq.as_ptr(), want as i32, wcs.as_mut_ptr()) };
        if n < 0 {
            return Err(Error::from_errno(n));
        }
        let n = (n as usize).min(want);
        for (o, wc) in out.iter_mut().zip(wcs.iter()).take(n) {
            *o = Completion {
                // SAFETY: Kernel consumers here post with `wr_id`, the
                // member of the union this reads (`wr_cqe` is unused).
                wr_id: unsafe { wc.__bindgen_anon_1.wr_id },
                status: wc.status,
                opcode: wc.opcode,
                byte_len: wc.byte_len,
            };
        }
        Ok(n)
    }
}

impl Drop for Cq<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.cq` was allocated by `__ib_alloc_cq` and is ours
        // (type invariant), freed once, here; the QPs using it borrow `self`
        // and are gone.
        unsafe { bindings::ib_free_cq(self.cq.as_ptr()) };
    }
}
