// SPDX-License-Identifier: GPL-2.0
//! roce-flood: writes crafted RoCEv2 packets, as whole Ethernet frames in
//! a classic libpcap file, for the VM attack tests to
//! replay at an rrxe device with pcap_replay, and a summary that predicts
//! how rrxe's counters must move.
//!
//!   roce-flood --mode flood|forge|sequence --out FILE.pcap --src-mac MAC --dst-mac MAC
//!              --local IP --peer IP [--seed N] [--summary FILE]
//!     flood: --count N [--live TYPE:QPN:PSN,...] [--pmtu N] [--captures DIR]
//!            [--local6 IPV6]
//!     forge: --target TYPE:QPN:PSN,... --forged-src IP,... [--rkey K]
//!            [--va V] [--len N] [--pmtu N] [--repeat N] [--allow-valid 1]
//!     sequence: --target TYPE:QPN:PSN --ops OP,... [--rkey K] [--va V]
//!               [--bad-icrc 1]
//!     datagram: --qpn N --count N [--qkey K] [--len N|max] [--dst IP]
//!               [--frame-mtu N]
//!
//! `--local` is the attacked device's address (every packet's
//! destination), `--peer` the address its live QPs talk to; `--live`
//! lists the attacked device's QPs (rc or uc), each with the PSN its live
//! traffic starts from; `--local6` (the attacked netdev's link-local
//! address) adds IPv6 packets (10%).  flood (scenario 20-remote-flood): `--count`
//! mutations of real captures and synthesized packets, see flood.rs.
//! forge (scenario 21-forged-peers): for each target QP and each forged
//! source, valid packets (ICRC, P_Key, the expected PSN, for WRITE the
//! given rkey and VA) that only the source address betrays: SEND and
//! WRITE, ONLY and with immediate, and FIRST+LAST pairs, at the expected
//! PSN and next to it.  Every one of them must count `rcv_foreign`.
//! sequence (scenarios ack-psn and forged-peers): the given packets, in
//! order, from the QP's real peer (`--peer`, or the address of its
//! alternate path), with everything else right: each OP is `send:D[:LEN]`
//! (SEND ONLY of LEN bytes, default 64, at the expected PSN + D,
//! acknowledge requested), `write:D:LEN` (RDMA WRITE ONLY of LEN bytes to
//! `--va` with `--rkey`), `read:D:LEN` (RDMA READ of LEN bytes at `--va`
//! with `--rkey`, RC only), `wfirst:D:LEN` and `wmiddle:D:LEN` (the
//! first packet of an RDMA WRITE of two packets of LEN bytes, to `--va`
//! with `--rkey`, and a middle packet: a bulk transfer's), or `ack:D:SYN`
//! (an RC acknowledgement with the AETH syndrome SYN, e.g. 0x62 for a
//! remote access NAK, at the PSN + D of the QP's requester, whose next PSN
//! the target's PSN is then).  The opcodes are RC's or, for a `uc:`
//! target, UC's.  `--bad-icrc 1` spoils every packet's ICRC (the UDP
//! checksum is 0, so the stack lets them through to the driver).
//!
//! The summary (stdout, or `--summary`) is `key=value` lines: total,
//! kernel_drop (the IP/UDP stack drops them), uncertain (probably dropped
//! by the stack: bad UDP checksum, martian source; uncertain_foreign and
//! uncertain_valid: those of them rrxe would count as foreign, or as
//! duplicate or out of sequence, if they got through), reach (handed to
//! rrxe), check_drop (rrxe's receive checks drop them, rcv_foreign ones
//! included), foreign, duplicate, out_of_seq, resp_drop, other,
//! known_invalid (reach rrxe and were made invalid on purpose), then
//! per-reason and per-mutation counts.

mod datagram;
mod flood;
mod model;
mod wire;

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::process::exit;

use rrxe_proto::aeth::Aeth;
use rrxe_proto::bth::Bth;
use rrxe_proto::builder::{build_packet, ExtHeaders};
use rrxe_proto::icrc::icrc_fill;
use rrxe_proto::immdt::Immdt;
use rrxe_proto::opcode::*;
use rrxe_proto::psn::Psn;
use rrxe_proto::qp_state::QpType;
use rrxe_proto::reth::Reth;

