// SPDX-License-Identifier: GPL-2.0

//! Sending IP packets built by the driver: an output route lookup (IPv4 or
//! IPv6, bound to the device's interface) that the caller may cache and
//! revalidate ([`Route::is_valid`], `dst_check`), an skb built once with
//! room for the link layer and filled by appending ([`TxPacket`]), and
//! `ip_local_out`/`ip6_local_out`, which finish the IP header (length,
//! checksum), run netfilter and resolve the neighbour.  A route to one of
//! the host's own addresses goes through the loopback device; the caller
//! sees that ([`Route::is_loopback`]) and can deliver the packet itself
//! instead.  A [`Route`] holds a reference on its `dst_entry` until it is
//! dropped (`dst_release`); a sent packet takes its own.

use core::ptr::NonNull;
use kernel::{bindings, error::from_err_ptr, prelude::*};

use super::netdev::NetDevice;
use super::skb::SkBuff;
use super::udp_tunnel::Net;

const IPPROTO_UDP: u8 = 17;

/// The source and destination addresses a route is looked up for, in
/// network byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpPair {
    /// IPv4.
    V4 {
        /// Source (a local address).
        saddr: [u8; 4],
        /// Destination.
        daddr: [u8; 4],
    },
    /// IPv6.
    V6 {
        /// Source (a local address).
        saddr: [u8; 16],
        /// Destination.
        daddr: [u8; 16],
    },
}
/// `HH_DATA_MOD`: link-layer header room is rounded to this.
const HH_DATA_MOD: usize = 16;

fn enetunreach() -> Error {
    Error::from_errno(-(bindings::ENETUNREACH as i32))
}

/// A referenced output route (`struct dst_entry`).
///
/// # Invariants
///
/// `dst` is the `dst_entry` of an output route (the first member of a
/// `struct rtable` if not `v6`, of a `struct rt6_info` if `v6`) on which
/// `self` owns one reference, given back only by its drop.
pub(crate) struct Route {
    dst: NonNull<bindings::dst_entry>,
    v6: bool,
    /// The cookie `dst_check` needs (IPv6 routes; 0 for IPv4).
    cookie: u32,
    /// The addresses it was looked up for.
    pair: IpPair,
    /// The interface it was bound to.
    oif: i32,
}

// SAFETY: A dst reference (which `Route` owns, type invariant) may be
// dropped and checked from any context.
unsafe impl Send for Route {}
// SAFETY: `&Route` only reads the dst (`dst_check` on it is thread-safe).
unsafe impl Sync for Route {}

