// SPDX-License-Identifier: GPL-2.0
//! `--mode flood`: crafted packets for the live device.  Each starts from
//! a template, a transport packet (BTH .. ICRC) from one of the real
//! captures or synthesized for an opcode drawn from all 256 (known ones
//! with their extension headers, unknown ones with random bytes), and is
//! then mutated: every BTH field (opcode, SE, M, pad, TVer, P_Key,
//! FECN/BECN/reserved, QPN, AckReq/reserved, PSN) at its edges or at
//! random; the IPv4/UDP carrier (TOS, TTL, ID, DF, fragments, IHL with
//! options, total length over and under, protocol, checksum, destination,
//! UDP port, length over and under and tiny, UDP checksum good and bad,
//! trailing bytes, truncation, the EtherType); the source address (the
//! real peer, forged unicast addresses, martians); one packet in ten over
//! IPv6 when `--local6` is given (its payload length over and under, next
//! header, UDP checksum, truncation, trailing bytes); payload sizes from 0
//! past the path MTU; a valid or a corrupted ICRC.  Packets that would be
//! indistinguishable from the live peer's (its address, a live QP, a valid
//! ICRC) only get PSNs far from the live window (model.rs): such a packet
//! at the expected PSN would rightly be accepted, and the live traffic's
//! byte-exact check would then test the attacker, not rrxe.

use rrxe_proto::icrc::{icrc_fill, ICRC_LEN};
use rrxe_proto::opcode::{all_opcodes, opcode_info};
use rrxe_proto::qp_state::QpType;

use crate::model::{self, Fate, KernelFate, Target, LIVE_SPAN};
use crate::wire::{fix_ip_checksum, inet_sum, ipv4_udp, udp_checksum, Rng, TableCrc};
use crate::Summary;

/// One frame to write: EtherType and the bytes after the Ethernet header.
pub struct Frame {
    pub ethertype: u16,
    pub l3: Vec<u8>,
}

/// Flood parameters.
pub struct Flood<'a> {
    pub t: &'a Target,
    pub pmtu: usize,
    pub templates: &'a [Vec<u8>],
    known: Vec<u8>,
    frag_id: u16,
}

impl<'a> Flood<'a> {
    pub fn new(t: &'a Target, pmtu: usize, templates: &'a [Vec<u8>]) -> Self {
        Flood {
            t,
            pmtu,
            templates,
            known: all_opcodes().map(|i| i.opcode()).collect(),
            frag_id: 0,
        }
    }

    /// A transport packet (BTH .. ICRC placeholder) to mutate.
    fn template(&self, r: &mut Rng) -> Vec<u8> {
        if !self.templates.is_empty() && r.pct(40) {
            return r.pick(self.templates).clone();
        }
        let op = if r.pct(50) { r.u8() } else { *r.pick(&self.known) };
        let (hdr, payload_ok) = match opcode_info(op) {
            Some(i) => (i.header_len(), i.has_payload()),
            None => (12 + r.below(33) as usize, true),
        };
        let mtu = self.pmtu;
        let plen = if !payload_ok {
            0
        } else {
            match r.below(100) {
                0..=29 => 0,
                30..=69 => 1 + r.below(64) as usize,
                70..=79 => 1 + r.below(mtu as u64) as usize,
                80..=84 => mtu,
                85..=89 => mtu - 1 + r.below(3) as usize,
                // Past the path MTU, up to what a 9000-byte veth carries.
                90..=92 => mtu + 1 + r.below((8900 - mtu) as u64) as usize,
                _ => 1 + r.below(256) as usize,
            }
        };
        let pad = plen.wrapping_neg() & 3;
        let mut p = vec![0u8; hdr + plen + pad + ICRC_LEN];
        r.fill(&mut p[..hdr + plen]);
        p[0] = op;
        p[1] = (pad as u8) << 4;
        p
    }

