// SPDX-License-Identifier: GPL-2.0

//! The `struct ib_device_ops` of a [`Driver`], a constant: one C
//! trampoline per verb (an optional verb's only if the driver implements
//! it), each recovering `&Device<T>` from the object ib_core passes and
//! converting `Result` to an errno.

use core::{marker::PhantomData, mem::size_of};
use kernel::{bindings, error::from_result, ffi::c_int};

use super::device::{Device, Driver};
use super::udata::UData;

/// The ops table of driver `T`.
pub(super) struct Vtable<T>(PhantomData<T>);

impl<T: Driver> Vtable<T> {
    /// Every trampoline of `T`'s verbs, an optional verb's only if `T`
    /// implements it (`HAS_*`); the object sizes ib_core allocates with.
    /// `owner` is set by [`Self::ops`] (a module reference is not a
    /// constant).
    const OPS: bindings::ib_device_ops = {
        // SAFETY: `ib_device_ops` is a C struct of nullable pointers and
        // integers, for which all-zeroes is the valid "nothing set" value.
        let mut ops: bindings::ib_device_ops = unsafe { core::mem::zeroed() };
        ops.driver_id = T::DRIVER_ID;
        ops.uverbs_abi_ver = T::UVERBS_ABI_VERSION;
        ops.dealloc_driver = Some(dealloc_driver::<T>);
        ops.query_device = Some(query_device::<T>);
        ops.query_port = Some(query_port::<T>);
        ops.query_pkey = Some(query_pkey::<T>);
        ops.get_port_immutable = Some(get_port_immutable::<T>);
        ops.get_link_layer = Some(get_link_layer);
        ops.alloc_ucontext = Some(alloc_ucontext::<T>);
        ops.dealloc_ucontext = Some(dealloc_ucontext::<T>);
        ops.alloc_pd = Some(alloc_pd::<T>);
        ops.dealloc_pd = Some(dealloc_pd::<T>);
        ops.create_qp = Some(super::qp::create_qp::<T>);
        ops.modify_qp = Some(super::qp::modify_qp::<T>);
        ops.query_qp = Some(super::qp::query_qp::<T>);
        ops.destroy_qp = Some(super::qp::destroy_qp::<T>);
        ops.post_send = Some(super::qp::post_send::<T>);
        ops.post_recv = Some(super::qp::post_recv::<T>);
        ops.create_cq = Some(super::cq::create_cq::<T>);
        ops.destroy_cq = Some(super::cq::destroy_cq::<T>);
        ops.poll_cq = Some(super::cq::poll_cq::<T>);
        ops.req_notify_cq = Some(super::cq::req_notify_cq::<T>);
        ops.resize_user_cq = Some(super::cq::resize_user_cq::<T>);
        ops.disassociate_ucontext = Some(disassociate_ucontext);
        ops.mmap = Some(super::umap::mmap);
        ops.mmap_free = Some(super::umap::mmap_free);
        ops.get_dma_mr = Some(super::mr::get_dma_mr::<T>);
        if T::HAS_HW_STAT_DESCS && T::HAS_HW_STATS {
            ops.alloc_hw_port_stats = Some(super::stats::alloc_hw_port_stats::<T>);
            ops.get_hw_stats = Some(super::stats::get_hw_stats::<T>);
        }
        if T::HAS_PROCESS_MAD {
            ops.process_mad = Some(super::mad::process_mad::<T>);
        }
        ops.reg_user_mr = Some(super::mr::reg_user_mr::<T>);
        ops.dereg_mr = Some(super::mr::dereg_mr::<T>);
        if T::HAS_ADVISE_MR {
            ops.advise_mr = Some(super::mr::advise_mr::<T>);
        }
        ops.alloc_mr = Some(super::mr::alloc_mr::<T>);
        ops.map_mr_sg = Some(super::fast_reg::map_mr_sg::<T>);
        ops.alloc_mw = Some(super::mw::alloc_mw::<T>);
        ops.dealloc_mw = Some(super::mw::dealloc_mw::<T>);
        if T::HAS_ATTACH_MCAST && T::HAS_DETACH_MCAST {
            ops.attach_mcast = Some(super::qp::attach_mcast::<T>);
            ops.detach_mcast = Some(super::qp::detach_mcast::<T>);
        }
        ops.create_srq = Some(super::srq::create_srq::<T>);
        ops.modify_srq = Some(super::srq::modify_srq::<T>);
        ops.query_srq = Some(super::srq::query_srq::<T>);
        ops.destroy_srq = Some(super::srq::destroy_srq::<T>);
        ops.post_srq_recv = Some(super::srq::post_srq_recv::<T>);
        ops.create_ah = Some(super::ah::create_ah::<T>);
        ops.create_user_ah = Some(super::ah::create_ah::<T>);
        ops.query_ah = Some(super::ah::query_ah::<T>);
        ops.destroy_ah = Some(super::ah::destroy_ah::<T>);
        // ib_core allocates these objects itself, with the driver's size;
        // CQs carry the driver's `Cq` after the C struct.
        ops.size_ib_ucontext = size_of::<super::umap::ContextObj>();
        ops.size_ib_pd = size_of::<bindings::ib_pd>();
        ops.size_ib_qp = size_of::<super::qp::QpObj<T>>();
        ops.size_ib_cq = size_of::<super::cq::CqObj<T>>();
        ops.size_ib_mw = size_of::<super::mw::MwObj<T>>();
        ops.size_ib_ah = size_of::<super::ah::AhObj<T>>();
        ops.size_ib_srq = size_of::<super::srq::SrqObj<T>>();
        ops
    };