impl Route {
    /// Looks up the route in `net` from `pair.saddr` to `pair.daddr` out
    /// of interface `oif` (the port's netdev, or a VLAN device on it).
    pub(crate) fn lookup(net: &Net, oif: i32, pair: &IpPair) -> Result<Self> {
        let net = net.as_raw();
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
                // INVARIANT: The reference `ip_route_output_key` returned
                // moves into `self`; `dst` is the first member of `struct
                // rtable`.
                Ok(Self {
                    dst: rt.cast(),
                    v6: false,
                    cookie: 0,
                    pair: *pair,
                    oif,
                })
            }
            IpPair::V6 { saddr, daddr } => {
                // SAFETY: `flowi6` is a plain C struct for which all-zero
                // is the empty flow.
                let mut fl: bindings::flowi6 = unsafe { core::mem::zeroed() };
                fl.__fl_common.flowic_oif = oif;
                fl.__fl_common.flowic_proto = IPPROTO_UDP;
                fl.saddr.in6_u.u6_addr8 = *saddr;
                fl.daddr.in6_u.u6_addr8 = *daddr;
                // SAFETY: Live namespace, valid flow; no socket, no final
                // destination.  Returns a referenced dst or an error.
                let dst = from_err_ptr(unsafe {
                    bindings::ip6_dst_lookup_flow(
                        net,
                        core::ptr::null(),
                        &mut fl,
                        core::ptr::null(),
                    )
                })?;
                let dst = NonNull::new(dst).ok_or(enetunreach())?;
                // SAFETY: An IPv6 output dst is the first member of a
                // `struct rt6_info` we hold a reference on.
                let cookie = unsafe { bindings::rt6_get_cookie(dst.as_ptr().cast()) };
                // INVARIANT: The reference `ip6_dst_lookup_flow` returned
                // moves into `self`; an IPv6 output dst heads an `rt6_info`.
                Ok(Self {
                    dst,
                    v6: true,
                    cookie,
                    pair: *pair,
                    oif,
                })
            }
        }
    }

    /// The addresses the route was looked up for.
    pub(crate) fn pair(&self) -> &IpPair {
        &self.pair
    }

    /// The interface it was looked up for.
    pub(crate) fn oif(&self) -> i32 {
        self.oif
    }

    /// The route is still current (`dst_check`): no route, address or
    /// neighbour change has made it obsolete since the lookup.
    pub(crate) fn is_valid(&self) -> bool {
        // SAFETY: We hold a reference (type invariant); `dst_check` only
        // reads the dst and returns it if still valid, NULL otherwise
        // (taking no reference).
        !unsafe { bindings::dst_check(self.dst.as_ptr(), self.cookie) }.is_null()
    }

    /// Runs `f` with the route's output device (null for none), read as
    /// `dst_dev_rcu` does, inside an RCU read section: the dst's reference
    /// does not keep its device alive (`dst_dev_put` swaps in the blackhole
    /// device and drops the old one's reference when that device goes),
    /// RCU does until the section ends.
    fn with_out_dev<R>(&self, f: impl FnOnce(*const bindings::net_device) -> R) -> R {
        let _rcu = kernel::sync::rcu::read_lock();
        // A volatile read is `rcu_dereference` (`dst->dev_rcu`, the same
        // union field as `dev`) on every architecture Rust for Linux supports.
        // SAFETY: The dst is referenced (type invariant), so the field is
        // readable.
        let dev = unsafe {
            core::ptr::read_volatile(&raw const (*self.dst.as_ptr()).__bindgen_anon_1.dev)
        };
        f(dev)
    }

    /// The route leads to this host (loopback device).
    pub(crate) fn is_loopback(&self) -> bool {
        self.with_out_dev(|dev| {
            // SAFETY: A non-null device read in the RCU read section
            // `with_out_dev` holds stays valid until it ends.
            !dev.is_null() && unsafe { (*dev).flags } & bindings::net_device_flags_IFF_LOOPBACK != 0
        })
    }

    /// Room the output device needs in front of the IP header.
    fn link_headroom(&self) -> usize {
        self.with_out_dev(|dev| {
            if dev.is_null() {
                return HH_DATA_MOD * 2;
            }
            // SAFETY: As in `is_loopback`; plain reads of configuration
            // fields.
            let (hh, extra) = unsafe {
                (
                    (*dev).hard_header_len as usize,
                    (*dev).needed_headroom as usize,
                )
            };
            ((hh + extra) & !(HH_DATA_MOD - 1)) + HH_DATA_MOD
        })
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        // SAFETY: We own one reference (type invariant), given back once,
        // here.
        unsafe { bindings::dst_release(self.dst.as_ptr()) };
    }
}

/// A packet being built by appending, front to back, into one skb with
/// room for the link layer: the IP and UDP headers, the transport headers,
/// the payload, the pad and the ICRC.  Nothing is written twice.
///
/// # Invariants
///
/// `skb` was allocated by [`TxPacket::new`] or [`TxPacket::new_batch`]
/// and is never cloned while the packet holds it.
pub(crate) struct TxPacket {
    skb: SkBuff,
}

impl TxPacket {
    /// An empty packet for `route` that will hold `len` bytes from the IP
    /// header on.
    pub(crate) fn new(route: &Route, len: usize) -> Result<Self> {
        let mut skb = SkBuff::alloc(route.link_headroom(), len)?;
        skb.reset_network_header();
        // INVARIANT: A fresh skb.
        Ok(Self { skb })
    }

