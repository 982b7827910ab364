// SPDX-License-Identifier: GPL-2.0

//! The attribute structures the query verbs fill (`ib_device_attr`,
//! `ib_port_attr`, `ib_port_immutable`), as plain Rust values.  Drivers
//! build a value in safe code; the abstraction writes it into the C struct
//! ib_core hands in, so field-by-field `unsafe` stays here.

use kernel::bindings;

/// Port state (`enum ib_port_state`); RoCE ports are only DOWN or ACTIVE.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PortState {
    /// `IB_PORT_DOWN`
    Down,
    /// `IB_PORT_ACTIVE`
    Active,
}

/// Physical port state (`enum ib_port_phys_state`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PhysState {
    /// `IB_PORT_PHYS_STATE_POLLING`: admin up, no carrier.
    Polling,
    /// `IB_PORT_PHYS_STATE_DISABLED`: admin down.
    Disabled,
    /// `IB_PORT_PHYS_STATE_LINK_UP`
    LinkUp,
}

/// Device capabilities reported by `query_device` (`struct ib_device_attr`).
/// Counts are `i32` like the C fields; fields not listed are reported as 0.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceCaps {
    pub(crate) fw_ver: u64,
    /// Big-endian on the wire and in the C struct; given here in host order.
    pub(crate) sys_image_guid: u64,
    pub(crate) max_mr_size: u64,
    pub(crate) page_size_cap: u64,
    pub(crate) vendor_id: u32,
    pub(crate) vendor_part_id: u32,
    pub(crate) hw_ver: u32,
    pub(crate) max_qp: i32,
    pub(crate) max_qp_wr: i32,
    /// `IB_DEVICE_*` bits ([`device_cap`](super::caps::device_cap)).
    pub(crate) device_cap_flags: u64,
    /// `IBK_*` bits ([`kernel_cap`](super::caps::kernel_cap)).
    pub(crate) kernel_cap_flags: u64,
    pub(crate) max_send_sge: i32,
    pub(crate) max_recv_sge: i32,
    pub(crate) max_sge_rd: i32,
    pub(crate) max_cq: i32,
    pub(crate) max_cqe: i32,
    pub(crate) max_mr: i32,
    pub(crate) max_pd: i32,
    pub(crate) max_qp_rd_atom: i32,
    pub(crate) max_res_rd_atom: i32,
    pub(crate) max_qp_init_rd_atom: i32,
    /// `enum ib_atomic_cap` value ([`atomic_cap`](super::caps::atomic_cap)).
    pub(crate) atomic_cap: u32,
    pub(crate) max_mw: i32,
    pub(crate) max_mcast_grp: i32,
    pub(crate) max_mcast_qp_attach: i32,
    pub(crate) max_total_mcast_qp_attach: i32,
    pub(crate) max_ah: i32,
    pub(crate) max_srq: i32,
    pub(crate) max_srq_wr: i32,
    pub(crate) max_srq_sge: i32,
    pub(crate) max_fast_reg_page_list_len: u32,
    pub(crate) max_pkeys: u16,
    pub(crate) local_ca_ack_delay: u8,
    /// On-demand paging: `IB_ODP_SUPPORT*` general bits
    /// ([`odp_general_cap`](super::caps::odp_general_cap)).
    pub(crate) odp_general_caps: u64,
    /// On-demand paging per transport (`IB_ODP_SUPPORT_*` operation bits,
    /// [`odp_transport_cap`](super::caps::odp_transport_cap)).
    pub(crate) odp_rc_caps: u32,
    pub(crate) odp_uc_caps: u32,
    pub(crate) odp_ud_caps: u32,
    pub(crate) odp_xrc_caps: u32,
}

