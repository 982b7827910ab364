// SPDX-License-Identifier: GPL-2.0

//! The verbs: what ib_core calls on an rrxe device, as C rxe's
//! `rxe_verbs.c`.  `impl Driver` below only dispatches; each verb lives
//! in `verbs/` beside its object's file: the device's own verbs (queries,
//! user contexts, PDs, counters, MADs) in `verbs/device.rs`, the QP verbs
//! in `verbs/qp.rs` and posting in `verbs/post.rs`, CQs in `verbs/cq.rs`,
//! SRQs in `verbs/srq.rs`, AHs in `verbs/ah.rs`, memory regions in
//! `verbs/mr.rs` (prefetch in `verbs/advise.rs`), memory windows in
//! `verbs/mw.rs`.  A verb checks what the caller passed and speaks the
//! uABI (`udata`, librxe's structs); the object's file (`cq.rs`, `srq.rs`,
//! ...) keeps the object's state, under its locks, as C rxe's
//! `rxe_<object>.c`.  Verbs that only read or drop an object (`query_ah`,
//! `poll_cq`, `destroy_srq`) call it directly.
//!
//! This is the top layer: ib_core enters here, and nothing below names it.

pub(crate) mod advise;
pub(crate) mod ah;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod mr;
pub(crate) mod mw;
pub(crate) mod post;
pub(crate) mod qp;
pub(crate) mod srq;

use kernel::prelude::*;

use crate::ah::RrxeAh;
use crate::cq::RrxeCq;
use crate::device::RrxeDev;
use crate::kapi::rdma::{
    attr::{DeviceCaps, PortCaps, PortImmutable},
    cq::{CqAttr, CqEvents, KernelWc, UserCaller},
    device::{driver_id, Device, Driver, DriverId},
    event::QpEvents,
    fast_reg::FastPages,
    mad::MAD_SIZE,
    mr::{odp::Prefetch, PdId},
    mw::MwType,
    qp::{QpAttr, QpInit, QpPath},
    srq::{SrqAttr, SrqEvents},
    stats::StatDesc,
    udata::UData,
    wr::{RecvWr, SendWr, Sge},
};
use crate::mr::RrxeMr;
use crate::mw::RrxeMw;
use crate::srq::RrxeSrq;
use qp::RrxeQp;

/// The uverbs ABI of include/uapi/rdma/rdma_user_rxe.h that librxe speaks.
const RXE_UVERBS_ABI_VERSION: u32 = 2;

#[vtable]
impl Driver for RrxeDev {
    const DRIVER_ID: DriverId = driver_id::RXE;
    const UVERBS_ABI_VERSION: u32 = RXE_UVERBS_ABI_VERSION;
    const MAX_FAST_REG_PAGES: u32 = crate::param::MAX_FAST_REG_PAGES;

    type Ah = RrxeAh;
    type Cq = RrxeCq;
    type Mr = RrxeMr;
    type Mw = RrxeMw;
    type Qp = RrxeQp;
    type Srq = RrxeSrq;

