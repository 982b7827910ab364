// SPDX-License-Identifier: GPL-2.0

//! `rdma link add NAME type TYPE netdev DEV`: registration of an RDMA link
//! type (`struct rdma_link_ops`) whose `newlink` creates a device.  The
//! registration is pinned and unregistered (`rdma_link_unregister`) when
//! dropped, so `newlink` only runs while it exists.

use core::marker::PhantomData;
use kernel::{bindings, error::from_result, prelude::*, types::Opaque};

use crate::kapi::net::netdev::NetDevice;

/// Creates devices for one `rdma link` type.
pub(crate) trait LinkHandler: 'static {
    /// The `type` word of `rdma link add` (e.g. `c"rrxe"`).
    const TYPE: &'static CStr;

    /// Creates and registers a device named `name` on `netdev`.  Called in
    /// process context from the RDMA netlink handler, which holds a
    /// reference on `netdev` for the call.
    fn newlink(name: &CStr, netdev: &NetDevice) -> Result;
}

/// A registered link type; unregistered when dropped.
///
/// # Invariants
///
/// `ops` is a pinned `rdma_link_ops` for `H::TYPE` calling `Self::newlink`,
/// registered with ib_core (`rdma_link_register`) for the whole life of
/// `self`; only the drop unregisters it.
#[pin_data(PinnedDrop)]
pub(crate) struct LinkRegistration<H: LinkHandler> {
    #[pin]
    ops: Opaque<bindings::rdma_link_ops>,
    _handler: PhantomData<H>,
}

// SAFETY: After registration only ib_core touches `ops`, under its
// `link_ops_rwsem`.
unsafe impl<H: LinkHandler> Send for LinkRegistration<H> {}
// SAFETY: Shared references to a registration give no access to `ops`;
// ib_core serialises its own use of it under `link_ops_rwsem`.
unsafe impl<H: LinkHandler> Sync for LinkRegistration<H> {}

impl<H: LinkHandler> LinkRegistration<H> {
    /// Registers the link type.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // INVARIANT: Registered here (the registration cannot fail).
            ops <- Opaque::ffi_init(|slot: *mut bindings::rdma_link_ops| {
                // SAFETY: All-zeroes is a valid `list_head` (two null
                // pointers); `rdma_link_register` links it in.
                let list = unsafe { core::mem::zeroed() };
                // SAFETY: `slot` is valid for writes; `TYPE` is a 'static C
                // string.
                unsafe {
                    slot.write(bindings::rdma_link_ops {
                        list,
                        type_: H::TYPE.as_char_ptr(),
                        newlink: Some(Self::newlink),
                        dellink: None,
                    })
                };
                // SAFETY: `slot` was initialised above and is pinned until
                // `drop` unregisters it.
                unsafe { bindings::rdma_link_register(slot) };
            }),
            _handler: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Only called by ib_core's netlink handler with a NUL-terminated name
    /// and a net_device it holds a reference on for the call.
    unsafe extern "C" fn newlink(
        name: *const kernel::ffi::c_char,
        ndev: *mut bindings::net_device,
    ) -> kernel::ffi::c_int {
        from_result(|| {
            // SAFETY: nldev passes a NUL-terminated name from a validated
            // netlink attribute, valid until we return.
            let name = unsafe { CStr::from_char_ptr(name) };
            // SAFETY: nldev passes a net_device it holds a reference on
            // until we return.
            let ndev = unsafe { NetDevice::from_raw(ndev) };
            H::newlink(name, ndev)?;
            Ok(0)
        })
    }
}

#[pinned_drop]
impl<H: LinkHandler> PinnedDrop for LinkRegistration<H> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered and pinned (type invariant); unregistered
        // once, here.
        unsafe { bindings::rdma_link_unregister(self.ops.get()) };
    }
}
