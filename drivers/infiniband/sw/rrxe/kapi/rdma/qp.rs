// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: ib_core allocates `struct ib_qp` with room for the driver's
//! [`Driver::Qp`] after it (`size_ib_qp`).  The verbs' C attribute structs
//! are converted to and from plain Rust values here ([`QpInit`],
//! [`QpAttr`]), so drivers never touch `ib_qp_attr` themselves.

use kernel::{bindings, error::from_result, ffi::c_int, prelude::*, types::Opaque};

use super::cq::UserCaller;
use super::device::{Device, Driver};
use super::event::QpEvents;
use super::udata::UData;
use super::wr::{post_recv_list, RecvWr, SendWr};

/// A QP object as ib_core allocates it for driver `T`.
///
/// # Invariants
///
/// Never made in Rust: ib_core allocates it (`size_ib_qp` bytes) and frees
/// it, and `ib` is the `ib_qp` it passes to the QP verbs.  `data` and
/// `events` are initialised from the success of `create_qp` until
/// `destroy_qp` ends them; only verbs between the two reach them.
#[repr(C)]
pub(super) struct QpObj<T: Driver> {
    ib: Opaque<bindings::ib_qp>,
    data: core::mem::MaybeUninit<T::Qp>,
    events: core::mem::MaybeUninit<QpEvents>,
}

/// Work queue sizes (`struct ib_qp_cap`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpCaps {
    pub(crate) max_send_wr: u32,
    pub(crate) max_recv_wr: u32,
    pub(crate) max_send_sge: u32,
    pub(crate) max_recv_sge: u32,
    pub(crate) max_inline_data: u32,
}

impl QpCaps {
    fn from_c(c: &bindings::ib_qp_cap) -> Self {
        Self {
            max_send_wr: c.max_send_wr,
            max_recv_wr: c.max_recv_wr,
            max_send_sge: c.max_send_sge,
            max_recv_sge: c.max_recv_sge,
            max_inline_data: c.max_inline_data,
        }
    }

    fn to_c(self, c: &mut bindings::ib_qp_cap) {
        c.max_send_wr = self.max_send_wr;
        c.max_recv_wr = self.max_recv_wr;
        c.max_send_sge = self.max_send_sge;
        c.max_recv_sge = self.max_recv_sge;
        c.max_inline_data = self.max_inline_data;
    }
}

/// What `create_qp` asks for; `caps` is updated to what was created.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpInit {
    /// `enum ib_qp_type`.
    pub(crate) qp_type: u32,
    pub(crate) caps: QpCaps,
    /// Every send WR signals a completion (`IB_SIGNAL_ALL_WR`).
    pub(crate) sq_sig_all: bool,
    pub(crate) create_flags: u32,
    /// The QP's protection domain.
    pub(crate) pd: super::mr::PdId,
}

impl QpInit {
    /// Reads what `create_qp` asks for, the QP being in protection domain
    /// `pd`.
    fn from_c(i: &bindings::ib_qp_init_attr, pd: super::mr::PdId) -> Self {
        Self {
            qp_type: i.qp_type,
            caps: QpCaps::from_c(&i.cap),
            sq_sig_all: i.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
            create_flags: i.create_flags,
            pd,
        }
    }

    /// Writes `self` over a zeroed `ib_qp_init_attr` (no CQ or SRQ: the
    /// caller fills those in).
    fn to_c(self, c: &mut bindings::ib_qp_init_attr) {
        // SAFETY: `ib_qp_init_attr` is plain data (integers and nullable
        // pointers); all-zeroes is valid.
        *c = unsafe { core::mem::zeroed() };
        c.qp_type = self.qp_type;
        self.caps.to_c(&mut c.cap);
        c.sq_sig_type = if self.sq_sig_all {
            bindings::ib_sig_type_IB_SIGNAL_ALL_WR
        } else {
            bindings::ib_sig_type_IB_SIGNAL_REQ_WR
        };
    }
}

