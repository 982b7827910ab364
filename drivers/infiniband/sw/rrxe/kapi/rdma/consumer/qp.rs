// SPDX-License-Identifier: GPL-2.0

//! Reliable-connected queue pairs of a kernel consumer: created on a PD
//! with directly polled CQs (`ib_create_qp`), moved through INIT, RTR
//! and RTS to a peer over a RoCE v2 path ([`RcQp::connect`]), and given
//! work: receives ([`RcQp::post_recv`]) and SEND, RDMA WRITE and READ,
//! fast registration and local invalidation ([`RcQp::post_send`],
//! [`SendOp`]).  Every send request is signaled.
//!
//! A QP borrows everything its work names for its lifetime `'a`: its PD
//! and CQs, the buffers of the [`Sge`]s posted and the regions
//! registered.  Dropping it destroys it (`ib_destroy_qp`), which ends
//! all of its work before the borrows end.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, error::from_err_ptr, prelude::*};

use super::super::access;
use super::buffer::Sge;
use super::cq::Cq;
use super::fast_mr::FastRegMr;
use super::pd::Pd;
use super::roce_gid::RoceGid;

/// Queue sizes of a QP.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpSize {
    /// Send requests outstanding at once.
    pub(crate) send_wr: u32,
    /// Receives posted at once.
    pub(crate) recv_wr: u32,
}

/// The rights a registration grants (`IB_ACCESS_*`); local write is
/// always granted with remote write, as the verbs require.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    /// A peer may RDMA WRITE into the region.
    pub(crate) remote_write: bool,
    /// A peer may RDMA READ from it.
    pub(crate) remote_read: bool,
}

impl Access {
    fn bits(self) -> i32 {
        let mut a = access::LOCAL_WRITE;
        if self.remote_write {
            a |= access::REMOTE_WRITE;
        }
        if self.remote_read {
            a |= access::REMOTE_READ;
        }
        a as i32
    }
}

/// A send queue request.
pub(crate) enum SendOp<'a> {
    /// SEND of the element's bytes to the peer's next receive.
    Send(Sge<'a>),
    /// RDMA WRITE of the element's bytes to the peer's `addr` (`rkey`).
    Write {
        /// The bytes to write.
        local: Sge<'a>,
        /// The peer's address, in the region `rkey` names.
        addr: u64,
        /// The peer's region key.
        rkey: u32,
    },
    /// RDMA READ of the peer's `addr` (`rkey`) into the element.
    Read {
        /// Where the bytes land.
        local: Sge<'a>,
        /// The peer's address, in the region `rkey` names.
        addr: u64,
        /// The peer's region key.
        rkey: u32,
    },
    /// Registers the region's mapped pages under its current key.
    RegMr(&'a FastRegMr<'a>, Access),
    /// Invalidates the local region named by `rkey`.
    LocalInv(u32),
}

/// An RC QP; destroyed on drop.
///
/// # Invariants
///
/// `qp` is an RC QP made by `ib_create_qp_kernel` on a PD and CQs borrowed
/// for `'a`, owned by `self` and destroyed only by its drop; every buffer
/// and region its work names is borrowed for `'a`.
pub(crate) struct RcQp<'a> {
    qp: NonNull<bindings::ib_qp>,
    _life: PhantomData<&'a Pd<'a>>,
}

impl<'a> RcQp<'a> {
    /// Creates an RC QP on `pd` whose send and receive completions go to
    /// `send_cq` and `recv_cq`, with one scatter/gather element per
    /// request.  May sleep.
    pub(crate) fn create(
        pd: &'a Pd<'_>,
        send_cq: &'a Cq<'_>,
        recv_cq: &'a Cq<'_>,
        size: QpSize,
    ) -> Result<Self> {
        let mut init = bindings::ib_qp_init_attr {
            send_cq: send_cq.raw(),
            recv_cq: recv_cq.raw(),
            cap: bindings::ib_qp_cap {
                max_send_wr: size.send_wr,
                max_recv_wr: size.recv_wr,
                max_send_sge: 1,
                max_recv_sge: 1,
                ..Default::default()
            },
            sq_sig_type: bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
            qp_type: bindings::ib_qp_type_IB_QPT_RC,
            ..Default::default()
        };
        let owner = pd.owner().as_char_ptr();
        // SAFETY: `pd` and both CQs are live for `'a` and on the same
        // device; `init` is a complete attribute block for the call; the
        // owner name is 'static.
        let qp = unsafe { bindings::ib_create_qp_kernel(pd.raw(), &mut init, owner) };
        let qp = NonNull::new(from_err_ptr(qp)?).ok_or(ENOMEM)?;
        // INVARIANT: The QP just made on `pd`, `send_cq` and `recv_cq`
        // (borrowed for `'a`), owned by the returned value.
        Ok(Self {
            qp,
            _life: PhantomData,
        })
    }

