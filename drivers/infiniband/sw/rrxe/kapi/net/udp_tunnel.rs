// SPDX-License-Identifier: GPL-2.0

//! UDP tunnel sockets (`udp_sock_create` + `setup_udp_tunnel_sock`): a
//! kernel socket bound to a UDP port in one network namespace whose packets
//! go to an encapsulation handler instead of a socket queue.  The handler
//! runs in softirq context and must not sleep.  Dropping a
//! [`TunnelSocket`] releases the socket and waits until no handler call is
//! running, so the handler never runs after it.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, prelude::*, types::Opaque};

use super::netdev::NetDevice;
use super::skb::SkBuff;

/// A network namespace, borrowed.
///
/// # Invariants
///
/// A `&Net` always points to a live `struct net` that stays live for the
/// borrow (the namespace of a live device, or one the pernet core hands
/// to a callback for the call).
#[repr(transparent)]
pub(crate) struct Net(Opaque<bindings::net>);

impl Net {
    /// # Safety
    ///
    /// `net` must be a live namespace for the returned lifetime.
    pub(crate) unsafe fn from_raw<'a>(net: *mut bindings::net) -> &'a Self {
        // INVARIANT: The caller guarantees that the namespace stays live for
        // `'a`.
        // SAFETY: `Net` is transparent over the C struct; liveness per the
        // caller's contract.
        unsafe { &*net.cast() }
    }

    pub(crate) fn as_raw(&self) -> *mut bindings::net {
        self.0.get()
    }

    /// The namespace's cookie: unique for the system's lifetime (never
    /// reused, unlike the address).
    ///
    /// Read by a C helper, not through `bindings::net`: bindgen drops the
    /// MS-extension anonymous member `struct ns_tree;` of `struct
    /// ns_common`, so every field of the Rust `struct net` after `ns` is
    /// misplaced (by 128 bytes on the debug kernel, where it read a kernel
    /// pointer, equal for all namespaces).  No field of `struct net` is
    /// read from Rust.
    pub(crate) fn cookie(&self) -> u64 {
        // SAFETY: The namespace is live (type invariant); the helper reads
        // `net_cookie`, written once at namespace creation.
        unsafe { bindings::net_cookie(self.as_raw()) }
    }
}

impl NetDevice {
    /// The namespace the device is in.
    pub(crate) fn net(&self) -> &Net {
        // Namespace teardown moves or unregisters its devices first.
        // SAFETY: The device is live for the borrow of `self` (type
        // invariant of `NetDevice`), and a live device's namespace is live.
        unsafe { Net::from_raw(bindings::dev_net(self.as_raw())) }
    }
}

/// The receive side of a tunnel socket.
pub(crate) trait EncapRecv: 'static {
    /// A packet for the socket's port arrived on `netdev`: `skb`'s data
    /// starts at the UDP header, its network header is set.  Called in
    /// softirq context.
    fn recv(netdev: &NetDevice, skb: SkBuff);
}

/// Which IP version a socket serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    V4,
    V6,
}

/// A UDP tunnel socket whose packets go to `H`.  Dropping it closes the
/// socket and waits until no handler call is running any more.
///
/// # Invariants
///
/// `sock` is a kernel UDP socket made by `udp_sock_create4` or
/// `udp_sock_create6` and set up as a tunnel socket calling
/// `encap_rcv::<H>`, owned by `self` and released only by its drop.
pub(crate) struct TunnelSocket<H: EncapRecv> {
    sock: NonNull<bindings::socket>,
    _h: PhantomData<H>,
}

// SAFETY: The socket is owned (type invariant) and only released through
// its own thread-safe API.
unsafe impl<H: EncapRecv> Send for TunnelSocket<H> {}
// SAFETY: No `&self` method touches the socket.
unsafe impl<H: EncapRecv> Sync for TunnelSocket<H> {}

const AF_INET: u8 = 2;
const AF_INET6: u8 = 10;
/// `UDP_ENCAP_ESPINUDP`, the value C tunnels without a special type use.
const ENCAP_TYPE: u8 = 1;

