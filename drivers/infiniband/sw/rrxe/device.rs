// SPDX-License-Identifier: GPL-2.0

//! An rrxe device: its identity (GUIDs derived from the netdev's MAC at
//! creation), its resource accounting, and the verbs ib_core calls on it.

use crate::limit::Limit;
use kernel::prelude::*;

use crate::kapi::rdma::{
    attr::{DeviceCaps, PortCaps, PortImmutable},
    device::{driver_id, Device, Driver, DriverId, PORT},
    udata::UData,
};
use crate::mr::{RrxeMr, ON_DEMAND, UNSUPPORTED_ACCESS};
use crate::net::NetUse;
use crate::qp::DevCore;
use crate::stats::Counter;
use crate::{
    kapi::rdma::mr::{odp::OdpUmem, MrMemory},
    link, param, port,
    proto::gid,
    rrxe_ratelimited,
};
use kernel::sync::Arc;

/// The uverbs ABI of include/uapi/rdma/rdma_user_rxe.h that librxe speaks.
pub(crate) const RXE_UVERBS_ABI_VERSION: u32 = 2;
/// User contexts per device.
const MAX_UCONTEXT: u32 = 1 << 20;

/// Driver data of one rrxe device.
#[pin_data]
pub(crate) struct RrxeDev {
    /// Node, port and system image GUID: the EUI-64 of the MAC.
    guid: u64,
    /// Live protection domains.
    pds: Limit,
    /// Live user contexts.
    ucontexts: Limit,
    /// Live completion queues (each holds a charge).
    cqs: Arc<Limit>,
    /// The data path's tables and counters.
    core: Arc<DevCore>,
    /// The UDP sockets of the device's namespace, held while it exists.
    _net: Option<NetUse>,
}

impl RrxeDev {
    /// Counts `c` on the device.
    pub(crate) fn count(&self, c: Counter) {
        self.core.stats.inc(c);
    }

    /// Driver data for a device on a netdev whose MAC is `mac`.
    pub(crate) fn new(
        mac: [u8; 6],
        core: Arc<DevCore>,
        net: Option<NetUse>,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            guid: gid::guid_from_mac(mac),
            pds: Limit::new(param::MAX_PD as u32, "pd"),
            ucontexts: Limit::new(MAX_UCONTEXT, "ucontext"),
            cqs: Arc::new(Limit::new(param::MAX_CQ as u32, "cq"), GFP_KERNEL)?,
            core,
            _net: net,
        })
    }

    /// The data path's shared state.
    pub(crate) fn core(&self) -> &Arc<DevCore> {
        &self.core
    }
}

impl Driver for RrxeDev {
    const DRIVER_ID: DriverId = driver_id::RXE;
    const UVERBS_ABI_VERSION: u32 = RXE_UVERBS_ABI_VERSION;

