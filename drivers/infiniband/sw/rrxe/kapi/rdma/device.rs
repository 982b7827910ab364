// SPDX-License-Identifier: GPL-2.0

//! `struct ib_device` ownership and the typed driver vtable.
//!
//! A [`Device<T>`] is one allocation made by `_ib_alloc_device`: the C
//! `ib_device` first, the driver's `T` after it.  The lifetime rules are
//! ib_core's, made explicit:
//!
//! * `T` is initialised in place before the device is visible to anyone and
//!   dropped exactly once, from ib_core's `dealloc_driver` callback, which
//!   runs after the last verb callback has returned (on unregistration, or
//!   when a registration fails).  [`Driver::release`] runs just before.
//! * [`DeviceRef<T>`] holds a `get_device()` reference: the memory stays
//!   valid, but `T` may already be gone, so it gives no access to `T`; it can
//!   only unregister (waiting for a racing unregistration to finish).
//! * [`Registered<T>`] holds an `ib_device` refcount, which blocks
//!   unregistration, so it may deref to `Device<T>` and thus to `T`.
//!
//! Verb callbacks receive `&Device<T>`: ib_core only calls them between
//! registration and `dealloc_driver`, so `T` is alive.

use core::{marker::PhantomData, mem::size_of, ops::Deref, ptr::NonNull};
use kernel::{
    bindings, error::VTABLE_DEFAULT_ERROR, prelude::*, sync::aref::ARef, types::Opaque, ThisModule,
};

use super::attr::{DeviceCaps, PortCaps, PortImmutable};
use super::udata::UData;
use super::vtable::Vtable;
use crate::kapi::net::netdev::NetDevice;

/// The only port of a RoCE soft device.
pub(crate) const PORT: u32 = 1;

/// A driver id (`enum rdma_driver_id`, include/uapi/rdma/ib_user_ioctl_verbs.h):
/// tells rdma-core which user-space provider drives the device.
pub(crate) type DriverId = bindings::rdma_driver_id;

/// Driver ids (`RDMA_DRIVER_*`).
pub(crate) mod driver_id {
    use super::{bindings, DriverId};

    /// `RDMA_DRIVER_RXE`: soft RoCE, driven by rdma-core's rxe provider.
    pub(crate) const RXE: DriverId = bindings::rdma_driver_id_RDMA_DRIVER_RXE;
}

