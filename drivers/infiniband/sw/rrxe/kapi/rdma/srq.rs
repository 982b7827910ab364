// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: ib_core allocates `struct ib_srq` with room for
//! the driver's [`Driver::Srq`] after it (`size_ib_srq`), sets its device,
//! PD, type and event handler, and calls `create_srq`; `modify_srq`,
//! `query_srq` and `destroy_srq` follow.  ib_core keeps an SRQ alive while
//! a QP uses it (`destroy_srq` of a used SRQ fails in ib_core with
//! `EBUSY`).  [`SrqEvents`] raises the SRQ's asynchronous events.

use kernel::{
    bindings, error::from_result, ffi::c_int, new_spinlock, prelude::*, sync::Arc, sync::SpinLock,
    types::Opaque,
};

use super::cq::UserCaller;
use super::device::{Device, Driver};
use super::mr::PdId;

/// `struct ib_srq_attr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SrqAttr {
    pub(crate) max_wr: u32,
    pub(crate) max_sge: u32,
    pub(crate) srq_limit: u32,
}

impl SrqAttr {
    fn from_c(a: &bindings::ib_srq_attr) -> Self {
        Self {
            max_wr: a.max_wr,
            max_sge: a.max_sge,
            srq_limit: a.srq_limit,
        }
    }

    fn to_c(self, a: &mut bindings::ib_srq_attr) {
        a.max_wr = self.max_wr;
        a.max_sge = self.max_sge;
        a.srq_limit = self.srq_limit;
    }
}

/// `IB_SRQ_MAX_WR`: `modify_srq` resizes the queue.
pub(crate) const MODIFY_MAX_WR: u32 = bindings::ib_srq_attr_mask_IB_SRQ_MAX_WR;
/// `IB_SRQ_LIMIT`: `modify_srq` arms the limit event.
pub(crate) const MODIFY_LIMIT: u32 = bindings::ib_srq_attr_mask_IB_SRQ_LIMIT;

/// The raw SRQ pointer, valid while stored in a [`SrqEvents`].
///
/// # Invariants
///
/// `self.0` is the `ib_srq` of an SRQ of this driver.  While the `RawSrq`
/// is in its [`SrqEvents`] cell the SRQ exists; it is only dereferenced
/// under the cell's lock.
struct RawSrq(*mut bindings::ib_srq);

// SAFETY: Only dereferenced under the `SrqEvents` lock, while the SRQ
// exists (type invariant).
unsafe impl Send for RawSrq {}

/// Raises `IB_EVENT_SRQ_LIMIT_REACHED` on an SRQ.  Clones may outlive it
/// (held by QPs' tasks): `destroy_srq` disconnects them first, after which
/// [`SrqEvents::limit_reached`] does nothing.
///
/// # Invariants
///
/// The cell holds `Some` only while the SRQ exists: `destroy_srq` sets it
/// to `None`, under its lock, before ib_core frees the SRQ, and nothing
/// sets it back.
#[derive(Clone)]
pub(crate) struct SrqEvents(Arc<SpinLock<Option<RawSrq>>>);

impl SrqEvents {
    /// The events of the SRQ `srq`, which `create_srq` is creating.
    ///
    /// # Safety
    ///
    /// `srq` is the SRQ being created; the caller disconnects the result
    /// before ib_core frees it (`destroy_srq`, or a failed creation).
    unsafe fn new(srq: *mut bindings::ib_srq) -> Result<Self> {
        // INVARIANT: Only `create_srq` calls this, with the SRQ being
        // created, which lives until `destroy_srq` disconnects the cell.  A
        // failed creation disconnects it too.
        Ok(Self(Arc::pin_init(
            new_spinlock!(Some(RawSrq(srq))),
            GFP_KERNEL,
        )?))
    }