    /// One packet: the frame and, if it reaches rrxe, what rrxe does
    /// with it; counted in `s`.
    pub fn packet(&mut self, r: &mut Rng, s: &mut Summary) -> Frame {
        let t = self.t;
        let mut roce = self.template(r);
        let mut invalid: Option<&'static str> = None;
        // BTH, byte by byte: 0 opcode; 1 SE M pad(2) TVer(4); 2-3 P_Key;
        // 4 FECN BECN resv6a; 5-7 QPN; 8 AckReq resv7; 9-11 PSN.
        if r.pct(10) {
            roce[0] = r.u8();
        }
        if opcode_info(roce[0]).is_none() {
            invalid = Some("unknown opcode");
        }
        let mut b1 = roce[1] & 0x30;
        if r.pct(50) {
            b1 |= 0x80;
        }
        if r.pct(20) {
            b1 |= 0x40;
        }
        if r.pct(5) {
            b1 = (b1 & !0x30) | (r.u8() & 0x30);
        }
        if r.pct(8) {
            b1 |= 1 + r.below(15) as u8;
            invalid = invalid.or(Some("transport version"));
        }
        roce[1] = b1;
        let pkey: u16 = if r.pct(85) {
            0xffff
        } else {
            {
            let x = r.u16();
            *r.pick(&[0x0000, 0x7fff, 0x8000, 0x8001, 0xfffe, 0x7ffe, x])
        }
        };
        roce[2..4].copy_from_slice(&pkey.to_be_bytes());
        roce[4] = if r.pct(85) { 0 } else { r.u8() };
        let live = &t.live;
        let qpn: u32 = match r.below(100) {
            0..=44 if !live.is_empty() => r.pick(live).qpn,
            45..=54 if !live.is_empty() => (r.pick(live).qpn + *r.pick(&[1, 0xff_ffff])) & 0xff_ffff,
            55..=64 => *r.pick(&[0, 1, 2, 15, 16, 0xff_ffff, 0xff_fffe]),
            65..=84 => 16 + r.below(64) as u32,
            _ => r.u32() & 0xff_ffff,
        };
        roce[5..8].copy_from_slice(&qpn.to_be_bytes()[1..]);
        let lqp = t.live(qpn).copied();
        if lqp.is_none() {
            invalid = invalid.or(Some("no such qp"));
        }
        if qpn == 0 {
            invalid = invalid.or(Some("qpn 0"));
        }
        roce[8] = (if r.pct(50) { 0x80 } else { 0 }) | (if r.pct(10) { r.u8() & 0x7f } else { 0 });

        // Addresses: IPv4 (the live QPs' paths), or IPv6 to the netdev's
        // link-local address (always foreign to the live QPs).
        let v6 = t.local6.is_some() && r.pct(10);
        let martian = r.pct(5);
        let src: [u8; 4] = if v6 {
            [0; 4]
        } else if martian {
            *r.pick(&[[0, 0, 0, 0], [127, 0, 0, 1], [224, 0, 0, 1], [255, 255, 255, 255], t.local])
        } else if r.pct(45) {
            t.peer
        } else {
            self.forged_src(r)
        };
        let mut bad_icrc = r.pct(25);
        // A valid packet from the peer to a UC QP would resynchronise it
        // at any PSN (a start opcode): the live traffic's business only.
        if src == t.peer && lqp.is_some_and(|q| q.ty == QpType::Uc) {
            bad_icrc = true;
        }
        if bad_icrc {
            invalid = invalid.or(Some("icrc"));
        }
        let psn = match lqp {
            Some(q) if src == t.peer && !bad_icrc => far_psn(r, q.psn),
            Some(q) if r.pct(50) => q.psn.wrapping_add(r.below(4096) as u32).wrapping_sub(8) & 0xff_ffff,
            _ => match r.below(4) {
                0 => *r.pick(&[0, 1, 0x7f_ffff, 0x80_0000, 0xff_ffff]),
                _ => r.u32() & 0xff_ffff,
            },
        };
        roce[9..12].copy_from_slice(&psn.to_be_bytes()[1..]);

        let tos = if r.pct(80) { 0 } else { r.u8() };
        let ttl = if r.pct(80) {
            64
        } else {
            let x = r.u8();
            *r.pick(&[0, 1, 255, x])
        };
        let sport = if r.pct(10) { *r.pick(&[0, 1, 4791, 0xffff]) } else { 0xc000 | (r.u16() & 0x3fff) };
        let (mut l3, hdr) = if v6 {
            let src6 = self.src6(r, martian);
            (ipv6_udp(src6, t.local6.unwrap(), sport, roce.len(), tos, r.u32(), ttl), 48)
        } else {
            let mut h = ipv4_udp(src, t.local, sport, roce.len(), tos, ttl, r.u16()).to_vec();
            if r.pct(10) {
                h[6] = 0; // DF clear (IP ID covered by the ICRC, DF too)
                fix_ip_checksum(&mut h);
            }
            (h, 28)
        };
        l3.extend_from_slice(&roce);
        icrc_fill::<TableCrc>(&mut l3).expect("icrc over a well-formed packet");
        if bad_icrc {
            // Flip one bit after the BTH (covered, not masked).
            let i = hdr + 12 + r.below((l3.len() - hdr - 12) as u64) as usize;
            l3[i] ^= 1 << r.below(8);
        }
        let mut ethertype = 0x0800;
        if v6 {
            ethertype = 0x86dd;
            set_udp6_checksum(&mut l3);
        }
        let mutation = match (r.pct(12), v6) {
            (false, _) => "",
            (true, false) => self.mutate_l3(r, &mut l3, &mut ethertype),
            (true, true) => mutate_l3v6(r, &mut l3),
        };
        if !mutation.is_empty() {
            *s.mutations.entry(mutation).or_default() += 1;
        }

        s.total += 1;
        match model::kernel(ethertype, &l3, t) {
            KernelFate::Drop(why) => {
                s.kernel_drop += 1;
                *s.reasons.entry(why).or_default() += 1;
            }
            KernelFate::Uncertain(why, seen) => {
                s.uncertain += 1;
                *s.reasons.entry(why).or_default() += 1;
                // Should the stack let it through after all: how rrxe
                // would count it (the scenario's upper bounds).
                match model::rrxe(&seen, t) {
                    Fate::Foreign => s.uncertain_foreign += 1,
                    Fate::Duplicate | Fate::OutOfSeq => s.uncertain_valid += 1,
                    _ => {}
                }
                if model::rrxe(&seen, t) == Fate::Foreign {
                    *s.reasons.entry(uncertain_foreign_reason(why)).or_default() += 1;
                }
            }
            KernelFate::Deliver(seen) => {
                s.reach += 1;
                let fate = model::rrxe(&seen, t);
                // The model must drop whatever the generator broke on
                // purpose (unless the carrier was changed under it, which
                // the model then judges on its own).
                if let (Some(why), true) = (invalid, mutation.is_empty()) {
                    assert!(
                        matches!(fate, Fate::CheckDrop(_) | Fate::Foreign),
                        "model accepts a packet made invalid ({why}): {fate:?}"
                    );
                    s.known_invalid += 1;
                }
                s.count(fate);
            }
        }
        Frame { ethertype, l3 }
    }