/// What a driver provides to ib_core.  Every method is called in process
/// context; verbs may run concurrently on several CPUs.
///
/// A `#[vtable]` trait: the methods with a default body are optional
/// verbs, and ib_core sees the verb only if the driver implements it
/// (`HAS_*`, read by the constant ops table in `vtable.rs`).
#[vtable]
pub(crate) trait Driver: Sized + Send + Sync + 'static {
    /// Selects the rdma-core provider (one of [`driver_id`]).
    const DRIVER_ID: DriverId;
    /// The driver's uverbs ABI version (sysfs `abi_version`), checked by the
    /// provider.
    const UVERBS_ABI_VERSION: u32;

    /// The module implementing the driver (`ops.owner`): pins it while user
    /// space has the device open, and tells its devices from others that
    /// share the driver id.
    fn owner() -> &'static ThisModule;

    /// `query_device`: device capabilities.
    fn query_device(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result<DeviceCaps>;
    /// `query_port`: port attributes, computed now.
    fn query_port(dev: &Device<Self>, port: u32) -> Result<PortCaps>;
    /// `query_pkey`: the P_Key at `index`.
    fn query_pkey(dev: &Device<Self>, port: u32, index: u16) -> Result<u16>;
    /// `get_port_immutable`: called once at registration.
    fn port_immutable(dev: &Device<Self>, port: u32) -> Result<PortImmutable>;
    /// Driver data of a completion queue.
    type Cq: Send + Sync;
    /// `create_cq`: returns the CQ's data and its real capacity (>= the
    /// requested number of entries).  `user` is `None` for kernel callers.
    fn create_cq(
        dev: &Device<Self>,
        attr: super::cq::CqAttr,
        user: Option<super::cq::UserCaller<'_>>,
        events: super::cq::CqEvents,
    ) -> Result<(Self::Cq, u32)>;
    /// `req_notify_cq`: arm the CQ with `IB_CQ_*` flags; `Ok(true)` if
    /// `IB_CQ_REPORT_MISSED_EVENTS` was asked and completions are pending.
    fn req_notify_cq(cq: &Self::Cq, flags: u32) -> Result<bool>;
    /// `poll_cq` of a kernel consumer: hands up to `max` completions to
    /// `f`, oldest first (any context; must not sleep).
    fn poll_cq(cq: &Self::Cq, max: usize, f: &mut dyn FnMut(&super::cq::KernelWc)) -> Result;
    /// `resize_user_cq`: to at least `cqe` entries, keeping those not yet
    /// polled; returns the new capacity.
    fn resize_cq(cq: &Self::Cq, cqe: u32, user: Option<super::cq::UserCaller<'_>>) -> Result<u32>;
    /// Driver data of a queue pair.
    type Qp: Send + Sync;
    /// `create_qp`: validates `init`, updates its caps to what was created
    /// and returns the QP's data and number.  `cqs` are the send and
    /// receive CQs and `srq` the shared receive queue, if any, which
    /// outlive the QP (ib_core holds them).
    fn create_qp(
        dev: &Device<Self>,
        init: &mut super::qp::QpInit,
        cqs: (&Self::Cq, &Self::Cq),
        srq: Option<&Self::Srq>,
        user: Option<super::cq::UserCaller<'_>>,
        events: super::event::QpEvents,
    ) -> Result<(Self::Qp, u32)>;
    /// `post_send` from user space with no work requests: the doorbell
    /// after librxe wrote WQEs into the mapped send queue.
    fn post_send_doorbell(qp: &Self::Qp) -> Result;
    /// `post_send` of a kernel consumer: writes one work request into the
    /// send queue (any context; must not sleep).
    fn post_send(qp: &Self::Qp, wr: &super::wr::SendWr<'_, Self>) -> Result;
    /// `post_recv` of a kernel consumer: one work request into the receive
    /// queue (any context).
    fn post_recv(qp: &Self::Qp, wr: &super::wr::RecvWr<'_>) -> Result;
    /// `post_srq_recv` of a kernel consumer (any context).
    fn post_srq_recv(srq: &Self::Srq, wr: &super::wr::RecvWr<'_>) -> Result;
    /// After kernel work requests were posted to the send (`send`) or
    /// receive queue: let the engine see them (any context).
    fn kick(qp: &Self::Qp, send: bool);
    /// `modify_qp`: applies the attributes in `mask` (`IB_QP_*` bits).
    fn modify_qp(dev: &Device<Self>, qp: &Self::Qp, attr: &super::qp::QpAttr, mask: u32) -> Result;
    /// `query_qp`: current attributes and creation parameters.
    fn query_qp(qp: &Self::Qp) -> (super::qp::QpAttr, super::qp::QpInit);
    /// `destroy_qp`: the QP is gone from ib_core.
    fn destroy_qp(dev: &Device<Self>, qp: Self::Qp);
    /// `attach_mcast` (optional): UD QP `qp` joins multicast group `mgid`.
    fn attach_mcast(_dev: &Device<Self>, _qp: &Self::Qp, _mgid: &[u8; 16]) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// `detach_mcast` (optional, with `attach_mcast`): it leaves the group.
    fn detach_mcast(_dev: &Device<Self>, _qp: &Self::Qp, _mgid: &[u8; 16]) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Driver data of a memory region.
    type Mr: Send + Sync;
    /// `reg_user_mr`: registers `[start, start + length)` of the calling
    /// process as I/O virtual address `iova` with `IB_ACCESS_*` flags;
    /// returns the MR's data and its key (used as lkey and rkey).
    fn reg_user_mr(
        dev: &Device<Self>,
        pd: super::mr::PdId,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
        udata: Option<UData<'_>>,
    ) -> Result<(Self::Mr, u32)>;
    /// `get_dma_mr` (kernel consumers): an MR over all of their memory,
    /// with `IB_ACCESS_*` `access`; returns it with its key.
    fn get_dma_mr(dev: &Device<Self>, pd: super::mr::PdId, access: u32) -> Result<(Self::Mr, u32)>;
    /// The most blocks a fast-registration region may have
    /// (`max_fast_reg_page_list_len`).
    const MAX_FAST_REG_PAGES: u32;
    /// `alloc_mr` (kernel consumers): a fast-registration region in `pd`
    /// whose mappings `pages` holds, Free; returns it with its key.
    fn alloc_fast_mr(
        dev: &Device<Self>,
        pd: super::mr::PdId,
        pages: kernel::sync::Arc<super::fast_reg::FastPages>,
    ) -> Result<(Self::Mr, u32)>;
    /// `dereg_mr`: deregisters the MR; on success ib_core forgets it and
    /// its data is dropped.  An error (memory windows still bound) leaves
    /// the MR registered.
    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result;
    /// `advise_mr` (optional; `ibv_advise_mr`, `ib_advise_mr`): bring the
    /// memory `sges` (lkeys of on-demand-paging regions of `pd`) in as
    /// `how` says; if `flush`, before returning (errors reported), else in
    /// the background (errors dropped, the call succeeds).  May sleep.
    fn advise_mr(
        _dev: &Device<Self>,
        _pd: super::mr::PdId,
        _how: super::mr::odp::Prefetch,
        _flush: bool,
        _sges: &[super::wr::Sge],
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Driver data of a memory window.
    type Mw: Send + Sync;
    /// `alloc_mw`: a memory window of `kind` in `pd`; returns its data and
    /// its initial rkey.
    fn alloc_mw(
        dev: &Device<Self>,
        pd: super::mr::PdId,
        kind: super::mw::MwType,
        udata: Option<UData<'_>>,
    ) -> Result<(Self::Mw, u32)>;
    /// `dealloc_mw`: the window is gone from user space and ib_core (a
    /// bound window is unbound).
    fn dealloc_mw(dev: &Device<Self>, mw: Self::Mw);
    /// Driver data of a shared receive queue.
    type Srq: Send + Sync;
    /// `create_srq`: a basic SRQ in `pd` of `attr`'s size, which comes
    /// back with what was created.
    fn create_srq(
        dev: &Device<Self>,
        pd: super::mr::PdId,
        attr: &mut super::srq::SrqAttr,
        user: Option<super::cq::UserCaller<'_>>,
        events: super::srq::SrqEvents,
    ) -> Result<Self::Srq>;
    /// `modify_srq`: `mask` has `IB_SRQ_MAX_WR` and/or `IB_SRQ_LIMIT`.
    fn modify_srq(
        dev: &Device<Self>,
        srq: &Self::Srq,
        attr: &super::srq::SrqAttr,
        mask: u32,
        user: Option<super::cq::UserCaller<'_>>,
    ) -> Result;
    /// `query_srq`.
    fn query_srq(srq: &Self::Srq) -> super::srq::SrqAttr;
    /// `destroy_srq`: no QP uses it any more.
    fn destroy_srq(dev: &Device<Self>, srq: Self::Srq);
    /// Driver data of an address handle.
    type Ah: Send + Sync;
    /// `create_ah` / `create_user_ah`: an address handle in `pd` for the
    /// address vector `av` (its source GID resolved by ib_core).  A user
    /// caller's response is the driver's to write.
    fn create_ah(
        dev: &Device<Self>,
        pd: super::mr::PdId,
        av: &super::qp::QpPath,
        udata: Option<UData<'_>>,
        sleepable: bool,
    ) -> Result<Self::Ah>;
    /// `query_ah`: the address vector the AH was created with.
    fn query_ah(ah: &Self::Ah) -> super::qp::QpPath;
    /// `destroy_ah`: the AH is gone from ib_core.
    fn destroy_ah(dev: &Device<Self>, ah: Self::Ah);
    /// `alloc_ucontext`: a user process opened the device.
    fn alloc_ucontext(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result;
    /// `dealloc_ucontext`: that context is gone.
    fn dealloc_ucontext(dev: &Device<Self>);
    /// `alloc_pd`: a protection domain is created.
    fn alloc_pd(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result;
    /// `dealloc_pd`: a protection domain is destroyed.
    fn dealloc_pd(dev: &Device<Self>) -> Result;
    /// Names of the per-port counters (optional: no `hw_counters` without
    /// it; implemented with `hw_stats`).
    fn hw_stat_descs() -> &'static [super::stats::StatDesc] {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Current values of those counters, in the same order.
    fn hw_stats(_dev: &Device<Self>, _values: &mut [u64]) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// `process_mad` (optional): answers the MAD `input` received for
    /// `port` into `out`; returns `IB_MAD_RESULT_*` bits.
    fn process_mad(
        _dev: &Device<Self>,
        _port: u32,
        _input: &[u8; super::mad::MAD_SIZE],
        _out: &mut [u8; super::mad::MAD_SIZE],
    ) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
    /// Called once, from `dealloc_driver`, just before `T` is dropped.
    fn release(dev: &Device<Self>);
}

/// An RDMA device with driver data `T`.  See the module documentation for
/// the lifetime rules.
///
/// # Invariants
///
/// A `Device<T>` only exists in an allocation of `size_of::<Self>()` bytes
/// made by `_ib_alloc_device` in [`Device::register`], never moved, whose
/// ops are `T`'s (`Vtable::<T>::ops()`); `ib` is ib_core's device, at offset 0.
/// `data` is initialised before the ops are set and dropped only by
/// `dealloc_driver`, and a `&Device<T>` is only made while it is alive (in
/// a verb callback, or through a [`Registered<T>`]).
#[repr(C)]
pub(crate) struct Device<T: Driver> {
    ib: Opaque<bindings::ib_device>,
    data: T,
}

// SAFETY: `ib_device` is built for concurrent use by ib_core; `T` is
// `Send + Sync`.
unsafe impl<T: Driver> Send for Device<T> {}
// SAFETY: `ib_device` is built for concurrent use by ib_core; `T` is
// `Send + Sync`, so shared references may cross threads.
unsafe impl<T: Driver> Sync for Device<T> {}

impl<T: Driver> Deref for Device<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.data
    }
}

/// Identity of a new device, written before registration.
pub(crate) struct DeviceParams<'a> {
    /// `node_desc` (at most 63 bytes are used).
    pub(crate) node_desc: &'a [u8],
    /// Node GUID, host order.
    pub(crate) node_guid: u64,
    /// Completion vectors to advertise.
    pub(crate) num_comp_vectors: i32,
}

impl DeviceParams<'_> {
    /// Writes the identity and the fixed attributes of a new, unregistered
    /// device.
    fn write_to(&self, d: &mut bindings::ib_device) {
        let room = d.node_desc.len() - 1;
        for (dst, src) in d.node_desc.iter_mut().zip(self.node_desc.iter().take(room)) {
            *dst = *src as kernel::ffi::c_char;
        }
        d.node_type = bindings::RDMA_NODE_IB_CA as u8;
        d.phys_port_cnt = 1;
        d.num_comp_vectors = self.num_comp_vectors;
        d.local_dma_lkey = 0;
        d.node_guid = self.node_guid.to_be();
        d.name_assign_type = bindings::rdma_nl_name_assign_type_RDMA_NAME_ASSIGN_TYPE_USER;
        // Same uverbs command mask additions as C rxe: librxe's doorbell
        // (an empty post_send) and CQ arming go through the kernel.
        d.uverbs_cmd_mask |= (1u64 << bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND)
            | (1u64 << bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
    }
}

/// Returned by `ib_register_device` when the name is taken.
const ENFILE: i32 = 23;

impl<T: Driver> Device<T> {
    /// Borrows the device behind a pointer ib_core passed to a callback.
    ///
    /// # Safety
    ///
    /// `ib` must be a device created by [`Device::<T>::register`] on which a
    /// verb callback is running (so `dealloc_driver` has not run).
    pub(super) unsafe fn from_raw<'a>(ib: *mut bindings::ib_device) -> &'a Self {
        // INVARIANT: Per the caller's contract `dealloc_driver` has not run,
        // so `data` is alive.
        // SAFETY: `ib` is the first field of the `repr(C)` allocation and
        // `data` is initialised (caller's contract).
        unsafe { &*ib.cast::<Self>() }
    }

    /// Drops the driver data in place.
    ///
    /// # Safety
    ///
    /// Only from `dealloc_driver`: `ib` is a device of this type whose data
    /// is initialised and will never be used again.
    pub(super) unsafe fn drop_data(ib: *mut bindings::ib_device) {
        // INVARIANT: Only `dealloc_driver` calls this; no verb callback, and
        // so no new `&Device<T>`, follows it.
        // SAFETY: Per the function's contract.
        unsafe { core::ptr::drop_in_place(core::ptr::addr_of_mut!((*ib.cast::<Self>()).data)) };
    }

    /// The C device.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_device {
        self.ib.get()
    }

    /// The device name (e.g. `rrxe0`), copied: it may be renamed.
    pub(crate) fn name(&self) -> crate::kapi::FixedName<64> {
        // SAFETY: The device is live (type invariant); `name` is a fixed
        // array that renames rewrite in place, so a racing copy may be torn
        // but is in bounds.
        let name = unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*self.as_raw()).name)) };
        crate::kapi::FixedName::from_c_chars(&name)
    }

    /// Ethernet link speed of `port` as IB (speed, width), from ethtool.
    /// Takes RTNL: not callable with RTNL held.
    pub(crate) fn eth_speed(&self, port: u32) -> Result<(u16, u8)> {
        let (mut speed, mut width) = (0u16, 0u8);
        // SAFETY: Live device (type invariant); the out pointers are valid
        // locals.
        kernel::error::to_result(unsafe {
            bindings::ib_get_eth_speed(self.as_raw(), port, &mut speed, &mut width)
        })?;
        Ok((speed, width))
    }

    /// The net_device bound to `port`, referenced.
    pub(crate) fn netdev(&self, port: u32) -> Option<ARef<NetDevice>> {
        // SAFETY: The device is live (type invariant);
        // `ib_device_get_netdev` returns a held reference (or null), which
        // moves into the `ARef`.
        unsafe { NetDevice::from_owned_raw(bindings::ib_device_get_netdev(self.as_raw(), port)) }
    }

    /// Allocates a device, initialises `data` in place, binds `netdev` to
    /// port 1 and registers it as `name`.  `before_register` runs with a
    /// reference to the allocated device, before ib_core can see it: use it
    /// to track the device.  Errors: `EEXIST` if the name is taken, or what
    /// `data`, `before_register` or ib_core returned.  On every error path
    /// whatever was initialised is dropped and the allocation freed.
    pub(crate) fn register(
        name: &CStr,
        netdev: &NetDevice,
        params: &DeviceParams<'_>,
        data: impl PinInit<T, Error>,
        before_register: impl FnOnce(&DeviceRef<T>) -> Result,
    ) -> Result<DeviceRef<T>> {
        const {
            // kzalloc aligns to at least 8 bytes; ib_device first, at offset 0.
            assert!(core::mem::align_of::<Self>() <= 8);
        }
        // SAFETY: `init_net` is the always-present initial namespace, as the
        // C `ib_alloc_device()` macro passes it.
        let ib = unsafe {
            bindings::_ib_alloc_device(
                size_of::<Self>(),
                core::ptr::addr_of_mut!(bindings::init_net),
            )
        };
        let ib = NonNull::new(ib).ok_or(ENOMEM)?;
        let this = ib.as_ptr().cast::<Self>();

        // INVARIANT: The allocation is never moved; `data` is initialised
        // here, before the ops are set below.
        // SAFETY: `this` is a fresh, zeroed, suitably aligned allocation of
        // `size_of::<Self>()` bytes; `data` is pinned there (the device is
        // never moved) and a failed init leaves nothing to drop.
        if let Err(e) = unsafe { data.__pinned_init(core::ptr::addr_of_mut!((*this).data)) } {
            // SAFETY: No ops are set, so this only frees the allocation.
            unsafe { bindings::ib_dealloc_device(ib.as_ptr()) };
            return Err(e);
        }

        // From here on `dealloc_driver` owns `data`: any failure below goes
        // through `ib_dealloc_device`, which drops it.
        let ops = Vtable::<T>::ops();
        // INVARIANT: The ops are `T`'s, so every callback recovers a
        // `Device<T>`.
        // SAFETY: `ib` is a valid unregistered device we own exclusively;
        // `ib_set_device_ops` copies `ops`.
        unsafe { bindings::ib_set_device_ops(ib.as_ptr(), &ops) };
        // SAFETY: `ib` is a valid device we own exclusively: nothing else
        // sees it before `before_register` and `ib_register_device` below,
        // after this borrow ends.
        let d = unsafe { &mut *ib.as_ptr() };
        params.write_to(d);

        let dref = DeviceRef::<T>::new(ib);
        let fail = |e: Error| -> Error {
            // SAFETY: Registration failed or never happened, so ib_core
            // requires us to deallocate; this runs `dealloc_driver`.
            unsafe { bindings::ib_dealloc_device(ib.as_ptr()) };
            e
        };
        before_register(&dref).map_err(fail)?;
        // SAFETY: Valid device and referenced net_device; port 1 exists.
        let ret = unsafe { bindings::ib_device_set_netdev(ib.as_ptr(), netdev.as_raw(), PORT) };
        if ret != 0 {
            return Err(fail(Error::from_errno(ret)));
        }
        // SAFETY: Valid device; `name` is NUL-terminated; no DMA device
        // (software device, like C rxe).
        let ret = unsafe {
            bindings::ib_register_device(ib.as_ptr(), name.as_char_ptr(), core::ptr::null_mut())
        };
        if ret != 0 {
            let e = if ret == -ENFILE {
                EEXIST
            } else {
                Error::from_errno(ret)
            };
            return Err(fail(e));
        }
        Ok(dref)
    }

    /// The registered device of this driver bound to `netdev`, if any.
    pub(crate) fn get_by_netdev(netdev: &NetDevice) -> Option<Registered<T>> {
        // SAFETY: `netdev` is live; a non-null result carries a device
        // refcount that `Registered` (or the put below) gives back.
        let ib = unsafe { bindings::ib_device_get_by_netdev(netdev.as_raw(), T::DRIVER_ID) };
        let ib = NonNull::new(ib)?;
        // Another driver (C rxe) shares our driver id: ours are the devices
        // whose ops belong to our module.
        // SAFETY: The refcount keeps the device registered, so `ops` is
        // stable and readable.
        let ours = unsafe { (*ib.as_ptr()).ops.owner } == T::owner().as_ptr();
        // INVARIANT: The refcount taken above moves into `Registered`; the
        // device's ops are those of `T`'s module, so (one driver type per
        // module) it is a `Device<T>` registered by `Device::register`.
        if !ours {
            // SAFETY: Gives back the reference taken above.
            unsafe { bindings::ib_device_put(ib.as_ptr()) };
            return None;
        }
        Some(Registered {
            ptr: ib.cast(),
            _p: PhantomData,
        })
    }
}

