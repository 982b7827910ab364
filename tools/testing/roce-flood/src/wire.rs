// SPDX-License-Identifier: GPL-2.0
//! The bytes around the RoCE packet: a table-driven CRC-32 for the ICRC
//! (proto's `SoftCrc32` works a bit at a time, too slow for a million
//! packets), IPv4/UDP headers with every field under the caller's control,
//! Ethernet frames, and classic libpcap files (write; read for the
//! captures the templates come from).

use std::io::{self, Read, Write};

use rrxe_proto::icrc::Crc32;

/// CRC-32 (reflected 0xedb88320, no pre/post inversion: proto's [`Crc32`]
/// contract), one table lookup per byte.
pub struct TableCrc;

const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC_TABLE: [u32; 256] = crc_table();

impl Crc32 for TableCrc {
    fn crc32_le(seed: u32, data: &[u8]) -> u32 {
        let mut c = seed;
        for &b in data {
            c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
        }
        c
    }
}

/// Xorshift64* PRNG: reproducible from `--seed`, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `pct` percent.
    pub fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    pub fn u8(&mut self) -> u8 {
        self.next() as u8
    }
    pub fn u16(&mut self) -> u16 {
        self.next() as u16
    }
    pub fn u32(&mut self) -> u32 {
        self.next() as u32
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(8) {
            let r = self.next().to_le_bytes();
            c.copy_from_slice(&r[..c.len()]);
        }
    }
}

