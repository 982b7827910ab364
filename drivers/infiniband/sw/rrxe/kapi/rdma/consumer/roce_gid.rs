// SPDX-License-Identifier: GPL-2.0

//! Finding a RoCE v2 source address in a port's GID table: the GID of
//! an IPv4 address of the port's netdev (an IPv4-mapped IPv6 address of
//! type `IB_GID_TYPE_ROCE_UDP_ENCAP`), with its index and the netdev's
//! MAC address, what a kernel consumer needs for an RC path.  The GID
//! table is read with `rdma_get_gid_attr`; every attribute taken is put
//! back (`rdma_put_gid_attr`) before the search returns, and only copies
//! leave it.

use kernel::{bindings, error::from_err_ptr, prelude::*};

use super::super::client::IbDevice;

/// A RoCE v2 GID of a port.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoceGid {
    /// The port (from 1).
    pub(crate) port: u32,
    /// The GID's index in the port's table.
    pub(crate) index: u8,
    /// The GID: an IPv4-mapped address.
    pub(crate) gid: [u8; 16],
    /// The MAC address of the GID's netdev.
    pub(crate) mac: [u8; 6],
}

impl RoceGid {
    /// The IPv4 address the GID maps.
    pub(crate) fn ipv4(&self) -> [u8; 4] {
        [self.gid[12], self.gid[13], self.gid[14], self.gid[15]]
    }

    /// The first RoCE v2 GID of an IPv4 address on `port` of `dev`, if
    /// any (`ENOENT` otherwise).  May sleep.
    pub(crate) fn find_ipv4(dev: &IbDevice, port: u32, table_len: i32) -> Result<Self> {
        let slots = u8::try_from(table_len.clamp(0, 256) - 1).unwrap_or(u8::MAX);
        for index in 0..=slots {
            // SAFETY: `dev` is a registered device and `port` one of its
            // ports (the caller took `table_len` from `ib_query_port`).
            let attr = unsafe { bindings::rdma_get_gid_attr(dev.raw(), port, index.into()) };
            // An empty slot is an error pointer.
            let Ok(attr) = from_err_ptr(attr.cast_mut()) else {
                continue;
            };
            let found = Self::of_attr(attr, port, index);
            // SAFETY: `attr` was referenced by `rdma_get_gid_attr` above
            // and is released once, here.
            unsafe { bindings::rdma_put_gid_attr(attr) };
            if let Some(g) = found {
                return Ok(g);
            }
        }
        Err(ENOENT)
    }

    fn of_attr(attr: *mut bindings::ib_gid_attr, port: u32, index: u8) -> Option<Self> {
        // SAFETY: `attr` is a referenced GID attribute (the caller holds
        // it); its type and GID do not change while referenced.
        let (ty, gid) = unsafe { ((*attr).gid_type, (*attr).gid.raw) };
        let v4_mapped = gid[..10].iter().all(|&b| b == 0) && gid[10] == 0xff && gid[11] == 0xff;
        if ty != bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP || !v4_mapped {
            return None;
        }
        let _rcu = kernel::sync::rcu::read_lock();
        // SAFETY: `attr` is referenced, and the RCU read lock the netdev
        // pointer needs is held.
        let nd = unsafe { bindings::rdma_read_gid_attr_ndev_rcu(attr) };
        let nd = from_err_ptr(nd).ok().filter(|p| !p.is_null())?;
        // SAFETY: The netdev stays valid until the RCU read lock is
        // released, after this use.
        let mac = unsafe { crate::kapi::net::netdev::NetDevice::from_raw(nd) }.hw_addr6()?;
        Some(Self {
            port,
            index,
            gid,
            mac,
        })
    }
}