/// Whether any registered device of `driver_id` (any driver using that id,
/// e.g. C rxe as well as rrxe) is bound to `netdev`.
pub(crate) fn driver_id_bound_to(netdev: &NetDevice, driver_id: DriverId) -> bool {
    // SAFETY: `netdev` is live; the reference returned is put right away.
    let ib = unsafe { bindings::ib_device_get_by_netdev(netdev.as_raw(), driver_id) };
    if ib.is_null() {
        return false;
    }
    // SAFETY: Gives back the reference just taken.
    unsafe { bindings::ib_device_put(ib) };
    true
}

/// A `get_device()` reference to a [`Device<T>`]: keeps the memory, not the
/// driver data, alive.
///
/// # Invariants
///
/// `ptr` is the `ib_device` of a [`Device<T>`] made by
/// [`Device::register`], on whose embedded `struct device` `self` holds a
/// `get_device` reference, given back only by its drop.  The memory stays
/// valid; `T` may already be dropped.
pub(crate) struct DeviceRef<T: Driver> {
    ptr: NonNull<bindings::ib_device>,
    _p: PhantomData<T>,
}

// SAFETY: Only ib_core's thread-safe entry points are used through it.
unsafe impl<T: Driver> Send for DeviceRef<T> {}
// SAFETY: `&DeviceRef` only compares the pointer or calls ib_core's
// thread-safe entry points (`get_device`, `ib_unregister_device`).
unsafe impl<T: Driver> Sync for DeviceRef<T> {}

