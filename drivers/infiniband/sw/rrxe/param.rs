// SPDX-License-Identifier: GPL-2.0

//! Device and port parameters of an rrxe device: the resource limits it
//! reports (the same as C rxe's, so applications size themselves alike) and
//! the capability bits, which claim only what rrxe implements today.

use crate::kapi::rdma::attr::DeviceCaps;
use crate::kapi::rdma::caps::{
    atomic_cap, device_cap, kernel_cap, odp_general_cap, odp_transport_cap,
};

/// The largest count C rxe uses for "practically unlimited" resources.
const DEFAULT_MAX: i32 = 1 << 20;

/// Vendor id 0xffffff: "no vendor", as C rxe.
pub(crate) const VENDOR_ID: u32 = 0x00ff_ffff;
/// Written to `node_desc`.
pub(crate) const NODE_DESC: &[u8] = b"rrxe";
/// Scatter/gather entries per work request.
pub(crate) const MAX_SGE: i32 = 32;
/// Entries per CQ: 2^15 - 1.
pub(crate) const MAX_CQE: i32 = (1 << 15) - 1;
/// Completion queues per device (C rxe's `RXE_MAX_CQ`), counted (`limit.rs`).
pub(crate) const MAX_CQ: i32 = DEFAULT_MAX;
/// Work requests per queue.
pub(crate) const MAX_QP_WR: i32 = DEFAULT_MAX;
/// Queue pairs per device.
pub(crate) const MAX_QP: i32 = DEFAULT_MAX - MIN_QP_INDEX;
/// Outstanding RDMA read/atomic requests per QP, as initiator and as
/// target (`max_qp_rd_atom`, `max_qp_init_rd_atom`).
pub(crate) const MAX_QP_RD_ATOM: i32 = 128;
/// Protection domains per device.
pub(crate) const MAX_PD: i32 = DEFAULT_MAX;
/// Hardware-like QP numbers below this are reserved (QP0/QP1 and spare).
pub(crate) const MIN_QP_INDEX: i32 = 16;
/// Memory regions: indices 1 .. 2^19.
pub(crate) const MAX_MR: i32 = (DEFAULT_MAX >> 1) - 1;
/// Memory windows take the upper half of the key space.
pub(crate) const MAX_MW: i32 = DEFAULT_MAX - (DEFAULT_MAX >> 1) - 1;
/// SRQs start at index 0x20001.
pub(crate) const MIN_SRQ_INDEX: i32 = 0x0002_0001;
/// The last SRQ index.
pub(crate) const MAX_SRQ_INDEX: i32 = DEFAULT_MAX;
/// Work requests per SRQ.
pub(crate) const MAX_SRQ_WR: i32 = DEFAULT_MAX;
/// Scatter/gather entries per SRQ work request.
pub(crate) const MAX_SRQ_SGE: i32 = 27;
/// Ring memory (QP and CQ queues) one user context may hold: 256 MiB.
/// The per-queue limits stay C rxe's (`MAX_QP_WR` WQEs of `MAX_SGE`
/// SGEs, about 2 GiB for one ring), so without a cap one unprivileged
/// process could pin gigabytes of vmalloc space per QP; the rings are also
/// charged to the process's memory cgroup.  A create over the cap fails
/// with `ENOMEM`.  256 MiB holds, e.g., 64 QPs of 16,384 WQEs with 4 SGEs
/// each, far beyond what perftest or the pingpongs ask.
pub(crate) const MAX_QUEUE_BYTES_PER_CONTEXT: usize = 256 << 20;
/// Multicast groups per device.
pub(crate) const MAX_MCAST_GRP: u32 = 8192;
/// QPs attached to one multicast group.
pub(crate) const MAX_MCAST_QP_ATTACH: u32 = 56;
/// Attachments over all groups of a device.
pub(crate) const MAX_TOTAL_MCAST_QP_ATTACH: u32 = 0x70000;
/// Address handles: 2^15 - 1.
pub(crate) const MAX_AH: i32 = (1 << 15) - 1;

