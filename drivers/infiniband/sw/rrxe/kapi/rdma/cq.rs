// SPDX-License-Identifier: GPL-2.0

//! Completion queues: ib_core allocates `struct ib_cq` with room for the
//! driver's [`Driver::Cq`] after it (`size_ib_cq`); `create_cq` moves the
//! driver value in, `destroy_cq` drops it.  Other CQ verbs borrow it.
//! [`CqEvents`] raises the CQ's completion and error events, and does
//! nothing once the CQ is destroyed.

use kernel::{
    bindings,
    error::from_result,
    ffi::c_int,
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
    types::Opaque,
};

use super::device::{Device, Driver};
use super::event::QpHandle;
use super::udata::UData;
use super::umap::UserContext;

/// How a CQ is armed (`enum ib_cq_notify_flags`, include/rdma/ib_verbs.h):
/// the `flags` of
/// [`Driver::req_notify_cq`](crate::kapi::rdma::device::Driver::req_notify_cq).
pub(crate) mod notify {
    use kernel::bindings;

    /// `IB_CQ_SOLICITED`: an event for the next solicited completion.
    pub(crate) const SOLICITED: u32 = bindings::ib_cq_notify_flags_IB_CQ_SOLICITED;
    /// `IB_CQ_NEXT_COMP`: an event for the next completion.
    pub(crate) const NEXT_COMP: u32 = bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP;
    /// `IB_CQ_SOLICITED_MASK`: the bits that select the arming
    /// ([`SOLICITED`] or [`NEXT_COMP`]; both is invalid).
    pub(crate) const SOLICITED_MASK: u32 = bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK;
    /// `IB_CQ_REPORT_MISSED_EVENTS`: also report whether completions are
    /// already pending (an event may have been missed).
    pub(crate) const REPORT_MISSED_EVENTS: u32 =
        bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS;
}

/// The network header a UD receive buffer starts with (`IB_WC_GRH`,
/// `enum rdma_network_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NetworkType {
    /// RoCE v2 over IPv4.
    Ipv4,
    /// RoCE v2 over IPv6.
    Ipv6,
}

/// A completion for a kernel consumer: the fields of `struct ib_wc` a
/// RoCE device sets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelWc {
    /// The work request's cookie.
    pub(crate) wr_id: u64,
    /// `enum ib_wc_status`.
    pub(crate) status: u32,
    /// `enum ib_wc_opcode`.
    pub(crate) opcode: u32,
    /// Bytes received (receive completions).
    pub(crate) byte_len: u32,
    /// Immediate data, the bytes as on the wire (`IB_WC_WITH_IMM`).
    pub(crate) imm: Option<[u8; 4]>,
    /// The rkey a SEND with Invalidate invalidated
    /// (`IB_WC_WITH_INVALIDATE`; never with `imm`).
    pub(crate) invalidated: Option<u32>,
    /// Remote QP number (receive completions).
    pub(crate) src_qp: u32,
    /// UD receive: the network header the buffer starts with.
    pub(crate) grh: Option<NetworkType>,
    /// UD receive: the VLAN ID it arrived with (`IB_WC_WITH_VLAN`).
    pub(crate) vlan: Option<u16>,
    /// The QP (`wc.qp`).
    pub(crate) qp: QpHandle,
}

impl KernelWc {
    /// Fills `struct ib_wc`.
    fn write_to(&self, wc: &mut bindings::ib_wc) {
        let c = self;
        wc.__bindgen_anon_1.wr_id = c.wr_id;
        wc.status = c.status;
        wc.opcode = c.opcode;
        wc.vendor_err = 0;
        wc.byte_len = c.byte_len;
        wc.qp = self.qp.0 as *mut bindings::ib_qp;
        let mut flags = 0;
        wc.ex.imm_data = 0;
        if let Some(imm) = c.imm {
            // `__be32`: the bytes as on the wire.
            wc.ex.imm_data = u32::from_ne_bytes(imm);
            flags |= bindings::ib_wc_flags_IB_WC_WITH_IMM;
        } else if let Some(rkey) = c.invalidated {
            wc.ex.invalidate_rkey = rkey;
            flags |= bindings::ib_wc_flags_IB_WC_WITH_INVALIDATE;
        }
        wc.src_qp = c.src_qp;
        wc.slid = 0;
        wc.pkey_index = 0;
        wc.sl = 0;
        wc.dlid_path_bits = 0;
        wc.port_num = 1;
        wc.smac = [0; 6];
        wc.vlan_id = 0xffff;
        if let Some(id) = c.vlan {
            flags |= bindings::ib_wc_flags_IB_WC_WITH_VLAN;
            wc.vlan_id = id;
        }
        wc.network_hdr_type = 0;
        if let Some(net) = c.grh {
            flags |=
                bindings::ib_wc_flags_IB_WC_GRH | bindings::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE;
            wc.network_hdr_type = match net {
                NetworkType::Ipv4 => bindings::rdma_network_type_RDMA_NETWORK_IPV4,
                NetworkType::Ipv6 => bindings::rdma_network_type_RDMA_NETWORK_IPV6,
            } as u8;
        }
        wc.wc_flags = flags as c_int;
    }
}