impl<T: Driver> DeviceRef<T> {
    fn new(ib: NonNull<bindings::ib_device>) -> Self {
        // SAFETY: `ib` is a live device; `dev` is its embedded struct device.
        unsafe {
            bindings::get_device(core::ptr::addr_of_mut!((*ib.as_ptr()).__bindgen_anon_1.dev))
        };
        // INVARIANT: `ib` comes from `Device::register` (directly, or from
        // another `DeviceRef`), and the reference just taken is ours.
        Self {
            ptr: ib,
            _p: PhantomData,
        }
    }

    /// Unregisters the device and waits until it is fully gone (its
    /// `dealloc_driver` has run).  A no-op, after waiting, if it is already
    /// unregistered or being unregistered by another path.
    pub(crate) fn unregister(&self) {
        // SAFETY: The memory is kept valid by our reference (type
        // invariant); `ib_unregister_device` serialises with every other
        // unregistration on the device's `unregistration_lock`.
        unsafe { bindings::ib_unregister_device(self.ptr.as_ptr()) };
    }

    /// Whether both refer to the same device.
    pub(crate) fn ptr_eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }

    /// Whether this refers to `dev`.
    pub(crate) fn is(&self, dev: &Device<T>) -> bool {
        self.ptr.as_ptr() == dev.as_raw()
    }
}