    /// The ops table for a device of `T`; ib_core copies it
    /// (`ib_set_device_ops`).
    pub(super) fn ops() -> bindings::ib_device_ops {
        let mut ops = Self::OPS;
        ops.owner = T::owner().as_ptr();
        ops
    }
}

/// `dealloc_driver`: the end of `T`'s life (see the device module docs).
///
/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn dealloc_driver<T: Driver>(ib: *mut bindings::ib_device) {
    // `T` was initialised before the ops (and so this callback) were
    // installed, and `drop_data` below has not run yet.
    // SAFETY: ib_core calls this on a device made by `Device::register`
    // (whose ops these are), once, before freeing the memory.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    T::release(dev);
    // SAFETY: This is `dealloc_driver`, called once per device after the
    // last verb callback returned, so `data` is initialised and, with
    // `release` done, never used again.
    unsafe { Device::<T>::drop_data(ib) };
}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn query_device<T: Driver>(
    ib: *mut bindings::ib_device,
    attr: *mut bindings::ib_device_attr,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a live device of ours for the call.
        let dev = unsafe { Device::<T>::from_raw(ib) };
        // SAFETY: ib_core passes a null udata or one valid and not otherwise
        // accessed for the call.
        let udata = unsafe { UData::from_raw(udata) };
        let caps = T::query_device(dev, udata)?;
        // SAFETY: ib_core passes `attr` writable for the call.
        unsafe { caps.write_to(attr) };
        Ok(0)
    })
}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn query_port<T: Driver>(
    ib: *mut bindings::ib_device,
    port: u32,
    attr: *mut bindings::ib_port_attr,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a live device of ours for the call.
        let dev = unsafe { Device::<T>::from_raw(ib) };
        let caps = T::query_port(dev, port)?;
        // SAFETY: ib_core passes `attr` writable for the call.
        unsafe { caps.write_to(attr) };
        Ok(0)
    })
}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn query_pkey<T: Driver>(
    ib: *mut bindings::ib_device,
    port: u32,
    index: u16,
    pkey: *mut u16,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a live device of ours for the call.
        let dev = unsafe { Device::<T>::from_raw(ib) };
        let value = T::query_pkey(dev, port, index)?;
        // SAFETY: ib_core passes `pkey` writable for the call.
        unsafe { pkey.write(value) };
        Ok(0)
    })
}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn get_port_immutable<T: Driver>(
    ib: *mut bindings::ib_device,
    port: u32,
    imm: *mut bindings::ib_port_immutable,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a live device of ours for the call.
        let dev = unsafe { Device::<T>::from_raw(ib) };
        let immutable = T::port_immutable(dev, port)?;
        // SAFETY: ib_core passes `imm` writable for the call.
        unsafe { immutable.write_to(imm) };
        Ok(0)
    })
}

/// RoCE: every port is Ethernet.
///
/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn get_link_layer(
    _ib: *mut bindings::ib_device,
    _port: u32,
) -> bindings::rdma_link_layer {
    bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET
}

/// `disassociate_ucontext`: the device is going away while a process still
/// has it open.  Providing it lets ib_core remove the device at once instead
/// of waiting for every process to close it: ib_core destroys the context's
/// objects through the regular destroy verbs, zaps the process's mappings of
/// the rings (tracked by `rdma_user_mmap_vmalloc`, see `umap`), and fails
/// its later verbs with `EIO`.  Nothing is left for the driver to do here.
///
/// # Safety
///
/// Only called by ib_core, through the ops table.
unsafe extern "C" fn disassociate_ucontext(_uctx: *mut bindings::ib_ucontext) {}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn alloc_ucontext<T: Driver>(
    uctx: *mut bindings::ib_ucontext,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a context whose `device` is ours and live
        // for the call.
        let dev = unsafe { Device::<T>::from_raw((*uctx).device) };
        // SAFETY: ib_core passes a null udata or one valid and not otherwise
        // accessed for the call.
        let udata = unsafe { UData::from_raw(udata) };
        T::alloc_ucontext(dev, udata)?;
        Ok(0)
    })
}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn dealloc_ucontext<T: Driver>(uctx: *mut bindings::ib_ucontext) {
    // SAFETY: ib_core passes a context whose `device` is ours and live for
    // the call.
    let dev = unsafe { Device::<T>::from_raw((*uctx).device) };
    T::dealloc_ucontext(dev);
}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn alloc_pd<T: Driver>(
    pd: *mut bindings::ib_pd,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a PD whose `device` is ours and live for
        // the call.
        let dev = unsafe { Device::<T>::from_raw((*pd).device) };
        // SAFETY: ib_core passes a null udata or one valid and not otherwise
        // accessed for the call.
        let udata = unsafe { UData::from_raw(udata) };
        T::alloc_pd(dev, udata)?;
        Ok(0)
    })
}

/// # Safety
///
/// Only called by ib_core, through the ops table, with the arguments its
/// `struct ib_device_ops` documents as valid for the call.
unsafe extern "C" fn dealloc_pd<T: Driver>(
    pd: *mut bindings::ib_pd,
    _udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a PD whose `device` is ours and live for
        // the call.
        let dev = unsafe { Device::<T>::from_raw((*pd).device) };
        T::dealloc_pd(dev)?;
        Ok(0)
    })
}
