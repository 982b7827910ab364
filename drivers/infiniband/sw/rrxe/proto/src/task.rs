// SPDX-License-Identifier: GPL-2.0
//! Who runs an engine task: the transitions of its scheduling word.
//!
//! An engine task (a QP's send or receive task) is run by one owner at a
//! time, and new input (a packet, a doorbell, a timer expiry, a modify)
//! must never be left without a run that sees it.  C rxe keeps the same
//! facts in `rxe_task` (IDLE, BUSY, ARMED, DRAINING...) under a spinlock;
//! here they are one word that the kernel updates with compare-and-swap,
//! each update computed by one of the pure functions below:
//!
//! * [`kick`]: after publishing input, from any context.  If nobody owns
//!   the task and nobody quiesces it, the caller becomes its owner through
//!   a work item it must queue ([`Kick::Queue`]); otherwise the input is
//!   marked ([`ARMED`]) for the owner, or for the end of the quiesce.
//! * [`claim`]: the same from process context, to run the task in the
//!   caller (the doorbell); it never waits.
//! * [`take_queued`]: what a work item does first: a stray run (no
//!   [`QUEUED`]) touches nothing; a run during a quiesce leaves the input
//!   marked and goes.
//! * [`finish`]: what an owner does after a pass, with its lock already
//!   released: run again if input arrived meanwhile, else go idle.
//! * [`park`]: an owner that spent its budget keeps the task and hands it
//!   to a work item it queues, so other tasks get the worker; [`abandon`]:
//!   one that cannot queue it (the workqueue is gone) gives it up.
//! * [`quiesce`] / [`unquiesce`]: `modify_qp` and destroy stop the task
//!   (then they take its lock, which waits for a pass in progress); the
//!   last to end a quiesce queues the run that input during it asked for
//!   (C rxe loses that kick); destroy never ends its quiesce.
//!
//! The owner's lock is a separate mutex (the compiler's proof that one
//! pass has the task's state); the word decides who may take it, so the
//! lock is only ever contended by a quiescer.  The transitions are checked
//! exhaustively against interleavings of kickers, owners, work items and
//! quiescers in `tests/task_model.rs`.

/// The task has an owner (running, or handed to a queued work item).
pub const BUSY: u32 = 1;
/// A work item for the task is queued (or about to be) and owns it.
pub const QUEUED: u32 = 2;
/// Input arrived that no pass has seen yet.
pub const ARMED: u32 = 4;
/// One quiescer (the count of quiescers is the word's upper bits).
pub const QUIESCER: u32 = 8;

/// Quiescers on `word`.
pub const fn quiescers(word: u32) -> u32 {
    word / QUIESCER
}

/// What a [`kick`] asks of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kick {
    /// The caller now owns the task: it must queue the task's work item.
    Queue,
    /// The input is marked for the owner or the end of the quiesce.
    Marked,
}

/// Input was published: the new word and what the caller must do.
pub const fn kick(word: u32) -> (u32, Kick) {
    if word & BUSY == 0 && quiescers(word) == 0 {
        ((word | BUSY | QUEUED) & !ARMED, Kick::Queue)
    } else {
        (word | ARMED, Kick::Marked)
    }
}

/// The outcome of a [`claim`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The caller owns the task: it runs it, then calls [`finish`].
    Won,
    /// The input is marked for the owner or the end of the quiesce.
    Lost,
}

/// Input was published by a caller that can run the task itself.
pub const fn claim(word: u32) -> (u32, Claim) {
    if word & BUSY == 0 && quiescers(word) == 0 {
        ((word | BUSY) & !ARMED, Claim::Won)
    } else {
        (word | ARMED, Claim::Lost)
    }
}

/// What a work item found in [`take_queued`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// It owns the task: it runs it, then calls [`finish`].
    Run,
    /// Not queued by a transition here (nothing changed), or the task is
    /// quiesced (ownership given up, the input left marked).
    Stray,
}