    /// The QP's number, which the peer connects to.
    pub(crate) fn qp_num(&self) -> u32 {
        // SAFETY: `self.qp` is a live QP (type invariant); its number never
        // changes.
        unsafe { (*self.qp.as_ptr()).qp_num }
    }

    /// The verbs of the QP's device (what `ib_post_send` and
    /// `ib_post_recv` call).
    fn ops(&self) -> &bindings::ib_device_ops {
        // SAFETY: `self.qp` is a live QP (type invariant); its device, and
        // the device's ops table, stay while the device does, which outlives
        // the PD `self` borrows.
        unsafe { &(*(*self.qp.as_ptr()).device).ops }
    }

    fn modify(&self, attr: &mut bindings::ib_qp_attr, mask: u32) -> Result {
        // SAFETY: `self.qp` is a live QP (type invariant) and `attr` a
        // complete attribute block for the bits of `mask`.
        kernel::error::to_result(unsafe {
            bindings::ib_modify_qp(self.qp.as_ptr(), attr, mask as i32)
        })
    }

    /// Moves the QP to RTS, connected from `local` to QP `remote_qpn` at
    /// `remote`: INIT (granting the peer RDMA READ and WRITE on
    /// registered regions), RTR (path MTU 1024, the peer's first PSN
    /// `remote_psn`) and RTS (first PSN `local_psn`, the longest retry
    /// budget).  May sleep.
    pub(crate) fn connect(
        &self,
        local: &RoceGid,
        remote: &RoceGid,
        remote_qpn: u32,
        local_psn: u32,
        remote_psn: u32,
    ) -> Result {
        let mut a = bindings::ib_qp_attr {
            qp_state: bindings::ib_qp_state_IB_QPS_INIT,
            pkey_index: 0,
            port_num: local.port,
            qp_access_flags: (access::REMOTE_WRITE | access::REMOTE_READ | access::LOCAL_WRITE)
                as i32,
            ..Default::default()
        };
        self.modify(
            &mut a,
            bindings::ib_qp_attr_mask_IB_QP_STATE
                | bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX
                | bindings::ib_qp_attr_mask_IB_QP_PORT
                | bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS,
        )?;

        let mut a = bindings::ib_qp_attr {
            qp_state: bindings::ib_qp_state_IB_QPS_RTR,
            path_mtu: bindings::ib_mtu_IB_MTU_1024,
            dest_qp_num: remote_qpn,
            rq_psn: remote_psn & 0xff_ffff,
            max_dest_rd_atomic: 1,
            min_rnr_timer: 12,
            ah_attr: bindings::rdma_ah_attr {
                type_: bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE,
                port_num: local.port,
                ah_flags: bindings::ib_ah_flags_IB_AH_GRH as u8,
                grh: bindings::ib_global_route {
                    sgid_index: local.index,
                    hop_limit: 64,
                    dgid: bindings::ib_gid { raw: remote.gid },
                    ..Default::default()
                },
                // A kernel consumer gives the resolved next-hop MAC
                // (ib_core resolves it only for user space).
                __bindgen_anon_1: bindings::rdma_ah_attr__bindgen_ty_1 {
                    roce: bindings::roce_ah_attr { dmac: remote.mac },
                },
                ..Default::default()
            },
            ..Default::default()
        };
        self.modify(
            &mut a,
            bindings::ib_qp_attr_mask_IB_QP_STATE
                | bindings::ib_qp_attr_mask_IB_QP_AV
                | bindings::ib_qp_attr_mask_IB_QP_PATH_MTU
                | bindings::ib_qp_attr_mask_IB_QP_DEST_QPN
                | bindings::ib_qp_attr_mask_IB_QP_RQ_PSN
                | bindings::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC
                | bindings::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER,
        )?;

        let mut a = bindings::ib_qp_attr {
            qp_state: bindings::ib_qp_state_IB_QPS_RTS,
            sq_psn: local_psn & 0xff_ffff,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            max_rd_atomic: 1,
            ..Default::default()
        };
        self.modify(
            &mut a,
            bindings::ib_qp_attr_mask_IB_QP_STATE
                | bindings::ib_qp_attr_mask_IB_QP_SQ_PSN
                | bindings::ib_qp_attr_mask_IB_QP_TIMEOUT
                | bindings::ib_qp_attr_mask_IB_QP_RETRY_CNT
                | bindings::ib_qp_attr_mask_IB_QP_RNR_RETRY
                | bindings::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC,
        )
    }

