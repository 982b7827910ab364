// SPDX-License-Identifier: GPL-2.0

//! The QP verbs: `create_qp` with the send and receive rings librxe maps
//! (in `struct rxe_send_wqe` / `struct rxe_recv_wqe` layout), `modify_qp`
//! through the IBTA state machine of the protocol core
//! (`proto::qp_state`) with every attribute value range-checked,
//! `query_qp`, `destroy_qp`, and the `post_send` doorbell.

use kernel::{prelude::*, sync::Arc};

use crate::cq::RrxeCq;
use crate::engine;
use crate::kapi::rdma::cq::UserCaller;
use crate::kapi::rdma::event::QpEvents;
use crate::kapi::rdma::qp::{QpAttr, QpCaps, QpInit};
use crate::kapi::rdma::rxe_uapi::{RECV_WQE_SIZE, SEND_WQE_SIZE};
use crate::kapi::xarray::RcuRelease;
use crate::proto::bth::BTH_QPN_MASK;
use crate::proto::gid::IbMtu;
use crate::proto::path::{source_port, IpPair};
use crate::proto::psn::PSN_MASK;
use crate::proto::qp_state::{attr, check_modify_qp, QpState, QpType};
use crate::qp::{migration, DevCore, Endpoints, Qp, Rings, FIRST_QPN, LAST_QPN};
use crate::queue::{Geometry, Queue};
use crate::srq::RrxeSrq;
use crate::{param, rrxe_ratelimited};

/// `sizeof(struct ib_sge)`.
const SGE_SIZE: u32 = 16;
/// Largest inline payload: the SGE area of a full WQE, as C rxe.
const MAX_INLINE: u32 = param::MAX_SGE as u32 * SGE_SIZE;

/// The handle in ib_core's QP object.
pub(crate) struct RrxeQp {
    qp: Arc<Qp>,
    /// The work item that drops the table's reference after destruction.
    release: RcuRelease<Qp>,
}

fn bad(what: &str, v: u32) -> Error {
    rrxe_ratelimited!(pr_warn, "rrxe: QP: bad {} {}\n", what, v);
    EINVAL
}

/// Checks and rounds the requested sizes; returns the SQ and RQ geometry
/// (no RQ with an SRQ: its receive caps are 0, as on C rxe).
fn geometry(caps: &mut QpCaps, has_srq: bool) -> Result<(Geometry, Option<Geometry>)> {
    let max_wr = param::MAX_QP_WR as u32;
    if caps.max_send_sge > param::MAX_SGE as u32 {
        return Err(bad("max_send_sge", caps.max_send_sge));
    }
    if caps.max_recv_sge > param::MAX_SGE as u32 {
        return Err(bad("max_recv_sge", caps.max_recv_sge));
    }
    if caps.max_inline_data > MAX_INLINE {
        return Err(bad("max_inline_data", caps.max_inline_data));
    }
    // A send WQE holds the larger of its SGE list and its inline data.
    let room = (caps.max_send_sge * SGE_SIZE).max(caps.max_inline_data);
    let sq_elem = SEND_WQE_SIZE as u32 + room;
    let rq_elem = RECV_WQE_SIZE as u32 + caps.max_recv_sge * SGE_SIZE;
    let sq = Geometry::new(caps.max_send_wr.max(1), sq_elem, max_wr)
        .map_err(|_| bad("max_send_wr", caps.max_send_wr))?;
    caps.max_send_wr = sq.capacity();
    if has_srq {
        caps.max_recv_wr = 0;
        caps.max_recv_sge = 0;
        caps.max_send_sge = room / SGE_SIZE;
        caps.max_inline_data = room;
        return Ok((sq, None));
    }
    let rq = Geometry::new(caps.max_recv_wr.max(1), rq_elem, max_wr)
        .map_err(|_| bad("max_recv_wr", caps.max_recv_wr))?;
    caps.max_recv_wr = rq.capacity();
    caps.max_send_sge = room / SGE_SIZE;
    caps.max_inline_data = room;
    Ok((sq, Some(rq)))
}

/// The QP number of the GSI QP (QP1).
const GSI_QPN: u32 = 1;

