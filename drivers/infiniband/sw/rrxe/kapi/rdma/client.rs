// SPDX-License-Identifier: GPL-2.0

//! ib_core clients (`struct ib_client`): code that ib_core tells of every
//! RDMA device, whatever its driver, when it is registered (or at once,
//! for devices registered before the client) and before it is
//! unregistered; the way ULPs such as rdma_cm or the NVMe host learn of
//! devices.  [`IbDevice`] is the read-only view a client gets of a device
//! during those calls: its name, driver, ports and their attributes.  A
//! device is only lent for the duration of a call, and a registration is
//! unregistered when dropped.
//!
//! rrxe itself is a provider, not a client; `samples/rust` uses this to
//! show the abstractions serving another module.

use core::marker::PhantomData;
use kernel::{bindings, error::to_result, prelude::*, types::Opaque};

use crate::kapi::FixedName;

/// What a client does when devices come and go.
pub(crate) trait ClientHandler: 'static {
    /// The client's name (ib_core lists it in `rdma dev show -d`).
    const NAME: &'static CStr;

    /// `dev` was registered.  Process context; may sleep.
    fn added(dev: &IbDevice);

    /// `dev` is being unregistered; it is still usable for the call.
    /// Process context; may sleep.
    fn removed(dev: &IbDevice);
}

/// An RDMA device, as a client sees it during [`ClientHandler::added`]
/// and [`ClientHandler::removed`].
///
/// # Invariants
///
/// A `&IbDevice` always points to an `ib_device` that ib_core has
/// registered (or is registering or unregistering) and that stays valid
/// for the borrow: ib_core hands it to a client's `add` or `remove`
/// callback, which lends it for the duration of the call.
#[repr(transparent)]
pub(crate) struct IbDevice(Opaque<bindings::ib_device>);

/// A port's state, as `ib_query_port` reports it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortInfo {
    /// `IB_PORT_*` state: 4 is ACTIVE.
    pub(crate) state: u32,
    /// The active MTU in bytes.
    pub(crate) active_mtu: u32,
    /// Slots in the GID table.
    pub(crate) gid_tbl_len: i32,
}

impl IbDevice {
    /// # Safety
    ///
    /// `ptr` is a registered (or being registered or unregistered) device
    /// that stays valid for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // INVARIANT: The caller guarantees a registered device, valid for
        // `'a`.
        // SAFETY: `IbDevice` is a transparent wrapper of `ib_device`; the
        // caller guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The device's name (e.g. `rrxe0`), copied: it may be renamed.
    pub(crate) fn name(&self) -> FixedName<64> {
        // SAFETY: By the type invariant `self` is a valid device; `name` is
        // an inline array.
        let name = unsafe { &(*self.raw()).name };
        FixedName::from_c_chars(name)
    }

    /// The driver that created it (`RDMA_DRIVER_*`: rxe is 11).
    pub(crate) fn driver_id(&self) -> u32 {
        // SAFETY: `self` is a valid device (type invariant); `ops` is set
        // before registration and not changed after.
        unsafe { (*self.raw()).ops.driver_id }
    }

    /// The number of physical ports (numbered from 1).
    pub(crate) fn port_count(&self) -> u32 {
        // SAFETY: `self` is a valid device (type invariant);
        // `phys_port_cnt` is set before registration and not changed after.
        unsafe { (*self.raw()).phys_port_cnt }
    }

    /// `ib_query_port` of `port` (1 ..= `port_count()`).  May sleep.
    pub(crate) fn query_port(&self, port: u32) -> Result<PortInfo> {
        if port == 0 || port > self.port_count() {
            return Err(EINVAL);
        }
        let mut attr = core::mem::MaybeUninit::<bindings::ib_port_attr>::zeroed();
        // SAFETY: `self` is a valid device (type invariant), `port` one of
        // its ports, and `attr` is writable memory of the attribute's type.
        to_result(unsafe { bindings::ib_query_port(self.raw(), port, attr.as_mut_ptr()) })?;
        // SAFETY: zeroed, then filled by a successful `ib_query_port`.
        let attr = unsafe { attr.assume_init() };
        Ok(PortInfo {
            state: attr.state,
            active_mtu: 128u32 << attr.active_mtu.min(5),
            gid_tbl_len: attr.gid_tbl_len,
        })
    }
}

/// A registered client; unregistered when dropped (ib_core then calls
/// [`ClientHandler::removed`] for every device it was told of).
///
/// # Invariants
///
/// `client` is a pinned `ib_client` named `H::NAME` calling `Self::add` and
/// `Self::remove`, registered with ib_core (`ib_register_client`) for the
/// whole life of `self`; only the drop unregisters it.
#[pin_data(PinnedDrop)]
pub(crate) struct ClientRegistration<H: ClientHandler> {
    #[pin]
    client: Opaque<bindings::ib_client>,
    _handler: PhantomData<H>,
}

// SAFETY: After registration only ib_core touches `client`, under its
// own locks; the handler is a type, not data.
unsafe impl<H: ClientHandler> Send for ClientRegistration<H> {}
// SAFETY: Shared references to a registration give no access to
// `client`; ib_core serialises its own use of it.
unsafe impl<H: ClientHandler> Sync for ClientRegistration<H> {}

impl<H: ClientHandler> ClientRegistration<H> {
    /// Registers the client; [`ClientHandler::added`] runs for every
    /// device already registered before this returns.  May sleep.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // INVARIANT: Registered here; a failed registration yields no
            // `Self`.
            client <- Opaque::try_ffi_init(|slot: *mut bindings::ib_client| {
                // SAFETY: `slot` is valid for writes; all-zero is the
                // empty `ib_client` ib_core expects before registration.
                unsafe { slot.write(core::mem::zeroed()) };
                // SAFETY: `slot` was initialised above and is exclusively
                // ours until `ib_register_client` below.
                let client = unsafe { &mut *slot };
                // The name is a 'static C string.
                client.name = H::NAME.as_char_ptr();
                client.add = Some(Self::add);
                client.remove = Some(Self::remove);
                client.set_no_kverbs_req(1);
                // SAFETY: `slot` is an initialised client, pinned until
                // `drop` unregisters it.
                to_result(unsafe { bindings::ib_register_client(slot) })
            }),
            _handler: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Only called by ib_core with a device being registered (or already
    /// registered when the client was), valid for the call.
    unsafe extern "C" fn add(dev: *mut bindings::ib_device) -> kernel::ffi::c_int {
        // SAFETY: ib_core passes a valid device for the call.
        let dev = unsafe { IbDevice::from_raw(dev) };
        H::added(dev);
        0
    }

    /// # Safety
    ///
    /// Only called by ib_core with a device the client was told of, valid
    /// for the call.
    unsafe extern "C" fn remove(dev: *mut bindings::ib_device, _data: *mut core::ffi::c_void) {
        // SAFETY: ib_core passes a valid device for the call.
        let dev = unsafe { IbDevice::from_raw(dev) };
        H::removed(dev);
    }
}

#[pinned_drop]
impl<H: ClientHandler> PinnedDrop for ClientRegistration<H> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered and pinned (type invariant); unregistered
        // once, here.
        unsafe { bindings::ib_unregister_client(self.client.get()) };
    }
}
