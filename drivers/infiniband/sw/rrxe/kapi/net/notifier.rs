// SPDX-License-Identifier: GPL-2.0

//! The netdevice notifier chain (`register_netdevice_notifier`): a pinned
//! registration that calls a typed handler and unregisters on drop.  The
//! handler only runs while the registration exists.

use core::marker::PhantomData;
use kernel::{bindings, error::to_result, prelude::*, types::Opaque};

use super::netdev::NetDevice;

/// The netdevice events rrxe distinguishes (`enum netdev_cmd`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum NetdevEvent {
    /// `NETDEV_UP`
    Up,
    /// `NETDEV_DOWN`
    Down,
    /// `NETDEV_CHANGE` (carrier or flags)
    Change,
    /// `NETDEV_CHANGEMTU`
    ChangeMtu,
    /// `NETDEV_CHANGEADDR`
    ChangeAddr,
    /// `NETDEV_UNREGISTER`: the device is going away; drop every reference.
    Unregister,
    /// Anything else, with its raw value.
    Other(u64),
}

impl NetdevEvent {
    fn from_raw(ev: u64) -> Self {
        let ev32 = ev as u32;
        match ev32 {
            _ if u64::from(ev32) != ev => Self::Other(ev),
            bindings::netdev_cmd_NETDEV_UP => Self::Up,
            bindings::netdev_cmd_NETDEV_DOWN => Self::Down,
            bindings::netdev_cmd_NETDEV_CHANGE => Self::Change,
            bindings::netdev_cmd_NETDEV_CHANGEMTU => Self::ChangeMtu,
            bindings::netdev_cmd_NETDEV_CHANGEADDR => Self::ChangeAddr,
            bindings::netdev_cmd_NETDEV_UNREGISTER => Self::Unregister,
            _ => Self::Other(ev),
        }
    }
}

/// Receives netdevice events.  Called in process context with RTNL held, for
/// every net_device of every namespace.
pub(crate) trait NetdevHandler: 'static {
    /// One event for `dev`; the device is referenced for the call.
    fn event(event: NetdevEvent, dev: &NetDevice);
}

/// A registered netdevice notifier; unregistered when dropped.
///
/// # Invariants
///
/// `nb` is a pinned `notifier_block` calling `Self::call`, registered on
/// the netdevice notifier chain for the whole life of `self`; only the
/// drop unregisters it.
#[pin_data(PinnedDrop)]
pub(crate) struct NetdevNotifier<H: NetdevHandler> {
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    _handler: PhantomData<H>,
}

// SAFETY: The notifier block is only touched by the notifier core (under its
// own locking) after registration; the handler is a type, not data.
unsafe impl<H: NetdevHandler> Send for NetdevNotifier<H> {}
// SAFETY: A shared reference gives no access to the notifier block; the
// notifier core serialises its own use of it.
unsafe impl<H: NetdevHandler> Sync for NetdevNotifier<H> {}

impl<H: NetdevHandler> NetdevNotifier<H> {
    /// Registers the notifier.  Existing devices are replayed to the handler
    /// as `NETDEV_REGISTER`/`NETDEV_UP` by the core.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // INVARIANT: Registered here; a failed registration yields no
            // `Self`.
            nb <- Opaque::try_ffi_init(|slot: *mut bindings::notifier_block| {
                // SAFETY: `slot` is valid for writes.
                unsafe {
                    slot.write(bindings::notifier_block {
                        notifier_call: Some(Self::call),
                        next: core::ptr::null_mut(),
                        priority: 0,
                    })
                };
                // SAFETY: `slot` was initialised above and is pinned: it
                // lives in this pinned struct until `drop` unregisters it.
                to_result(unsafe { bindings::register_netdevice_notifier(slot) })
            }),
            _handler: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Only called by the netdevice notifier chain, with a
    /// `netdev_notifier_info` for a live device.
    unsafe extern "C" fn call(
        _nb: *mut bindings::notifier_block,
        event: kernel::ffi::c_ulong,
        ptr: *mut kernel::ffi::c_void,
    ) -> kernel::ffi::c_int {
        // SAFETY: The netdevice notifier chain always passes a
        // `netdev_notifier_info`, valid for the callback.
        let dev = unsafe { bindings::netdev_notifier_info_to_dev(ptr.cast()) };
        // SAFETY: The info's device is live (and referenced) for the
        // callback.
        let dev = unsafe { NetDevice::from_raw(dev) };
        H::event(NetdevEvent::from_raw(event as u64), dev);
        bindings::NOTIFY_DONE as kernel::ffi::c_int
    }
}

#[pinned_drop]
impl<H: NetdevHandler> PinnedDrop for NetdevNotifier<H> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant the block is registered and
        // pinned; it is unregistered once, here.
        unsafe { bindings::unregister_netdevice_notifier(self.nb.get()) };
    }
}