impl<T: Driver> Clone for DeviceRef<T> {
    fn clone(&self) -> Self {
        // `self`'s reference keeps the device live for `new` (type
        // invariant).
        Self::new(self.ptr)
    }
}

impl<T: Driver> Drop for DeviceRef<T> {
    fn drop(&mut self) {
        // SAFETY: Gives back the reference taken in `new` (type
        // invariant); this may free the device, which nothing else here
        // touches afterwards.
        unsafe {
            bindings::put_device(core::ptr::addr_of_mut!(
                (*self.ptr.as_ptr()).__bindgen_anon_1.dev
            ))
        };
    }
}

/// A registered device held by an `ib_device` refcount (which blocks its
/// unregistration), so its driver data is alive.
///
/// # Invariants
///
/// `ptr` is a registered [`Device<T>`] on which `self` holds an
/// `ib_device` refcount (from `ib_device_get_by_netdev`), given back only
/// by its drop.  The refcount blocks unregistration, hence
/// `dealloc_driver`, so `data` is alive while `self` lives.
pub(crate) struct Registered<T: Driver> {
    ptr: NonNull<Device<T>>,
    _p: PhantomData<T>,
}

impl<T: Driver> Deref for Registered<T> {
    type Target = Device<T>;
    fn deref(&self) -> &Device<T> {
        // SAFETY: By the type invariant our refcount keeps the device
        // registered, hence `data` initialised.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: Driver> Registered<T> {
    /// Queues unregistration on ib_core's workqueue (callable from
    /// notifier context, where a synchronous unregister could deadlock).
    pub(crate) fn unregister_queued(&self) {
        // SAFETY: The device is registered (type invariant) and has
        // `dealloc_driver` set.
        unsafe { bindings::ib_unregister_device_queued(self.as_raw()) };
    }
}

impl<T: Driver> Drop for Registered<T> {
    fn drop(&mut self) {
        // SAFETY: Gives back the refcount taken by `get_by_netdev` (type
        // invariant), once.
        unsafe { bindings::ib_device_put(self.as_raw()) };
    }
}