use model::{Fate, LiveQp, Target};
use wire::{ipv4_udp, parse_ip, parse_mac, PcapWriter, Rng, TableCrc};

/// Counts per category (see the module documentation).
#[derive(Default)]
pub struct Summary {
    pub total: u64,
    pub kernel_drop: u64,
    pub uncertain: u64,
    pub uncertain_foreign: u64,
    pub uncertain_valid: u64,
    pub reach: u64,
    pub check_drop: u64,
    pub foreign: u64,
    pub duplicate: u64,
    pub out_of_seq: u64,
    pub resp_drop: u64,
    pub other: u64,
    pub known_invalid: u64,
    pub frames: u64,
    pub reasons: BTreeMap<&'static str, u64>,
    pub mutations: BTreeMap<&'static str, u64>,
}

impl Summary {
    pub fn count(&mut self, f: Fate) {
        match f {
            Fate::CheckDrop(why) => {
                self.check_drop += 1;
                *self.reasons.entry(why).or_default() += 1;
            }
            Fate::Foreign => {
                self.check_drop += 1;
                self.foreign += 1;
            }
            Fate::Duplicate => self.duplicate += 1,
            Fate::OutOfSeq => self.out_of_seq += 1,
            Fate::RespDrop => self.resp_drop += 1,
            Fate::Other(why) => {
                self.other += 1;
                *self.reasons.entry(why).or_default() += 1;
            }
        }
    }

    fn write(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let fields = [
            ("total", self.total),
            ("kernel_drop", self.kernel_drop),
            ("uncertain", self.uncertain),
            ("uncertain_foreign", self.uncertain_foreign),
            ("uncertain_valid", self.uncertain_valid),
            ("reach", self.reach),
            ("check_drop", self.check_drop),
            ("foreign", self.foreign),
            ("duplicate", self.duplicate),
            ("out_of_seq", self.out_of_seq),
            ("resp_drop", self.resp_drop),
            ("other", self.other),
            ("known_invalid", self.known_invalid),
            ("frames", self.frames),
        ];
        for (k, v) in fields {
            writeln!(w, "{k}={v}")?;
        }
        for (k, v) in &self.reasons {
            writeln!(w, "reason.{}={v}", k.replace(' ', "_"))?;
        }
        for (k, v) in &self.mutations {
            writeln!(w, "mutation.{}={v}", k.replace(' ', "_"))?;
        }
        Ok(())
    }
}

fn die(msg: &str) -> ! {
    eprintln!("roce-flood: {msg}");
    exit(2);
}

fn num(s: &str) -> u64 {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.unwrap_or_else(|_| die(&format!("not a number: {s}")))
}

/// "rc:17:100,uc:18:5" -> QPs.
fn parse_qps(s: &str) -> Vec<LiveQp> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let f: Vec<&str> = p.split(':').collect();
            let ty = match f.first() {
                Some(&"rc") => QpType::Rc,
                Some(&"uc") => QpType::Uc,
                _ => die(&format!("QP '{p}': want rc:QPN:PSN or uc:QPN:PSN")),
            };
            if f.len() != 3 {
                die(&format!("QP '{p}': want TYPE:QPN:PSN"));
            }
            LiveQp { qpn: num(f[1]) as u32 & 0xff_ffff, ty, psn: num(f[2]) as u32 & 0xff_ffff }
        })
        .collect()
}

/// Parses a full or "::"-compressed IPv6 address (no IPv4 tail).
fn parse_ip6(s: &str) -> Option<[u8; 16]> {
    let groups = |p: &str| -> Option<Vec<u16>> {
        p.split(':').filter(|g| !g.is_empty()).map(|g| u16::from_str_radix(g, 16).ok()).collect()
    };
    let (head, tail) = match s.split_once("::") {
        Some((h, t)) => (groups(h)?, groups(t)?),
        None => (groups(s)?, Vec::new()),
    };
    if head.len() + tail.len() > 8 || (!s.contains("::") && head.len() != 8) {
        return None;
    }
    let mut a = [0u8; 16];
    for (i, g) in head.iter().enumerate() {
        a[2 * i..2 * i + 2].copy_from_slice(&g.to_be_bytes());
    }
    let off = 8 - tail.len();
    for (i, g) in tail.iter().enumerate() {
        a[2 * (off + i)..2 * (off + i) + 2].copy_from_slice(&g.to_be_bytes());
    }
    Some(a)
}

