// SPDX-License-Identifier: GPL-2.0
//! The engine task's scheduling word (`task.rs`) against every
//! interleaving of its users, one atomic step at a time: kickers (the
//! receive path, timers), a doorbell that runs the task itself, the work
//! item's runs, `modify_qp`'s quiesce and destroy's.  Checked in every
//! reachable state and at every end: one owner at a time, every pass
//! under the lock, no work item queued twice, no work queued or claimed
//! once destroy began, no pass once destroy took the lock, no input left
//! unseen, nothing left owned, queued or armed,
//! no actor stuck.

use rrxe_proto::task::{self, Claim, Finish, Kick, Take, BUSY, QUEUED};
use std::collections::HashSet;

/// Where an actor is; the owner's loop is shared by the doorbell and the
/// work item's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Pc {
    /// Publish input (kicker, doorbell), or wait for the work item
    /// (worker).
    Start,
    /// The kick's or claim's compare-and-swap.
    Rmw,
    /// Queue the work item (after a transition that said so).
    Enqueue,
    /// The work item runs: `take_queued`.
    Take,
    /// Owner: `try_lock`.
    TryLock,
    /// Owner, holding the lock: look at the word (a quiescer may be
    /// waiting for the lock), then the pass.
    Body,
    /// Owner: release the lock.
    Unlock,
    /// Owner: `finish`, or `park` if it chose to yield.
    Finish {
        missed: bool,
    },
    /// Quiescer: raise the count.
    Quiesce,
    /// Quiescer: `lock` (waits).
    Lock,
    /// Quiescer: release the lock.
    QUnlock,
    /// Quiescer: `unquiesce`.
    Unquiesce,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    /// Publishes input and kicks, `n` times.
    Kicker,
    /// Publishes input and claims, `n` times.
    Doorbell,
    /// Runs the work item whenever it is queued.
    Worker,
    /// Quiesces once (`modify_qp`); destroy never ends its quiesce.
    Quiescer { destroy: bool },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Actor {
    role: Role,
    pc: Pc,
    /// Inputs still to publish (kicker, doorbell).
    left: u8,
    /// Whether this owner may still yield once (bounds the model).
    may_park: bool,
    /// Whether this owner's current pass chose to yield.
    parking: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct World {
    word: u32,
    lock: Option<usize>,
    published: u8,
    consumed: u8,
    /// The work item is queued (the workqueue's PENDING bit).
    pending: bool,
    /// Destroy holds or held the lock.
    destroyed: bool,
    /// Destroy has begun its quiesce.
    destroying: bool,
    actors: Vec<Actor>,
}

impl World {
    fn new(roles: &[(Role, u8)]) -> Self {
        let actors = roles
            .iter()
            .map(|&(role, n)| Actor {
                role,
                pc: match role {
                    Role::Quiescer { .. } => Pc::Quiesce,
                    _ => Pc::Start,
                },
                left: n,
                may_park: true,
                parking: false,
            })
            .collect();
        World {
            word: 0,
            lock: None,
            published: 0,
            consumed: 0,
            pending: false,
            destroyed: false,
            destroying: false,
            actors,
        }
    }

    fn destroy_in(&self) -> bool {
        self.actors
            .iter()
            .any(|a| a.role == Role::Quiescer { destroy: true })
    }

    /// The worlds after actor `i`'s next step (two where it may choose),
    /// none if it cannot step now (waiting, or done).  Panics on a broken
    /// invariant.
    fn step(&self, i: usize) -> Vec<World> {
        let w = self.clone();
        match w.actors[i].pc {
            Pc::Done => vec![],
            Pc::TryLock | Pc::Body | Pc::Unlock | Pc::Finish { .. } => self.step_owner(w, i),
            Pc::Quiesce | Pc::Lock | Pc::QUnlock | Pc::Unquiesce => self.step_quiescer(w, i),
            Pc::Start | Pc::Rmw | Pc::Enqueue | Pc::Take => self.step_input(w, i),
        }
    }

    /// Publishing input, kicking, claiming, queueing, a work item's start.
    fn step_input(&self, mut w: World, i: usize) -> Vec<World> {
        let a = &mut w.actors[i];
        match (a.role, a.pc) {
            (Role::Kicker | Role::Doorbell, Pc::Start) => {
                if a.left == 0 {
                    return vec![];
                }
                a.left -= 1;
                a.pc = Pc::Rmw;
                w.published += 1;
            }
            (Role::Kicker, Pc::Rmw) => {
                let (word, k) = task::kick(w.word);
                w.word = word;
                assert!(
                    !(k == Kick::Queue && w.destroying),
                    "work queued once destroy began: {self:?}"
                );
                a.pc = if k == Kick::Queue {
                    Pc::Enqueue
                } else {
                    Pc::Start
                };
            }
            (Role::Doorbell, Pc::Rmw) => {
                let (word, c) = task::claim(w.word);
                w.word = word;
                assert!(
                    !(c == Claim::Won && w.destroying),
                    "claimed once destroy began: {self:?}"
                );
                a.pc = if c == Claim::Won {
                    Pc::TryLock
                } else {
                    Pc::Start
                };
            }
            (_, Pc::Enqueue) => {
                assert!(!w.pending, "a work item queued twice: {self:?}");
                w.pending = true;
                a.pc = match a.role {
                    Role::Worker | Role::Doorbell | Role::Kicker => Pc::Start,
                    Role::Quiescer { .. } => Pc::Done,
                };
            }
            (Role::Worker, Pc::Start) => {
                if !w.pending {
                    return vec![];
                }
                w.pending = false;
                a.pc = Pc::Take;
                a.may_park = true;
            }
            (Role::Worker, Pc::Take) => {
                let (word, t) = task::take_queued(w.word);
                w.word = word;
                a.pc = if t == Take::Run {
                    Pc::TryLock
                } else {
                    Pc::Start
                };
            }
            (role, pc) => panic!("{role:?} has no input step at {pc:?}"),
        }
        vec![w]
    }

    /// An owner's loop: the lock, the pass, `finish` or `park`.
    fn step_owner(&self, mut w: World, i: usize) -> Vec<World> {
        let a = &mut w.actors[i];
        match (a.role, a.pc) {
            (_, Pc::TryLock) => {
                assert!(w.word & BUSY != 0, "an owner without BUSY: {self:?}");
                if w.lock.is_none() {
                    w.lock = Some(i);
                    a.pc = Pc::Body;
                } else {
                    a.pc = Pc::Finish { missed: true };
                }
            }
            (_, Pc::Body) => {
                assert!(w.word & BUSY != 0, "a pass without BUSY: {self:?}");
                assert_eq!(w.lock, Some(i), "a pass without the lock");
                if task::quiescers(w.word) != 0 {
                    // A quiescer waits for the lock: release it, the input
                    // unseen.
                    a.pc = Pc::Finish { missed: true };
                    w.lock = None;
                    return vec![w];
                }
                assert!(!w.destroyed, "a pass after destroy took the lock: {self:?}");
                w.consumed = w.published;
                a.pc = Pc::Unlock;
                // Either finish, or (once) yield the worker.
                if a.may_park {
                    let mut parked = w.clone();
                    parked.actors[i].parking = true;
                    parked.actors[i].may_park = false;
                    return vec![w, parked];
                }
            }
            (_, Pc::Unlock) => {
                w.lock = None;
                a.pc = Pc::Finish { missed: false };
            }
            (_, Pc::Finish { missed }) => {
                if a.parking {
                    a.parking = false;
                    w.word = task::park(w.word);
                    a.pc = Pc::Enqueue;
                    return vec![w];
                }
                let (word, f) = task::finish(w.word, missed);
                w.word = word;
                a.pc = match (f, a.role) {
                    (Finish::Again, _) => Pc::TryLock,
                    (Finish::Idle, _) => Pc::Start,
                };
                // Told to run again, an owner may instead (once) hand the
                // task to its work item (the doorbell after its one pass,
                // a work item after a few).
                if f == Finish::Again && a.may_park {
                    let mut parked = w.clone();
                    let p = &mut parked.actors[i];
                    p.may_park = false;
                    p.pc = Pc::Enqueue;
                    parked.word = task::park(parked.word);
                    return vec![w, parked];
                }
            }
            (role, pc) => panic!("{role:?} has no owner step at {pc:?}"),
        }
        vec![w]
    }

    /// `modify_qp` or destroy.
    fn step_quiescer(&self, mut w: World, i: usize) -> Vec<World> {
        let a = &mut w.actors[i];
        match (a.role, a.pc) {
            (Role::Quiescer { destroy }, Pc::Quiesce) => {
                w.word = task::quiesce(w.word).expect("quiescer count overflow");
                w.destroying |= destroy;
                a.pc = Pc::Lock;
            }
            (Role::Quiescer { destroy }, Pc::Lock) => {
                if w.lock.is_some() {
                    return vec![];
                }
                w.lock = Some(i);
                w.destroyed |= destroy;
                a.pc = Pc::QUnlock;
            }
            (Role::Quiescer { destroy }, Pc::QUnlock) => {
                w.lock = None;
                a.pc = if destroy { Pc::Done } else { Pc::Unquiesce };
            }
            (Role::Quiescer { .. }, Pc::Unquiesce) => {
                let (word, k) = task::unquiesce(w.word);
                w.word = word;
                a.pc = if k == Kick::Queue {
                    Pc::Enqueue
                } else {
                    Pc::Done
                };
            }
            (role, pc) => panic!("{role:?} has no quiescer step at {pc:?}"),
        }
        vec![w]
    }

    /// Checks an end state (no actor can step).
    fn check_end(&self) {
        for a in &self.actors {
            let waiting_for_work = a.pc == Pc::Start && matches!(a.role, Role::Worker);
            let out_of_input = a.pc == Pc::Start && a.left == 0;
            assert!(
                a.pc == Pc::Done || waiting_for_work || out_of_input,
                "stuck: {a:?} in {self:?}"
            );
        }
        assert!(
            !self.pending && self.lock.is_none(),
            "left queued or locked: {self:?}"
        );
        if self.destroy_in() {
            assert_eq!(
                self.word & (BUSY | QUEUED),
                0,
                "owned after destroy: {self:?}"
            );
        } else {
            assert_eq!(self.consumed, self.published, "input left unseen: {self:?}");
            assert_eq!(
                self.word, 0,
                "left owned, queued, armed or quiesced: {self:?}"
            );
        }
    }
}

/// Explores every interleaving from `roles`; the number of states.
fn explore(roles: &[(Role, u8)]) -> usize {
    let start = World::new(roles);
    let mut seen = HashSet::new();
    let mut todo = vec![start.clone()];
    seen.insert(start);
    while let Some(w) = todo.pop() {
        let mut stepped = false;
        for i in 0..w.actors.len() {
            for next in w.step(i) {
                stepped = true;
                if seen.insert(next.clone()) {
                    todo.push(next);
                }
            }
        }
        if !stepped {
            w.check_end();
        }
    }
    seen.len()
}

const KICKER: Role = Role::Kicker;
const DOORBELL: Role = Role::Doorbell;
const WORKER: Role = Role::Worker;
const MODIFY: Role = Role::Quiescer { destroy: false };
const DESTROY: Role = Role::Quiescer { destroy: true };

#[test]
fn kickers_alone() {
    let n = explore(&[(KICKER, 2), (KICKER, 2), (WORKER, 0)]);
    assert!(n > 100, "{n} states");
}

#[test]
fn kickers_and_the_doorbell() {
    explore(&[(KICKER, 2), (DOORBELL, 2), (WORKER, 0)]);
    explore(&[(DOORBELL, 2), (DOORBELL, 1), (WORKER, 0)]);
}

#[test]
fn modify_during_traffic() {
    explore(&[(KICKER, 2), (DOORBELL, 1), (MODIFY, 0), (WORKER, 0)]);
    explore(&[
        (KICKER, 1),
        (DOORBELL, 1),
        (MODIFY, 0),
        (MODIFY, 0),
        (WORKER, 0),
    ]);
}

#[test]
fn destroy_during_traffic() {
    explore(&[(KICKER, 2), (DOORBELL, 1), (DESTROY, 0), (WORKER, 0)]);
    explore(&[
        (KICKER, 1),
        (DOORBELL, 1),
        (MODIFY, 0),
        (DESTROY, 0),
        (WORKER, 0),
    ]);
}