/// GID table entries per port, as C rxe's (the most `gid_tbl_len` takes).
pub(crate) const GID_TBL_LEN: u32 = 1024;
/// The fewest GID table entries `gid_tbl_len` takes.
pub(crate) const GID_TBL_MIN: u32 = 16;

/// GID table entries per port: the module parameter `gid_tbl_len`
/// (default [`GID_TBL_LEN`]), clamped to [`GID_TBL_MIN`]..=[`GID_TBL_LEN`].
/// ib_core creates three sysfs files per entry (`gids`, `gid_attrs/ndevs`,
/// `gid_attrs/types`), which make `rdma link add` take 1.5-2 s and
/// `delete` 1 s on a kernel with KASAN and lockdep; the test VM's debug
/// boot sets 64.  Read-only: fixed for the module's lifetime.
pub(crate) fn gid_tbl_len() -> u32 {
    (*crate::module_parameters::gid_tbl_len.value()).clamp(GID_TBL_MIN, GID_TBL_LEN)
}

/// Says so at load when a parameter's value was out of range and is
/// used clamped.
pub(crate) fn warn_clamped() {
    let asked = *crate::module_parameters::gid_tbl_len.value();
    if asked != gid_tbl_len() {
        kernel::pr_warn!(
            "rrxe: gid_tbl_len={} is out of range {}-{}: using {}\n",
            asked,
            GID_TBL_MIN,
            GID_TBL_LEN,
            gid_tbl_len()
        );
    }
}

crate::kapi::runtime_param::runtime_bool_param! {
    /// Whether RC and UC SEND and WRITE messages and READ responses of
    /// several packets go out as UDP GSO batches (`tx/batch.rs`): the module
    /// parameter `gso`, writable at run time
    /// (`/sys/module/rdma_rrxe/parameters/gso`), so one boot can compare
    /// both ways.  Each packet built after a change follows it.
    static GSO: "rdma_rrxe"."gso" = true,
        "Send the packets of a SEND, WRITE or READ response as UDP GSO batches, cut by the stack or the NIC (default Y; N: one skb per packet, as C rxe)";
}

/// Whether requesters and READ responders batch packets ([`GSO`]).
pub(crate) fn gso() -> bool {
    GSO.get()
}

crate::kapi::runtime_param::runtime_bool_param! {
    /// Whether a user QP that moves SENDs and WRITEs of many packets runs
    /// those tasks on its owner's CPU at high priority (`qp/placement.rs`):
    /// the module parameter `bulk_home`, writable at run time so one boot
    /// can compare both ways.
    static BULK_HOME: "rdma_rrxe"."bulk_home" = true,
        "Run a user QP's SENDs and WRITEs of 8 packets or more on its process's CPU, at high priority, and check their ICRC there (default Y; N: where the packets arrive, as C rxe)";
}

/// Whether bulk transfers are placed on their owner's CPU ([`BULK_HOME`]).
pub(crate) fn bulk_home() -> bool {
    BULK_HOME.get()
}

/// P_Key table entries per port (only the default P_Key).
pub(crate) const PKEY_TBL_LEN: u16 = 1;
/// The default full-membership P_Key.
pub(crate) const DEFAULT_PKEY: u16 = 0xffff;
/// Largest message: 2 GiB.
pub(crate) const MAX_MSG_SZ: u32 = 1 << 31;
/// `IB_PORT_CM_SUP` (include/rdma/ib_mad.h): the port runs a CM, so
/// rdma_cm and ib_cm accept it.
pub(crate) const PORT_CAP_CM_SUP: u32 = 1 << 16;
/// `IB_MGMT_MAD_SIZE`: a 256-byte MAD.
pub(crate) const MAX_MAD_SIZE: u32 = 256;

