// SPDX-License-Identifier: GPL-2.0

//! A mutex in a `static` that initialises itself on first use: the
//! kernel's [`global_lock!`](kernel::sync::global_lock) without its
//! `unsafe` init.  A global lock must be initialised exactly once, before
//! anything locks it; [`static_mutex!`] hides the lock in a module of its
//! own and hands out only a [`LazyGlobal`], whose `lock` initialises it
//! once (the first locker does, a concurrent one waits) and then locks it.
//! A module's registries use it: they are reached from callbacks that
//! carry no context (`rdma link add`, a namespace's exit, a device's
//! release), as C keeps such lists in `static` variables.

use kernel::sync::{
    atomic::{
        ordering::{Acquire, Relaxed, Release},
        Atomic,
    },
    GlobalGuard, GlobalLock, GlobalLockBackend,
};

/// Nobody has locked it yet.
const UNINIT: u32 = 0;
/// The first locker is initialising it.
const INITIALISING: u32 = 1;
/// Initialised: it may be locked.
const READY: u32 = 2;

/// The only handle of a [`GlobalLock`]; see [`static_mutex!`].
///
/// # Invariants
///
/// `lock` is reached only through this value, and it has been initialised
/// (once) when `state` reads [`READY`].
pub(crate) struct LazyGlobal<B: GlobalLockBackend + 'static> {
    lock: &'static GlobalLock<B>,
    state: Atomic<u32>,
}

impl<B: GlobalLockBackend + 'static> LazyGlobal<B> {
    /// The handle of `lock`.
    ///
    /// # Safety
    ///
    /// Nothing else reaches `lock` (no other handle is made for it, and it
    /// is not used directly), and `lock` is not yet initialised.
    pub(crate) const unsafe fn new(lock: &'static GlobalLock<B>) -> Self {
        // INVARIANT: `state` is not `READY`; the caller promises that
        // nothing else reaches `lock`.
        Self {
            lock,
            state: Atomic::new(UNINIT),
        }
    }

    /// Locks it (sleeps), initialising it first if nobody has yet.
    pub(crate) fn lock(&'static self) -> GlobalGuard<B> {
        if self.state.load(Acquire) != READY {
            self.initialise();
        }
        self.lock.lock()
    }

    /// Initialises the lock, or waits for the locker that does.
    #[cold]
    fn initialise(&self) {
        if self.state.cmpxchg(UNINIT, INITIALISING, Relaxed).is_ok() {
            // SAFETY: Only the caller that moved `state` from `UNINIT` gets
            // here, once; nothing locks before `READY` (type invariant).
            unsafe { self.lock.init() };
            // INVARIANT: Initialised, published with release ordering.
            self.state.store(READY, Release);
            return;
        }
        while self.state.load(Acquire) != READY {
            core::hint::spin_loop();
        }
    }
}

/// Declares `static NAME: LazyGlobal<...>`, private to the module that
/// invokes it, a mutex holding `TYPE` that initialises itself on first
/// lock:
///
/// ```ignore
/// static_mutex! {
///     /// What it protects.
///     static DEVICES: Mutex<KVec<Entry>> = KVec::new();
/// }
/// let guard = DEVICES.lock();
/// ```
///
/// The lock itself lives in a module named like the static (types and
/// values have separate namespaces), private there, so the handle is the
/// only way to it.  (`global_lock!` would give the lock the visibility its
/// backend type needs; the macro implements the backend itself instead.)
macro_rules! static_mutex {
    {
        $(#[$meta:meta])* static $name:ident: Mutex<$ty:ty> = $init:expr;
    } => {
        #[allow(non_snake_case, unsafe_code)]
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            /// The lock's type (what `global_lock!` would generate, but
            /// with the lock itself kept private).
            pub(super) enum Backend {}

            impl kernel::sync::GlobalLockBackend for Backend {
                const NAME: &'static kernel::str::CStr =
                    kernel::c_str!(::core::stringify!($name));
                type Item = $ty;
                type Backend = kernel::sync::lock::mutex::MutexBackend;

                fn get_lock_class() -> ::core::pin::Pin<&'static kernel::sync::LockClassKey> {
                    kernel::static_lock_class!()
                }
            }

            /// Private: reached only through `HANDLE`.
            static LOCK: kernel::sync::GlobalLock<Backend> = {
                let init: $ty = $init;
                // SAFETY: Reached only through `HANDLE`, which initialises
                // it before its first lock; `Backend` has no other lock.
                unsafe { kernel::sync::GlobalLock::new(init) }
            };

            $(#[$meta])*
            pub(super) static HANDLE: $crate::kapi::static_mutex::LazyGlobal<Backend> = {
                // SAFETY: `LOCK` is private to this module and `HANDLE` is
                // its only handle; it is not initialised yet.
                unsafe { $crate::kapi::static_mutex::LazyGlobal::new(&LOCK) }
            };
        }
        use self::$name::HANDLE as $name;
    };
}
pub(crate) use static_mutex;

#[kernel::macros::kunit_tests(rrxe_static_mutex)]
mod tests {
    static_mutex! {
        static COUNT: Mutex<u32> = 0;
    }

    #[test]
    fn the_first_lock_initialises_and_later_ones_see_its_value() {
        *COUNT.lock() += 1;
        *COUNT.lock() += 2;
        assert_eq!(*COUNT.lock(), 3);
    }
}