/// The primary path of a RoCE QP (`rdma_ah_attr` with a GRH).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpPath {
    pub(crate) dgid: [u8; 16],
    /// The source GID `sgid_index` named when the path was set (ib_core
    /// resolves it into `sgid_attr`); zero if none was given.
    pub(crate) sgid: [u8; 16],
    pub(crate) flow_label: u32,
    pub(crate) sgid_index: u8,
    pub(crate) hop_limit: u8,
    pub(crate) traffic_class: u8,
    pub(crate) sl: u8,
    pub(crate) static_rate: u8,
    pub(crate) port_num: u32,
    /// Resolved by ib_core (`ib_resolve_eth_dmac`) before the driver sees it.
    pub(crate) dmac: [u8; 6],
    /// The source GID's netdev (the port's netdev, or a VLAN device on
    /// it), out of which packets leave.  ib_core holds the GID, and through
    /// it the netdev, while a QP or AH uses the path.
    pub(crate) gid_dev: GidNetdev,
}

/// What the driver needs of a GID's netdev.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GidNetdev {
    /// Its interface index; 0 if unknown (no GID attribute).
    pub(crate) ifindex: i32,
    /// Its VLAN ID, if it is a VLAN device.
    pub(crate) vlan: Option<u16>,
}

impl GidNetdev {
    /// The netdev of GID attribute `attr`.
    ///
    /// # Safety
    ///
    /// `attr` is a GID attribute ib_core holds referenced for the call.
    unsafe fn of_gid(attr: *const bindings::ib_gid_attr) -> Self {
        let _rcu = kernel::sync::rcu::read_lock();
        // SAFETY: `attr` is referenced (the function's contract), and the
        // RCU read lock its netdev pointer needs is held.
        let nd = unsafe { bindings::rdma_read_gid_attr_ndev_rcu(attr) };
        match kernel::error::from_err_ptr(nd) {
            Ok(p) if !p.is_null() => {
                // SAFETY: The netdev returned stays valid until the RCU
                // read lock is released, after this use.
                let nd = unsafe { crate::kapi::net::netdev::NetDevice::from_raw(p) };
                Self {
                    ifindex: nd.ifindex(),
                    vlan: nd.vlan().map(|(id, _)| id),
                }
            }
            _ => Self::default(),
        }
    }
}

impl QpPath {
    pub(super) fn from_c(ah: &bindings::rdma_ah_attr) -> Self {
        // SAFETY: Reading the `roce` member of the AH union is valid for
        // RoCE devices (the only kind this abstraction serves); the GID is
        // plain bytes under any member.
        let (dmac, dgid) = unsafe { (ah.__bindgen_anon_1.roce.dmac, ah.grh.dgid.raw) };
        let (sgid, gid_dev) = if ah.grh.sgid_attr.is_null() {
            ([0; 16], GidNetdev::default())
        } else {
            // SAFETY: ib_core holds the GID attribute referenced for the
            // duration of the modify call.
            let gid = unsafe { (*ah.grh.sgid_attr).gid.raw };
            // SAFETY: ib_core holds the GID attribute (not null) referenced
            // for the duration of the modify call.
            (gid, unsafe { GidNetdev::of_gid(ah.grh.sgid_attr) })
        };
        Self {
            dgid,
            sgid,
            flow_label: ah.grh.flow_label,
            sgid_index: ah.grh.sgid_index,
            hop_limit: ah.grh.hop_limit,
            traffic_class: ah.grh.traffic_class,
            sl: ah.sl,
            static_rate: ah.static_rate,
            port_num: ah.port_num,
            dmac,
            gid_dev,
        }
    }

    pub(super) fn to_c(self, ah: &mut bindings::rdma_ah_attr) {
        ah.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
        ah.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
        ah.grh.dgid.raw = self.dgid;
        ah.grh.flow_label = self.flow_label;
        ah.grh.sgid_index = self.sgid_index;
        ah.grh.hop_limit = self.hop_limit;
        ah.grh.traffic_class = self.traffic_class;
        ah.sl = self.sl;
        ah.static_rate = self.static_rate;
        ah.port_num = self.port_num;
        ah.__bindgen_anon_1.roce.dmac = self.dmac;
    }
}