/// `create_qp` for QPs of type RC, UC or UD, with a receive ring or
/// attached to an SRQ, and the GSI QP (QP1, a UD QP the MAD layer
/// creates).  A user QP's rings are mapped by librxe; a kernel
/// consumer's rings are kernel memory its `post_send` and `post_recv`
/// fill (`verbs/post.rs`).
pub(crate) fn create(
    dev: &Arc<DevCore>,
    init: &mut QpInit,
    cqs: (&RrxeCq, &RrxeCq),
    srq: Option<&RrxeSrq>,
    user: Option<UserCaller<'_>>,
    events: QpEvents,
) -> Result<(RrxeQp, u32)> {
    let qp_type = match QpType::from_raw(init.qp_type) {
        Some(t @ (QpType::Rc | QpType::Uc | QpType::Ud)) => t,
        // ib_core creates QP1 for its MAD layer only (never for user space).
        Some(QpType::Gsi) if user.is_none() => QpType::Gsi,
        _ => {
            rrxe_ratelimited!(pr_warn, "rrxe: QP type {} is not supported\n", init.qp_type);
            return Err(crate::kapi::eopnotsupp());
        }
    };
    if init.create_flags != 0 {
        return Err(crate::kapi::eopnotsupp());
    }
    let (sqg, rqg) = geometry(&mut init.caps, srq.is_some())?;
    let (sq, rq, mut user) = match user {
        Some(mut user) => {
            user.udata.require_empty_input()?;
            let sq = Queue::new(&user.ctx, sqg)?;
            let rq = match rqg {
                Some(g) => Some(Queue::new(&user.ctx, g)?),
                None => None,
            };
            (sq, rq, Some(user))
        }
        None => {
            let rq = match rqg {
                Some(g) => Some(Queue::new_kernel(g)?),
                None => None,
            };
            (Queue::new_kernel(sqg)?, rq, None)
        }
    };
    // With an SRQ the receive ring's mminfo is all zeroes (librxe maps
    // none).
    let (sq_mi, rq_mi) = (sq.mminfo(), rq.as_ref().map_or([0; 16], |q| q.mminfo()));
    let release = RcuRelease::new(GFP_KERNEL)?;
    let slot = if qp_type == QpType::Gsi {
        dev.qps.reserve(GSI_QPN, GSI_QPN)?
    } else {
        dev.qps.reserve(FIRST_QPN, LAST_QPN)?
    };
    let qpn = slot.index();
    let qp = Qp::new(
        qpn,
        qp_type,
        *init,
        dev.clone(),
        (cqs.0.shared.clone(), cqs.1.shared.clone()),
        Rings {
            sq,
            rq,
            srq: srq.map(|s| s.shared.clone()),
        },
        events,
    )?;
    if let Some(user) = user.as_mut() {
        // struct rxe_create_qp_resp { struct mminfo rq_mi, sq_mi; }
        let mut resp = [0u8; 32];
        resp[..16].copy_from_slice(&rq_mi);
        resp[16..].copy_from_slice(&sq_mi);
        user.udata.respond(&resp)?;
    }
    // Published last: received packets find it only once it is whole.
    slot.publish(qp.clone())?;
    Ok((RrxeQp { qp, release }, qpn))
}

/// Range checks of the attribute values `mask` selects.
fn check_values(a: &QpAttr, mask: u32) -> Result {
    let has = |bit| mask & bit != 0;
    if has(attr::PATH_MTU) && IbMtu::from_raw(a.path_mtu).is_none() {
        return Err(bad("path_mtu", a.path_mtu));
    }
    if has(attr::MAX_QP_RD_ATOMIC) && i32::from(a.max_rd_atomic) > param::MAX_QP_RD_ATOM {
        return Err(bad("max_rd_atomic", a.max_rd_atomic.into()));
    }
    if has(attr::MAX_DEST_RD_ATOMIC) && i32::from(a.max_dest_rd_atomic) > param::MAX_QP_RD_ATOM {
        return Err(bad("max_dest_rd_atomic", a.max_dest_rd_atomic.into()));
    }
    if has(attr::PORT) && a.port_num != 1 {
        return Err(bad("port", a.port_num));
    }
    if has(attr::PKEY_INDEX) && a.pkey_index != 0 {
        return Err(bad("pkey_index", a.pkey_index.into()));
    }
    if has(attr::TIMEOUT) && a.timeout > 31 {
        return Err(bad("timeout", a.timeout.into()));
    }
    if has(attr::RETRY_CNT) && a.retry_cnt > 7 {
        return Err(bad("retry_cnt", a.retry_cnt.into()));
    }
    if has(attr::RNR_RETRY) && a.rnr_retry > 7 {
        return Err(bad("rnr_retry", a.rnr_retry.into()));
    }
    if has(attr::MIN_RNR_TIMER) && a.min_rnr_timer > 31 {
        return Err(bad("min_rnr_timer", a.min_rnr_timer.into()));
    }
    if has(attr::AV)
        && (u32::from(a.path.sgid_index) >= param::gid_tbl_len() || a.path.port_num > 1)
    {
        return Err(bad("address vector sgid_index", a.path.sgid_index.into()));
    }
    if has(attr::AV) && IpPair::from_gids(&a.path.sgid, &a.path.dgid).is_none() {
        return Err(bad(
            "address vector (IPv4 and IPv6 GIDs mixed)",
            a.path.sgid_index.into(),
        ));
    }
    if has(attr::ALT_PATH) {
        if u32::from(a.alt_path.sgid_index) >= param::gid_tbl_len()
            || a.alt_path.port_num > 1
            || a.alt_port_num != 1
        {
            return Err(bad("alternate path port or sgid_index", a.alt_port_num));
        }
        if a.alt_timeout > 31 {
            return Err(bad("alt_timeout", a.alt_timeout.into()));
        }
        if a.alt_pkey_index != 0 {
            return Err(bad("alt_pkey_index", a.alt_pkey_index.into()));
        }
        if IpPair::from_gids(&a.alt_path.sgid, &a.alt_path.dgid).is_none() {
            return Err(bad(
                "alternate path (IPv4 and IPv6 GIDs mixed)",
                a.alt_path.sgid_index.into(),
            ));
        }
    }
    if has(attr::PATH_MIG_STATE) && a.path_mig_state > migration::ARMED {
        return Err(bad("path_mig_state", a.path_mig_state));
    }
    if has(attr::CAP) || has(attr::RATE_LIMIT) {
        return Err(crate::kapi::eopnotsupp());
    }
    Ok(())
}

