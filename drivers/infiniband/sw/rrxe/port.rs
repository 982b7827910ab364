// SPDX-License-Identifier: GPL-2.0

//! The RoCE port: its attributes are derived, at query time, from the state
//! of the bound network device (no cached copy to go stale): state from
//! running+carrier, physical state from the admin flag, active MTU from the
//! netdev MTU.

use crate::kapi::rdma::attr::{PhysState, PortCaps, PortImmutable, PortState};
use crate::kapi::rdma::caps::core_cap;
use crate::param;
use crate::proto::gid::{ib_mtu_for_netdev_mtu, IbMtu};

/// `IB_WIDTH_1X`
const WIDTH_1X: u8 = 1;
/// `IB_SPEED_SDR`
const SPEED_SDR: u16 = 1;

/// The net_device state a port is derived from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkState {
    pub(crate) admin_up: bool,
    pub(crate) running_with_carrier: bool,
    pub(crate) mtu: u32,
}

/// Port attributes for a link in `link` state.  Speed and width default to
/// SDR 1X; the caller may overwrite them with the Ethernet link speed.
pub(crate) fn port_caps(link: LinkState) -> PortCaps {
    let state = if link.running_with_carrier {
        PortState::Active
    } else {
        PortState::Down
    };
    let phys_state = match (state, link.admin_up) {
        (PortState::Active, _) => PhysState::LinkUp,
        (PortState::Down, true) => PhysState::Polling,
        (PortState::Down, false) => PhysState::Disabled,
    };
    PortCaps {
        state,
        phys_state,
        max_mtu: IbMtu::Mtu4096 as u32,
        active_mtu: ib_mtu_for_netdev_mtu(link.mtu) as u32,
        gid_tbl_len: param::gid_tbl_len() as i32,
        port_cap_flags: param::PORT_CAP_CM_SUP,
        max_msg_sz: param::MAX_MSG_SZ,
        bad_pkey_cntr: 0,
        qkey_viol_cntr: 0,
        pkey_tbl_len: param::PKEY_TBL_LEN,
        max_vl_num: 1,
        active_width: WIDTH_1X,
        active_speed: SPEED_SDR,
    }
}

/// The immutable port data ib_core records at registration.
pub(crate) fn port_immutable() -> PortImmutable {
    PortImmutable {
        pkey_tbl_len: i32::from(param::PKEY_TBL_LEN),
        gid_tbl_len: param::gid_tbl_len() as i32,
        core_cap_flags: core_cap::PORT_IBA_ROCE_UDP_ENCAP,
        max_mad_size: param::MAX_MAD_SIZE,
    }
}

#[kernel::macros::kunit_tests(rrxe_port)]
mod tests {
    use super::*;

    fn link(admin_up: bool, running_with_carrier: bool, mtu: u32) -> LinkState {
        LinkState {
            admin_up,
            running_with_carrier,
            mtu,
        }
    }

    #[test]
    fn active_when_running_with_carrier() {
        let p = port_caps(link(true, true, 1500));
        assert_eq!(p.state, PortState::Active);
        assert_eq!(p.phys_state, PhysState::LinkUp);
    }

    #[test]
    fn polling_when_up_without_carrier() {
        let p = port_caps(link(true, false, 1500));
        assert_eq!(p.state, PortState::Down);
        assert_eq!(p.phys_state, PhysState::Polling);
    }

    #[test]
    fn disabled_when_admin_down() {
        let p = port_caps(link(false, false, 1500));
        assert_eq!(p.state, PortState::Down);
        assert_eq!(p.phys_state, PhysState::Disabled);
    }

    #[test]
    fn active_mtu_follows_netdev_mtu() {
        assert_eq!(
            port_caps(link(true, true, 1500)).active_mtu,
            IbMtu::Mtu1024 as u32
        );
        assert_eq!(
            port_caps(link(true, true, 9000)).active_mtu,
            IbMtu::Mtu4096 as u32
        );
        assert_eq!(
            port_caps(link(true, true, 1280)).active_mtu,
            IbMtu::Mtu1024 as u32
        );
        assert_eq!(
            port_caps(link(true, true, 1000)).active_mtu,
            IbMtu::Mtu512 as u32
        );
        assert_eq!(
            port_caps(link(true, true, 4096)).max_mtu,
            IbMtu::Mtu4096 as u32
        );
    }

    #[test]
    fn immutable_is_roce_v2() {
        let imm = port_immutable();
        assert_eq!(imm.core_cap_flags, core_cap::PORT_IBA_ROCE_UDP_ENCAP);
        // 1024 (C rxe's) unless the module was loaded with gid_tbl_len.
        assert_eq!(imm.gid_tbl_len, param::gid_tbl_len() as i32);
        assert!((16..=1024).contains(&imm.gid_tbl_len));
        assert_eq!(imm.pkey_tbl_len, 1);
        assert_eq!(imm.max_mad_size, 256);
    }
}