impl<H: EncapRecv> TunnelSocket<H> {
    /// Opens a socket on `port` (any address of `family`) in `net`.  UDP
    /// checksums are neither required on receive nor generated (RoCEv2
    /// packets carry the ICRC); an IPv6 socket takes IPv6 only.
    pub(crate) fn open(net: &Net, family: Family, port: u16) -> Result<Self> {
        // SAFETY: All-zeroes is a valid `udp_port_cfg` (any address).
        let mut cfg: bindings::udp_port_cfg = unsafe { core::mem::zeroed() };
        cfg.local_udp_port = port.to_be();
        let mut sock: *mut bindings::socket = core::ptr::null_mut();
        let ret = match family {
            Family::V4 => {
                cfg.family = AF_INET;
                // SAFETY: `net` is live; `cfg` and `sock` are valid for the
                // call.
                unsafe { bindings::udp_sock_create4(net.as_raw(), &mut cfg, &mut sock) }
            }
            Family::V6 => {
                cfg.family = AF_INET6;
                cfg.set_ipv6_v6only(1);
                // SAFETY: `net` is live; `cfg` and `sock` are valid for the
                // call.
                unsafe { bindings::udp_sock_create6(net.as_raw(), &mut cfg, &mut sock) }
            }
        };
        kernel::error::to_result(ret)?;
        let sock = NonNull::new(sock).ok_or(ENOMEM)?;
        // SAFETY: All-zeroes is a valid config (no callbacks, no user data).
        let mut tcfg: bindings::udp_tunnel_sock_cfg = unsafe { core::mem::zeroed() };
        tcfg.encap_type = ENCAP_TYPE;
        tcfg.encap_rcv = Some(encap_rcv::<H>);
        // SAFETY: `sock` was just created, and is owned by us; a kernel
        // socket's `sk` is set at creation.
        let sk = unsafe { (*sock.as_ptr()).sk };
        // SAFETY: `sk` is the socket just created in `net`; `tcfg` is
        // copied.
        unsafe { bindings::setup_udp_tunnel_sock(net.as_raw(), sk, &mut tcfg) };
        // SAFETY: `sk` is the live UDP socket just set up.
        unsafe { drop_convert_csum(sk) };
        // INVARIANT: The socket just made and set up for `H` is owned by the
        // returned value.
        Ok(Self {
            sock,
            _h: PhantomData,
        })
    }
}

impl<H: EncapRecv> Drop for TunnelSocket<H> {
    fn drop(&mut self) {
        // SAFETY: We own the socket (type invariant); its `sk` is set at
        // creation.
        let sk = unsafe { (*self.sock.as_ptr()).sk };
        // SAFETY: We own the socket (type invariant) and release it once,
        // here; nothing uses it afterwards.
        unsafe { bindings::udp_tunnel_sock_release(sk) };
        // After the release no new handler call starts, and this waits out
        // those in progress (under RCU in softirq): `H` is unused after it.
        // SAFETY: Process context (drop of an owned socket).
        unsafe { bindings::synchronize_net() };
    }
}

/// Takes back the `convert_csum` reference that `setup_udp_tunnel_sock`
/// gives every tunnel socket (C's `inet_dec_convert_csum`, a static inline
/// with no binding).  With it, a UDP GSO skb the receiving stack cuts for
/// this socket (`udp_rcv_segment`: a batch of rrxe's own on veth) gets
/// each segment's UDP checksum computed in software, a read of every
/// byte; without it the segments keep the checksum the sender left
/// partial.  A RoCEv2 packet's integrity is its ICRC, which masks the
/// UDP checksum, and the field is read nowhere else.  Done only if the
/// count is the 1 that setup just made (a fresh socket's is 0).
///
/// # Safety
///
/// `sk` is a live UDP socket.
unsafe fn drop_convert_csum(sk: *mut bindings::sock) {
    let inet = sk.cast::<bindings::inet_sock>();
    // SAFETY: `sk` is a live UDP socket (caller's contract), so the
    // `struct sock` at the start of a `struct inet_sock`: the field is
    // inside it.
    let count = unsafe { core::ptr::addr_of_mut!((*inet).convert_csum) };
    // The receive path may already read the byte on another CPU (the
    // socket is bound): a byte is read and written whole, and either value
    // is valid there (C's `setsockopt(IP_CHECKSUM)` writes it the same
    // way, unsynchronised).
    // SAFETY: `count` points into the live socket; see just above.
    let now = unsafe { count.read_volatile() };
    if now == 1 {
        // SAFETY: As for the read.
        unsafe { count.write_volatile(0) };
    }
}

/// `encap_rcv`: hands the skb to `H`; always consumes it.
///
/// # Safety
///
/// Called by the UDP stack with an skb whose ownership passes to us.
unsafe extern "C" fn encap_rcv<H: EncapRecv>(
    _sk: *mut bindings::sock,
    skb: *mut bindings::sk_buff,
) -> kernel::ffi::c_int {
    // SAFETY: Ownership of `skb` is ours (return 0 = consumed).
    let Some(skb) = (unsafe { SkBuff::from_raw(skb) }) else {
        return 0;
    };
    // SAFETY: A received skb's `dev` is the live receiving device for the
    // duration of the softirq (RCU).
    let dev = unsafe {
        (*skb.as_raw())
            .__bindgen_anon_1
            .__bindgen_anon_1
            .__bindgen_anon_1
            .dev
    };
    if dev.is_null() {
        return 0;
    }
    // SAFETY: `dev` (not null) is the live receiving device, which stays
    // valid for the softirq, so for this call (RCU).
    let dev = unsafe { NetDevice::from_raw(dev) };
    H::recv(dev, skb);
    0
}
