// SPDX-License-Identifier: GPL-2.0

//! The device's own verbs: `query_device` (the capabilities in
//! `param.rs`), `query_port` (derived from the netdev on every call, as
//! C rxe), `query_pkey`, the port's immutable data, user contexts and
//! protection domains (counted and bounded by the device), and the
//! performance-management MADs answered from the device's counters.

use kernel::prelude::*;

use crate::device::RrxeDev;
use crate::kapi::rdma::{
    attr::{DeviceCaps, PortCaps, PortImmutable},
    device::{Device, PORT},
    mad::MAD_SIZE,
    udata::UData,
};
use crate::proto::pma::{self, PortCounters};
use crate::stats::Counter;
use crate::{param, port, rrxe_ratelimited};

/// `query_device`: the device's capabilities.
pub(crate) fn query_device(dev: &Device<RrxeDev>, udata: Option<UData<'_>>) -> Result<DeviceCaps> {
    if let Some(mut u) = udata {
        u.require_empty_input()?;
        u.respond_empty()?;
    }
    Ok(param::device_caps(dev.guid()))
}

/// `query_port`: the port's state, MTU and speed, from its netdev.
pub(crate) fn query_port(dev: &Device<RrxeDev>, port_num: u32) -> Result<PortCaps> {
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

/// `query_pkey`: the one P_Key, the default.
pub(crate) fn query_pkey(dev: &Device<RrxeDev>, port_num: u32, index: u16) -> Result<u16> {
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

/// `get_port_immutable`: RoCEv2 on the one port.
pub(crate) fn port_immutable(port_num: u32) -> Result<PortImmutable> {
    if port_num != PORT {
        return Err(EINVAL);
    }
    Ok(port::port_immutable())
}

/// `alloc_ucontext`: librxe passes and expects nothing.
pub(crate) fn alloc_ucontext(dev: &Device<RrxeDev>, udata: Option<UData<'_>>) -> Result {
    if let Some(mut u) = udata {
        u.require_empty_input()?;
        u.respond_empty()?;
    }
    dev.take_ucontext()
}

/// `alloc_pd`: a PD is only counted (ib_core holds the object).
pub(crate) fn alloc_pd(dev: &Device<RrxeDev>, udata: Option<UData<'_>>) -> Result {
    if let Some(mut u) = udata {
        u.require_empty_input()?;
        u.respond_empty()?;
    }
    dev.take_pd()
}

/// `process_mad`: PMA queries, answered from the device's counters.
pub(crate) fn process_mad(
    dev: &Device<RrxeDev>,
    port: u32,
    input: &[u8; MAD_SIZE],
    out: &mut [u8; MAD_SIZE],
) -> u32 {
    let s = &dev.core().stats;
    let counters = PortCounters {
        link_downed: s.get(Counter::LinkDowned),
        xmit_bytes: s.get(Counter::SentBytes),
        rcv_bytes: s.get(Counter::RcvdBytes),
        xmit_packets: s.get(Counter::SentPkts),
        rcv_packets: s.get(Counter::RcvdPkts),
    };
    pma::process(input, port, &counters, out)
}

#[kernel::macros::kunit_tests(rrxe_device)]
mod tests {
    use crate::kapi::rdma::caps::{atomic_cap, device_cap, kernel_cap};
    use crate::{param, proto::gid};

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