    fn owner() -> &'static ThisModule {
        &crate::THIS_MODULE
    }

    fn query_device(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result<DeviceCaps> {
        device::query_device(dev, udata)
    }

    fn query_port(dev: &Device<Self>, port_num: u32) -> Result<PortCaps> {
        device::query_port(dev, port_num)
    }

    fn query_pkey(dev: &Device<Self>, port_num: u32, index: u16) -> Result<u16> {
        device::query_pkey(dev, port_num, index)
    }

    fn port_immutable(_dev: &Device<Self>, port_num: u32) -> Result<PortImmutable> {
        device::port_immutable(port_num)
    }

    fn alloc_ucontext(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result {
        device::alloc_ucontext(dev, udata)
    }

    fn dealloc_ucontext(dev: &Device<Self>) {
        dev.give_ucontext();
    }

    fn alloc_pd(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result {
        device::alloc_pd(dev, udata)
    }

    fn dealloc_pd(dev: &Device<Self>) -> Result {
        dev.give_pd()
    }

    fn hw_stat_descs() -> &'static [StatDesc] {
        &crate::stats::DESCS
    }

    fn hw_stats(dev: &Device<Self>, values: &mut [u64]) {
        dev.core().stats.read(values);
    }

    fn process_mad(
        dev: &Device<Self>,
        port: u32,
        input: &[u8; MAD_SIZE],
        out: &mut [u8; MAD_SIZE],
    ) -> u32 {
        device::process_mad(dev, port, input, out)
    }

    fn release(dev: &Device<Self>) {
        crate::link::forget(dev);
    }

    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit,
        cqs: (&Self::Cq, &Self::Cq),
        srq: Option<&Self::Srq>,
        user: Option<UserCaller<'_>>,
        events: QpEvents,
    ) -> Result<(Self::Qp, u32)> {
        qp::create(dev.core(), init, cqs, srq, user, events)
    }

    fn modify_qp(_dev: &Device<Self>, qp: &Self::Qp, attr: &QpAttr, mask: u32) -> Result {
        qp::modify(qp, attr, mask)
    }

    fn query_qp(qp: &Self::Qp) -> (QpAttr, QpInit) {
        qp::query(qp)
    }

    fn destroy_qp(_dev: &Device<Self>, qp: Self::Qp) {
        qp::destroy(qp);
    }

    fn attach_mcast(_dev: &Device<Self>, qp: &Self::Qp, mgid: &[u8; 16]) -> Result {
        qp::attach_mcast(qp, mgid)
    }

    fn detach_mcast(_dev: &Device<Self>, qp: &Self::Qp, mgid: &[u8; 16]) -> Result {
        qp::detach_mcast(qp, mgid)
    }

    fn post_send_doorbell(qp: &Self::Qp) -> Result {
        qp::doorbell(qp)
    }

    fn post_send(qp: &Self::Qp, wr: &SendWr<'_, Self>) -> Result {
        qp::post_send(qp, wr)
    }

    fn post_recv(qp: &Self::Qp, wr: &RecvWr<'_>) -> Result {
        qp::post_recv(qp, wr)
    }

    fn post_srq_recv(srq: &Self::Srq, wr: &RecvWr<'_>) -> Result {
        post::post_srq_recv(&srq.shared, wr)
    }

    fn kick(qp: &Self::Qp, send: bool) {
        qp::kick(qp, send)
    }

    fn reg_user_mr(
        dev: &Device<Self>,
        pd: PdId,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
        udata: Option<UData<'_>>,
    ) -> Result<(Self::Mr, u32)> {
        mr::reg_user(dev, pd, (start, length, iova), access, udata)
    }

    fn alloc_fast_mr(
        dev: &Device<Self>,
        pd: PdId,
        pages: kernel::sync::Arc<FastPages>,
    ) -> Result<(Self::Mr, u32)> {
        mr::alloc_fast(dev, pd, pages)
    }

    fn get_dma_mr(dev: &Device<Self>, pd: PdId, access: u32) -> Result<(Self::Mr, u32)> {
        mr::get_dma(dev, pd, access)
    }

    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result {
        dev.core().mrs.deregister(mr)
    }

    fn advise_mr(dev: &Device<Self>, pd: PdId, how: Prefetch, flush: bool, sges: &[Sge]) -> Result {
        advise::advise(&dev.core().mrs, pd, how, flush, sges)
    }

    fn alloc_mw(
        dev: &Device<Self>,
        pd: PdId,
        kind: MwType,
        udata: Option<UData<'_>>,
    ) -> Result<(Self::Mw, u32)> {
        mw::alloc(dev, pd, kind, udata)
    }

    fn dealloc_mw(dev: &Device<Self>, mw: Self::Mw) {
        dev.core().mws.deallocate(mw);
    }

    fn create_srq(
        dev: &Device<Self>,
        pd: PdId,
        attr: &mut SrqAttr,
        user: Option<UserCaller<'_>>,
        events: SrqEvents,
    ) -> Result<Self::Srq> {
        srq::create(&dev.core().srqs, pd, attr, user, events)
    }

    fn modify_srq(
        _dev: &Device<Self>,
        srq: &Self::Srq,
        attr: &SrqAttr,
        mask: u32,
        user: Option<UserCaller<'_>>,
    ) -> Result {
        srq::modify(srq, attr, mask, user)
    }

    fn query_srq(srq: &Self::Srq) -> SrqAttr {
        srq.query()
    }

    fn destroy_srq(dev: &Device<Self>, srq: Self::Srq) {
        srq.destroy(&dev.core().srqs);
    }

    fn create_ah(
        dev: &Device<Self>,
        pd: PdId,
        av: &QpPath,
        udata: Option<UData<'_>>,
        sleepable: bool,
    ) -> Result<Self::Ah> {
        ah::create(dev, pd, av, udata, sleepable)
    }

    fn query_ah(ah: &Self::Ah) -> QpPath {
        ah.av()
    }

    fn destroy_ah(dev: &Device<Self>, ah: Self::Ah) {
        ah.destroy(&dev.core().ahs);
    }

    fn create_cq(
        dev: &Device<Self>,
        attr: CqAttr,
        user: Option<UserCaller<'_>>,
        events: CqEvents,
    ) -> Result<(Self::Cq, u32)> {
        cq::create(attr, user, events, dev.charge_cq()?)
    }

    fn resize_cq(cq: &Self::Cq, cqe: u32, user: Option<UserCaller<'_>>) -> Result<u32> {
        cq::resize(cq, cqe, user)
    }

    fn poll_cq(cq: &Self::Cq, max: usize, f: &mut dyn FnMut(&KernelWc)) -> Result {
        cq.poll(max, f)
    }

    fn req_notify_cq(cq: &Self::Cq, flags: u32) -> Result<bool> {
        cq::req_notify(cq, flags)
    }
}
