// SPDX-License-Identifier: GPL-2.0

//! Where a user QP's tasks run while it moves multi-packet messages.
//!
//! By default a task's work item is queued on the unbound workqueue from
//! wherever its input arrived, and since Linux 6.5 it starts in the pod
//! of the CPU that queued it.  On veth that puts everything of a stream on
//! one CPU: the sender's softirq receives what the sender just sent
//! (`netif_rx` queues to the sending CPU's backlog), checks its ICRC and
//! queues the receiver's task there too.  A benchmark's busy-polling
//! process, pinned to the other CPU, then shares nothing of the work and
//! gets none of it done faster (`performance.rst`).
//!
//! While a QP moves SENDs and WRITEs of at least [`BULK_PKTS`] packets (the
//! `bulk` hints below), its tasks are queued instead on the CPU its process
//! last ran on (`home`: creation, then each doorbell), on the engine's
//! high-priority queue, so that the work of each QP runs beside its owner,
//! ahead of the owner's busy poll; and the receive path leaves the ICRC of
//! such a request's first and middle packets to the receive task
//! (`engine/rx.rs`), so that the receiver's CPU checks it, not the
//! sender's.  The two QPs of a stream then work in parallel on their two
//! CPUs.  Shorter messages (each hand-off to another CPU costs a wake-up
//! there, which a few packets do not pay for) keep the default placement
//! and the softirq's ICRC check.  Kernel consumers' QPs keep the default:
//! they post from any context, and their owner is no process.
//!
//! The module parameter `bulk_home` (writable at run time) turns it off.
//! The hints are relaxed atomics: a stale one only places one work item
//! where the other rule would have.  A home CPU that went offline since
//! is harmless: an unbound workqueue runs the work of any possible CPU
//! (`kapi/workqueue.rs`).

use kernel::{
    cpu::CpuId,
    sync::atomic::{ordering::Relaxed, Atomic},
};

use crate::param;
use crate::proto::opcode::OpcodeInfo;

/// Packets a message needs to count as bulk.  A hand-off to another
/// CPU costs a wake-up there; measured (`performance.rst`), 4 KiB WRITEs
/// at MTU 1024 (four packets) lost half their bandwidth when placed, 64
/// KiB ones (sixteen at MTU 4096) gained a third.
pub(crate) const BULK_PKTS: u32 = 8;

/// A user QP's placement hints.
pub(crate) struct Placement {
    /// The CPU the QP's process last ran on.
    home: Atomic<u32>,
    /// The send task is sending a message of at least [`BULK_PKTS`]
    /// packets.
    send_bulk: Atomic<bool>,
    /// The request messages arriving are bulk: the current one has
    /// reached [`BULK_PKTS`] packets, or the last one had.
    recv_bulk: Atomic<bool>,
    /// Request packets of the current message so far.
    recv_run: Atomic<u32>,
}

impl Placement {
    /// Hints for a QP created on the current CPU.
    pub(crate) fn new() -> Self {
        Self {
            home: Atomic::new(CpuId::current().as_u32()),
            send_bulk: Atomic::new(false),
            recv_bulk: Atomic::new(false),
            recv_run: Atomic::new(0),
        }
    }

    /// The QP's process runs here now (its doorbell).
    pub(crate) fn set_home(&self) {
        let cpu = CpuId::current().as_u32();
        if self.home.load(Relaxed) != cpu {
            self.home.store(cpu, Relaxed);
        }
    }

    /// The requester is about to send a packet of a message of `npkts`
    /// packets that needs no response (a SEND or WRITE; a READ's or an
    /// atomic's request is one packet whatever its response).
    pub(crate) fn note_send(&self, npkts: u32, needs_response: bool) {
        set_flag(&self.send_bulk, npkts >= BULK_PKTS && !needs_response);
    }

    /// A request packet with opcode `info` passed the receive path's
    /// checks: a message of one packet, or one that ends short of
    /// [`BULK_PKTS`], ends a bulk run; one that reaches it starts one.
    /// True if this packet's ICRC is left to the receive task (a first or
    /// middle packet in a bulk run, placement on for the QP).
    /// A kernel consumer's QP, or any with the parameter off, keeps no
    /// hints (a stale one, when the parameter comes back on, places one
    /// work item or defers one message's ICRCs as the run it ended would
    /// have).
    pub(crate) fn note_request(&self, user: bool, info: &OpcodeInfo) -> bool {
        user && param::bulk_home() && self.note_request_as(info)
    }

    /// [`Placement::note_request`] without the QP's owner and the module
    /// parameter.
    fn note_request_as(&self, info: &OpcodeInfo) -> bool {
        if !info.has_payload() || info.is_only() {
            set_flag(&self.recv_bulk, false);
            return false;
        }
        let run = if info.is_first() {
            1
        } else {
            self.recv_run.load(Relaxed).saturating_add(1)
        };
        self.recv_run.store(run, Relaxed);
        if run >= BULK_PKTS {
            set_flag(&self.recv_bulk, true);
        } else if info.is_last() {
            set_flag(&self.recv_bulk, false);
        }
        !info.is_last() && self.recv_bulk.load(Relaxed)
    }