/// Internet checksum (RFC 1071) of `data` added to `sum`, folded.
pub fn inet_sum(mut sum: u32, data: &[u8]) -> u32 {
    let mut it = data.chunks_exact(2);
    for w in &mut it {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [b] = it.remainder() {
        sum += u32::from(*b) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum
}

/// IPv4 header checksum over `hdr` (its checksum field must be zero).
pub fn ip_checksum(hdr: &[u8]) -> u16 {
    !(inet_sum(0, hdr) as u16)
}

/// UDP checksum over IPv4 pseudo header + `udp` (header with a zero
/// checksum field, and payload); 0 is sent as 0xffff.
pub fn udp_checksum(src: [u8; 4], dst: [u8; 4], udp: &[u8]) -> u16 {
    let mut pseudo = [0u8; 12];
    pseudo[..4].copy_from_slice(&src);
    pseudo[4..8].copy_from_slice(&dst);
    pseudo[9] = 17;
    pseudo[10..12].copy_from_slice(&(udp.len() as u16).to_be_bytes());
    let s = inet_sum(inet_sum(0, &pseudo), udp);
    match !(s as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// An IPv4 + UDP header (20 + 8 bytes) for `roce_len` bytes of RoCE, DF
/// set, UDP checksum 0, IP checksum correct.
pub fn ipv4_udp(src: [u8; 4], dst: [u8; 4], sport: u16, roce_len: usize, tos: u8, ttl: u8, id: u16) -> [u8; 28] {
    let mut h = [0u8; 28];
    h[0] = 0x45;
    h[1] = tos;
    h[2..4].copy_from_slice(&((28 + roce_len) as u16).to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[6] = 0x40;
    h[8] = ttl;
    h[9] = 17;
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    let c = ip_checksum(&h[..20]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h[20..22].copy_from_slice(&sport.to_be_bytes());
    h[22..24].copy_from_slice(&4791u16.to_be_bytes());
    h[24..26].copy_from_slice(&((8 + roce_len) as u16).to_be_bytes());
    h
}

/// Recomputes the IPv4 header checksum of the header at the start of `l3`.
pub fn fix_ip_checksum(l3: &mut [u8]) {
    let ihl = usize::from(l3[0] & 0x0f) * 4;
    l3[10] = 0;
    l3[11] = 0;
    let c = ip_checksum(&l3[..ihl]);
    l3[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Parses "aa:bb:cc:dd:ee:ff".
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s.split(':').filter_map(|p| u8::from_str_radix(p, 16).ok()).collect();
    v.try_into().ok()
}

/// Parses "a.b.c.d".
pub fn parse_ip(s: &str) -> Option<[u8; 4]> {
    let v: Vec<u8> = s.split('.').filter_map(|p| p.parse().ok()).collect();
    v.try_into().ok()
}

/// A classic libpcap writer (microsecond timestamps, LINKTYPE_ETHERNET).
pub struct PcapWriter<W: Write> {
    w: W,
    n: u32,
}

impl<W: Write> PcapWriter<W> {
    pub fn new(mut w: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&65535u32.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, n: 0 })
    }

    /// Appends an Ethernet frame: `dst`, `src`, `ethertype`, then `l3`.
    pub fn frame(&mut self, dst: &[u8; 6], src: &[u8; 6], ethertype: u16, l3: &[u8]) -> io::Result<()> {
        let len = (14 + l3.len()) as u32;
        let mut rec = [0u8; 30];
        // One microsecond apart: pcap_replay ignores them.
        rec[4..8].copy_from_slice(&self.n.to_le_bytes());
        rec[8..12].copy_from_slice(&len.to_le_bytes());
        rec[12..16].copy_from_slice(&len.to_le_bytes());
        rec[16..22].copy_from_slice(dst);
        rec[22..28].copy_from_slice(src);
        rec[28..30].copy_from_slice(&ethertype.to_be_bytes());
        self.w.write_all(&rec)?;
        self.w.write_all(l3)?;
        self.n = self.n.wrapping_add(1);
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The RoCE packets (BTH .. ICRC, UDP port 4791, IPv4 or IPv6) of a
/// classic pcap file of Ethernet frames.
pub fn read_roce_packets(path: &std::path::Path) -> io::Result<Vec<Vec<u8>>> {
    let mut data = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut data)?;
    let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("{}: not a classic pcap", path.display()));
    let magic = data.get(..4).ok_or_else(bad)?;
    let le = match magic {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => return Err(bad()),
    };
    let u32_at = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if le { u32::from_le_bytes(a) } else { u32::from_be_bytes(a) }
    };
    let mut out = Vec::new();
    let mut off = 24;
    while off + 16 <= data.len() {
        let caplen = u32_at(&data[off + 8..off + 12]) as usize;
        let start = off + 16;
        let Some(frame) = data.get(start..start + caplen) else { break };
        off = start + caplen;
        if frame.len() < 14 {
            continue;
        }
        let l3 = &frame[14..];
        let (udp_off, ok) = match u16::from_be_bytes([frame[12], frame[13]]) {
            0x0800 if l3.len() >= 28 => (usize::from(l3[0] & 0x0f) * 4, l3[9] == 17),
            0x86dd if l3.len() >= 48 => (40, l3[6] == 17),
            _ => continue,
        };
        if !ok || l3.len() < udp_off + 8 {
            continue;
        }
        let udp = &l3[udp_off..];
        if u16::from_be_bytes([udp[2], udp[3]]) != 4791 {
            continue;
        }
        let ulen = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
        if let Some(roce) = udp.get(8..ulen) {
            if roce.len() >= 16 {
                out.push(roce.to_vec());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrxe_proto::icrc::SoftCrc32;

    #[test]
    fn table_crc_matches_the_reference() {
        let mut r = Rng::new(3);
        for n in [0usize, 1, 7, 64, 1500] {
            let mut d = vec![0u8; n];
            r.fill(&mut d);
            let seed = r.u32();
            assert_eq!(TableCrc::crc32_le(seed, &d), SoftCrc32::crc32_le(seed, &d));
        }
    }

    #[test]
    fn checksums() {
        let h = ipv4_udp([10, 77, 0, 2], [10, 77, 0, 1], 0xc000, 40, 0, 64, 7);
        assert_eq!(inet_sum(0, &h[..20]), 0xffff);
        let mut udp = h[20..].to_vec();
        udp.resize(48, 0xab);
        let c = udp_checksum([10, 77, 0, 2], [10, 77, 0, 1], &udp);
        udp[6..8].copy_from_slice(&c.to_be_bytes());
        let mut p = [0u8; 12];
        p[..4].copy_from_slice(&[10, 77, 0, 2]);
        p[4..8].copy_from_slice(&[10, 77, 0, 1]);
        p[9] = 17;
        p[10..12].copy_from_slice(&48u16.to_be_bytes());
        assert_eq!(inet_sum(inet_sum(0, &p), &udp), 0xffff);
    }
}
