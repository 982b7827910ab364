// SPDX-License-Identifier: GPL-2.0
//! Throughput of the hot per-packet work, in bytes/s, next to a plain
//! `copy_from_slice` of the same buffer as the yardstick: ICRC over 1 KiB
//! and 4 KiB packets (crc32fast as the CRC, as a fast kernel `crc32_le`
//! would be; the bit-at-a-time `SoftCrc32` for reference), header parse +
//! validate, and header/packet build.
//!
//! Run: `cargo bench --bench throughput` (`--no-run` to only build).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rrxe_proto::bth::Bth;
use rrxe_proto::builder::{build_packet, write_headers, ExtHeaders};
use rrxe_proto::header::Header;
use rrxe_proto::icrc::{icrc_compute, icrc_fill, Crc32, SoftCrc32};
use rrxe_proto::ip::{Ipv4Hdr, UdpHdr};
use rrxe_proto::opcode::RC_SEND_ONLY;
use rrxe_proto::qp_state::{QpState, QpType};
use rrxe_proto::validate::{validate, RecvContext};
use rrxe_proto::{Packet, Psn};

/// crc32fast with the kernel's `crc32_le` contract (no inversions).
struct FastCrc;

impl Crc32 for FastCrc {
    fn crc32_le(seed: u32, data: &[u8]) -> u32 {
        let mut h = crc32fast::Hasher::new_with_initial(!seed);
        h.update(data);
        !h.finalize()
    }
}

const SIZES: [usize; 2] = [1024, 4096];

fn bth() -> Bth {
    Bth::new(RC_SEND_ONLY, 0x11, Psn::new(1)).with_ack_req(true)
}

/// An IPv4 RC SEND ONLY carrying `payload` bytes, ICRC filled.
fn l3_packet(payload: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..payload).map(|i| i as u8).collect();
    let mut roce = vec![0u8; payload + 64];
    let n = build_packet(&mut roce, &bth(), &ExtHeaders::default(), &body).unwrap();
    let mut p = vec![0u8; 28 + n];
    Ipv4Hdr::new_udp([10, 0, 0, 1], [10, 0, 0, 2], (8 + n) as u16, 0, 64, 1)
        .emit(&mut p)
        .unwrap();
    UdpHdr::new(0xc000, 4791, n as u16)
        .emit(&mut p[20..])
        .unwrap();
    p[28..].copy_from_slice(&roce[..n]);
    icrc_fill::<FastCrc>(&mut p).unwrap();
    p
}

fn icrc(c: &mut Criterion) {
    let mut g = c.benchmark_group("icrc");
    for size in SIZES {
        let pkt = l3_packet(size);
        g.throughput(Throughput::Bytes(pkt.len() as u64));
        g.bench_function(format!("crc32fast/{size}"), |b| {
            b.iter(|| icrc_compute::<FastCrc>(black_box(&pkt)).unwrap())
        });
        g.bench_function(format!("soft/{size}"), |b| {
            b.iter(|| icrc_compute::<SoftCrc32>(black_box(&pkt)).unwrap())
        });
    }
    g.finish();
}

fn memcpy(c: &mut Criterion) {
    let mut g = c.benchmark_group("memcpy");
    for size in SIZES {
        let src = l3_packet(size);
        let mut dst = vec![0u8; src.len()];
        g.throughput(Throughput::Bytes(src.len() as u64));
        g.bench_function(format!("copy_from_slice/{size}"), |b| {
            b.iter(|| dst.copy_from_slice(black_box(&src)))
        });
    }
    g.finish();
}

fn parse(c: &mut Criterion) {
    let ctx = RecvContext {
        qp_type: QpType::Rc,
        qp_state: QpState::Rts,
        pmtu: 4096,
        pkey: 0xffff,
        qkey: 0,
        access_flags: 0,
        expected_psn: Some(Psn::new(1)),
        prev_opcode: None,
    };
    let mut g = c.benchmark_group("parse");
    for size in SIZES {
        let pkt = l3_packet(size);
        g.throughput(Throughput::Bytes(pkt.len() as u64));
        g.bench_function(format!("parse_l3+validate/{size}"), |b| {
            b.iter(|| {
                let (p, _) = Packet::parse_l3(black_box(&pkt)).unwrap();
                validate(&p, &ctx).unwrap()
            })
        });
    }
    g.finish();
}

fn build(c: &mut Criterion) {
    let mut g = c.benchmark_group("build");
    let mut hdr = [0u8; 64];
    g.throughput(Throughput::Bytes(12));
    g.bench_function("write_headers", |b| {
        b.iter(|| {
            write_headers(
                black_box(&mut hdr),
                black_box(&bth()),
                &ExtHeaders::default(),
                4096,
            )
            .unwrap()
        })
    });
    for size in SIZES {
        let body = vec![0x5au8; size];
        let mut buf = vec![0u8; size + 64];
        g.throughput(Throughput::Bytes(size as u64 + 16));
        g.bench_function(format!("build_packet/{size}"), |b| {
            b.iter(|| {
                build_packet(&mut buf, &bth(), &ExtHeaders::default(), black_box(&body)).unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, icrc, memcpy, parse, build);
criterion_main!(benches);