    /// As [`TxPacket::new`], for a batch of several packets (up to 64
    /// KiB in one linear buffer): `ENOMEM` early and quietly when memory
    /// is short, for the caller to send the packets one by one instead.
    pub(crate) fn new_batch(route: &Route, len: usize) -> Result<Self> {
        let mut skb = SkBuff::alloc_opportunistic(route.link_headroom(), len)?;
        skb.reset_network_header();
        // INVARIANT: A fresh skb.
        Ok(Self { skb })
    }

    /// Appends a copy of `src`; returns the bytes as written.
    pub(crate) fn append(&mut self, src: &[u8]) -> Result<&[u8]> {
        self.skb.put_bytes(src)
    }

    /// Appends `n` zero bytes.
    pub(crate) fn append_zeros(&mut self, n: usize) -> Result<&[u8]> {
        let fill = |dst: *mut u8| {
            // SAFETY: `dst` is `n` writable bytes inside the skb
            // (`put_with`).
            unsafe { core::ptr::write_bytes(dst, 0, n) }
        };
        // SAFETY: `fill` writes all `n` bytes.
        unsafe { self.skb.put_with(n, fill) }
    }

    /// Makes the packet a UDP GSO batch of `segs` segments of `gso_size`
    /// bytes of UDP payload each (the last may be shorter), for the stack
    /// (or a device with UDP segmentation offload) to cut: `l3_len` is
    /// the IP header's length, the UDP header follows it and must be
    /// appended already, its checksum field holding the pseudo-header sum
    /// (not inverted).  Each segment gets a copy of the headers with its
    /// own lengths, IPv4 identification (the batch's plus its index) and
    /// checksums.
    pub(crate) fn set_udp_gso(&mut self, l3_len: usize, gso_size: usize, segs: usize) -> Result {
        let (l3_len, gso_size, segs) = (
            u16::try_from(l3_len)?,
            u16::try_from(gso_size)?,
            u16::try_from(segs)?,
        );
        // SAFETY: The skb is fresh from `SkBuff::alloc` or
        // `alloc_opportunistic` and not cloned (type invariant).
        unsafe { self.skb.set_udp_gso(l3_len, gso_size, segs) }
    }

    /// The skb, for the other kapi modules that append to it.
    pub(in crate::kapi) fn skb_mut(&mut self) -> &mut SkBuff {
        &mut self.skb
    }

    /// Sends the packet along `route` (which stays the caller's: the skb
    /// takes its own reference).  `EAGAIN` if the stack dropped it.
    pub(crate) fn send(self, route: &Route, netdev: &NetDevice) -> Result {
        let skb = self.skb.into_raw();
        let dst = route.dst.as_ptr();
        // SAFETY: The route's dst is live (type invariant of `Route`); this
        // takes a reference for the skb.
        unsafe { bindings::dst_hold(dst) };
        // SAFETY: `skb` is ours (from `into_raw`) and has no dst yet; it
        // takes the reference just taken.
        unsafe { bindings::skb_dst_set(skb, dst) };
        let net = netdev.net().as_raw();
        let ret = if route.v6 {
            // SAFETY: `net` is live (`netdev`'s namespace) and `skb` ours,
            // with a dst; `ip6_local_out` consumes the skb in every case.
            unsafe { bindings::ip6_local_out(net, core::ptr::null_mut(), skb) }
        } else {
            // SAFETY: As for `ip6_local_out`.
            unsafe { bindings::ip_local_out(net, core::ptr::null_mut(), skb) }
        };
        // `net_xmit_eval`: congestion notification is not a loss.
        if ret == 0 || ret == bindings::NET_XMIT_CN as i32 {
            Ok(())
        } else {
            Err(EAGAIN)
        }
    }

    /// The packet as if received (for delivery to this host without
    /// touching the network): its data starts at the IP header.
    pub(crate) fn into_skb(self) -> SkBuff {
        self.skb
    }
}