/// QP attributes (`struct ib_qp_attr`), all of them; `modify_qp` says by
/// mask which are meant.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QpAttr {
    pub(crate) state: u32,
    pub(crate) cur_state: u32,
    pub(crate) path_mtu: u32,
    pub(crate) qkey: u32,
    pub(crate) rq_psn: u32,
    pub(crate) sq_psn: u32,
    pub(crate) dest_qp_num: u32,
    pub(crate) access_flags: u32,
    pub(crate) caps: QpCaps,
    pub(crate) path: QpPath,
    /// The alternate path (`IB_QP_ALT_PATH`, with the three below).
    pub(crate) alt_path: QpPath,
    pub(crate) pkey_index: u16,
    pub(crate) alt_pkey_index: u16,
    pub(crate) en_sqd_async_notify: u8,
    pub(crate) sq_draining: u8,
    pub(crate) max_rd_atomic: u8,
    pub(crate) max_dest_rd_atomic: u8,
    pub(crate) min_rnr_timer: u8,
    pub(crate) port_num: u32,
    pub(crate) alt_port_num: u32,
    pub(crate) timeout: u8,
    pub(crate) alt_timeout: u8,
    pub(crate) retry_cnt: u8,
    pub(crate) rnr_retry: u8,
    /// `enum ib_mig_state`.
    pub(crate) path_mig_state: u32,
}

impl QpAttr {
    /// Reads the attributes `mask` names.  The address vectors are read
    /// only when named (`IB_QP_AV`, `IB_QP_ALT_PATH`): a kernel caller's
    /// attribute struct is not zeroed (ib_mad kmallocs it), and an address
    /// vector holds a pointer (`sgid_attr`) that would be dereferenced.
    fn from_c(a: &bindings::ib_qp_attr, mask: u32) -> Self {
        let path = |ah: &bindings::rdma_ah_attr, bit: u32| {
            if mask & bit != 0 {
                QpPath::from_c(ah)
            } else {
                QpPath::default()
            }
        };
        Self {
            state: a.qp_state,
            cur_state: a.cur_qp_state,
            path_mtu: a.path_mtu,
            qkey: a.qkey,
            rq_psn: a.rq_psn,
            sq_psn: a.sq_psn,
            dest_qp_num: a.dest_qp_num,
            access_flags: a.qp_access_flags as u32,
            caps: QpCaps::from_c(&a.cap),
            path: path(&a.ah_attr, bindings::ib_qp_attr_mask_IB_QP_AV),
            alt_path: path(&a.alt_ah_attr, bindings::ib_qp_attr_mask_IB_QP_ALT_PATH),
            pkey_index: a.pkey_index,
            alt_pkey_index: a.alt_pkey_index,
            en_sqd_async_notify: a.en_sqd_async_notify,
            sq_draining: a.sq_draining,
            max_rd_atomic: a.max_rd_atomic,
            max_dest_rd_atomic: a.max_dest_rd_atomic,
            min_rnr_timer: a.min_rnr_timer,
            port_num: a.port_num,
            alt_port_num: a.alt_port_num,
            timeout: a.timeout,
            alt_timeout: a.alt_timeout,
            retry_cnt: a.retry_cnt,
            rnr_retry: a.rnr_retry,
            path_mig_state: a.path_mig_state,
        }
    }

    /// Writes `self` over a zeroed `ib_qp_attr` (no `sgid_attr` reference:
    /// ib_core fills that in for `query_qp` callers).
    fn to_c(self, a: &mut bindings::ib_qp_attr) {
        // SAFETY: `ib_qp_attr` is plain data; all-zeroes is valid.
        *a = unsafe { core::mem::zeroed() };
        a.qp_state = self.state;
        a.cur_qp_state = self.state;
        a.path_mtu = self.path_mtu;
        a.qkey = self.qkey;
        a.rq_psn = self.rq_psn;
        a.sq_psn = self.sq_psn;
        a.dest_qp_num = self.dest_qp_num;
        a.qp_access_flags = self.access_flags as c_int;
        self.caps.to_c(&mut a.cap);
        self.path.to_c(&mut a.ah_attr);
        self.alt_path.to_c(&mut a.alt_ah_attr);
        a.pkey_index = self.pkey_index;
        a.alt_pkey_index = self.alt_pkey_index;
        a.alt_port_num = self.alt_port_num;
        a.alt_timeout = self.alt_timeout;
        a.path_mig_state = self.path_mig_state;
        a.en_sqd_async_notify = self.en_sqd_async_notify;
        a.sq_draining = self.sq_draining;
        a.max_rd_atomic = self.max_rd_atomic;
        a.max_dest_rd_atomic = self.max_dest_rd_atomic;
        a.min_rnr_timer = self.min_rnr_timer;
        a.port_num = self.port_num;
        a.timeout = self.timeout;
        a.retry_cnt = self.retry_cnt;
        a.rnr_retry = self.rnr_retry;
    }
}