/// The endpoints of `path` (local ACK timeout `timeout`) for QP `qpn`, if
/// its GIDs form an address pair.
fn endpoints(qpn: u32, path: &crate::kapi::rdma::qp::QpPath, timeout: u8) -> Option<Endpoints> {
    IpPair::from_gids(&path.sgid, &path.dgid).map(|ips| Endpoints {
        ips,
        sport: source_port(qpn),
        tclass: path.traffic_class,
        hop_limit: path.hop_limit,
        timeout,
        gid_dev: path.gid_dev,
    })
}

/// `modify_qp`: the transition must be legal for the QP type with exactly
/// the attributes IBTA allows, and every value in range; then the selected
/// attributes are stored, the engine's sides get their parameters, and
/// the state changes.
pub(crate) fn modify(h: &RrxeQp, new: &QpAttr, mask: u32) -> Result {
    let qp = &h.qp;
    let mut a = qp.attrs.lock();
    let next = checked_next_state(qp, new, mask)?;
    // From here to the paths' update, a migration cannot slip in.
    let mut paths = qp.path_writer();
    paths.settle(&mut a);
    // Arming needs an alternate path, loaded now or before (and not used
    // up by a migration since).
    let arm = mask & attr::PATH_MIG_STATE != 0 && new.path_mig_state != migration::MIGRATED;
    if arm && mask & attr::ALT_PATH == 0 && qp.alt_path.get().is_none() {
        return Err(bad(
            "path_mig_state (no alternate path)",
            new.path_mig_state,
        ));
    }
    copy_selected(&mut a, new, mask, arm);
    let to_reset = next == QpState::Reset && qp.state() != QpState::Reset;
    set_paths(qp, &paths, &mut a, mask, to_reset);
    drop(paths);
    let was = qp.state();
    // The tasks are quiesced while their sides change: a pass in progress
    // ends first (the lock), none starts meanwhile, and input that came
    // in between runs once the quiesce ends.
    qp.send_sched.quiesce();
    qp.recv_sched.quiesce();
    let stays_err = apply(qp, &a, mask, was, next, to_reset);
    drop(a);
    engine::unquiesce(qp);
    if stays_err {
        // As C rxe's check would refuse ERR -> `next`.
        return Err(EINVAL);
    }
    match next {
        // The tasks flush their queues.
        QpState::Err if was != QpState::Err => engine::fail(qp, "moved to the error state"),
        // WQEs may have been posted (and their doorbell ignored) before;
        // SQD: the send task finishes what is in progress and reports.
        QpState::Rts | QpState::Sqd => engine::schedule_send(qp),
        _ => {}
    }
    Ok(())
}

