// SPDX-License-Identifier: GPL-2.0

//! A spinlock that disables local interrupts while held
//! (`spin_lock_irqsave`), as a backend for the kernel crate's generic
//! [`Lock`].  The in-tree `SpinLock` uses plain `spin_lock`, which is wrong
//! for data that kernel verbs consumers reach from any context: ULPs call
//! `post_send`, `post_recv` and `poll_cq` from softirq (`IB_POLL_SOFTIRQ`),
//! from process context and with interrupts disabled.

use kernel::{
    bindings,
    ffi::{c_char, c_ulong},
    sync::lock::{Backend, Lock},
};

/// Creates a [`SpinLockIrq`] initialiser with a static lock class.
#[macro_export]
macro_rules! new_spinlock_irq {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::kapi::spinlock_irq::SpinLockIrq::new(
            $inner, kernel::optional_name!($($name)?), kernel::static_lock_class!())
    };
}

/// A spinlock taken with local interrupts disabled.
pub(crate) type SpinLockIrq<T> = Lock<T, SpinLockIrqBackend>;

/// The backend of [`SpinLockIrq`].
pub(crate) struct SpinLockIrqBackend;

// SAFETY: The kernel's `spinlock_t` ensures mutual exclusion; the saved
// interrupt state is restored by the unlock of the same guard, and
// `relock` (the default) takes the lock again the same way.
unsafe impl Backend for SpinLockIrqBackend {
    type State = bindings::spinlock_t;
    type GuardState = c_ulong;

    unsafe fn init(ptr: *mut Self::State, name: *const c_char, key: *mut bindings::lock_class_key) {
        // SAFETY: The caller passes memory valid for writes and a name and
        // key valid forever.
        unsafe { bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: The caller passes an initialised lock; a (non-RT)
        // `spinlock_t` is a `raw_spinlock_t` in its first union member.
        unsafe { bindings::_raw_spin_lock_irqsave(ptr.cast::<bindings::raw_spinlock_t>()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, flags: &Self::GuardState) {
        // SAFETY: The caller owns the lock, taken by `lock` above, which
        // returned `flags`.
        unsafe {
            bindings::_raw_spin_unlock_irqrestore(ptr.cast::<bindings::raw_spinlock_t>(), *flags)
        }
    }

    /// Not offered: saving the interrupt state without taking the lock
    /// needs `local_irq_save`, an inline function with no binding.  The
    /// attempt always reports the lock as busy (nothing is held).
    unsafe fn try_lock(_ptr: *mut Self::State) -> Option<Self::GuardState> {
        None
    }

    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: The lock is initialised.
        unsafe { bindings::spin_assert_is_held(ptr) }
    }
}
