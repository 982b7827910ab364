// SPDX-License-Identifier: GPL-2.0

//! Multicast groups (`ibv_attach_mcast` / `ibv_detach_mcast` on UD QPs):
//! a device's groups, each a multicast GID with the QPs attached to it.
//! The first QP to join a group programs the netdev's multicast filter for
//! the group's MAC (`dev_mc_add`; IGMP/MLD membership is rdma_cm's job,
//! as on C rxe), the last to leave removes it.  Groups hold QP numbers,
//! not QPs: the receive path hands a datagram to each QP found under its
//! number (`engine/rx/multicast.rs`), and `destroy_qp` detaches the QP from
//! every group.
//!
//! The receive path looks a datagram's group up in softirq context, before
//! anything is queued, so the groups are under a spinlock taken with
//! interrupts off (`inner`), sorted by GID (a binary search per datagram,
//! whatever the number of groups), and nothing is allocated under it:
//! a group's member array is fixed, and the group list grows in a vector
//! allocated outside the lock and swapped in.  Attach and detach are
//! serialised by a mutex (`writer`), under which they allocate and update
//! the netdev's filter (which may not be done with interrupts off), so
//! what they saw under `inner` still holds when they take it again.
//!
//! Limits are C rxe's: `MAX_MCAST_GRP` groups, `MAX_MCAST_QP_ATTACH` QPs per
//! group, `MAX_TOTAL_MCAST_QP_ATTACH` attachments in all (`ENOMEM` beyond).

use kernel::{new_mutex, prelude::*, sync::Mutex};

use crate::kapi::net::netdev::NetDevice;
use crate::kapi::spinlock_irq::SpinLockIrq;
use crate::new_spinlock_irq;
use crate::param;
use crate::proto::path::multicast_mac;
use crate::rrxe_ratelimited;

/// Most QPs in one group.
const MEMBERS: usize = param::MAX_MCAST_QP_ATTACH as usize;

struct Group {
    mgid: [u8; 16],
    mac: [u8; 6],
    /// The attached QPs: `qpns[..n]`.
    qpns: [u32; MEMBERS],
    n: usize,
}

impl Group {
    fn members(&self) -> &[u32] {
        &self.qpns[..self.n]
    }
}

/// The groups, sorted by GID, under the table's spinlock.
struct McastInner {
    groups: KVec<KBox<Group>>,
    /// Attachments over all groups.
    attached: u32,
}

impl McastInner {
    fn find(&self, mgid: &[u8; 16]) -> core::result::Result<usize, usize> {
        self.groups.binary_search_by(|g| g.mgid.cmp(mgid))
    }
}

/// A device's multicast groups.
#[pin_data]
pub(crate) struct McastTable {
    /// Serialises attach and detach.
    #[pin]
    writer: Mutex<()>,
    #[pin]
    inner: SpinLockIrq<McastInner>,
}

impl McastTable {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            writer <- new_mutex!(()),
            inner <- new_spinlock_irq!(McastInner {
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
        let _w = self.writer.lock();
        let (found, len, cap) = {
            let g = self.inner.lock();
            let found = g.find(mgid);
            if let Ok(i) = found {
                if g.groups[i].members().contains(&qpn) {
                    return Ok(());
                }
                if g.groups[i].n >= MEMBERS {
                    return Err(ENOMEM);
                }
            }
            if g.attached >= param::MAX_TOTAL_MCAST_QP_ATTACH {
                return Err(ENOMEM);
            }
            (found, g.groups.len(), g.groups.capacity())
        };
        let at = match found {
            Ok(i) => i,
            Err(at) => {
                if len >= param::MAX_MCAST_GRP as usize {
                    return Err(ENOMEM);
                }
                let group = KBox::new(
                    Group {
                        mgid: *mgid,
                        mac,
                        qpns: [0; MEMBERS],
                        n: 0,
                    },
                    GFP_KERNEL,
                )?;
                // Room for one more group, made here (the list only
                // changes under `writer`, which we hold).
                let grown = if len == cap {
                    Some(KVec::with_capacity((2 * cap).max(4), GFP_KERNEL)?)
                } else {
                    None
                };
                netdev.mc_add(&mac)?;
                let mut g = self.inner.lock();
                if let Some(mut v) = grown {
                    for old in g.groups.drain_all() {
                        // Cannot fail: `v` has more room than `g.groups`.
                        let _ = v.push_within_capacity(old);
                    }
                    // `v` is now the empty old vector, freed right here
                    // (`kfree` is fine under a spinlock).
                    core::mem::swap(&mut g.groups, &mut v);
                }
                if g.groups.insert_within_capacity(at, group).is_err() {
                    drop(g);
                    netdev.mc_del(&mac);
                    return Err(ENOMEM);
                }
                at
            }
        };
        let mut g = self.inner.lock();
        let group: &mut Group = &mut g.groups[at];
        let n = group.n;
        group.qpns[n] = qpn;
        group.n = n + 1;
        g.attached += 1;
        Ok(())
    }

    /// Detaches QP `qpn` from group `mgid`; `EINVAL` if it is not attached.
    pub(crate) fn detach(&self, netdev: &NetDevice, mgid: &[u8; 16], qpn: u32) -> Result {
        let _w = self.writer.lock();
        let i = {
            let g = self.inner.lock();
            g.find(mgid)
                .ok()
                .filter(|&i| g.groups[i].members().contains(&qpn))
                .ok_or(EINVAL)?
        };
        self.remove(netdev, i, qpn);
        Ok(())
    }

    /// Detaches QP `qpn` from every group (`destroy_qp`).
    pub(crate) fn detach_all(&self, netdev: &NetDevice, qpn: u32) {
        let _w = self.writer.lock();
        let mut i = self.inner.lock().groups.len();
        while i > 0 {
            i -= 1;
            if self.inner.lock().groups[i].members().contains(&qpn) {
                self.remove(netdev, i, qpn);
            }
        }
    }

    /// Takes `qpn` out of group `i`, and the group out of the table if it
    /// was the last member; the caller holds `writer`.
    fn remove(&self, netdev: &NetDevice, i: usize, qpn: u32) {
        let gone = {
            let mut g = self.inner.lock();
            let group: &mut Group = &mut g.groups[i];
            if let Some(k) = group.members().iter().position(|&q| q == qpn) {
                let last = group.n - 1;
                group.qpns[k] = group.qpns[last];
                group.n = last;
                g.attached = g.attached.saturating_sub(1);
            }
            if g.groups[i].n == 0 {
                g.groups.remove(i).ok()
            } else {
                None
            }
        };
        if let Some(group) = gone {
            netdev.mc_del(&group.mac);
        }
    }

    /// The QPs attached to group `mgid`, copied into `out` (at most its
    /// capacity, [`param::MAX_MCAST_QP_ATTACH`]); their number.  Any
    /// context.
    pub(crate) fn members(&self, mgid: &[u8; 16], out: &mut [u32]) -> usize {
        let g = self.inner.lock();
        let Ok(i) = g.find(mgid) else {
            return 0;
        };
        let m = g.groups[i].members();
        let n = m.len().min(out.len());
        out[..n].copy_from_slice(&m[..n]);
        n
    }
}