    fn owner() -> &'static ThisModule {
        crate::module_ref()
    }

    fn query_device(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result<DeviceCaps> {
        if let Some(mut u) = udata {
            u.require_empty_input()?;
            u.respond_empty()?;
        }
        Ok(param::device_caps(dev.guid))
    }

    fn query_port(dev: &Device<Self>, port_num: u32) -> Result<PortCaps> {
        if port_num != PORT {
            rrxe_ratelimited!(
                pr_warn,
                "rrxe: {}: query_port: bad port {}\n",
                dev.name(),
                port_num
            );
            return Err(EINVAL);
        }
        let nd = dev.netdev(PORT).ok_or(ENODEV)?;
        let mut caps = port::port_caps(port::LinkState {
            admin_up: nd.is_admin_up(),
            running_with_carrier: nd.is_running_with_carrier(),
            mtu: nd.mtu(),
        });
        // Report the Ethernet link speed the way C rxe does; devices without
        // ethtool speed (veth may report none) keep SDR 1X.
        if let Ok((speed, width)) = dev.eth_speed(PORT) {
            caps.active_speed = speed;
            caps.active_width = width;
        }
        Ok(caps)
    }

    fn query_pkey(dev: &Device<Self>, port_num: u32, index: u16) -> Result<u16> {
        if port_num != PORT || index != 0 {
            rrxe_ratelimited!(
                pr_warn,
                "rrxe: {}: query_pkey: bad port {} index {}\n",
                dev.name(),
                port_num,
                index
            );
            return Err(EINVAL);
        }
        Ok(param::DEFAULT_PKEY)
    }

    fn port_immutable(_dev: &Device<Self>, port_num: u32) -> Result<PortImmutable> {
        if port_num != PORT {
            return Err(EINVAL);
        }
        Ok(port::port_immutable())
    }

    type Cq = crate::cq::RrxeCq;
    type Mr = RrxeMr;
    type Qp = crate::verbs::qp::RrxeQp;

    fn create_qp(
        dev: &Device<Self>,
        init: &mut crate::kapi::rdma::qp::QpInit,
        cqs: (&Self::Cq, &Self::Cq),
        srq: Option<&Self::Srq>,
        user: Option<crate::kapi::rdma::cq::UserCaller<'_>>,
        events: crate::kapi::rdma::event::QpEvents,
    ) -> Result<(Self::Qp, u32)> {
        crate::verbs::qp::create(&dev.core, init, cqs, srq, user, events)
    }

    fn post_send_doorbell(qp: &Self::Qp) -> Result {
        crate::verbs::qp::doorbell(qp)
    }

    fn post_send(qp: &Self::Qp, wr: &crate::kapi::rdma::wr::SendWr<'_, Self>) -> Result {
        crate::verbs::qp::post_send(qp, wr)
    }

    fn post_recv(qp: &Self::Qp, wr: &crate::kapi::rdma::wr::RecvWr<'_>) -> Result {
        crate::verbs::qp::post_recv(qp, wr)
    }

    fn post_srq_recv(srq: &Self::Srq, wr: &crate::kapi::rdma::wr::RecvWr<'_>) -> Result {
        crate::verbs::post::post_srq_recv(&srq.shared, wr)
    }

    fn kick(qp: &Self::Qp, send: bool) {
        crate::verbs::qp::kick(qp, send)
    }

    fn modify_qp(
        _dev: &Device<Self>,
        qp: &Self::Qp,
        attr: &crate::kapi::rdma::qp::QpAttr,
        mask: u32,
    ) -> Result {
        crate::verbs::qp::modify(qp, attr, mask)
    }

    fn query_qp(qp: &Self::Qp) -> (crate::kapi::rdma::qp::QpAttr, crate::kapi::rdma::qp::QpInit) {
        crate::verbs::qp::query(qp)
    }

    fn destroy_qp(_dev: &Device<Self>, qp: Self::Qp) {
        crate::verbs::qp::destroy(qp);
    }

    fn attach_mcast(_dev: &Device<Self>, qp: &Self::Qp, mgid: &[u8; 16]) -> Result {
        crate::verbs::qp::attach_mcast(qp, mgid)
    }

    fn detach_mcast(_dev: &Device<Self>, qp: &Self::Qp, mgid: &[u8; 16]) -> Result {
        crate::verbs::qp::detach_mcast(qp, mgid)
    }

    fn reg_user_mr(
        dev: &Device<Self>,
        pd: crate::kapi::rdma::mr::PdId,
        start: u64,
        length: u64,
        iova: u64,
        access: u32,
        udata: Option<UData<'_>>,
    ) -> Result<(Self::Mr, u32)> {
        if access & UNSUPPORTED_ACCESS != 0 {
            rrxe_ratelimited!(
                pr_warn,
                "rrxe: {}: reg_mr: access {:#x} not supported\n",
                dev.name(),
                access
            );
            return Err(crate::kapi::eopnotsupp());
        }
        if let Some(mut u) = udata {
            u.require_empty_input()?;
        }
        let mr = if access & ON_DEMAND != 0 {
            let odp = OdpUmem::new(dev, start, length, access)?;
            dev.core
                .mrs
                .register_on_demand(odp, pd, iova, length, access)?
        } else {
            let mem = MrMemory::pin(dev, start, length, access)?;
            dev.core.mrs.register(mem, pd, iova, length, access)?
        };
        let key = mr.state_key();
        Ok((mr, key))
    }

    const MAX_FAST_REG_PAGES: u32 = crate::param::MAX_FAST_REG_PAGES;

    fn alloc_fast_mr(
        dev: &Device<Self>,
        pd: crate::kapi::rdma::mr::PdId,
        pages: kernel::sync::Arc<crate::kapi::rdma::fast_reg::FastPages>,
    ) -> Result<(Self::Mr, u32)> {
        let mr = dev.core.mrs.alloc_fast(pd, pages)?;
        let key = mr.state_key();
        Ok((mr, key))
    }

    fn get_dma_mr(
        dev: &Device<Self>,
        pd: crate::kapi::rdma::mr::PdId,
        access: u32,
    ) -> Result<(Self::Mr, u32)> {
        if access & !crate::mr::LOCAL_WRITE != 0 {
            rrxe_ratelimited!(
                pr_warn,
                "rrxe: {}: get_dma_mr: access {:#x}: only local access to kernel memory\n",
                dev.name(),
                access
            );
            return Err(crate::kapi::eopnotsupp());
        }
        let mem = MrMemory::kernel_direct();
        let mr = dev.core.mrs.register(mem, pd, 0, u64::MAX, access)?;
        let key = mr.state_key();
        Ok((mr, key))
    }

    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result {
        dev.core.mrs.deregister(mr)
    }

    fn advise_mr(
        dev: &Device<Self>,
        pd: crate::kapi::rdma::mr::PdId,
        how: crate::kapi::rdma::mr::odp::Prefetch,
        flush: bool,
        sges: &[crate::proto::wqe::Sge],
    ) -> Result {
        crate::verbs::advise::advise(&dev.core.mrs, pd, how, flush, sges)
    }

    type Mw = crate::mw::RrxeMw;

    fn alloc_mw(
        dev: &Device<Self>,
        pd: crate::kapi::rdma::mr::PdId,
        kind: crate::kapi::rdma::mw::MwType,
        udata: Option<UData<'_>>,
    ) -> Result<(Self::Mw, u32)> {
        if let Some(mut u) = udata {
            u.require_empty_input()?;
        }
        dev.core.mws.allocate(pd, kind)
    }

    fn dealloc_mw(dev: &Device<Self>, mw: Self::Mw) {
        dev.core.mws.deallocate(mw);
    }

    type Srq = crate::srq::RrxeSrq;

    fn create_srq(
        dev: &Device<Self>,
        pd: crate::kapi::rdma::mr::PdId,
        attr: &mut crate::kapi::rdma::srq::SrqAttr,
        user: Option<crate::kapi::rdma::cq::UserCaller<'_>>,
        events: crate::kapi::rdma::srq::SrqEvents,
    ) -> Result<Self::Srq> {
        crate::srq::create(&dev.core.srqs, pd, attr, user, events)
    }

    fn modify_srq(
        _dev: &Device<Self>,
        srq: &Self::Srq,
        attr: &crate::kapi::rdma::srq::SrqAttr,
        mask: u32,
        user: Option<crate::kapi::rdma::cq::UserCaller<'_>>,
    ) -> Result {
        srq.modify(attr, mask, user)
    }

    fn query_srq(srq: &Self::Srq) -> crate::kapi::rdma::srq::SrqAttr {
        srq.query()
    }

    fn destroy_srq(dev: &Device<Self>, srq: Self::Srq) {
        srq.destroy(&dev.core.srqs);
    }

    type Ah = crate::ah::RrxeAh;

    fn create_ah(
        dev: &Device<Self>,
        pd: crate::kapi::rdma::mr::PdId,
        av: &crate::kapi::rdma::qp::QpPath,
        udata: Option<UData<'_>>,
        sleepable: bool,
    ) -> Result<Self::Ah> {
        crate::ah::create(&dev.core.ahs, pd, av, udata, sleepable)
    }

    fn query_ah(ah: &Self::Ah) -> crate::kapi::rdma::qp::QpPath {
        ah.av()
    }

    fn destroy_ah(dev: &Device<Self>, ah: Self::Ah) {
        ah.destroy(&dev.core.ahs);
    }

    fn resize_cq(
        cq: &Self::Cq,
        cqe: u32,
        user: Option<crate::kapi::rdma::cq::UserCaller<'_>>,
    ) -> Result<u32> {
        crate::cq::resize(cq, cqe, user)
    }

    fn create_cq(
        dev: &Device<Self>,
        attr: crate::kapi::rdma::cq::CqAttr,
        user: Option<crate::kapi::rdma::cq::UserCaller<'_>>,
        events: crate::kapi::rdma::cq::CqEvents,
    ) -> Result<(Self::Cq, u32)> {
        crate::cq::create(attr, user, events, dev.cqs.charge()?)
    }

    fn poll_cq(
        cq: &Self::Cq,
        max: usize,
        f: &mut dyn FnMut(&crate::kapi::rdma::cq::KernelWc),
    ) -> Result {
        crate::cq::poll(cq, max, f)
    }

    fn req_notify_cq(cq: &Self::Cq, flags: u32) -> Result<bool> {
        crate::cq::req_notify(cq, flags)
    }

    fn alloc_ucontext(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result {
        if let Some(mut u) = udata {
            u.require_empty_input()?;
            u.respond_empty()?;
        }
        dev.ucontexts.take()
    }

    fn dealloc_ucontext(dev: &Device<Self>) {
        let _ = dev.ucontexts.give();
    }

    fn alloc_pd(dev: &Device<Self>, udata: Option<UData<'_>>) -> Result {
        if let Some(mut u) = udata {
            u.require_empty_input()?;
            u.respond_empty()?;
        }
        dev.pds.take()
    }

    fn dealloc_pd(dev: &Device<Self>) -> Result {
        dev.pds.give()
    }

    fn hw_stat_descs() -> &'static [crate::kapi::rdma::stats::StatDesc] {
        &crate::stats::DESCS
    }

    fn hw_stats(dev: &Device<Self>, values: &mut [u64]) {
        dev.core.stats.read(values);
    }

    fn process_mad(
        dev: &Device<Self>,
        port: u32,
        input: &[u8; crate::kapi::rdma::mad::MAD_SIZE],
        out: &mut [u8; crate::kapi::rdma::mad::MAD_SIZE],
    ) -> u32 {
        let s = &dev.core.stats;
        let counters = crate::proto::pma::PortCounters {
            link_downed: s.get(Counter::LinkDowned),
            xmit_bytes: s.get(Counter::SentBytes),
            rcv_bytes: s.get(Counter::RcvdBytes),
            xmit_packets: s.get(Counter::SentPkts),
            rcv_packets: s.get(Counter::RcvdPkts),
        };
        crate::proto::pma::process(input, port, &counters, out)
    }

    fn release(dev: &Device<Self>) {
        link::forget(dev);
    }
}