fn main() {
    let mut args: BTreeMap<String, String> = BTreeMap::new();
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let Some(name) = k.strip_prefix("--") else { die(&format!("unexpected argument {k}")) };
        let v = it.next().unwrap_or_else(|| die(&format!("{k} needs a value")));
        args.insert(name.to_string(), v);
    }
    let get = |k: &str| args.get(k).cloned().unwrap_or_else(|| die(&format!("--{k} is required")));
    let opt = |k: &str, d: &str| args.get(k).cloned().unwrap_or_else(|| d.to_string());
    let mode = get("mode");
    let src_mac = parse_mac(&get("src-mac")).unwrap_or_else(|| die("bad --src-mac"));
    let dst_mac = parse_mac(&get("dst-mac")).unwrap_or_else(|| die("bad --dst-mac"));
    let local = parse_ip(&get("local")).unwrap_or_else(|| die("bad --local"));
    let peer = parse_ip(&get("peer")).unwrap_or_else(|| die("bad --peer"));
    let pmtu = num(&opt("pmtu", "1024")) as usize;
    let mut r = Rng::new(num(&opt("seed", "1")));
    let out = get("out");
    let file = std::fs::File::create(&out).unwrap_or_else(|e| die(&format!("{out}: {e}")));
    let mut pcap = PcapWriter::new(BufWriter::with_capacity(1 << 20, file)).unwrap_or_else(|e| die(&e.to_string()));
    let mut s = Summary::default();
    let t0 = std::time::Instant::now();
    match mode.as_str() {
        "flood" => {
            let local6 = args.get("local6").map(|a| parse_ip6(a).unwrap_or_else(|| die("bad --local6")));
            let t = Target { local, peer, local6, live: parse_qps(&opt("live", "")), pmtu: pmtu as u32 };
            let mut templates = Vec::new();
            if let Some(dir) = args.get("captures") {
                let mut paths: Vec<_> = std::fs::read_dir(dir)
                    .unwrap_or_else(|e| die(&format!("{dir}: {e}")))
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
                    .collect();
                paths.sort();
                for p in paths {
                    templates.extend(wire::read_roce_packets(&p).unwrap_or_else(|e| die(&e.to_string())));
                }
                if templates.is_empty() {
                    die(&format!("no RoCE packets in {dir}/*.pcap"));
                }
            }
            let mut f = flood::Flood::new(&t, pmtu, &templates);
            for _ in 0..num(&get("count")) {
                let fr = f.packet(&mut r, &mut s);
                pcap.frame(&dst_mac, &src_mac, fr.ethertype, &fr.l3).unwrap_or_else(|e| die(&e.to_string()));
            }
            eprintln!("roce-flood: {} templates from captures", templates.len());
        }
        "forge" => {
            let targets = parse_qps(&get("target"));
            let t = Target { local, peer, local6: None, live: targets.clone(), pmtu: pmtu as u32 };
            let srcs: Vec<[u8; 4]> = get("forged-src")
                .split(',')
                .map(|a| parse_ip(a).unwrap_or_else(|| die(&format!("bad address {a}"))))
                .collect();
            let g = Forge {
                rkey: num(&opt("rkey", "0")) as u32,
                va: num(&opt("va", "0")),
                len: num(&opt("len", "64")) as usize,
                pmtu,
            };
            for _ in 0..num(&opt("repeat", "1")) {
                for q in &targets {
                    for &src in &srcs {
                        for l3 in g.packets(q, src, local, &mut r) {
                            s.total += 1;
                            match model::kernel(0x0800, &l3, &t) {
                                model::KernelFate::Deliver(seen) => {
                                    s.reach += 1;
                                    let fate = model::rrxe(&seen, &t);
                                    // --allow-valid: negative controls (the real
                                    // peer's address as "forged" source).
                                    if !args.contains_key("allow-valid") {
                                        assert_eq!(fate, Fate::Foreign, "forged packet not foreign");
                                    }
                                    s.count(fate);
                                }
                                _ => die("forged packet would not reach rrxe (martian source?)"),
                            }
                            pcap.frame(&dst_mac, &src_mac, 0x0800, &l3).unwrap_or_else(|e| die(&e.to_string()));
                        }
                    }
                }
            }
        }
        "sequence" => {
            let targets = parse_qps(&get("target"));
            let q = targets.first().unwrap_or_else(|| die("--target needs one QP"));
            let (rkey, va) = (num(&opt("rkey", "0")) as u32, num(&opt("va", "0")));
            let uc = q.ty == QpType::Uc;
            let bad_icrc = args.contains_key("bad-icrc");
            for op in get("ops").split(',') {
                let f: Vec<&str> = op.split(':').collect();
                let arg = |i: usize| num(f.get(i).unwrap_or_else(|| die(&format!("bad op {op}"))));
                let psn = Psn::new(q.psn.wrapping_add(arg(1) as u32) & 0xff_ffff);
                let (opcode, ext, plen) = match (f[0], uc) {
                    ("send", _) => {
                        let len = if f.len() > 2 { arg(2) as usize } else { 64 };
                        (if uc { UC_SEND_ONLY } else { RC_SEND_ONLY }, ExtHeaders::default(), len)
                    }
                    ("write", _) => {
                        let len = arg(2) as u32;
                        let reth = Some(Reth::new(va, rkey, len));
                        let opcode = if uc { UC_RDMA_WRITE_ONLY } else { RC_RDMA_WRITE_ONLY };
                        (opcode, ExtHeaders { reth, ..Default::default() }, len as usize)
                    }
                    // The first packet of a WRITE of two packets of LEN
                    // bytes, and a middle packet: a bulk transfer's.
                    ("wfirst", _) => {
                        let len = arg(2) as u32;
                        let reth = Some(Reth::new(va, rkey, 2 * len));
                        let opcode = if uc { UC_RDMA_WRITE_FIRST } else { RC_RDMA_WRITE_FIRST };
                        (opcode, ExtHeaders { reth, ..Default::default() }, len as usize)
                    }
                    ("wmiddle", _) => {
                        let opcode = if uc { UC_RDMA_WRITE_MIDDLE } else { RC_RDMA_WRITE_MIDDLE };
                        (opcode, ExtHeaders::default(), arg(2) as usize)
                    }
                    ("read", false) => {
                        let reth = Some(Reth::new(va, rkey, arg(2) as u32));
                        (RC_RDMA_READ_REQUEST, ExtHeaders { reth, ..Default::default() }, 0)
                    }
                    ("ack", false) => {
                        let aeth = Some(Aeth::new(arg(2) as u8, 0));
                        (RC_ACKNOWLEDGE, ExtHeaders { aeth, ..Default::default() }, 0)
                    }
                    (k, _) => die(&format!(
                        "unknown op {k} for this QP type (send, write, wfirst, wmiddle; RC: read, ack)"
                    )),
                };
                let bth = Bth::new(opcode, q.qpn, psn).with_ack_req(!uc && opcode != RC_ACKNOWLEDGE);
                let mut roce = vec![0u8; 128 + plen];
                let n = build_packet(&mut roce, &bth, &ext, &vec![0x3cu8; plen]).expect("request builds");
                roce.truncate(n);
                let mut l3 = ipv4_udp(peer, local, 0xc000 | (r.u16() & 0x3fff), roce.len(), 0, 64, r.u16()).to_vec();
                l3.extend_from_slice(&roce);
                icrc_fill::<TableCrc>(&mut l3).expect("icrc");
                if bad_icrc {
                    let n = l3.len();
                    l3[n - 1] ^= 0xff;
                }
                s.total += 1;
                pcap.frame(&dst_mac, &src_mac, 0x0800, &l3).unwrap_or_else(|e| die(&e.to_string()));
            }
        }
        "datagram" => {
            let len = match opt("len", "64").as_str() {
                "max" => datagram::Datagram::max_len(),
                l => num(l) as usize,
            };
            if len > datagram::Datagram::max_len() {
                die(&format!("--len {len}: at most {} fits an IPv4 datagram", datagram::Datagram::max_len()));
            }
            let d = datagram::Datagram {
                src: peer,
                dst: parse_ip(&opt("dst", &get("local"))).unwrap_or_else(|| die("bad --dst")),
                qpn: num(&get("qpn")) as u32 & 0xff_ffff,
                qkey: num(&opt("qkey", "0")) as u32,
                len,
                frame_mtu: num(&opt("frame-mtu", "1500")).clamp(68, 65535) as usize,
            };
            for seq in 0..num(&get("count")) {
                s.total += 1;
                for l3 in d.packets(seq as u32, &mut r) {
                    s.frames += 1;
                    pcap.frame(&dst_mac, &src_mac, 0x0800, &l3).unwrap_or_else(|e| die(&e.to_string()));
                }
            }
        }
        m => die(&format!("unknown --mode {m} (flood, forge, sequence or datagram)")),
    }
    pcap.finish().unwrap_or_else(|e| die(&e.to_string()));
    eprintln!("roce-flood: {} packets in {:.2} s", s.total, t0.elapsed().as_secs_f64());
    match args.get("summary") {
        Some(p) => {
            let mut f = std::fs::File::create(p).unwrap_or_else(|e| die(&format!("{p}: {e}")));
            s.write(&mut f).unwrap_or_else(|e| die(&e.to_string()));
        }
        None => s.write(&mut std::io::stdout()).unwrap_or_else(|e| die(&e.to_string())),
    }
}