/// A CQ object as ib_core allocates it for driver `T`.
///
/// # Invariants
///
/// Never made in Rust: ib_core allocates it (`size_ib_cq` bytes, zeroed)
/// and frees it, and `ib` is the `ib_cq` it passes to the CQ verbs.
/// `data` and `events` are initialised from the success of `create_cq`
/// until `destroy_cq` drops them; only verbs between the two reach them.
#[repr(C)]
pub(super) struct CqObj<T: Driver> {
    ib: Opaque<bindings::ib_cq>,
    data: core::mem::MaybeUninit<T::Cq>,
    events: core::mem::MaybeUninit<CqEvents>,
}

/// The raw CQ pointer, valid while stored in a [`CqEvents`].
///
/// # Invariants
///
/// `self.0` is the `ib_cq` of a CQ of this driver.  While the `RawCq` is
/// in its [`CqEvents`] cell the CQ exists; it is only dereferenced under
/// the cell's lock.
struct RawCq(*mut bindings::ib_cq);

// SAFETY: Only used under the `CqEvents` lock, while the CQ exists (type
// invariant).
unsafe impl Send for RawCq {}

/// Raises completion events on a CQ (its consumer's `comp_handler`, e.g. a
/// uverbs completion channel).  Clones may outlive the CQ: `destroy_cq`
/// disconnects them first, after which [`CqEvents::notify`] does nothing.
///
/// # Invariants
///
/// The cell holds `Some` only while the CQ exists: `destroy_cq` sets it to
/// `None`, under its lock, before ib_core frees the CQ, and nothing sets
/// it back.
#[derive(Clone)]
pub(crate) struct CqEvents(Arc<SpinLock<Option<RawCq>>>);

impl CqEvents {
    /// The events of the CQ `cq`, which `create_cq` is creating.
    ///
    /// # Safety
    ///
    /// `cq` is the CQ being created; the caller disconnects the result
    /// before ib_core frees it (`destroy_cq`, or a failed creation).
    unsafe fn new(cq: *mut bindings::ib_cq) -> Result<Self> {
        // INVARIANT: Only `create_cq` calls this, with the CQ being
        // created, which lives until `destroy_cq` disconnects the cell.  A
        // failed creation disconnects it too.
        Ok(Self(Arc::pin_init(
            new_spinlock!(Some(RawCq(cq))),
            GFP_KERNEL,
        )?))
    }

    /// Calls the CQ's completion handler, if the CQ still exists.
    pub(crate) fn notify(&self) {
        let guard = self.0.lock();
        let Some(raw) = guard.as_ref() else { return };
        // SAFETY: By the type invariant the CQ exists while `Some` (cleared
        // under this lock before ib_core frees it); `comp_handler` and
        // `cq_context` are set by ib_core at creation.
        let (handler, context) = unsafe { ((*raw.0).comp_handler, (*raw.0).cq_context) };
        if let Some(h) = handler {
            // SAFETY: ib_core's completion handler for this live CQ, called
            // with the CQ and the context ib_core registered; it does not
            // sleep.
            unsafe { h(raw.0, context) };
        }
    }

    /// Raises `IB_EVENT_CQ_ERR` on the CQ (it overran), if the CQ still
    /// exists.
    pub(crate) fn error(&self) {
        let guard = self.0.lock();
        let Some(raw) = guard.as_ref() else { return };
        // SAFETY: All-zeroes is a valid `ib_event` (a union of pointers
        // and a port number, then an enum).
        let mut event: bindings::ib_event = unsafe { core::mem::zeroed() };
        // SAFETY: The CQ exists while `Some` (type invariant); `device`,
        // `event_handler` and `cq_context` are set by ib_core at creation.
        let (device, handler, context) =
            unsafe { ((*raw.0).device, (*raw.0).event_handler, (*raw.0).cq_context) };
        event.device = device;
        event.element.cq = raw.0;
        event.event = bindings::ib_event_type_IB_EVENT_CQ_ERR;
        if let Some(h) = handler {
            // SAFETY: ib_core's handler for this CQ, called with a valid
            // event for it and the context ib_core registered.
            unsafe { h(&mut event, context) };
        }
    }