    /// A forged unicast source: another host of the peer's subnet, other
    /// private and documentation ranges, random routable addresses.
    fn forged_src(&self, r: &mut Rng) -> [u8; 4] {
        let t = self.t;
        loop {
            let a = match r.below(4) {
                0 => [t.peer[0], t.peer[1], t.peer[2], 3 + r.below(250) as u8],
                1 => {
                    let x = r.next().to_le_bytes();
                    *r.pick(&[[192, 0, 2, x[0]], [198, 51, 100, x[1]], [10, x[2], x[3], x[4]]])
                }
                2 => [t.peer[0], t.peer[1], t.peer[2] ^ (1 + r.below(255) as u8), t.peer[3]],
                _ => [1 + r.below(222) as u8, r.u8(), r.u8(), r.u8()],
            };
            let bcast = a[3] == 255 || a[3] == 0;
            if a != t.peer && !bcast && !model::is_martian(a, t) {
                return a;
            }
        }
    }

    /// An IPv6 source: link-local, documentation, unique-local; martians
    /// and odd sources (unspecified, loopback, multicast, IPv4-mapped)
    /// if `martian`.
    fn src6(&self, r: &mut Rng, martian: bool) -> [u8; 16] {
        let mut a = [0u8; 16];
        r.fill(&mut a[8..]);
        if martian {
            a = *r.pick(&[[0; 16], [0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]]);
            if r.pct(50) {
                a[15] = 1; // ::1
            }
            if r.pct(30) {
                a = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 2];
            }
            return a;
        }
        let prefix: [u8; 8] = *r.pick(&[[0xfe, 0x80, 0, 0, 0, 0, 0, 0], [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0], [0xfd, 0, 0, 0, 0, 0, 0, 1]]);
        a[..8].copy_from_slice(&prefix);
        if Some(a) == self.t.local6 {
            a[15] ^= 1;
        }
        a
    }

    /// One change to the IP/UDP carrier, after the ICRC; returns its name.
    fn mutate_l3(&mut self, r: &mut Rng, l3: &mut Vec<u8>, ethertype: &mut u16) -> &'static str {
        let len = l3.len();
        let set16 = |l3: &mut Vec<u8>, at: usize, v: u16| l3[at..at + 2].copy_from_slice(&v.to_be_bytes());
        let tot = |l3: &Vec<u8>| u16::from_be_bytes([l3[2], l3[3]]);
        let ulen = |l3: &Vec<u8>| u16::from_be_bytes([l3[24], l3[25]]);
        match r.below(16) {
            0 => {
                l3[10] ^= 1 + r.below(255) as u8;
                "ip checksum"
            }
            1 => {
                // A lone fragment (unique ID: it can never be reassembled).
                self.frag_id = self.frag_id.wrapping_add(1);
                set16(l3, 4, 0x8000 | (self.frag_id & 0x7fff));
                let f = if r.pct(50) { 0x2000 } else { 1 + r.below(0x1fff) as u16 };
                set16(l3, 6, f);
                fix_ip_checksum(l3);
                "ip fragment"
            }
            2 => {
                l3[9] = *r.pick(&[1, 6, 47, 253]);
                fix_ip_checksum(l3);
                "ip protocol"
            }
            3 => {
                let v = tot(l3).saturating_add(1 + r.below(64) as u16);
                set16(l3, 2, v);
                fix_ip_checksum(l3);
                "ip length over"
            }
            4 => {
                let v = tot(l3).saturating_sub(1 + r.below(64) as u16);
                set16(l3, 2, v);
                fix_ip_checksum(l3);
                "ip length under"
            }
            5 => {
                let n = 1 + r.below(32) as usize;
                for _ in 0..n {
                    l3.push(r.u8());
                }
                "trailing bytes"
            }
            6 => {
                l3.truncate(len - 1 - r.below((len - 21) as u64) as usize);
                "truncated"
            }
            7 => {
                // IHL 6: four NOP option bytes (valid for the stack).
                l3.splice(20..20, [1u8; 4]);
                l3[0] = 0x46;
                let v = tot(l3) + 4;
                set16(l3, 2, v);
                fix_ip_checksum(l3);
                "ip options"
            }
            8 => {
                set16(l3, 22, *r.pick(&[4790, 4792, 0, 0xffff]));
                "udp port"
            }
            9 => {
                let v = ulen(l3).saturating_add(1 + r.below(64) as u16);
                set16(l3, 24, v);
                "udp length over"
            }
            10 => {
                let v = ulen(l3).saturating_sub(1 + r.below(64) as u16);
                set16(l3, 24, v);
                "udp length under"
            }
            11 => {
                set16(l3, 24, r.below(28) as u16);
                "udp length tiny"
            }
            12 | 13 => {
                let (s, d) = (l3[12..16].try_into().unwrap(), l3[16..20].try_into().unwrap());
                set16(l3, 26, 0);
                let ul = usize::from(ulen(l3)).clamp(8, len - 20);
                let mut c = udp_checksum(s, d, &l3[20..20 + ul]);
                let name = if r.pct(50) {
                    c ^= 1 + r.below(0xfffe) as u16;
                    "udp checksum bad"
                } else {
                    "udp checksum good"
                };
                set16(l3, 26, c);
                name
            }
            14 => {
                l3[19] = l3[19].wrapping_add(1 + r.below(200) as u8) | 1;
                if l3[19] == 255 {
                    l3[19] = 9;
                }
                fix_ip_checksum(l3);
                "other destination"
            }
            _ => {
                *ethertype = *r.pick(&[0x86dd, 0x88b5, 0x0806]);
                "ethertype"
            }
        }
    }
}

