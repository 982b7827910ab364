// SPDX-License-Identifier: GPL-2.0

//! Per-namespace teardown (`register_pernet_subsys` with an `exit` hook):
//! lets a driver close what it keeps in a network namespace (its kernel
//! sockets) before the namespace is freed.  Kernel sockets do not pin their
//! namespace, so without this a socket could outlive it.  The hook runs
//! only while the registration exists, and for every namespace still
//! alive when it is dropped.

use core::marker::PhantomData;
use kernel::{bindings, prelude::*, types::Opaque};

use super::udp_tunnel::Net;

/// What to do when a namespace goes away.
pub(crate) trait PernetExit: 'static {
    /// `net` is being dismantled (or the registration is dropped while it
    /// still exists); its devices have already been moved or unregistered.
    fn exit(net: &Net);
}

/// A registered `struct pernet_operations` calling `T`.
///
/// # Invariants
///
/// `ops` is a pinned `pernet_operations` whose only hook is `exit::<T>`,
/// registered with the pernet core (`register_pernet_subsys`) for the
/// whole life of `self`; only the drop unregisters it.
#[pin_data(PinnedDrop)]
pub(crate) struct PernetRegistration<T: PernetExit> {
    #[pin]
    ops: Opaque<bindings::pernet_operations>,
    _t: PhantomData<T>,
}

// SAFETY: The ops are only touched by the (locked) pernet core.
unsafe impl<T: PernetExit> Send for PernetRegistration<T> {}
// SAFETY: A shared reference gives no access to the ops; the pernet core
// serialises its own use of them.
unsafe impl<T: PernetExit> Sync for PernetRegistration<T> {}

impl<T: PernetExit> PernetRegistration<T> {
    /// Registers the exit hook.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // INVARIANT: Registered here; a failed registration yields no
            // `Self`.
            ops <- Opaque::try_ffi_init(|ops: *mut bindings::pernet_operations| {
                // SAFETY: `ops` is valid for writes; all-zeroes is a valid
                // empty ops struct.
                unsafe { ops.write(core::mem::zeroed()) };
                // SAFETY: `ops` was initialised above and is exclusively
                // ours until it is registered below.
                let o = unsafe { &mut *ops };
                o.exit = Some(exit::<T>);
                // SAFETY: `ops` is initialised, with only `exit` set, and
                // pinned until `drop` unregisters it.
                kernel::error::to_result(unsafe { bindings::register_pernet_subsys(ops) })
            }),
            _t: PhantomData,
        })
    }
}

#[pinned_drop]
impl<T: PernetExit> PinnedDrop for PernetRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered and pinned (type invariant); this calls `exit`
        // for every namespace still alive, then forgets the ops.
        unsafe { bindings::unregister_pernet_subsys(self.ops.get()) };
    }
}

/// # Safety
///
/// Called by the pernet core with a namespace being dismantled.
unsafe extern "C" fn exit<T: PernetExit>(net: *mut bindings::net) {
    // SAFETY: The namespace is live for the duration of the call.
    let net = unsafe { Net::from_raw(net) };
    T::exit(net);
}