    fn disconnect(&self) {
        // INVARIANT: `None` names no CQ; nothing stores one again.
        *self.0.lock() = None;
    }
}

/// What `create_cq` asks for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CqAttr {
    /// Minimum number of entries.
    pub(crate) cqe: u32,
    /// Completion vector.
    pub(crate) comp_vector: u32,
    /// `IB_UVERBS_CQ_FLAGS_*`; drivers reject what they do not support.
    pub(crate) flags: u32,
}

/// The caller of `create_cq`, when it is a user process.
pub(crate) struct UserCaller<'a> {
    /// The process's device context (for mmap entries).
    pub(crate) ctx: UserContext<'a>,
    /// Its driver-specific request and response buffers.
    pub(crate) udata: UData<'a>,
}

impl<'a> UserCaller<'a> {
    /// The caller of a verb whose `driver_udata` is `udata`: `None` for a
    /// kernel caller (null `udata`), `EINVAL` if a user caller has no
    /// context.
    ///
    /// # Safety
    ///
    /// `udata` is null, or the `driver_udata` of a `uverbs_attr_bundle`
    /// that is valid, and not otherwise accessed, for `'a`.
    pub(super) unsafe fn from_udata(udata: *mut bindings::ib_udata) -> Result<Option<Self>> {
        // SAFETY: Per the function's contract, a non-null `udata` is valid
        // and not otherwise accessed for `'a`.
        let Some(udata) = (unsafe { UData::from_raw(udata) }) else {
            return Ok(None);
        };
        // SAFETY: Per the function's contract, `udata` is the
        // `driver_udata` of its attribute bundle.
        let ctx = unsafe { udata.user_context() }.ok_or(EINVAL)?;
        Ok(Some(Self { ctx, udata }))
    }
}

/// `create_cq`.
///
/// # Safety
///
/// Only called by ib_core with a CQ object of our size whose `device` is
/// ours, and a null or valid attribute bundle.
pub(super) unsafe extern "C" fn create_cq<T: Driver>(
    cq: *mut bindings::ib_cq,
    attr: *const bindings::ib_cq_init_attr,
    attrs: *mut bindings::uverbs_attr_bundle,
) -> c_int {
    from_result(|| {
        // SAFETY: `cq` is live for the call and ib_core set `device`, a
        // device of ours on which this verb runs.
        let dev = unsafe { Device::<T>::from_raw((*cq).device) };
        // SAFETY: ib_core passes `attr` readable for the call.
        let a = unsafe { &*attr };
        // SAFETY: ib_core passes a null bundle or one valid, and not
        // otherwise accessed, for the call.
        let user = unsafe { user_caller(attrs) }?;
        let req = CqAttr {
            cqe: a.cqe,
            comp_vector: a.comp_vector,
            flags: a.flags,
        };
        // SAFETY: `cq` is the CQ being created; its events are disconnected
        // by a failed creation (below) or `destroy_cq`.
        let events = unsafe { CqEvents::new(cq) }?;
        // A failed create disconnects the events: ib_core frees the CQ, and
        // a clone the driver kept must not reach it.
        let (data, cqe) =
            T::create_cq(dev, req, user, events.clone()).inspect_err(|_| events.disconnect())?;
        // SAFETY: `cq` is live for the call; ib_core reports `cqe` to the
        // caller.
        unsafe { (*cq).cqe = cqe as c_int };
        let obj = cq.cast::<CqObj<T>>();
        // INVARIANT: Both slots are initialised from here until
        // `destroy_cq`.
        // SAFETY: `obj` has `size_ib_cq` bytes (our `CqObj<T>`); the `data`
        // slot is written once, here, and read back by the verbs and
        // `destroy_cq`.
        unsafe { (*obj).data.write(data) };
        // SAFETY: `obj` has `size_ib_cq` bytes; the `events` slot is written
        // once, here, and read back only by `destroy_cq`.
        unsafe { (*obj).events.write(events) };
        Ok(0)
    })
}

/// The user caller of `create_cq`, from its attribute bundle: `None` for a
/// kernel caller (no bundle, or no context in it).
///
/// # Safety
///
/// `attrs` is null or a `uverbs_attr_bundle` valid, and not otherwise
/// accessed, for `'a`.
unsafe fn user_caller<'a>(
    attrs: *mut bindings::uverbs_attr_bundle,
) -> Result<Option<UserCaller<'a>>> {
    if attrs.is_null() {
        return Ok(None);
    }
    // SAFETY: `attrs` is not null, so valid and exclusively ours for `'a`
    // (the function's contract); the leading union's named member is the
    // one uverbs fills in.
    let b = unsafe { &mut (*attrs).__bindgen_anon_1.__bindgen_anon_1 };
    if b.context.is_null() {
        return Ok(None);
    }
    // SAFETY: A bundle's non-null `context` is the caller's live user
    // context on our device (so a `ContextObj`), valid for the call (`'a`).
    let ctx = unsafe { UserContext::from_raw(b.context) };
    // SAFETY: `driver_udata` is part of the bundle, valid and not otherwise
    // accessed for `'a`.
    let udata = unsafe { UData::from_raw(&mut b.driver_udata) }.ok_or(EINVAL)?;
    Ok(Some(UserCaller { ctx, udata }))
}

