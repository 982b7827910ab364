// SPDX-License-Identifier: GPL-2.0

//! `struct net_device`: a reference-counted handle ([`ARef<NetDevice>`],
//! `dev_hold`/`dev_put`) and read accessors for the fields a RoCE device
//! derives its identity and port state from.  A `&NetDevice` is only made
//! for a device that stays live for the borrow, so every accessor reads a
//! live `struct net_device`.

use core::ptr::{addr_of, NonNull};
use kernel::{
    bindings,
    sync::aref::{ARef, AlwaysRefCounted},
    types::Opaque,
};

/// A network device.
///
/// # Invariants
///
/// A `&NetDevice` always points to a live `struct net_device` that stays
/// live for the borrow: the holder owns a reference on it (directly or
/// through an [`ARef`]), or the context guarantees it (a notifier or
/// netlink callback for the call, an RCU read-side section the device was
/// found in).
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<bindings::net_device>);

// SAFETY: `struct net_device` is designed to be used from any thread; the
// fields read here are read with READ_ONCE semantics or are immutable.
unsafe impl Send for NetDevice {}
// SAFETY: `&NetDevice` only gives read access, to fields read with
// READ_ONCE semantics or immutable; net_device is shared by all CPUs.
unsafe impl Sync for NetDevice {}