/// The driver data of a QP ib_core passes to a verb.
///
/// # Safety
///
/// `qp` is a QP of driver `T` between a successful `create_qp` and its
/// `destroy_qp`.
unsafe fn data<'a, T: Driver>(qp: *mut bindings::ib_qp) -> &'a T::Qp {
    // SAFETY: Per the function's contract and the type invariant of
    // `QpObj`, `data` is initialised while the QP lives.
    unsafe { (*qp.cast::<QpObj<T>>()).data.assume_init_ref() }
}

/// `create_qp`.
///
/// # Safety
///
/// Only called by ib_core with a QP object of our size whose `device` is
/// ours, a valid init attr and a null or valid udata (inside a uverbs
/// attribute bundle).
pub(super) unsafe extern "C" fn create_qp<T: Driver>(
    qp: *mut bindings::ib_qp,
    init: *mut bindings::ib_qp_init_attr,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: `qp` is live for the call and ib_core set `device`, a
        // device of ours on which this verb runs.
        let dev = unsafe { Device::<T>::from_raw((*qp).device) };
        // SAFETY: ib_core passes `init` valid and exclusively ours for the
        // call.
        let i = unsafe { &mut *init };
        // SAFETY: `qp` is live for the call and ib_core set `pd`, which it
        // holds (usecnt) for the QP.
        let pd = super::mr::PdId::from_raw(unsafe { (*qp).pd });
        let mut req = QpInit::from_c(i, pd);
        if i.send_cq.is_null() || i.recv_cq.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `send_cq` (not null) is a CQ of our device, created by
        // `create_cq`; ib_core holds it (usecnt) until the QP is destroyed.
        let send_cq = unsafe { super::cq::data::<T>(i.send_cq) };
        // SAFETY: As for `send_cq`.
        let recv_cq = unsafe { super::cq::data::<T>(i.recv_cq) };
        let srq = if i.srq.is_null() {
            None
        } else {
            // SAFETY: `srq` (not null) is an SRQ of our device, created by
            // `create_srq`; ib_core holds it (usecnt) until the QP is
            // destroyed.
            Some(unsafe { super::srq::data::<T>(i.srq) })
        };
        // SAFETY: ib_core passes a null udata or one valid and not otherwise
        // accessed for the call, inside a uverbs attribute bundle.
        let user = unsafe { UserCaller::from_udata(udata) }?;
        // SAFETY: `qp` is the QP being created; its events are disconnected
        // by a failed creation (below) or `destroy_qp`.
        let events = unsafe { QpEvents::new(qp) }?;
        // A failed create disconnects the events: ib_core frees the QP, and
        // a clone the driver kept must not reach it.
        let (data, qpn) =
            T::create_qp(dev, &mut req, (send_cq, recv_cq), srq, user, events.clone())
                .inspect_err(|_| events.disconnect())?;
        req.caps.to_c(&mut i.cap);
        // SAFETY: `qp` is live for the call; ib_core reads `qp_num` once we
        // return.
        unsafe { (*qp).qp_num = qpn };
        let obj = qp.cast::<QpObj<T>>();
        // INVARIANT: Both slots are initialised from here until
        // `destroy_qp`.
        // SAFETY: `obj` has `size_ib_qp` bytes (our `QpObj<T>`); the `data`
        // slot is written once, here, and read back by the verbs and
        // `destroy_qp`.
        unsafe { (*obj).data.write(data) };
        // SAFETY: `obj` has `size_ib_qp` bytes; the `events` slot is written
        // once, here, and read back only by `destroy_qp`.
        unsafe { (*obj).events.write(events) };
        Ok(0)
    })
}

