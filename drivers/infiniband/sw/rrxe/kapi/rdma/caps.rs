// SPDX-License-Identifier: GPL-2.0

//! Capability bits a device reports through `query_device` and
//! `get_port_immutable` (include/rdma/ib_verbs.h: `enum
//! ib_device_cap_flags`, `enum ib_kernel_cap_flags`, `enum ib_atomic_cap`,
//! `enum ib_odp_general_cap_bits`, `enum ib_odp_transport_cap_bits`; and
//! the `RDMA_CORE_PORT_*` port types), as named constants of the types the
//! fields of [`DeviceCaps`] and [`PortImmutable`] have.
//!
//! Only the bits a driver of this crate reports or checks are named here.
//!
//! [`DeviceCaps`]: super::attr::DeviceCaps
//! [`PortImmutable`]: super::attr::PortImmutable

use kernel::bindings;

/// Device capability bits (`enum ib_device_cap_flags`, `IB_DEVICE_*`), for
/// [`DeviceCaps::device_cap_flags`](super::attr::DeviceCaps::device_cap_flags).
pub(crate) mod device_cap {
    use super::bindings;

    /// `IB_DEVICE_BAD_PKEY_CNTR`: the port counts bad P_Keys.
    pub(crate) const BAD_PKEY_CNTR: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_BAD_PKEY_CNTR as u64;
    /// `IB_DEVICE_BAD_QKEY_CNTR`: the port counts Q_Key violations.
    pub(crate) const BAD_QKEY_CNTR: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_BAD_QKEY_CNTR as u64;
    /// `IB_DEVICE_AUTO_PATH_MIG`: automatic path migration (alternate paths).
    pub(crate) const AUTO_PATH_MIG: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_AUTO_PATH_MIG as u64;
    /// `IB_DEVICE_UD_AV_PORT_ENFORCE`: a UD address vector's port is checked.
    pub(crate) const UD_AV_PORT_ENFORCE: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_UD_AV_PORT_ENFORCE as u64;
    /// `IB_DEVICE_PORT_ACTIVE_EVENT`: `IB_EVENT_PORT_ACTIVE` is raised.
    pub(crate) const PORT_ACTIVE_EVENT: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT as u64;
    /// `IB_DEVICE_SYS_IMAGE_GUID`: the system image GUID is reported.
    pub(crate) const SYS_IMAGE_GUID: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID as u64;
    /// `IB_DEVICE_RC_RNR_NAK_GEN`: the RC responder generates RNR NAKs.
    pub(crate) const RC_RNR_NAK_GEN: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as u64;
    /// `IB_DEVICE_SRQ_RESIZE`: an SRQ may be resized (`modify_srq`).
    pub(crate) const SRQ_RESIZE: u64 = bindings::ib_device_cap_flags_IB_DEVICE_SRQ_RESIZE as u64;
    /// `IB_DEVICE_MEM_WINDOW`: memory windows.
    pub(crate) const MEM_WINDOW: u64 = bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW as u64;
    /// `IB_DEVICE_MEM_MGT_EXTENSIONS`: the base memory management extension
    /// (fast registration: `IB_WR_REG_MR`, `IB_WR_LOCAL_INV`,
    /// `IB_WR_SEND_WITH_INV`).
    pub(crate) const MEM_MGT_EXTENSIONS: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as u64;
    /// `IB_DEVICE_MEM_WINDOW_TYPE_2B`: type 2B memory windows.
    pub(crate) const MEM_WINDOW_TYPE_2B: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B as u64;
    /// `IB_DEVICE_FLUSH_GLOBAL`: FLUSH for global visibility.
    pub(crate) const FLUSH_GLOBAL: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as u64;
    /// `IB_DEVICE_FLUSH_PERSISTENT`: FLUSH to persistence (persistent memory).
    pub(crate) const FLUSH_PERSISTENT: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_FLUSH_PERSISTENT as u64;
    /// `IB_DEVICE_ATOMIC_WRITE`: the ATOMIC WRITE operation.
    pub(crate) const ATOMIC_WRITE: u64 =
        bindings::ib_device_cap_flags_IB_DEVICE_ATOMIC_WRITE as u64;
}

