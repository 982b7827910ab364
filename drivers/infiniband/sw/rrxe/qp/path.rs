// SPDX-License-Identifier: GPL-2.0

//! A QP's path as the data path reads it: the IP addresses, UDP source
//! port, traffic class and hop limit of its packets and the path's local
//! ACK timeout, set by `modify_qp` (its address vector, or the alternate
//! one) and by a path migration, and read by the transmit path, the
//! retransmit timer and, in softirq context, by the receive path's address
//! check (C rxe's `check_addr()`).
//!
//! Readers never block: the path is kept in atomic words under a sequence
//! count (a seqlock built from `kernel::sync::atomic`): a reader retries if
//! a writer changed the path while it was reading.  Writers are serialised
//! by the QP's path lock (`qp/migration.rs`).

use kernel::sync::{
    atomic::{Acquire, Atomic, Relaxed, Release},
    barrier::{smp_rmb, smp_wmb},
};

use crate::kapi::rdma::qp::GidNetdev;
use crate::proto::path::IpPair;

/// Where a QP's packets go, and how they are marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Endpoints {
    pub(crate) ips: IpPair,
    /// UDP source port (per QP, for ECMP entropy).
    pub(crate) sport: u16,
    /// IPv4 TOS / IPv6 traffic class, from the address vector's GRH.
    pub(crate) tclass: u8,
    /// IPv4 TTL / IPv6 hop limit, from the address vector's GRH.
    pub(crate) hop_limit: u8,
    /// Local ACK timeout exponent (IBTA; 0: none): `timeout`, or
    /// `alt_timeout` for the alternate path.
    pub(crate) timeout: u8,
    /// The source GID's netdev: packets leave through it (a VLAN device
    /// tags them), and a packet delivered to this host without the
    /// network arrives as if on it.
    pub(crate) gid_dev: GidNetdev,
}

/// Words: 0 = flags (bit 0 set, bit 1 IPv6, bit 2 VLAN) | sport << 16,
/// 1 = tclass | hop_limit << 8 | timeout << 16, 2..6 = source address,
/// 6..10 = destination address (IPv4 in the first word of each),
/// 10 = ifindex, 11 = VLAN ID.
const WORDS: usize = 12;
const SET: u32 = 1;
const V6: u32 = 2;
const VLAN: u32 = 4;

/// The path, readable from any context.
pub(crate) struct PathCell {
    seq: Atomic<u32>,
    w: [Atomic<u32>; WORDS],
}

fn pack(ep: &Endpoints) -> [u32; WORDS] {
    let mut w = [0u32; WORDS];
    let mut addr = [0u8; 32];
    match ep.ips {
        IpPair::V4 { saddr, daddr } => {
            addr[..4].copy_from_slice(&saddr);
            addr[16..20].copy_from_slice(&daddr);
            w[0] = SET;
        }
        IpPair::V6 { saddr, daddr } => {
            addr[..16].copy_from_slice(&saddr);
            addr[16..].copy_from_slice(&daddr);
            w[0] = SET | V6;
        }
    }
    w[0] |= u32::from(ep.sport) << 16;
    w[10] = ep.gid_dev.ifindex as u32;
    if let Some(id) = ep.gid_dev.vlan {
        w[0] |= VLAN;
        w[11] = u32::from(id);
    }
    w[1] = u32::from(ep.tclass) | (u32::from(ep.hop_limit) << 8) | (u32::from(ep.timeout) << 16);
    for (i, c) in addr.chunks_exact(4).enumerate() {
        w[2 + i] = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
    }
    w
}

fn unpack(w: &[u32; WORDS]) -> Option<Endpoints> {
    if w[0] & SET == 0 {
        return None;
    }
    let mut addr = [0u8; 32];
    for (i, c) in addr.chunks_exact_mut(4).enumerate() {
        c.copy_from_slice(&w[2 + i].to_ne_bytes());
    }
    let ips = if w[0] & V6 != 0 {
        let mut saddr = [0u8; 16];
        let mut daddr = [0u8; 16];
        saddr.copy_from_slice(&addr[..16]);
        daddr.copy_from_slice(&addr[16..]);
        IpPair::V6 { saddr, daddr }
    } else {
        IpPair::V4 {
            saddr: [addr[0], addr[1], addr[2], addr[3]],
            daddr: [addr[16], addr[17], addr[18], addr[19]],
        }
    };
    Some(Endpoints {
        ips,
        sport: (w[0] >> 16) as u16,
        tclass: w[1] as u8,
        hop_limit: (w[1] >> 8) as u8,
        timeout: (w[1] >> 16) as u8,
        gid_dev: GidNetdev {
            ifindex: w[10] as i32,
            vlan: (w[0] & VLAN != 0).then_some(w[11] as u16),
        },
    })
}

impl PathCell {
    /// No path yet.
    pub(crate) fn new() -> Self {
        Self {
            seq: Atomic::new(0),
            w: [const { Atomic::new(0) }; WORDS],
        }
    }

    /// Sets (or clears) the path.  Callers serialise writes and keep
    /// interrupts off (the QP's path lock): a reader on the writer's CPU
    /// would spin forever on the write it interrupted.
    pub(crate) fn set(&self, ep: Option<&Endpoints>) {
        let w = ep.map_or([0; WORDS], pack);
        let s = self.seq.load(Relaxed);
        self.seq.store(s.wrapping_add(1), Relaxed);
        smp_wmb();
        for (a, v) in self.w.iter().zip(w) {
            a.store(v, Relaxed);
        }
        self.seq.store(s.wrapping_add(2), Release);
    }

    /// The current path.  Any context; never blocks (retries while a
    /// write is in progress on another CPU, which is a few stores long).
    pub(crate) fn get(&self) -> Option<Endpoints> {
        loop {
            let s1 = self.seq.load(Acquire);
            if s1 & 1 != 0 {
                core::hint::spin_loop();
                continue;
            }
            let mut w = [0u32; WORDS];
            for (v, a) in w.iter_mut().zip(self.w.iter()) {
                *v = a.load(Relaxed);
            }
            smp_rmb();
            if self.seq.load(Relaxed) == s1 {
                return unpack(&w);
            }
        }
    }
}

#[kernel::macros::kunit_tests(rrxe_path)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_ipv4_and_ipv6() {
        let c = PathCell::new();
        assert_eq!(c.get(), None);
        let v4 = Endpoints {
            ips: IpPair::V4 {
                saddr: [10, 0, 0, 1],
                daddr: [10, 0, 0, 2],
            },
            sport: 0xc123,
            tclass: 0xb8,
            hop_limit: 17,
            timeout: 14,
            gid_dev: GidNetdev::default(),
        };
        c.set(Some(&v4));
        assert_eq!(c.get(), Some(v4));
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        for i in 0..16 {
            a[i] = i as u8;
            b[i] = 0xf0 | i as u8;
        }
        let v6 = Endpoints {
            ips: IpPair::V6 { saddr: a, daddr: b },
            sport: 0xffff,
            tclass: 0,
            hop_limit: 255,
            timeout: 31,
            gid_dev: GidNetdev {
                ifindex: 7,
                vlan: Some(4094),
            },
        };
        c.set(Some(&v6));
        assert_eq!(c.get(), Some(v6));
        c.set(None);
        assert_eq!(c.get(), None);
    }
}