/// `modify_qp`.
///
/// # Safety
///
/// Only called by ib_core for a live QP created by `create_qp`.
pub(super) unsafe extern "C" fn modify_qp<T: Driver>(
    qp: *mut bindings::ib_qp,
    attr: *mut bindings::ib_qp_attr,
    mask: c_int,
    udata: *mut bindings::ib_udata,
) -> c_int {
    from_result(|| {
        // SAFETY: ib_core passes a null udata or one valid and not otherwise
        // accessed for the call.
        if let Some(mut u) = unsafe { UData::from_raw(udata) } {
            u.require_empty_input()?;
        }
        // SAFETY: `qp` is live for the call and ib_core set `device`.
        let dev = unsafe { Device::<T>::from_raw((*qp).device) };
        let mask = mask as u32;
        // SAFETY: Live QP created by `create_qp` (the function's contract).
        let data = unsafe { data::<T>(qp) };
        // SAFETY: ib_core passes `attr` readable for the call.
        let attr = QpAttr::from_c(unsafe { &*attr }, mask);
        T::modify_qp(dev, data, &attr, mask)?;
        Ok(0)
    })
}

/// `query_qp`.
///
/// # Safety
///
/// Only called by ib_core for a live QP created by `create_qp`, with
/// writable attribute structs.
pub(super) unsafe extern "C" fn query_qp<T: Driver>(
    qp: *mut bindings::ib_qp,
    attr: *mut bindings::ib_qp_attr,
    _mask: c_int,
    init: *mut bindings::ib_qp_init_attr,
) -> c_int {
    // SAFETY: Live QP created by `create_qp` (the function's contract).
    let data = unsafe { data::<T>(qp) };
    let (a, i) = T::query_qp(data);
    // SAFETY: ib_core passes `attr` writable and exclusively ours for the
    // call.
    a.to_c(unsafe { &mut *attr });
    // SAFETY: ib_core passes `init` writable and exclusively ours for the
    // call.
    let ci = unsafe { &mut *init };
    i.to_c(ci);
    // SAFETY: `qp` is live for the call; ib_core set its CQs at creation.
    ci.send_cq = unsafe { (*qp).send_cq };
    // SAFETY: As for `send_cq`.
    ci.recv_cq = unsafe { (*qp).recv_cq };
    // SAFETY: `qp` is live for the call; ib_core set `srq` (or left it
    // null) at creation.
    ci.srq = unsafe { (*qp).srq };
    0
}

/// `destroy_qp`.
///
/// # Safety
///
/// Only called by ib_core, once, for a QP created by `create_qp`.
pub(super) unsafe extern "C" fn destroy_qp<T: Driver>(
    qp: *mut bindings::ib_qp,
    _u: *mut bindings::ib_udata,
) -> c_int {
    // SAFETY: `qp` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*qp).device) };
    let obj = qp.cast::<QpObj<T>>();
    // INVARIANT: Both slots end here; ib_core frees the object after this
    // returns, and no verb reaches the QP again.
    // SAFETY: `create_qp` initialised the events (type invariant of
    // `QpObj`); they are cut off before ib_core frees the QP.
    unsafe { (*obj).events.assume_init_ref().disconnect() };
    // SAFETY: `create_qp` initialised the events and ib_core calls this
    // once, so they are dropped exactly once, here.
    unsafe { (*obj).events.assume_init_drop() };
    // SAFETY: `create_qp` initialised the data; this is its only read by
    // value and ib_core frees the memory after this returns.
    let data = unsafe { (*obj).data.assume_init_read() };
    T::destroy_qp(dev, data);
    0
}

/// Whether `qp` belongs to a user process (uverbs sets its `uobject`).
///
/// # Safety
///
/// `qp` is live.
unsafe fn is_user(qp: *mut bindings::ib_qp) -> bool {
    // SAFETY: Per the function's contract; `uobject` is set at creation.
    !unsafe { (*qp).uobject }.is_null()
}