/// Kernel-only capability bits (`enum ib_kernel_cap_flags`, `IBK_*`), for
/// [`DeviceCaps::kernel_cap_flags`](super::attr::DeviceCaps::kernel_cap_flags).
pub(crate) mod kernel_cap {
    use super::bindings;

    /// `IBK_ON_DEMAND_PAGING`: `IB_ACCESS_ON_DEMAND` is supported by
    /// `reg_user_mr`.
    pub(crate) const ON_DEMAND_PAGING: u64 =
        bindings::ib_kernel_cap_flags_IBK_ON_DEMAND_PAGING as u64;
    /// `IBK_ALLOW_USER_UNREG`: the device may be removed from user space
    /// (`RDMA_NLDEV_CMD_DELLINK`, `rdma link delete`).
    pub(crate) const ALLOW_USER_UNREG: u64 =
        bindings::ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG as u64;
    /// `IBK_ROCE_ALT_PATH`: alternate paths on a RoCE port.
    pub(crate) const ROCE_ALT_PATH: u64 = bindings::ib_kernel_cap_flags_IBK_ROCE_ALT_PATH as u64;
}

/// Atomic operation guarantees (`enum ib_atomic_cap`), for
/// [`DeviceCaps::atomic_cap`](super::attr::DeviceCaps::atomic_cap).
pub(crate) mod atomic_cap {
    use super::bindings;

    /// `IB_ATOMIC_HCA`: atomic with respect to other atomics through the
    /// same device.
    pub(crate) const HCA: u32 = bindings::ib_atomic_cap_IB_ATOMIC_HCA;
}

/// On-demand paging, general bits (`enum ib_odp_general_cap_bits`), for
/// [`DeviceCaps::odp_general_caps`](super::attr::DeviceCaps::odp_general_caps).
pub(crate) mod odp_general_cap {
    use super::bindings;

    /// `IB_ODP_SUPPORT`: on-demand-paging regions are supported.
    pub(crate) const SUPPORT: u64 = bindings::ib_odp_general_cap_bits_IB_ODP_SUPPORT as u64;
}

/// On-demand paging, per transport (`enum ib_odp_transport_cap_bits`): the
/// operations that may use on-demand-paging regions, for
/// [`DeviceCaps::odp_rc_caps`](super::attr::DeviceCaps::odp_rc_caps) and its
/// siblings.
pub(crate) mod odp_transport_cap {
    use super::bindings;

    /// `IB_ODP_SUPPORT_SEND`
    pub(crate) const SEND: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND;
    /// `IB_ODP_SUPPORT_RECV`
    pub(crate) const RECV: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV;
    /// `IB_ODP_SUPPORT_WRITE`
    pub(crate) const WRITE: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_WRITE;
    /// `IB_ODP_SUPPORT_READ`
    pub(crate) const READ: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_READ;
    /// `IB_ODP_SUPPORT_ATOMIC`
    pub(crate) const ATOMIC: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC;
    /// `IB_ODP_SUPPORT_SRQ_RECV`: receives through an SRQ.
    pub(crate) const SRQ_RECV: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV;
    /// `IB_ODP_SUPPORT_FLUSH`
    pub(crate) const FLUSH: u32 = bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_FLUSH;
    /// `IB_ODP_SUPPORT_ATOMIC_WRITE`
    pub(crate) const ATOMIC_WRITE: u32 =
        bindings::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC_WRITE;
}

/// Port protocol and management capabilities (`RDMA_CORE_PORT_*`, the
/// `RDMA_CORE_CAP_*` combinations of include/rdma/ib_verbs.h), for
/// [`PortImmutable::core_cap_flags`](super::attr::PortImmutable::core_cap_flags).
pub(crate) mod core_cap {
    use super::bindings;

    /// `RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP`: a RoCE v2 (UDP-encapsulated)
    /// port with IB MADs, CM, AF_IB and Ethernet address handles.
    pub(crate) const PORT_IBA_ROCE_UDP_ENCAP: u32 = bindings::RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
}
