// SPDX-License-Identifier: GPL-2.0

//! Multicast groups (`ibv_attach_mcast` / `ibv_detach_mcast` on UD QPs):
//! a device's groups, each a multicast GID with the QPs attached to it.
//! The first QP to join a group programs the netdev's multicast filter for
//! the group's MAC (`dev_mc_add`; IGMP/MLD membership is rdma_cm's job,
//! as on C rxe), the last to leave removes it.  Groups hold QP numbers,
//! not QPs: a datagram to a group is handed to each QP found under its
//! number when it is delivered (`engine::multicast`), and `destroy_qp`
//! detaches the QP from every group.
//!
//! Limits are C rxe's: `MAX_MCAST_GRP` groups, `MAX_MCAST_QP_ATTACH` QPs per
//! group, `MAX_TOTAL_MCAST_QP_ATTACH` attachments in all (`ENOMEM` beyond).

use kernel::{new_mutex, prelude::*, sync::Mutex};

use crate::kapi::net::netdev::NetDevice;
use crate::param;
use crate::proto::path::multicast_mac;
use crate::rrxe_ratelimited;

struct Group {
    mgid: [u8; 16],
    mac: [u8; 6],
    qpns: KVec<u32>,
}

/// The groups, under the table's lock.
struct McastInner {
    groups: KVec<Group>,
    /// Attachments over all groups.
    attached: u32,
}

/// A device's multicast groups.
#[pin_data]
pub(crate) struct McastTable {
    #[pin]
    inner: Mutex<McastInner>,
}

impl McastTable {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- new_mutex!(McastInner {
                groups: KVec::new(),
                attached: 0,
            }),
        })
    }

    /// Attaches QP `qpn` to group `mgid` (again: nothing to do).
    pub(crate) fn attach(&self, netdev: &NetDevice, mgid: &[u8; 16], qpn: u32) -> Result {
        let mac = multicast_mac(mgid).ok_or_else(|| {
            rrxe_ratelimited!(pr_warn, "rrxe: attach_mcast: not a multicast GID\n");
            EINVAL
        })?;
        let mut g = self.inner.lock();
        if g.attached >= param::MAX_TOTAL_MCAST_QP_ATTACH {
            return Err(ENOMEM);
        }
        let idx = match g.groups.iter().position(|x| x.mgid == *mgid) {
            Some(i) => i,
            None => {
                if g.groups.len() >= param::MAX_MCAST_GRP as usize {
                    return Err(ENOMEM);
                }
                g.groups.reserve(1, GFP_KERNEL)?;
                netdev.mc_add(&mac)?;
                g.groups.push(
                    Group {
                        mgid: *mgid,
                        mac,
                        qpns: KVec::new(),
                    },
                    GFP_KERNEL,
                )?;
                g.groups.len() - 1
            }
        };
        let group = &mut g.groups[idx];
        if group.qpns.contains(&qpn) {
            return Ok(());
        }
        if group.qpns.len() >= param::MAX_MCAST_QP_ATTACH as usize {
            return Err(ENOMEM);
        }
        group.qpns.push(qpn, GFP_KERNEL)?;
        g.attached += 1;
        Ok(())
    }

    /// Detaches QP `qpn` from group `mgid`; `EINVAL` if it is not attached.
    pub(crate) fn detach(&self, netdev: &NetDevice, mgid: &[u8; 16], qpn: u32) -> Result {
        let mut g = self.inner.lock();
        let idx = g
            .groups
            .iter()
            .position(|x| x.mgid == *mgid && x.qpns.contains(&qpn))
            .ok_or(EINVAL)?;
        Self::remove(&mut g, netdev, idx, qpn);
        Ok(())
    }

    /// Detaches QP `qpn` from every group (`destroy_qp`).
    pub(crate) fn detach_all(&self, netdev: &NetDevice, qpn: u32) {
        let mut g = self.inner.lock();
        let mut i = g.groups.len();
        while i > 0 {
            i -= 1;
            if g.groups[i].qpns.contains(&qpn) {
                Self::remove(&mut g, netdev, i, qpn);
            }
        }
    }

    fn remove(g: &mut McastInner, netdev: &NetDevice, idx: usize, qpn: u32) {
        let group = &mut g.groups[idx];
        group.qpns.retain(|q| *q != qpn);
        g.attached = g.attached.saturating_sub(1);
        if g.groups[idx].qpns.is_empty() {
            if let Ok(gone) = g.groups.remove(idx) {
                netdev.mc_del(&gone.mac);
            }
        }
    }

    /// The QPs attached to group `mgid`, copied into `out` (at most its
    /// capacity, [`param::MAX_MCAST_QP_ATTACH`]); their number.
    pub(crate) fn members(&self, mgid: &[u8; 16], out: &mut [u32]) -> usize {
        let g = self.inner.lock();
        let Some(group) = g.groups.iter().find(|x| x.mgid == *mgid) else {
            return 0;
        };
        let n = group.qpns.len().min(out.len());
        out[..n].copy_from_slice(&group.qpns[..n]);
        n
    }
}
