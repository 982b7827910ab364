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
//! While a QP moves multi-packet SENDs and WRITEs (the `bulk` hints
//! below), its tasks are queued instead on the CPU its process last ran
//! on ([`Placement::home`]: creation, then each doorbell), on the
//! engine's high-priority queue, so that the work of each QP runs beside
//! its owner, ahead of the owner's busy poll; and the receive path leaves
//! the ICRC of such a request's first and middle packets to the receive
//! task (`engine/rx.rs`), so that the receiver's CPU checks it, not the
//! sender's.  The two QPs of a stream then work in parallel on their two
//! CPUs.  Single-packet messages (latency: each hand-off to another CPU
//! costs a wake-up there) keep the default placement and the softirq's
//! ICRC check.  Kernel consumers' QPs keep the default: they post from
//! any context, and their owner is no process.
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

/// A user QP's placement hints.
pub(crate) struct Placement {
    /// The CPU the QP's process last ran on.
    home: Atomic<u32>,
    /// The send task is sending a message of several packets.
    send_bulk: Atomic<bool>,
    /// The last request message that began had several packets.
    recv_bulk: Atomic<bool>,
}

impl Placement {
    /// Hints for a QP created on the current CPU.
    pub(crate) fn new() -> Self {
        Self {
            home: Atomic::new(CpuId::current().as_u32()),
            send_bulk: Atomic::new(false),
            recv_bulk: Atomic::new(false),
        }
    }

    /// The QP's process runs here now (its doorbell).  Written only when
    /// it moved, so that a doorbell does not dirty the line for nothing.
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
        let bulk = npkts > 1 && !needs_response;
        if self.send_bulk.load(Relaxed) != bulk {
            self.send_bulk.store(bulk, Relaxed);
        }
    }

    /// A request packet with opcode `info` passed the receive path's
    /// checks: a first packet of a SEND or WRITE starts a bulk run, a
    /// message of one packet ends it, and the rest leave it as it is.
    /// True if this packet's ICRC is left to the receive task (bulk
    /// placement on for the QP, and a first or middle packet).
    pub(crate) fn note_request(&self, user: bool, info: &OpcodeInfo) -> bool {
        self.note_request_as(info) && user && param::bulk_home()
    }

    /// [`Placement::note_request`] without the QP's owner and the module
    /// parameter: true for a first or middle packet.
    fn note_request_as(&self, info: &OpcodeInfo) -> bool {
        if !info.has_payload() || info.is_only() {
            self.recv_bulk.store(false, Relaxed);
            return false;
        }
        if info.is_first() {
            self.recv_bulk.store(true, Relaxed);
        }
        !info.is_last()
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

    #[test]
    fn a_multi_packet_message_runs_at_home_and_defers_its_icrc() {
        let p = Placement::new();
        assert!(!recv_home(&p));
        assert!(p.note_request_as(info(RC_SEND_FIRST)));
        assert!(recv_home(&p));
        assert!(p.note_request_as(info(RC_SEND_MIDDLE)));
        // The last packet is checked in softirq; the run stays at home.
        assert!(!p.note_request_as(info(RC_SEND_LAST)));
        assert!(recv_home(&p));
        assert_eq!(p.cpu(true, true), CpuId::from_u32(p.home.load(Relaxed)));
    }

    #[test]
    fn single_packet_messages_keep_the_default() {
        let p = Placement::new();
        assert!(p.note_request_as(info(RC_RDMA_WRITE_FIRST)));
        assert!(!p.note_request_as(info(RC_SEND_ONLY)));
        assert!(!recv_home(&p));
        assert!(p.note_request_as(info(RC_RDMA_WRITE_FIRST)));
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
        p.note_send(2, false);
        p.note_send(1, false);
        assert!(p.cpu(true, p.send_bulk.load(Relaxed)).is_none());
    }
}