/// The driver data of a CQ ib_core passes to a verb.
///
/// # Safety
///
/// `cq` is a CQ of driver `T` between a successful `create_cq` and its
/// `destroy_cq`.
pub(super) unsafe fn data<'a, T: Driver>(cq: *mut bindings::ib_cq) -> &'a T::Cq {
    // SAFETY: Per the function's contract and the type invariant of
    // `CqObj`, `data` is initialised while the CQ lives.
    unsafe { (*cq.cast::<CqObj<T>>()).data.assume_init_ref() }
}

/// `destroy_cq`.
///
/// # Safety
///
/// Only called by ib_core, once, for a CQ created by `create_cq`.
pub(super) unsafe extern "C" fn destroy_cq<T: Driver>(
    cq: *mut bindings::ib_cq,
    _u: *mut bindings::ib_udata,
) -> c_int {
    let obj = cq.cast::<CqObj<T>>();
    // INVARIANT: Both slots end here; ib_core frees the object after this
    // returns, and no verb reaches the CQ again.
    // SAFETY: `create_cq` initialised the events (type invariant of
    // `CqObj`: ib_core only destroys created CQs); they are cut off before
    // ib_core frees the CQ.
    unsafe { (*obj).events.assume_init_ref().disconnect() };
    // SAFETY: `create_cq` initialised the events and ib_core calls this
    // once, so they are dropped exactly once, here.
    unsafe { (*obj).events.assume_init_drop() };
    // SAFETY: `create_cq` initialised the data, which no verb uses any
    // more; it is dropped exactly once, here.
    unsafe { (*obj).data.assume_init_drop() };
    0
}

/// `req_notify_cq`.
///
/// # Safety
///
/// Only called by ib_core for a live CQ created by `create_cq`.
pub(super) unsafe extern "C" fn req_notify_cq<T: Driver>(
    cq: *mut bindings::ib_cq,
    flags: bindings::ib_cq_notify_flags,
) -> c_int {
    from_result(|| {
        // SAFETY: Live, created CQ.
        let data = unsafe { data::<T>(cq) };
        let missed = T::req_notify_cq(data, flags)?;
        Ok(c_int::from(missed))
    })
}

/// `resize_user_cq` (uverbs only; ib_core has no kernel resize).
///
/// # Safety
///
/// Only called by ib_core for a live CQ created by `create_cq`, with the
/// `driver_udata` of the call's attribute bundle.
pub(super) unsafe extern "C" fn resize_user_cq<T: Driver>(
    cq: *mut bindings::ib_cq,
    cqe: kernel::ffi::c_uint,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a null udata or the `driver_udata` of the
        // call's attribute bundle, valid and not otherwise accessed for the
        // call.
        let user = unsafe { UserCaller::from_udata(udata) }?;
        // SAFETY: Live, created CQ.
        let data = unsafe { data::<T>(cq) };
        let n = T::resize_cq(data, cqe, user)?;
        // SAFETY: `cq` is live; ib_core reports `cqe` to the caller.
        unsafe { (*cq).cqe = n as c_int };
        Ok(0)
    })
}

/// `poll_cq` (kernel consumers; user space polls its mapped ring).
///
/// # Safety
///
/// Only called by ib_core for a live CQ created by `create_cq`, with room
/// for `n` completions at `wc`.
pub(super) unsafe extern "C" fn poll_cq<T: Driver>(
    cq: *mut bindings::ib_cq,
    n: c_int,
    wc: *mut bindings::ib_wc,
) -> c_int {
    let max = usize::try_from(n).unwrap_or(0);
    let mut got = 0usize;
    // SAFETY: Live, created CQ.
    let data = unsafe { data::<T>(cq) };
    let res = T::poll_cq(data, max, &mut |w: &KernelWc| {
        if got < max {
            // SAFETY: `got < n`: inside the caller's array, which ib_core
            // passes writable.
            w.write_to(unsafe { &mut *wc.add(got) });
            got += 1;
        }
    });
    match res {
        Ok(()) => got as c_int,
        Err(e) => e.to_errno(),
    }
}
