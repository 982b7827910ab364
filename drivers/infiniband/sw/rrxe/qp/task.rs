// SPDX-License-Identifier: GPL-2.0

//! Who runs a QP's send or receive task: the scheduling word of
//! [`crate::proto::task`] (owner, queued, armed, quiescers) in an atomic,
//! each update one of its pure transitions applied by compare-and-swap.
//!
//! Whoever publishes input (a packet on a queue, a WQE, a timer expiry, a
//! new state) kicks the word afterwards; only the kick that finds the task
//! without an owner queues its work item, others mark the input for the
//! owner, who looks again before it lets go.  So a busy task costs a
//! kicker one atomic update and no `queue_work`, and no input is left
//! without a run (the transitions are model-checked in
//! `proto/tests/task_model.rs`).  The side's state stays behind its mutex:
//! only the owner takes it (`try_lock`), and only a quiescer
//! (`modify_qp`, destroy) competes for it.

use kernel::sync::atomic::{
    ordering::{Full, Relaxed},
    Atomic,
};

use crate::proto::task;
pub(crate) use crate::proto::task::{Claim, Finish, Kick, Take};

/// A task's scheduling word.
pub(crate) struct TaskWord(Atomic<u32>);

impl TaskWord {
    /// No owner, nothing queued or armed, not quiesced.
    pub(crate) fn new() -> Self {
        Self(Atomic::new(0))
    }

    /// Applies the transition `f` atomically; what it returned.  Full
    /// ordering: the input a kicker published before its update is seen
    /// by the owner whose update saw the mark.
    fn update<R>(&self, f: impl Fn(u32) -> (u32, R)) -> R {
        let mut cur = self.0.load(Relaxed);
        loop {
            let (new, r) = f(cur);
            match self.0.cmpxchg(cur, new, Full) {
                Ok(_) => return r,
                Err(seen) => cur = seen,
            }
        }
    }

    /// Input was published ([`task::kick`]); [`Kick::Queue`]: the caller
    /// owns the task and must queue its work item.
    pub(crate) fn kick(&self) -> Kick {
        self.update(task::kick)
    }

    /// Input was published by a caller that can run the task itself
    /// ([`task::claim`]).
    pub(crate) fn claim(&self) -> Claim {
        self.update(task::claim)
    }

    /// A work item starts ([`task::take_queued`]).
    pub(crate) fn take_queued(&self) -> Take {
        self.update(task::take_queued)
    }

    /// The owner ends a pass, its lock released ([`task::finish`]).
    pub(crate) fn finish(&self, missed: bool) -> Finish {
        self.update(|w| task::finish(w, missed))
    }

    /// The owner hands the task to a work item it queues next
    /// ([`task::park`]).
    pub(crate) fn park(&self) {
        self.update(|w| (task::park(w), ()))
    }

    /// The owner's work item could not be queued (the workqueue is gone,
    /// at unload): it gives the task up, the input left marked.
    pub(crate) fn abandon(&self) {
        self.update(|w| (task::abandon(w), ()))
    }

    /// A quiescer starts: no new owner until it ends.  (At most two at a
    /// time, `modify_qp` under the QP's `attrs` lock and destroy: the
    /// count cannot overflow.)
    pub(crate) fn quiesce(&self) {
        self.update(|w| (task::quiesce(w).unwrap_or(w), ()))
    }

    /// A quiescer ends, its lock released ([`task::unquiesce`]);
    /// [`Kick::Queue`]: input came meanwhile, the caller owns the task and
    /// must queue its work item.
    pub(crate) fn unquiesce(&self) -> Kick {
        self.update(task::unquiesce)
    }

    /// Whether a quiescer is active (an owner that got the lock gives it
    /// up for the quiescer waiting on it).
    pub(crate) fn quiesced(&self) -> bool {
        task::quiescers(self.0.load(Relaxed)) != 0
    }
}

#[kernel::macros::kunit_tests(rrxe_task)]
mod tests {
    use super::*;

    #[test]
    fn a_kick_queues_once_and_the_owner_sees_the_rest() {
        let t = TaskWord::new();
        assert_eq!(t.kick(), Kick::Queue);
        assert_eq!(t.kick(), Kick::Marked);
        assert_eq!(t.claim(), Claim::Lost);
        assert_eq!(t.take_queued(), Take::Run);
        // The marks: one more pass, then idle.
        assert_eq!(t.finish(false), Finish::Again);
        assert_eq!(t.finish(false), Finish::Idle);
        assert_eq!(t.claim(), Claim::Won);
        assert_eq!(t.finish(false), Finish::Idle);
    }

    #[test]
    fn a_stray_run_touches_nothing() {
        let t = TaskWord::new();
        assert_eq!(t.take_queued(), Take::Stray);
        assert_eq!(t.kick(), Kick::Queue);
    }

    #[test]
    fn input_during_a_quiesce_runs_after_it() {
        let t = TaskWord::new();
        t.quiesce();
        assert!(t.quiesced());
        assert_eq!(t.kick(), Kick::Marked);
        assert_eq!(t.claim(), Claim::Lost);
        assert_eq!(t.unquiesce(), Kick::Queue);
        assert!(!t.quiesced());
        assert_eq!(t.take_queued(), Take::Run);
        assert_eq!(t.finish(false), Finish::Idle);
    }

    #[test]
    fn destroy_leaves_no_owner() {
        let t = TaskWord::new();
        assert_eq!(t.kick(), Kick::Queue);
        // Destroy quiesces for good while the run is queued: the run gives
        // up, later kicks only mark.
        t.quiesce();
        assert_eq!(t.take_queued(), Take::Stray);
        assert_eq!(t.kick(), Kick::Marked);
        assert_eq!(t.claim(), Claim::Lost);
    }
}
