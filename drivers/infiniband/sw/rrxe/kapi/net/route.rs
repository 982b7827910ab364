// SPDX-License-Identifier: GPL-2.0

//! Sending IP packets built by the driver: an output route lookup (IPv4 or
//! IPv6, bound to the device's interface), an skb with room for the link
//! layer, and `ip_local_out`/`ip6_local_out`, which finish the IP header
//! (length, checksum), run netfilter and resolve the neighbour.  A route to
//! one of the host's own addresses goes through the loopback device; the
//! caller sees that ([`Route::is_loopback`]) and can deliver the packet
//! itself instead.

use core::ptr::NonNull;
use kernel::{bindings, error::from_err_ptr, prelude::*};

use super::netdev::NetDevice;
use super::skb::SkBuff;

/// Source and destination of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpPair {
    V4 { saddr: [u8; 4], daddr: [u8; 4] },
    V6 { saddr: [u8; 16], daddr: [u8; 16] },
}

const IPPROTO_UDP: u8 = 17;
/// `HH_DATA_MOD`: link-layer header room is rounded to this.
const HH_DATA_MOD: usize = 16;

fn enetunreach() -> Error {
    Error::from_errno(-(bindings::ENETUNREACH as i32))
}

/// A referenced output route (`struct dst_entry`).
pub(crate) struct Route {
    dst: NonNull<bindings::dst_entry>,
    v6: bool,
}

// SAFETY: A dst reference may be dropped from any context.
unsafe impl Send for Route {}

impl Route {
    /// Looks up the route from `pair.saddr` to `pair.daddr` out of `netdev`.
    pub(crate) fn lookup(netdev: &NetDevice, pair: &IpPair) -> Result<Self> {
        let net = netdev.net().as_raw();
        // SAFETY: The device is live (borrowed).
        let oif = unsafe { (*netdev.as_raw()).ifindex };
        match pair {
            IpPair::V4 { saddr, daddr } => {
                // SAFETY: All-zeroes is a valid flow (wildcards).
                let mut fl: bindings::flowi4 = unsafe { core::mem::zeroed() };
                fl.__fl_common.flowic_oif = oif;
                fl.__fl_common.flowic_proto = IPPROTO_UDP;
                fl.saddr = u32::from_ne_bytes(*saddr);
                fl.daddr = u32::from_ne_bytes(*daddr);
                // SAFETY: Live namespace; `fl` is valid for the call.  The
                // result is a referenced rtable or an error pointer.
                let rt = from_err_ptr(unsafe { bindings::ip_route_output_key(net, &mut fl) })?;
                let rt = NonNull::new(rt).ok_or(enetunreach())?;
                // `dst` is the first member of `struct rtable`.
                Ok(Self { dst: rt.cast(), v6: false })
            }
            IpPair::V6 { saddr, daddr } => {
                // SAFETY: As above.
                let mut fl: bindings::flowi6 = unsafe { core::mem::zeroed() };
                fl.__fl_common.flowic_oif = oif;
                fl.__fl_common.flowic_proto = IPPROTO_UDP;
                fl.saddr.in6_u.u6_addr8 = *saddr;
                fl.daddr.in6_u.u6_addr8 = *daddr;
                // SAFETY: Live namespace, valid flow; no socket, no final
                // destination.  Returns a referenced dst or an error.
                let dst = from_err_ptr(unsafe {
                    bindings::ip6_dst_lookup_flow(net, core::ptr::null(), &mut fl, core::ptr::null())
                })?;
                Ok(Self { dst: NonNull::new(dst).ok_or(enetunreach())?, v6: true })
            }
        }
    }

    fn out_dev(&self) -> *mut bindings::net_device {
        // SAFETY: A referenced dst keeps its device pointer valid.
        unsafe { (*self.dst.as_ptr()).__bindgen_anon_1.dev }
    }

    /// The route leads to this host (loopback device).
    pub(crate) fn is_loopback(&self) -> bool {
        let dev = self.out_dev();
        // SAFETY: See `out_dev`.
        !dev.is_null() && unsafe { (*dev).flags } & bindings::net_device_flags_IFF_LOOPBACK != 0
    }

    /// Room the output device needs in front of the IP header.
    fn link_headroom(&self) -> usize {
        let dev = self.out_dev();
        if dev.is_null() {
            return HH_DATA_MOD * 2;
        }
        // SAFETY: See `out_dev`; plain reads of configuration fields.
        let (hh, extra) = unsafe { ((*dev).hard_header_len as usize, (*dev).needed_headroom as usize) };
        ((hh + extra) & !(HH_DATA_MOD - 1)) + HH_DATA_MOD
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        // SAFETY: We own one reference.
        unsafe { bindings::dst_release(self.dst.as_ptr()) };
    }
}

/// A packet being built: `len` bytes of transport payload first, then the
/// IP and UDP headers pushed in front.
pub(crate) struct TxPacket {
    skb: SkBuff,
}

impl TxPacket {
    /// An skb for `route` with room for `hdr_len` bytes of IP + UDP header
    /// and `len` zeroed bytes of UDP payload.
    pub(crate) fn new(route: &Route, hdr_len: usize, len: usize) -> Result<Self> {
        let head = route.link_headroom().checked_add(hdr_len).ok_or(EINVAL)?;
        let mut skb = SkBuff::alloc(head, len)?;
        skb.put_zeroed(len)?;
        Ok(Self { skb })
    }

    /// The UDP payload (before [`Self::push_headers`]) or the whole packet
    /// from the IP header (after).
    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        self.skb.data_mut()
    }

    /// Prepends the IP and UDP headers `hdrs` and marks the IP header.
    pub(crate) fn push_headers(&mut self, hdrs: &[u8]) -> Result {
        self.skb.push(hdrs)?;
        self.skb.reset_network_header();
        Ok(())
    }

    /// Sends the packet along `route` (consumed).  `EAGAIN` if the stack
    /// dropped it.
    pub(crate) fn send(self, route: Route, netdev: &NetDevice) -> Result {
        let v6 = route.v6;
        let skb = self.skb.into_raw();
        // SAFETY: `skb` is ours; `skb_dst_set` takes over the route's
        // reference.  `ip_local_out` consumes the skb in every case.
        let ret = unsafe {
            bindings::skb_dst_set(skb, route.dst.as_ptr());
            core::mem::forget(route);
            let net = netdev.net().as_raw();
            if v6 {
                bindings::ip6_local_out(net, core::ptr::null_mut(), skb)
            } else {
                bindings::ip_local_out(net, core::ptr::null_mut(), skb)
            }
        };
        // `net_xmit_eval`: congestion notification is not a loss.
        if ret == 0 || ret == bindings::NET_XMIT_CN as i32 {
            Ok(())
        } else {
            Err(EAGAIN)
        }
    }

    /// The packet as if received (for delivery to this host without
    /// touching the network): its network header is set.
    pub(crate) fn into_skb(self) -> SkBuff {
        self.skb
    }
}
