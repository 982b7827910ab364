// SPDX-License-Identifier: GPL-2.0
//! Datagram mode: valid UD SEND ONLY datagrams of a chosen size to one QP
//! number (a UD QP with its Q_Key, or the multicast QPN), with a correct
//! ICRC, as the receiver sees them after IP reassembly.  A datagram longer
//! than the frame MTU is sent as IPv4 fragments (no DF, as any sender's
//! stack fragments a large UDP datagram), so a 64 KiB RoCE packet reaches
//! the receiver whole, the way an attacker anywhere on the Internet can
//! make one.  For the receive-bounds scenario: what the driver does with
//! datagrams longer than any path MTU, and with datagrams to the multicast
//! QPN that no group of the device matches.

use rrxe_proto::bth::Bth;
use rrxe_proto::builder::{build_packet, ExtHeaders};
use rrxe_proto::deth::Deth;
use rrxe_proto::icrc::icrc_fill;
use rrxe_proto::opcode::UD_SEND_ONLY;
use rrxe_proto::psn::Psn;

use crate::wire::{fix_ip_checksum, ipv4_udp, Rng, TableCrc};

/// The largest RoCE packet one IPv4 UDP datagram carries.
pub const MAX_ROCE_LEN: usize = 65535 - 28;

/// What to send.
pub struct Datagram {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub qpn: u32,
    pub qkey: u32,
    /// Payload bytes (the RoCE packet adds 12 + 8 + pad + 4).
    pub len: usize,
    /// Largest IP packet on the wire; longer datagrams are fragmented.
    pub frame_mtu: usize,
}

impl Datagram {
    /// The payload length that makes the largest RoCE packet.
    pub fn max_len() -> usize {
        (MAX_ROCE_LEN - 12 - 8 - 4) & !3
    }

    /// Datagram number `seq` as IP packets (fragments in order, or one).
    pub fn packets(&self, seq: u32, r: &mut Rng) -> Vec<Vec<u8>> {
        let bth = Bth::new(UD_SEND_ONLY, self.qpn, Psn::new(seq & 0xff_ffff));
        let ext = ExtHeaders { deth: Some(Deth::new(self.qkey, 0x11)), ..Default::default() };
        let mut payload = vec![0u8; self.len];
        r.fill(&mut payload);
        let mut roce = vec![0u8; 64 + self.len];
        let n = build_packet(&mut roce, &bth, &ext, &payload).expect("datagram builds");
        roce.truncate(n);
        assert!(roce.len() <= MAX_ROCE_LEN, "datagram longer than IPv4 carries");
        let sport = 0xc000 | (r.u16() & 0x3fff);
        let mut l3 = ipv4_udp(self.src, self.dst, sport, roce.len(), 0, 64, r.u16()).to_vec();
        // No DF: the reassembled header the receiver checks the ICRC over
        // has flags and offset 0.
        l3[6] = 0;
        fix_ip_checksum(&mut l3);
        l3.extend_from_slice(&roce);
        icrc_fill::<TableCrc>(&mut l3).expect("icrc");
        fragment(&l3, self.frame_mtu)
    }
}

/// Splits the IPv4 packet `l3` (20-byte header, no DF) into fragments of at
/// most `mtu` bytes; one packet if it fits.
pub fn fragment(l3: &[u8], mtu: usize) -> Vec<Vec<u8>> {
    if l3.len() <= mtu {
        return vec![l3.to_vec()];
    }
    let body = &l3[20..];
    let step = (mtu - 20) & !7;
    let mut out = Vec::new();
    let mut off = 0;
    while off < body.len() {
        let end = (off + step).min(body.len());
        let mut f = l3[..20].to_vec();
        f[2..4].copy_from_slice(&((20 + end - off) as u16).to_be_bytes());
        let more = if end < body.len() { 0x2000 } else { 0 };
        f[6..8].copy_from_slice(&((off / 8) as u16 | more).to_be_bytes());
        f.extend_from_slice(&body[off..end]);
        fix_ip_checksum(&mut f);
        out.push(f);
        off = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrxe_proto::icrc::icrc_verify;
    use rrxe_proto::Packet;

    /// Reassembles what `fragment` made, as the receiver's IP layer does.
    fn reassemble(frags: &[Vec<u8>]) -> Vec<u8> {
        let mut l3 = frags[0][..20].to_vec();
        for f in frags {
            let off = usize::from(u16::from_be_bytes([f[6], f[7]]) & 0x1fff) * 8;
            assert_eq!(off, l3.len() - 20);
            l3.extend_from_slice(&f[20..]);
        }
        let tot = l3.len() as u16;
        l3[2..4].copy_from_slice(&tot.to_be_bytes());
        l3[6] = 0;
        l3[7] = 0;
        fix_ip_checksum(&mut l3);
        l3
    }

    #[test]
    fn largest_datagram_fragments_and_reassembles_with_a_valid_icrc() {
        let d = Datagram {
            src: [10, 77, 0, 2],
            dst: [10, 77, 0, 1],
            qpn: 0x12,
            qkey: 0x1234,
            len: Datagram::max_len(),
            frame_mtu: 1500,
        };
        let frags = d.packets(1, &mut Rng::new(5));
        assert!(frags.len() > 40);
        assert!(frags.iter().all(|f| f.len() <= 1500));
        let l3 = reassemble(&frags);
        assert_eq!(l3.len(), 20 + 8 + 12 + 8 + Datagram::max_len() + 4);
        icrc_verify::<TableCrc>(&l3).expect("ICRC over the reassembled datagram");
        let (pkt, _) = Packet::parse_l3_prefix(&l3, l3.len()).expect("parses");
        assert_eq!(pkt.dest_qpn(), 0x12);
        assert_eq!(pkt.payload_len(), Datagram::max_len());
    }

    #[test]
    fn small_datagram_is_one_packet() {
        let d = Datagram { src: [1, 2, 3, 4], dst: [5, 6, 7, 8], qpn: 0xff_ffff, qkey: 1, len: 64, frame_mtu: 1500 };
        let p = d.packets(0, &mut Rng::new(1));
        assert_eq!(p.len(), 1);
        icrc_verify::<TableCrc>(&p[0]).expect("icrc");
    }
}