// SAFETY: `dev_hold`/`dev_put` keep the net_device alive while the count is
// non-zero, which is all `ARef` requires; an `ARef<NetDevice>` owns one
// such reference, which upholds the type invariant.
unsafe impl AlwaysRefCounted for NetDevice {
    fn inc_ref(&self) {
        // SAFETY: By the type invariant the device is live.
        unsafe { bindings::dev_hold(self.0.get()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns one reference, which is given back here.
        unsafe { bindings::dev_put(obj.cast::<bindings::net_device>().as_ptr()) };
    }
}

/// An interface name, copied out of the device (it may be renamed).
pub(crate) type IfName = crate::kapi::FixedName<16>;

impl NetDevice {
    /// Borrows a `NetDevice` from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a live `net_device` that stays live for the whole
    /// of `'a`: referenced by the caller, or kept live by the context it is
    /// called in (e.g. a notifier callback, or an RCU read-side section that
    /// covers `'a` for a device found under RCU).
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // INVARIANT: The caller guarantees that the device stays live for
        // `'a`.
        // SAFETY: `NetDevice` is a transparent wrapper; the caller
        // guarantees liveness for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Takes over a reference the caller already owns (e.g. one returned by
    /// `ib_device_get_netdev`); `None` if `ptr` is null.
    ///
    /// # Safety
    ///
    /// If non-null, `ptr` points to a live `net_device` and the caller owns
    /// one reference on it, which moves into the returned [`ARef`].
    pub(crate) unsafe fn from_owned_raw(ptr: *mut bindings::net_device) -> Option<ARef<Self>> {
        // INVARIANT: The caller's reference moves into the `ARef`.
        // SAFETY: Per the function's contract.
        NonNull::new(ptr).map(|p| unsafe { ARef::from_raw(p.cast::<Self>()) })
    }

    /// The raw pointer, for the abstraction layer.
    pub(crate) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Interface name (e.g. `veth0`).
    pub(crate) fn name(&self) -> IfName {
        // SAFETY: The device is live (type invariant); `name` is a 16-byte
        // array that renames update in place under RTNL, so a racing copy
        // may be torn but is always in bounds.
        let name = unsafe { core::ptr::read_volatile(addr_of!((*self.as_raw()).name)) };
        IfName::from_c_chars(&name)
    }

    /// Current MTU in bytes (READ_ONCE, as the stack does).
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: Live device (type invariant); `mtu` is an unsigned int
        // read once.
        unsafe { core::ptr::read_volatile(addr_of!((*self.as_raw()).mtu)) }
    }

    /// The first (up to) 6 bytes of the hardware address, zero-padded;
    /// `None` if the device has none (`addr_len == 0`, e.g. tun or a
    /// point-to-point device).
    pub(crate) fn hw_addr6(&self) -> Option<[u8; 6]> {
        let dev = self.as_raw();
        // SAFETY: Live device (type invariant); `addr_len` is a byte set
        // before registration.
        let len = usize::from(unsafe { core::ptr::read(addr_of!((*dev).addr_len)) });
        // SAFETY: Live device (type invariant); `dev_addr` is a pointer
        // field set at allocation.
        let addr = unsafe { core::ptr::read(addr_of!((*dev).dev_addr)) };
        if len == 0 || addr.is_null() {
            return None;
        }
        let mut out = [0u8; 6];
        let n = len.min(out.len());
        // SAFETY: `dev_addr` points to `MAX_ADDR_LEN` (32) bytes, of which
        // the first `addr_len` are the address; `n <= min(addr_len, 6)`.
        unsafe { core::ptr::copy_nonoverlapping(addr, out.as_mut_ptr(), n) };
        Some(out)
    }

    /// Adds `mac` to the device's multicast filter (`dev_mc_add`,
    /// reference counted per address).
    pub(crate) fn mc_add(&self, mac: &[u8; 6]) -> kernel::error::Result {
        // SAFETY: `self` is a live netdev (type invariant); the address is
        // read for the call only.
        let rc = unsafe { bindings::dev_mc_add(self.as_raw(), mac.as_ptr()) };
        kernel::error::to_result(rc)
    }

    /// Drops one reference to `mac` in the multicast filter
    /// (`dev_mc_del`).
    pub(crate) fn mc_del(&self, mac: &[u8; 6]) {
        // SAFETY: As for `mc_add`.
        let _ = unsafe { bindings::dev_mc_del(self.as_raw(), mac.as_ptr()) };
    }

    /// Whether this is an 802.1Q VLAN device.
    pub(crate) fn is_vlan(&self) -> bool {
        // SAFETY: Live device (type invariant); `is_vlan_dev` only reads
        // its flags.
        unsafe { bindings::is_vlan_dev(self.as_raw()) }
    }

    /// For a VLAN device, its VLAN ID and the device at the bottom of its
    /// stack of VLANs (`vlan_dev_real_dev`: the device an rrxe device is
    /// bound to); `None` for any other device.  The real device lives as
    /// long as the VLAN device on it (it holds a reference).
    pub(crate) fn vlan(&self) -> Option<(u16, &NetDevice)> {
        if !self.is_vlan() {
            return None;
        }
        // SAFETY: Live (type invariant) VLAN device (checked above);
        // `vlan_dev_vlan_id` only reads its private part.
        let id = unsafe { bindings::vlan_dev_vlan_id(self.as_raw()) };
        // SAFETY: Live (type invariant) VLAN device (checked above);
        // `vlan_dev_real_dev` only reads its private part.
        let real = unsafe { bindings::vlan_dev_real_dev(self.as_raw()) };
        if real.is_null() {
            return None;
        }
        // SAFETY: The real device outlives the VLAN device on it, which
        // outlives `&self`.
        Some((id, unsafe { NetDevice::from_raw(real) }))
    }

    /// The interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: Live device (type invariant); a plain read of a field set
        // at registration.
        unsafe { (*self.as_raw()).ifindex }
    }

    /// `IFF_UP` is set (administratively up).
    pub(crate) fn is_admin_up(&self) -> bool {
        // SAFETY: Live device (type invariant); `netif_get_flags` only
        // reads.
        let flags = unsafe { bindings::netif_get_flags(self.as_raw()) };
        flags & bindings::net_device_flags_IFF_UP != 0
    }

    /// Running with carrier: the RoCE port is ACTIVE exactly then.
    pub(crate) fn is_running_with_carrier(&self) -> bool {
        // SAFETY: Live device (type invariant); `netif_running` only tests
        // a state bit.
        let running = unsafe { bindings::netif_running(self.as_raw()) };
        // SAFETY: Live device (type invariant); `netif_carrier_ok` only
        // tests a state bit.
        running && unsafe { bindings::netif_carrier_ok(self.as_raw()) }
    }
}