/// Device capability bits rrxe honours.  C rxe also claims persistent
/// FLUSH, which needs persistent memory, which rrxe does not handle.
/// (C rxe's `CHANGE_PHY_PORT` does not apply to a one-port device.)
const DEVICE_CAP_FLAGS: u64 = device_cap::BAD_PKEY_CNTR
    | device_cap::BAD_QKEY_CNTR
    | device_cap::AUTO_PATH_MIG
    | device_cap::SRQ_RESIZE
    // One port: a UD AH names port 1 or is refused (`verbs/ah.rs`).
    | device_cap::UD_AV_PORT_ENFORCE
    // The RC responder answers a SEND without a receive WQE with an RNR
    // NAK.
    | device_cap::RC_RNR_NAK_GEN
    | device_cap::PORT_ACTIVE_EVENT
    | device_cap::SYS_IMAGE_GUID
    | device_cap::MEM_WINDOW
    | device_cap::MEM_WINDOW_TYPE_2B
    // Fast registration (alloc_mr, map_mr_sg, REG_MR, LOCAL_INV, SEND
    // with Invalidate of a region) for kernel consumers.
    | device_cap::MEM_MGT_EXTENSIONS
    | device_cap::FLUSH_GLOBAL
    | device_cap::ATOMIC_WRITE;

/// The most blocks a fast-registration region may have (C rxe's value).
pub(crate) const MAX_FAST_REG_PAGES: u32 = 512;

/// ODP SEND, RECV and SRQ RECV.
const ODP_SEND_RECV: u32 =
    odp_transport_cap::SEND | odp_transport_cap::RECV | odp_transport_cap::SRQ_RECV;

/// What `query_device` reports for a device whose system image GUID is
/// `sys_image_guid`.
pub(crate) fn device_caps(sys_image_guid: u64) -> DeviceCaps {
    DeviceCaps {
        sys_image_guid,
        max_mr_size: u64::MAX,
        page_size_cap: 0xffff_f000,
        vendor_id: VENDOR_ID,
        max_qp: MAX_QP,
        max_qp_wr: MAX_QP_WR,
        device_cap_flags: DEVICE_CAP_FLAGS,
        // `rdma link delete` may remove the device; alternate paths on
        // the RoCE port (patches/0008: rrxe copies the GIDs at modify_qp
        // and tracks the migration state itself, qp/migration.rs).
        // On-demand-paging regions (kapi/rdma/mr/odp.rs).
        kernel_cap_flags: kernel_cap::ALLOW_USER_UNREG
            | kernel_cap::ROCE_ALT_PATH
            | kernel_cap::ON_DEMAND_PAGING,
        max_send_sge: MAX_SGE,
        max_recv_sge: MAX_SGE,
        max_sge_rd: MAX_SGE,
        max_cq: MAX_CQ,
        max_cqe: MAX_CQE,
        max_mr: MAX_MR,
        max_pd: MAX_PD,
        max_qp_rd_atom: MAX_QP_RD_ATOM,
        max_res_rd_atom: 0x3f000,
        max_qp_init_rd_atom: MAX_QP_RD_ATOM,
        // Atomics are claimed once the responder executes them.
        // Atomics are atomic with respect to every other atomic through
        // this device (and, being locked instructions, to the CPU too).
        atomic_cap: atomic_cap::HCA,
        max_mw: MAX_MW,
        max_mcast_grp: MAX_MCAST_GRP as i32,
        max_mcast_qp_attach: MAX_MCAST_QP_ATTACH as i32,
        max_total_mcast_qp_attach: MAX_TOTAL_MCAST_QP_ATTACH as i32,
        max_ah: MAX_AH,
        max_srq: MAX_SRQ_INDEX - MIN_SRQ_INDEX,
        max_srq_wr: MAX_SRQ_WR,
        max_srq_sge: MAX_SRQ_SGE,
        max_fast_reg_page_list_len: MAX_FAST_REG_PAGES,
        max_pkeys: 64,
        local_ca_ack_delay: 15,
        // C rxe's claims: every RC operation and UD SEND/RECV/SRQ on ODP
        // regions, no implicit regions.  UC works on them too but is not
        // claimed, so `ibv_devinfo -v` matches C rxe.
        odp_general_caps: odp_general_cap::SUPPORT,
        odp_rc_caps: ODP_SEND_RECV
            | odp_transport_cap::WRITE
            | odp_transport_cap::READ
            | odp_transport_cap::ATOMIC
            | odp_transport_cap::FLUSH
            | odp_transport_cap::ATOMIC_WRITE,
        odp_ud_caps: ODP_SEND_RECV,
        ..DeviceCaps::default()
    }
}