/// The state `modify_qp` moves `qp` to, if the transition is legal for
/// its type with the attributes in `mask` (IBTA's table, as C rxe checks
/// it) and every value is in range.  The caller holds the attributes.
fn checked_next_state(qp: &Qp, new: &QpAttr, mask: u32) -> Result<QpState> {
    let cur_raw = if mask & attr::CUR_STATE != 0 {
        new.cur_state
    } else {
        qp.state().raw()
    };
    let next_raw = if mask & attr::STATE != 0 {
        new.state
    } else {
        cur_raw
    };
    let cur = QpState::from_raw(cur_raw).ok_or_else(|| bad("cur_qp_state", cur_raw))?;
    let next = QpState::from_raw(next_raw).ok_or_else(|| bad("qp_state", next_raw))?;
    if check_modify_qp(cur, next, qp.qp_type, mask).is_err() {
        rrxe_ratelimited!(
            pr_warn,
            "rrxe: QP {:#x}: transition {} -> {} with mask {:#x} refused\n",
            qp.qpn,
            cur_raw,
            next_raw,
            mask
        );
        return Err(EINVAL);
    }
    check_values(new, mask)?;
    Ok(next)
}

/// Copies the attributes `mask` selects from `new` into `a` (PSNs and QPNs
/// are 24 bits); `arm`: the alternate path is armed.
fn copy_selected(a: &mut QpAttr, new: &QpAttr, mask: u32, arm: bool) {
    macro_rules! copy_selected {
        ($($bit:ident => $field:ident $(& $m:expr)?),* $(,)?) => {$(
            if mask & attr::$bit != 0 {
                a.$field = new.$field $(& $m)?;
            }
        )*};
    }
    copy_selected!(
        EN_SQD_ASYNC_NOTIFY => en_sqd_async_notify,
        ACCESS_FLAGS => access_flags,
        PKEY_INDEX => pkey_index,
        PORT => port_num,
        QKEY => qkey,
        AV => path,
        PATH_MTU => path_mtu,
        TIMEOUT => timeout,
        RETRY_CNT => retry_cnt,
        RNR_RETRY => rnr_retry,
        RQ_PSN => rq_psn & PSN_MASK,
        MAX_QP_RD_ATOMIC => max_rd_atomic,
        MIN_RNR_TIMER => min_rnr_timer,
        SQ_PSN => sq_psn & PSN_MASK,
        MAX_DEST_RD_ATOMIC => max_dest_rd_atomic,
        DEST_QPN => dest_qp_num & BTH_QPN_MASK,
        ALT_PATH => alt_path,
        ALT_PATH => alt_port_num,
        ALT_PATH => alt_timeout,
        ALT_PATH => alt_pkey_index,
    );
    // REARM and ARMED both arm at once (there is no handshake to wait
    // for: the peer accepts the alternate path while it is armed too).
    if mask & attr::PATH_MIG_STATE != 0 {
        a.path_mig_state = if arm {
            migration::ARMED
        } else {
            migration::MIGRATED
        };
    }
}

/// Loads the paths `a` now holds into the QP's path cells (the caller
/// holds the path lock, `paths`): the primary when the address vector or
/// the timeout changed, the alternate when loaded; a reset clears the
/// alternate and the migration state.
fn set_paths(
    qp: &Qp,
    paths: &migration::PathWriter<'_>,
    a: &mut QpAttr,
    mask: u32,
    to_reset: bool,
) {
    // The timeout belongs to the path (and a QP without an address vector
    // has no path to give it).
    if mask & attr::AV != 0 || (mask & attr::TIMEOUT != 0 && qp.path.get().is_some()) {
        paths.set_primary(endpoints(qp.qpn, &a.path, a.timeout).as_ref());
    }
    if to_reset {
        paths.set_alternate(None);
        paths.set_state(migration::MIGRATED);
        a.path_mig_state = migration::MIGRATED;
    } else {
        if mask & attr::ALT_PATH != 0 {
            paths.set_alternate(endpoints(qp.qpn, &a.alt_path, a.alt_timeout).as_ref());
        }
        if mask & attr::PATH_MIG_STATE != 0 {
            paths.set_state(a.path_mig_state);
        }
    }
}