#[kernel::macros::kunit_tests(rrxe_device)]
mod tests {
    use super::*;
    use crate::kapi::rdma::caps::{atomic_cap, device_cap, kernel_cap};

    #[test]
    fn guid_is_eui64_of_mac() {
        assert_eq!(
            gid::guid_from_mac([0x52, 0x54, 0x00, 0xab, 0xcd, 0xef]),
            0x505400fffeabcdef
        );
    }

    #[test]
    fn caps_claim_no_unimplemented_features() {
        let caps = param::device_caps(1);
        assert_eq!(caps.atomic_cap, atomic_cap::HCA);
        // Fast registration is claimed with its page-list limit; persistent
        // FLUSH (no persistent memory handling) is not; ODP as C rxe (RC
        // 0xff, UD SEND/RECV/SRQ, no implicit regions).
        assert_ne!(caps.device_cap_flags & device_cap::MEM_MGT_EXTENSIONS, 0);
        assert_eq!(caps.max_fast_reg_page_list_len, param::MAX_FAST_REG_PAGES);
        assert_eq!(caps.device_cap_flags & device_cap::FLUSH_PERSISTENT, 0);
        assert_ne!(caps.kernel_cap_flags & kernel_cap::ALLOW_USER_UNREG, 0);
        assert_eq!(caps.vendor_id, 0xffffff);
        assert_ne!(caps.kernel_cap_flags & kernel_cap::ON_DEMAND_PAGING, 0);
        assert_eq!(caps.odp_general_caps, 1);
        assert_eq!(
            (
                caps.odp_rc_caps,
                caps.odp_uc_caps,
                caps.odp_ud_caps,
                caps.odp_xrc_caps
            ),
            (0xff, 0, 0x23, 0)
        );
    }
}