/// A work item starts.
pub const fn take_queued(word: u32) -> (u32, Take) {
    if word & QUEUED == 0 {
        (word, Take::Stray)
    } else if quiescers(word) != 0 {
        ((word & !(QUEUED | BUSY)) | ARMED, Take::Stray)
    } else {
        (word & !QUEUED, Take::Run)
    }
}

/// What an owner does after [`finish`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Input arrived during the pass (or the lock was not free): it still
    /// owns the task and takes the lock for another pass.
    Again,
    /// It no longer owns the task.
    Idle,
}

/// An owner ends a pass (lock released first); `missed`: it could not
/// take the lock, so the pass did not look at the input.
pub const fn finish(word: u32, missed: bool) -> (u32, Finish) {
    let armed = word & ARMED != 0 || missed;
    if quiescers(word) == 0 && armed {
        (word & !ARMED, Finish::Again)
    } else if armed {
        ((word & !BUSY) | ARMED, Finish::Idle)
    } else {
        (word & !BUSY, Finish::Idle)
    }
}

/// An owner hands the task to a work item it queues next.
pub const fn park(word: u32) -> u32 {
    word | QUEUED
}

/// An owner whose work item could not be queued (the workqueue is gone)
/// gives the task up, the input marked.
pub const fn abandon(word: u32) -> u32 {
    (word & !(BUSY | QUEUED)) | ARMED
}

/// A quiescer starts; `None` if the count would overflow.
pub const fn quiesce(word: u32) -> Option<u32> {
    word.checked_add(QUIESCER)
}

/// A quiescer ends (lock released first); [`Kick::Queue`]: the caller owns
/// the task and must queue its work item (input arrived during the
/// quiesce).
pub const fn unquiesce(word: u32) -> (u32, Kick) {
    if quiescers(word) == 0 {
        // Not quiesced (a quiesce that could not count itself): nothing
        // to end.
        return (word, Kick::Marked);
    }
    let word = word - QUIESCER;
    if quiescers(word) == 0 && word & BUSY == 0 && word & ARMED != 0 {
        ((word | BUSY | QUEUED) & !ARMED, Kick::Queue)
    } else {
        (word, Kick::Marked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kick_idle_queues_then_marks() {
        let (w, k) = kick(0);
        assert_eq!((w, k), (BUSY | QUEUED, Kick::Queue));
        assert_eq!(kick(w), (BUSY | QUEUED | ARMED, Kick::Marked));
    }

    #[test]
    fn finish_runs_again_for_marked_input() {
        assert_eq!(finish(BUSY | ARMED, false), (BUSY, Finish::Again));
        assert_eq!(finish(BUSY, false), (0, Finish::Idle));
        assert_eq!(finish(BUSY, true), (BUSY, Finish::Again));
    }

    #[test]
    fn quiesce_holds_input_until_the_last_quiescer() {
        let w = quiesce(0).unwrap();
        let w = quiesce(w).unwrap();
        let (w, k) = kick(w);
        assert_eq!(k, Kick::Marked);
        let (w, k) = unquiesce(w);
        assert_eq!(k, Kick::Marked);
        assert_eq!(unquiesce(w), (BUSY | QUEUED, Kick::Queue));
    }

    #[test]
    fn a_queued_run_during_a_quiesce_gives_up() {
        let w = quiesce(BUSY | QUEUED).unwrap();
        assert_eq!(take_queued(w), (QUIESCER | ARMED, Take::Stray));
        assert_eq!(take_queued(QUIESCER), (QUIESCER, Take::Stray));
    }

    #[test]
    fn abandon_gives_up_and_marks() {
        assert_eq!(abandon(BUSY | QUEUED), ARMED);
        assert_eq!(abandon(QUIESCER | BUSY | QUEUED), QUIESCER | ARMED);
    }

    #[test]
    fn unquiesce_without_a_quiescer_changes_nothing() {
        assert_eq!(unquiesce(BUSY | ARMED), (BUSY | ARMED, Kick::Marked));
        assert_eq!(unquiesce(ARMED), (ARMED, Kick::Marked));
    }

    #[test]
    fn quiesce_overflow_is_refused() {
        assert_eq!(quiesce(u32::MAX - 3), None);
    }
}
