// SPDX-License-Identifier: GPL-2.0

//! Counted resources: a device's live objects of one kind, up to the limit
//! it reports in `query_device` (C rxe's pools count the same ones).  PDs
//! and user contexts are taken and given back by their verbs; a CQ holds a
//! [`Charge`], which gives its unit back when the CQ goes.  Objects kept
//! in a table (QPs, SRQs, MRs, MWs, AHs) are bounded by the table's index
//! range instead (`kapi/xarray.rs`).

use kernel::prelude::*;
use kernel::sync::{
    atomic::{Acquire, Atomic, Full},
    Arc,
};

/// The live objects of one kind, at most `max`.
pub(crate) struct Limit {
    live: Atomic<u32>,
    max: u32,
    /// What is counted, for the underflow message.
    what: &'static str,
}

impl Limit {
    /// No live object of kind `what` yet; at most `max`.
    pub(crate) const fn new(max: u32, what: &'static str) -> Self {
        Self {
            live: Atomic::new(0),
            max,
            what,
        }
    }

    /// Takes one unit, failing with `ENOMEM` at the limit.
    pub(crate) fn take(&self) -> Result {
        self.update(|n| (n < self.max).then_some(n + 1))
            .ok_or(ENOMEM)
    }

    /// Gives back one unit; an underflow is a driver bug, reported, not
    /// hidden.
    pub(crate) fn give(&self) -> Result {
        self.update(|n| n.checked_sub(1)).ok_or_else(|| {
            pr_err!("rrxe: {} count underflow\n", self.what);
            EINVAL
        })
    }

    /// Takes one unit for an object that gives it back when it drops
    /// the charge.
    pub(crate) fn charge(self: &Arc<Self>) -> Result<Charge> {
        self.take()?;
        Ok(Charge(self.clone()))
    }

    /// Applies `f` to the count atomically (a compare-and-exchange loop);
    /// `None` if `f` refuses the current value.  Each retry means another
    /// CPU changed the count, so the loop ends.
    fn update(&self, f: impl Fn(u32) -> Option<u32>) -> Option<()> {
        let mut cur = self.live.load(Acquire);
        loop {
            let new = f(cur)?;
            match self.live.cmpxchg(cur, new, Full) {
                Ok(_) => return Some(()),
                Err(now) => cur = now,
            }
        }
    }
}

/// One live object's unit of a [`Limit`]; dropping it gives the unit back.
pub(crate) struct Charge(Arc<Limit>);

impl Drop for Charge {
    fn drop(&mut self) {
        let _ = self.0.give();
    }
}

#[kernel::macros::kunit_tests(rrxe_limit)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_bounded() {
        let l = Limit::new(2, "t");
        assert!(l.take().is_ok());
        assert!(l.take().is_ok());
        assert!(l.take().is_err());
        assert!(l.give().is_ok());
        assert!(l.take().is_ok());
    }

    #[test]
    fn underflow_is_an_error() {
        let l = Limit::new(2, "t");
        assert!(l.give().is_err());
        assert_eq!(l.live.load(Acquire), 0);
    }

    #[test]
    fn a_charge_gives_its_unit_back() {
        let l = Arc::new(Limit::new(1, "t"), GFP_KERNEL).expect("allocation");
        let c = l.charge().expect("the first unit");
        assert!(l.charge().is_err());
        drop(c);
        assert!(l.charge().is_ok());
    }
}
