// SPDX-License-Identifier: GPL-2.0

//! Rate-limited kernel messages, the Rust counterpart of C's
//! `printk_ratelimited()`: each call site may print a burst of messages per
//! interval and is silent for the rest of it, so a flood of bad input (a
//! hostile user queue, malformed packets) cannot flood the log.

use kernel::{
    bindings,
    sync::atomic::{Atomic, Relaxed},
};

/// Messages allowed per call site and interval.
const BURST: u32 = 10;
/// Interval length in nanoseconds (the C default is 5 s).
const INTERVAL_NS: i64 = 5_000_000_000;

/// Per-call-site state; see [`rrxe_ratelimited!`](crate::rrxe_ratelimited).
pub(crate) struct RateLimit {
    window_start: Atomic<i64>,
    printed: Atomic<u32>,
}

impl RateLimit {
    /// A limiter whose first window starts at the first message.
    pub(crate) const fn new() -> Self {
        Self {
            window_start: Atomic::new(i64::MIN),
            printed: Atomic::new(0),
        }
    }

    /// Whether one more message may be printed now.
    pub(crate) fn allow(&self) -> bool {
        // SAFETY: `ktime_get` reads the monotonic clock; it has no
        // preconditions and may be called from any context.
        let now = unsafe { bindings::ktime_get() };
        let start = self.window_start.load(Relaxed);
        if now.wrapping_sub(start) >= INTERVAL_NS || start == i64::MIN {
            // One racer wins the new window; the others count into it.
            if self.window_start.cmpxchg(start, now, Relaxed).is_ok() {
                self.printed.store(0, Relaxed);
            }
        }
        self.printed.fetch_add(1, Relaxed) < BURST
    }
}

/// `rrxe_ratelimited!(pr_err, "fmt", args...)`: print through the given
/// `pr_*` macro, at most [`BURST`] times per 5 s for this call site.
#[macro_export]
macro_rules! rrxe_ratelimited {
    ($pr:ident, $($arg:tt)*) => {{
        static RL: $crate::kapi::ratelimit::RateLimit = $crate::kapi::ratelimit::RateLimit::new();
        if RL.allow() {
            ::kernel::$pr!($($arg)*);
        }
    }};
}