/// Gives the engine's sides their new parameters (the tasks quiesced) and
/// sets the state `next`, which `was` before; true if the QP entered the
/// error state meanwhile and stays there (only RESET and ERR leave it).
fn apply(qp: &Qp, a: &QpAttr, mask: u32, was: QpState, next: QpState, to_reset: bool) -> bool {
    let pmtu = IbMtu::from_raw(a.path_mtu).map_or(256, |m| m.bytes());
    {
        let mut s = qp.send.lock();
        s.apply(a, mask, pmtu, to_reset);
        if next == QpState::Sqd && was != QpState::Sqd {
            // IBTA: SQ_DRAINED only if the consumer asked for it.
            s.sqd_notify = mask & attr::EN_SQD_ASYNC_NOTIFY != 0 && a.en_sqd_async_notify != 0;
        }
    }
    qp.recv.lock().apply(a, mask, pmtu, to_reset);
    qp.set_pmtu(pmtu);
    // A pass that ended before the quiesce may have moved the QP to the
    // error state since `was` was read: that stands (only RESET leaves
    // it), or the QP would leave ERR with its send queue half flushed.
    let errored_meanwhile = was != QpState::Err && qp.state() == QpState::Err;
    let stays_err = errored_meanwhile && !matches!(next, QpState::Reset | QpState::Err);
    if !stays_err {
        qp.set_state(next);
    }
    stays_err
}

/// `attach_mcast`: the QP receives the datagrams to group `mgid`.
pub(crate) fn attach_mcast(h: &RrxeQp, mgid: &[u8; 16]) -> Result {
    let qp = &h.qp;
    qp.dev.mcast.attach(&qp.dev.netdev, mgid, qp.qpn)
}

/// `detach_mcast`.
pub(crate) fn detach_mcast(h: &RrxeQp, mgid: &[u8; 16]) -> Result {
    let qp = &h.qp;
    qp.dev.mcast.detach(&qp.dev.netdev, mgid, qp.qpn)
}

/// `query_qp`.
pub(crate) fn query(h: &RrxeQp) -> (QpAttr, QpInit) {
    let mut g = h.qp.attrs.lock();
    let mut paths = h.qp.path_writer();
    paths.settle(&mut g);
    let mut a = *g;
    a.path_mig_state = h.qp.mig_state();
    drop(paths);
    drop(g);
    a.state = h.qp.state().raw();
    a.cur_state = a.state;
    a.caps = h.qp.init.caps;
    (a, h.qp.init)
}

/// `destroy_qp`: marks the QP dead (tasks that still hold it find it so),
/// quiesces its tasks for good, cancels its timer, takes its rings away
/// (their mappings go now, while the user context exists) and removes it
/// from the table without waiting: the table's reference goes after an
/// RCU grace period, on the release queue (a lookup in the receive path
/// that found the QP holds its own meanwhile, and finds it dead).
pub(crate) fn destroy(h: RrxeQp) {
    let qp = &h.qp;
    qp.mark_dead();
    // For good: no pass starts from now on; one in progress ends before
    // the sides' locks below are taken.
    qp.send_sched.quiesce();
    qp.recv_sched.quiesce();
    // uverbs detaches a QP's groups before destroying it; a kernel
    // caller might not.
    qp.dev.mcast.detach_all(&qp.dev.netdev, qp.qpn);
    {
        let mut k = qp.kpost.lock();
        k.sq = None;
        k.rq = None;
    }
    {
        let mut s = qp.send.lock();
        s.clear_timer();
        s.sq = None;
        while s.inflight.pop().is_some() {}
        s.route = None;
    }
    {
        let mut r = qp.recv.lock();
        r.rq = None;
        r.wqe = None;
        r.write = None;
        r.reply = None;
        r.res.clear();
        r.stash = None;
        r.route = None;
    }
    qp.rx_requests.purge();
    qp.rx_responses.purge();
    qp.dev.qps.remove(qp.qpn, qp, h.release);
}

/// The doorbell: librxe wrote send WQEs and wants them processed.  A QP
/// that cannot send yet refuses it with `EINVAL`, as C rxe does, so
/// `ibv_post_send` fails there as it does on C rxe; the WQEs stay in the
/// ring and go once the QP reaches RTS (`modify_qp` runs the send task).
pub(crate) fn doorbell(h: &RrxeQp) -> Result {
    if !h.qp.takes_sends() {
        return Err(EINVAL);
    }
    engine::doorbell(&h.qp);
    Ok(())
}

/// `post_send` of a kernel consumer (`verbs/post.rs`).
pub(crate) fn post_send(
    h: &RrxeQp,
    wr: &crate::kapi::rdma::wr::SendWr<'_, crate::device::RrxeDev>,
) -> Result {
    super::post::post_send(&h.qp, wr)
}

/// `post_recv` of a kernel consumer (`verbs/post.rs`).
pub(crate) fn post_recv(h: &RrxeQp, wr: &crate::kapi::rdma::wr::RecvWr<'_>) -> Result {
    super::post::post_recv(&h.qp, wr)
}

/// After a kernel consumer posted (`verbs/post.rs`).
pub(crate) fn kick(h: &RrxeQp, send: bool) {
    super::post::kick(&h.qp, send)
}