/// `post_send`.  For a user QP (whose WQEs librxe writes into the mapped
/// send queue) only the empty call, the doorbell, is accepted: work
/// requests through uverbs carry user addresses and are refused.  A kernel
/// QP's work requests are written into its send queue one by one, then the
/// engine is kicked; on the first that fails, `bad_wr` names it and the
/// ones before it stay posted.
///
/// # Safety
///
/// Only called by ib_core for a live QP created by `create_qp`, with a
/// valid or null WR list and a writable `bad_wr`.
pub(super) unsafe extern "C" fn post_send<T: Driver>(
    qp: *mut bindings::ib_qp,
    wr: *const bindings::ib_send_wr,
    bad_wr: *mut *const bindings::ib_send_wr,
) -> c_int {
    // SAFETY: Live QP of ours.
    let data = unsafe { data::<T>(qp) };
    if wr.is_null() {
        return from_result(|| T::post_send_doorbell(data).map(|()| 0));
    }
    // SAFETY: Live QP.
    if unsafe { is_user(qp) } {
        // SAFETY: `bad_wr` is writable per ib_core's contract.
        unsafe { *bad_wr = wr };
        return -(bindings::EINVAL as c_int);
    }
    // SAFETY: Live QP; its type is fixed at creation.
    let qp_type = unsafe { (*qp).qp_type };
    let mut cur = wr;
    let mut posted = false;
    let mut res = Ok(());
    while !cur.is_null() {
        // SAFETY: A kernel consumer's list: each request valid for the
        // call, in the container its opcode implies, naming live AHs or MRs
        // of `T`'s (ib_core's contract).
        res = unsafe { SendWr::<T>::read(cur, qp_type) }.and_then(|w| T::post_send(data, &w));
        if res.is_err() {
            break;
        }
        posted = true;
        // SAFETY: `cur` is a non-null request of the kernel consumer's list,
        // valid for the call, so its `next` field is readable (at any
        // alignment; no reference is made).
        cur = unsafe { core::ptr::addr_of!((*cur).next).read_unaligned() };
    }
    if posted {
        T::kick(data, true);
    }
    match res {
        Ok(()) => 0,
        Err(e) => {
            // SAFETY: `bad_wr` is writable per ib_core's contract.
            unsafe { *bad_wr = cur };
            e.to_errno()
        }
    }
}

/// `post_recv`: user QPs post receives in the mapped receive queue, with
/// no system call, and WRs through uverbs are refused as for `post_send`;
/// a kernel QP's are written into its receive queue.
///
/// # Safety
///
/// As for `post_send`.
pub(super) unsafe extern "C" fn post_recv<T: Driver>(
    qp: *mut bindings::ib_qp,
    wr: *const bindings::ib_recv_wr,
    bad_wr: *mut *const bindings::ib_recv_wr,
) -> c_int {
    // SAFETY: Live QP.
    if wr.is_null() || unsafe { is_user(qp) } {
        // SAFETY: `bad_wr` is writable per ib_core's contract.
        unsafe { *bad_wr = wr };
        return -(bindings::EINVAL as c_int);
    }
    // SAFETY: Live QP of ours.
    let data = unsafe { data::<T>(qp) };
    let post = |w: &RecvWr<'_>| T::post_recv(data, w);
    // SAFETY: A kernel consumer's non-null list, valid for the call;
    // `bad_wr` is writable per ib_core's contract.
    let (posted, ret) = unsafe { post_recv_list(wr, bad_wr, post) };
    if posted {
        T::kick(data, false);
    }
    ret
}

/// `attach_mcast` (ib_core has checked that the QP is UD and the GID a
/// multicast one).
///
/// # Safety
///
/// Only called by ib_core for a live QP created by `create_qp`, with a
/// valid GID.
pub(super) unsafe extern "C" fn attach_mcast<T: Driver>(
    qp: *mut bindings::ib_qp,
    gid: *mut bindings::ib_gid,
    _lid: u16,
) -> c_int {
    // SAFETY: `qp` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*qp).device) };
    // SAFETY: `gid` is valid for the call; every member of the union is
    // plain bytes.
    let mgid = unsafe { (*gid).raw };
    // SAFETY: Live QP of ours.
    let data = unsafe { data::<T>(qp) };
    from_result(|| T::attach_mcast(dev, data, &mgid).map(|()| 0))
}

/// `detach_mcast`.
///
/// # Safety
///
/// As for `attach_mcast`.
pub(super) unsafe extern "C" fn detach_mcast<T: Driver>(
    qp: *mut bindings::ib_qp,
    gid: *mut bindings::ib_gid,
    _lid: u16,
) -> c_int {
    // SAFETY: `qp` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*qp).device) };
    // SAFETY: `gid` is valid for the call; every member of the union is
    // plain bytes.
    let mgid = unsafe { (*gid).raw };
    // SAFETY: Live QP of ours.
    let data = unsafe { data::<T>(qp) };
    from_result(|| T::detach_mcast(dev, data, &mgid).map(|()| 0))
}