    /// Delivers `IB_EVENT_SRQ_LIMIT_REACHED` to the SRQ's handler, if the
    /// SRQ still exists.  Any context; the handler does not sleep.
    pub(crate) fn limit_reached(&self) {
        let guard = self.0.lock();
        let Some(raw) = guard.as_ref() else { return };
        // SAFETY: By the type invariant the SRQ exists while `Some`
        // (cleared under this lock before ib_core frees it); `device` is set
        // for its lifetime.
        let device = unsafe { (*raw.0).device };
        // SAFETY: All-zeroes is a valid `ib_event` (a union of pointers
        // and a port number, then an enum).
        let mut event: bindings::ib_event = unsafe { core::mem::zeroed() };
        event.device = device;
        event.element.srq = raw.0;
        event.event = bindings::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED;
        // SAFETY: The SRQ exists while `Some` (type invariant); ib_core
        // sets `event_handler` and `srq_context` before `create_srq` and
        // keeps them while the SRQ exists.
        let (handler, context) = unsafe { ((*raw.0).event_handler, (*raw.0).srq_context) };
        if let Some(h) = handler {
            // SAFETY: ib_core's handler for this SRQ, called with a valid
            // event for it and the context ib_core registered.
            unsafe { h(&mut event, context) };
        }
    }

    fn disconnect(&self) {
        // INVARIANT: `None` names no SRQ; nothing stores one again.
        *self.0.lock() = None;
    }
}

/// An SRQ object as ib_core allocates it for driver `T`.
///
/// # Invariants
///
/// Never made in Rust: ib_core allocates it (`size_ib_srq` bytes, zeroed)
/// and frees it, and `ib` is the `ib_srq` it passes to the SRQ verbs.
/// `data` and `events` are initialised from the success of `create_srq`
/// until `destroy_srq` ends them; only verbs between the two reach them.
#[repr(C)]
pub(super) struct SrqObj<T: Driver> {
    ib: Opaque<bindings::ib_srq>,
    data: core::mem::MaybeUninit<T::Srq>,
    events: core::mem::MaybeUninit<SrqEvents>,
}

/// The driver data of an SRQ ib_core passes to a verb.
///
/// # Safety
///
/// `srq` is an SRQ of driver `T` between a successful `create_srq` and its
/// `destroy_srq`.
pub(super) unsafe fn data<'a, T: Driver>(srq: *mut bindings::ib_srq) -> &'a T::Srq {
    // SAFETY: Per the function's contract and the type invariant of
    // `SrqObj`, `data` is initialised while the SRQ lives.
    unsafe { (*srq.cast::<SrqObj<T>>()).data.assume_init_ref() }
}

/// `create_srq`.
///
/// # Safety
///
/// Only called by ib_core with a zeroed SRQ object of `size_ib_srq` bytes
/// whose device and PD are set, a valid init attr, and a null or valid
/// udata.
pub(super) unsafe extern "C" fn create_srq<T: Driver>(
    srq: *mut bindings::ib_srq,
    init: *mut bindings::ib_srq_init_attr,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: `srq` is live for the call and ib_core set `device`.
        let dev = unsafe { Device::<T>::from_raw((*srq).device) };
        // SAFETY: `pd` was set by ib_core and holds a use count for the SRQ.
        let pd = PdId::from_raw(unsafe { (*srq).pd });
        // SAFETY: `init` is valid and exclusively ours for the call.
        let i = unsafe { &mut *init };
        if i.srq_type != bindings::ib_srq_type_IB_SRQT_BASIC {
            return Err(crate::kapi::eopnotsupp());
        }
        // SAFETY: ib_core passes a null udata or the `driver_udata` of the
        // call's attribute bundle, valid and not otherwise accessed for the
        // call.
        let user = unsafe { UserCaller::from_udata(udata) }?;
        let mut attr = SrqAttr::from_c(&i.attr);
        // SAFETY: `srq` is the SRQ being created; its events are
        // disconnected by a failed creation (below) or `destroy_srq`.
        let events = unsafe { SrqEvents::new(srq) }?;
        // A failed create disconnects the events: ib_core frees the SRQ,
        // and a clone the driver kept must not reach it.
        let data = T::create_srq(dev, pd, &mut attr, user, events.clone())
            .inspect_err(|_| events.disconnect())?;
        attr.to_c(&mut i.attr);
        let obj = srq.cast::<SrqObj<T>>();
        // INVARIANT: Both slots are initialised from here until
        // `destroy_srq`.
        // SAFETY: `obj` has `size_ib_srq` bytes; each slot is written
        // once, here, and read back by the verbs and `destroy_srq`.
        unsafe { (*obj).data.write(data) };
        // SAFETY: `obj` has `size_ib_srq` bytes; the `events` slot is written
        // once, here, and read back only by `destroy_srq`.
        unsafe { (*obj).events.write(events) };
        Ok(0)
    })
}