    /// Posts a receive of up to `sge.len()` bytes, tagged `wr_id`.  Any
    /// context.
    pub(crate) fn post_recv(&self, wr_id: u64, sge: &Sge<'a>) -> Result {
        let mut list = sge.raw();
        let wr = bindings::ib_recv_wr {
            __bindgen_anon_1: bindings::ib_recv_wr__bindgen_ty_1 { wr_id },
            sg_list: &mut list,
            num_sge: 1,
            ..Default::default()
        };
        let mut bad: *const bindings::ib_recv_wr = core::ptr::null();
        let post = self.ops().post_recv.ok_or_else(crate::kapi::eopnotsupp)?;
        // SAFETY: Called as `ib_post_recv` does, with a live QP (type
        // invariant) and one complete request; the buffer its element names
        // outlives the QP (`Sge<'a>`).
        kernel::error::to_result(unsafe { post(self.qp.as_ptr(), &wr, &mut bad) })
    }

    /// Posts `op`, tagged `wr_id`, signaled.  Any context.
    pub(crate) fn post_send(&self, wr_id: u64, op: SendOp<'a>) -> Result {
        let mut rdma = bindings::ib_rdma_wr::default();
        let mut reg = bindings::ib_reg_wr::default();
        let mut list = bindings::ib_sge::default();
        let mut is_reg = false;
        match op {
            SendOp::Send(sge) => {
                list = sge.raw();
                rdma.wr.opcode = bindings::ib_wr_opcode_IB_WR_SEND;
            }
            SendOp::Write { local, addr, rkey } => {
                list = local.raw();
                rdma.wr.opcode = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE;
                rdma.remote_addr = addr;
                rdma.rkey = rkey;
            }
            SendOp::Read { local, addr, rkey } => {
                list = local.raw();
                rdma.wr.opcode = bindings::ib_wr_opcode_IB_WR_RDMA_READ;
                rdma.remote_addr = addr;
                rdma.rkey = rkey;
            }
            SendOp::RegMr(mr, access) => {
                is_reg = true;
                reg.wr.opcode = bindings::ib_wr_opcode_IB_WR_REG_MR;
                reg.mr = mr.raw();
                reg.key = mr.rkey();
                reg.access = access.bits();
            }
            SendOp::LocalInv(rkey) => {
                rdma.wr.opcode = bindings::ib_wr_opcode_IB_WR_LOCAL_INV;
                rdma.wr.ex.invalidate_rkey = rkey;
            }
        }
        let has_data = list.length != 0;
        for w in [&mut rdma.wr, &mut reg.wr] {
            w.__bindgen_anon_1.wr_id = wr_id;
            w.send_flags = bindings::ib_send_flags_IB_SEND_SIGNALED;
            if has_data {
                w.sg_list = &mut list;
                w.num_sge = 1;
            }
        }
        let wr: *const bindings::ib_send_wr = if is_reg { &reg.wr } else { &rdma.wr };
        let mut bad: *const bindings::ib_send_wr = core::ptr::null();
        let post = self.ops().post_send.ok_or_else(crate::kapi::eopnotsupp)?;
        // `wr` points into `rdma` or `reg`, alive for the call; the buffers
        // and region it names outlive the QP (`'a`).
        // SAFETY: Called as `ib_post_send` does, with a live QP (type
        // invariant) and one complete request.
        kernel::error::to_result(unsafe { post(self.qp.as_ptr(), wr, &mut bad) })
    }
}

impl Drop for RcQp<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.qp` was created by `ib_create_qp_kernel` and is
        // ours (type invariant), destroyed once, here; a kernel QP has no
        // user data.
        unsafe { bindings::ib_destroy_qp_user(self.qp.as_ptr(), core::ptr::null_mut()) };
    }
}