impl DeviceCaps {
    /// Writes `self` over `attr`, zeroing every field not represented here.
    ///
    /// # Safety
    ///
    /// `attr` must be valid for writes of a whole `ib_device_attr`.
    pub(crate) unsafe fn write_to(&self, attr: *mut bindings::ib_device_attr) {
        // SAFETY: `ib_device_attr` is plain old data for which all-zeroes is
        // valid; the caller guarantees `attr` is writable.
        let mut a: bindings::ib_device_attr = unsafe { core::mem::zeroed() };
        a.fw_ver = self.fw_ver;
        a.sys_image_guid = self.sys_image_guid.to_be();
        a.max_mr_size = self.max_mr_size;
        a.page_size_cap = self.page_size_cap;
        a.vendor_id = self.vendor_id;
        a.vendor_part_id = self.vendor_part_id;
        a.hw_ver = self.hw_ver;
        a.max_qp = self.max_qp;
        a.max_qp_wr = self.max_qp_wr;
        a.device_cap_flags = self.device_cap_flags;
        a.kernel_cap_flags = self.kernel_cap_flags;
        a.max_send_sge = self.max_send_sge;
        a.max_recv_sge = self.max_recv_sge;
        a.max_sge_rd = self.max_sge_rd;
        a.max_cq = self.max_cq;
        a.max_cqe = self.max_cqe;
        a.max_mr = self.max_mr;
        a.max_pd = self.max_pd;
        a.max_qp_rd_atom = self.max_qp_rd_atom;
        a.max_res_rd_atom = self.max_res_rd_atom;
        a.max_qp_init_rd_atom = self.max_qp_init_rd_atom;
        a.atomic_cap = self.atomic_cap;
        a.max_mw = self.max_mw;
        a.max_mcast_grp = self.max_mcast_grp;
        a.max_mcast_qp_attach = self.max_mcast_qp_attach;
        a.max_total_mcast_qp_attach = self.max_total_mcast_qp_attach;
        a.max_ah = self.max_ah;
        a.max_srq = self.max_srq;
        a.max_srq_wr = self.max_srq_wr;
        a.max_srq_sge = self.max_srq_sge;
        a.max_fast_reg_page_list_len = self.max_fast_reg_page_list_len;
        a.max_pkeys = self.max_pkeys;
        a.local_ca_ack_delay = self.local_ca_ack_delay;
        a.odp_caps.general_caps = self.odp_general_caps;
        a.odp_caps.per_transport_caps.rc_odp_caps = self.odp_rc_caps;
        a.odp_caps.per_transport_caps.uc_odp_caps = self.odp_uc_caps;
        a.odp_caps.per_transport_caps.ud_odp_caps = self.odp_ud_caps;
        a.odp_caps.per_transport_caps.xrc_odp_caps = self.odp_xrc_caps;
        // SAFETY: The caller guarantees `attr` is valid for writes.
        unsafe { attr.write(a) };
    }
}

/// Port attributes reported by `query_port` (`struct ib_port_attr`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortCaps {
    pub(crate) state: PortState,
    pub(crate) phys_state: PhysState,
    /// `enum ib_mtu` values (1 = 256 ... 5 = 4096).
    pub(crate) max_mtu: u32,
    pub(crate) active_mtu: u32,
    pub(crate) gid_tbl_len: i32,
    /// `IB_PORT_*_SUP` bits.
    pub(crate) port_cap_flags: u32,
    pub(crate) max_msg_sz: u32,
    pub(crate) bad_pkey_cntr: u32,
    pub(crate) qkey_viol_cntr: u32,
    pub(crate) pkey_tbl_len: u16,
    pub(crate) max_vl_num: u8,
    pub(crate) active_width: u8,
    pub(crate) active_speed: u16,
}

impl PortCaps {
    /// Writes `self` over `attr`, zeroing every field not represented here
    /// (LIDs, SM fields: unused on RoCE).
    ///
    /// # Safety
    ///
    /// `attr` must be valid for writes of a whole `ib_port_attr`.
    pub(crate) unsafe fn write_to(&self, attr: *mut bindings::ib_port_attr) {
        // SAFETY: Plain old data, all-zeroes is valid.
        let mut a: bindings::ib_port_attr = unsafe { core::mem::zeroed() };
        a.state = match self.state {
            PortState::Down => bindings::ib_port_state_IB_PORT_DOWN,
            PortState::Active => bindings::ib_port_state_IB_PORT_ACTIVE,
        };
        a.phys_state = match self.phys_state {
            PhysState::Polling => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING,
            PhysState::Disabled => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED,
            PhysState::LinkUp => bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP,
        } as u8;
        a.max_mtu = self.max_mtu;
        a.active_mtu = self.active_mtu;
        a.gid_tbl_len = self.gid_tbl_len;
        a.port_cap_flags = self.port_cap_flags;
        a.max_msg_sz = self.max_msg_sz;
        a.bad_pkey_cntr = self.bad_pkey_cntr;
        a.qkey_viol_cntr = self.qkey_viol_cntr;
        a.pkey_tbl_len = self.pkey_tbl_len;
        a.max_vl_num = self.max_vl_num;
        a.active_width = self.active_width;
        a.active_speed = self.active_speed;
        // SAFETY: The caller guarantees `attr` is valid for writes.
        unsafe { attr.write(a) };
    }
}

/// Immutable per-port data (`struct ib_port_immutable`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortImmutable {
    pub(crate) pkey_tbl_len: i32,
    pub(crate) gid_tbl_len: i32,
    /// `RDMA_CORE_*` capability bits ([`core_cap`](super::caps::core_cap)).
    pub(crate) core_cap_flags: u32,
    pub(crate) max_mad_size: u32,
}

impl PortImmutable {
    /// Writes `self` into `imm`.
    ///
    /// # Safety
    ///
    /// `imm` must be valid for writes of a whole `ib_port_immutable`.
    pub(crate) unsafe fn write_to(&self, imm: *mut bindings::ib_port_immutable) {
        // SAFETY: The caller guarantees `imm` is valid for writes.
        unsafe {
            imm.write(bindings::ib_port_immutable {
                pkey_tbl_len: self.pkey_tbl_len,
                gid_tbl_len: self.gid_tbl_len,
                core_cap_flags: self.core_cap_flags,
                max_mad_size: self.max_mad_size,
            })
        };
    }
}