/// `modify_srq`.
///
/// # Safety
///
/// Only called by ib_core for a live SRQ created by `create_srq`, with a
/// readable attr and a null or valid udata.
pub(super) unsafe extern "C" fn modify_srq<T: Driver>(
    srq: *mut bindings::ib_srq,
    attr: *mut bindings::ib_srq_attr,
    mask: bindings::ib_srq_attr_mask,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: `srq` is live for the call and ib_core set `device`.
        let dev = unsafe { Device::<T>::from_raw((*srq).device) };
        // SAFETY: `attr` is valid for the call.
        let a = SrqAttr::from_c(unsafe { &*attr });
        // SAFETY: ib_core passes a null udata or the `driver_udata` of the
        // call's attribute bundle, valid and not otherwise accessed for the
        // call.
        let user = unsafe { UserCaller::from_udata(udata) }?;
        // SAFETY: Live SRQ of ours.
        let data = unsafe { data::<T>(srq) };
        T::modify_srq(dev, data, &a, mask, user)?;
        Ok(0)
    })
}

/// `query_srq`.
///
/// # Safety
///
/// Only called by ib_core for a live SRQ created by `create_srq`, with a
/// writable attr.
pub(super) unsafe extern "C" fn query_srq<T: Driver>(
    srq: *mut bindings::ib_srq,
    attr: *mut bindings::ib_srq_attr,
) -> c_int {
    // SAFETY: Live SRQ of ours.
    let data = unsafe { data::<T>(srq) };
    // SAFETY: `attr` is valid and exclusively ours for the call.
    T::query_srq(data).to_c(unsafe { &mut *attr });
    0
}

/// `destroy_srq`.
///
/// # Safety
///
/// Only called by ib_core, once, for an SRQ `create_srq` succeeded on
/// and that no QP uses any more.
pub(super) unsafe extern "C" fn destroy_srq<T: Driver>(
    srq: *mut bindings::ib_srq,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    let obj = srq.cast::<SrqObj<T>>();
    // INVARIANT: Both slots end here; ib_core frees the object after this
    // returns.
    // SAFETY: `create_srq` initialised the events (type invariant of
    // `SrqObj`); cut off before ib_core frees the SRQ.
    unsafe { (*obj).events.assume_init_ref().disconnect() };
    // SAFETY: `create_srq` initialised the events and ib_core calls this
    // once, so they are dropped exactly once, here.
    unsafe { (*obj).events.assume_init_drop() };
    // SAFETY: `create_srq` initialised the data; this is its only read by
    // value and ib_core frees the memory after this returns.
    let data = unsafe { (*obj).data.assume_init_read() };
    // SAFETY: `srq` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*srq).device) };
    T::destroy_srq(dev, data);
    0
}

/// `post_srq_recv`: a kernel consumer's receive work requests into the
/// SRQ's ring (a user SRQ's are written by librxe into the mapped ring;
/// requests through uverbs are refused).
///
/// # Safety
///
/// Only called by ib_core for a live SRQ created by `create_srq`, with a
/// valid or null WR list and a writable `bad_wr`.
pub(super) unsafe extern "C" fn post_srq_recv<T: Driver>(
    srq: *mut bindings::ib_srq,
    wr: *const bindings::ib_recv_wr,
    bad_wr: *mut *const bindings::ib_recv_wr,
) -> c_int {
    // SAFETY: Live SRQ; `uobject` is set at creation for user SRQs.
    if wr.is_null() || !unsafe { (*srq).uobject }.is_null() {
        // SAFETY: `bad_wr` is writable per ib_core's contract.
        unsafe { *bad_wr = wr };
        return -(bindings::EINVAL as c_int);
    }
    // SAFETY: Live SRQ of ours.
    let data = unsafe { data::<T>(srq) };
    let post = |w: &super::wr::RecvWr<'_>| T::post_srq_recv(data, w);
    // SAFETY: A kernel consumer's non-null list, valid for the call;
    // `bad_wr` is writable per ib_core's contract.
    unsafe { super::wr::post_recv_list(wr, bad_wr, post) }.1
}