/// Forge-mode packet parameters.
struct Forge {
    rkey: u32,
    va: u64,
    len: usize,
    pmtu: usize,
}

impl Forge {
    /// The forged packets for QP `q` from `src`: each is valid in every
    /// respect but its source address.
    fn packets(&self, q: &LiveQp, src: [u8; 4], local: [u8; 4], r: &mut Rng) -> Vec<Vec<u8>> {
        let uc = q.ty == QpType::Uc;
        let op = |rc: u8, ucop: u8| if uc { ucop } else { rc };
        let e = q.psn;
        let (l, m) = (self.len, self.pmtu);
        let reth = |len: usize| Some(Reth::new(self.va, self.rkey, len as u32));
        let imm = Some(Immdt::from_u32(0xdead_beef));
        // (opcode, PSN offset, payload length, RETH, immediate)
        type Spec = (u8, u32, usize, Option<Reth>, Option<Immdt>);
        let list: Vec<Spec> = vec![
            (op(RC_SEND_ONLY, UC_SEND_ONLY), 0, l, None, None),
            (op(RC_SEND_ONLY_WITH_IMMEDIATE, UC_SEND_ONLY_WITH_IMMEDIATE), 0, l, None, imm),
            (op(RC_RDMA_WRITE_ONLY, UC_RDMA_WRITE_ONLY), 0, l, reth(l), None),
            (op(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE), 0, l, reth(l), imm),
            (op(RC_SEND_FIRST, UC_SEND_FIRST), 0, m, None, None),
            (op(RC_SEND_LAST, UC_SEND_LAST), 1, l, None, None),
            (op(RC_RDMA_WRITE_FIRST, UC_RDMA_WRITE_FIRST), 0, m, reth(m + l), None),
            (op(RC_RDMA_WRITE_LAST, UC_RDMA_WRITE_LAST), 1, l, None, None),
            // Next to the expected PSN (behind: a duplicate if accepted).
            (op(RC_SEND_ONLY, UC_SEND_ONLY), 1, l, None, None),
            (op(RC_RDMA_WRITE_ONLY, UC_RDMA_WRITE_ONLY), 0xff_ffff, l, reth(l), None),
        ];
        list.into_iter()
            .map(|(opcode, d, plen, reth, immdt)| {
                let psn = Psn::new(e.wrapping_add(d) & 0xff_ffff);
                let bth = Bth::new(opcode, q.qpn, psn).with_ack_req(!uc).with_se(true);
                let ext = ExtHeaders { reth, immdt, ..Default::default() };
                let payload = vec![0xeeu8; plen];
                let mut roce = vec![0u8; 64 + plen];
                let n = build_packet(&mut roce, &bth, &ext, &payload).expect("forged packet builds");
                roce.truncate(n);
                let sport = 0xc000 | (r.u16() & 0x3fff);
                let mut l3 = ipv4_udp(src, local, sport, roce.len(), 0, 64, r.u16()).to_vec();
                l3.extend_from_slice(&roce);
                icrc_fill::<TableCrc>(&mut l3).expect("icrc");
                l3
            })
            .collect()
    }
}