/// An IPv6 + UDP header (40 + 8 bytes) for `roce_len` bytes of RoCE, UDP
/// checksum to be set once the packet is complete.
fn ipv6_udp(src: [u8; 16], dst: [u8; 16], sport: u16, roce_len: usize, tc: u8, flow: u32, hop: u8) -> Vec<u8> {
    let mut h = vec![0u8; 48];
    let vtf = (6u32 << 28) | (u32::from(tc) << 20) | (flow & 0xf_ffff);
    h[..4].copy_from_slice(&vtf.to_be_bytes());
    h[4..6].copy_from_slice(&((8 + roce_len) as u16).to_be_bytes());
    h[6] = 17;
    h[7] = hop;
    h[8..24].copy_from_slice(&src);
    h[24..40].copy_from_slice(&dst);
    h[40..42].copy_from_slice(&sport.to_be_bytes());
    h[42..44].copy_from_slice(&4791u16.to_be_bytes());
    h[44..46].copy_from_slice(&((8 + roce_len) as u16).to_be_bytes());
    h
}

/// Sets the (mandatory) UDP checksum of an IPv6 packet.
fn set_udp6_checksum(l3: &mut [u8]) {
    l3[46] = 0;
    l3[47] = 0;
    let ulen = l3.len() - 40;
    let c = match !(inet_sum(model::pseudo6_sum(&l3[8..40], ulen), &l3[40..]) as u16) {
        0 => 0xffff,
        c => c,
    };
    l3[46..48].copy_from_slice(&c.to_be_bytes());
}