    /// The CPU to queue the send task on, if not the default.
    pub(crate) fn send_cpu(&self, user: bool) -> Option<CpuId> {
        self.cpu(user && param::bulk_home(), self.send_bulk.load(Relaxed))
    }

    /// The CPU to queue the receive task on, if not the default.
    pub(crate) fn recv_cpu(&self, user: bool) -> Option<CpuId> {
        self.cpu(user && param::bulk_home(), self.recv_bulk.load(Relaxed))
    }

    /// The home CPU if placement applies (`on`) and the task is in a bulk
    /// run.
    fn cpu(&self, on: bool, bulk: bool) -> Option<CpuId> {
        if !on || !bulk {
            return None;
        }
        CpuId::from_u32(self.home.load(Relaxed))
    }
}

/// Sets `flag` to `v`, writing only if it changes: the hints are read and
/// noted per packet, and an unchanged one need not dirty its cache line
/// (the home CPU, a `u32`, is kept the same way).
fn set_flag(flag: &Atomic<bool>, v: bool) {
    if flag.load(Relaxed) != v {
        flag.store(v, Relaxed);
    }
}

#[kernel::macros::kunit_tests(rrxe_placement)]
mod tests {
    use super::*;
    use crate::proto::opcode::{
        opcode_info, RC_RDMA_READ_REQUEST, RC_RDMA_WRITE_FIRST, RC_SEND_FIRST, RC_SEND_LAST,
        RC_SEND_MIDDLE, RC_SEND_ONLY,
    };

    fn info(op: u8) -> &'static OpcodeInfo {
        opcode_info(op).expect("a known opcode")
    }

    fn recv_home(p: &Placement) -> bool {
        p.cpu(true, p.recv_bulk.load(Relaxed)).is_some()
    }

    /// Notes a message of `n` packets of `first`, `middle`, `last`; how
    /// many ICRCs were deferred.
    fn message(p: &Placement, n: u32, ops: (u8, u8, u8)) -> u32 {
        let mut deferred = u32::from(p.note_request_as(info(ops.0)));
        for _ in 0..n - 2 {
            deferred += u32::from(p.note_request_as(info(ops.1)));
        }
        deferred + u32::from(p.note_request_as(info(ops.2)))
    }

    const SEND: (u8, u8, u8) = (RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST);

    #[test]
    fn a_long_message_runs_at_home_and_defers_its_icrc() {
        let p = Placement::new();
        assert!(!recv_home(&p));
        // The first message: from its BULK_PKTS-th packet on, all but the
        // last.
        assert_eq!(message(&p, 64, SEND), 64 - BULK_PKTS);
        assert!(recv_home(&p));
        // The next: all but the last, as the run goes on.
        assert_eq!(message(&p, 64, SEND), 63);
        assert!(recv_home(&p));
        assert_eq!(p.cpu(true, true), CpuId::from_u32(p.home.load(Relaxed)));
    }

    #[test]
    fn short_messages_keep_the_default() {
        let p = Placement::new();
        assert_eq!(message(&p, 64, SEND), 64 - BULK_PKTS);
        // A short multi-packet message ends the run (its first packets,
        // still in it, are deferred).
        message(&p, 4, SEND);
        assert!(!recv_home(&p));
        assert_eq!(message(&p, 4, SEND), 0);
        // A message of BULK_PKTS starts a run at its last packet.
        assert_eq!(message(&p, BULK_PKTS, SEND), 0);
        assert!(recv_home(&p));
        assert!(!p.note_request_as(info(RC_SEND_ONLY)));
        assert!(!recv_home(&p));
        assert!(!p.note_request_as(info(RC_RDMA_WRITE_FIRST)));
        assert!(!p.note_request_as(info(RC_RDMA_READ_REQUEST)));
        assert!(!recv_home(&p));
    }

    #[test]
    fn the_send_side_follows_the_message_sent() {
        let p = Placement::new();
        p.note_send(64, false);
        assert!(p.cpu(true, p.send_bulk.load(Relaxed)).is_some());
        // Off (parameter or kernel consumer): the default.
        assert!(p.cpu(false, p.send_bulk.load(Relaxed)).is_none());
        // A READ's request is one packet whatever its response.
        p.note_send(64, true);
        assert!(p.cpu(true, p.send_bulk.load(Relaxed)).is_none());
        p.note_send(BULK_PKTS, false);
        assert!(p.cpu(true, p.send_bulk.load(Relaxed)).is_some());
        p.note_send(BULK_PKTS - 1, false);
        assert!(p.cpu(true, p.send_bulk.load(Relaxed)).is_none());
    }
}