/// One change to an IPv6 packet's carrier; returns its name.
fn mutate_l3v6(r: &mut Rng, l3: &mut Vec<u8>) -> &'static str {
    let len = l3.len();
    let plen = u16::from_be_bytes([l3[4], l3[5]]);
    match r.below(6) {
        0 => {
            let v = plen.saturating_add(1 + r.below(64) as u16);
            l3[4..6].copy_from_slice(&v.to_be_bytes());
            "ipv6 payload length over"
        }
        1 => {
            let v = plen.saturating_sub(1 + r.below(64) as u16);
            l3[4..6].copy_from_slice(&v.to_be_bytes());
            "ipv6 payload length under"
        }
        2 => {
            l3[6] = *r.pick(&[6, 58, 59]);
            "ipv6 next header"
        }
        3 => {
            l3[46] ^= 1 + r.below(255) as u8;
            "ipv6 udp checksum bad"
        }
        4 => {
            for _ in 0..1 + r.below(32) {
                l3.push(r.u8());
            }
            "ipv6 trailing bytes"
        }
        _ => {
            l3.truncate(len - 1 - r.below((len - 41) as u64) as usize);
            "ipv6 truncated"
        }
    }
}

fn uncertain_foreign_reason(why: &str) -> &'static str {
    match why {
        "martian source" => "foreign if delivered: martian source",
        "udp checksum" => "foreign if delivered: udp checksum",
        "ipv6 multicast source" => "foreign if delivered: ipv6 multicast source",
        "ipv6 loopback source" => "foreign if delivered: ipv6 loopback source",
        _ => "foreign if delivered: ipv6 udp checksum",
    }
}

/// A PSN far from the live window of a QP whose traffic started at `base`
/// (model.rs): half far behind, half far ahead.
fn far_psn(r: &mut Rng, base: u32) -> u32 {
    let off = if r.pct(50) {
        (2 + r.below((1 << 22) - 2) as u32).wrapping_neg()
    } else {
        LIVE_SPAN as u32 + 1 + r.below((1 << 23) - LIVE_SPAN as u64 - 1) as u32
    };
    base.wrapping_add(off) & 0xff_ffff
}
