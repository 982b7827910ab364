// SPDX-License-Identifier: GPL-2.0
//! A QP's path on the wire: the IP addresses its packets carry (from the
//! source and destination GIDs of its address vector), the UDP source port
//! (per QP, for ECMP entropy) and the check C rxe's `check_addr()` makes on
//! every received packet of a connected QP.

/// Source and destination addresses of a path, both IPv4 or both IPv6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpPair {
    /// IPv4 (from IPv4-mapped GIDs, `::ffff:a.b.c.d`).
    V4 {
        /// Our address.
        saddr: [u8; 4],
        /// The peer's address.
        daddr: [u8; 4],
    },
    /// IPv6.
    V6 {
        /// Our address.
        saddr: [u8; 16],
        /// The peer's address.
        daddr: [u8; 16],
    },
}

/// The IPv4 address of an IPv4-mapped GID.
pub fn gid_ipv4(g: &[u8; 16]) -> Option<[u8; 4]> {
    (g[..10] == [0; 10] && g[10..12] == [0xff, 0xff]).then(|| [g[12], g[13], g[14], g[15]])
}

impl IpPair {
    /// From a source and destination GID: both IPv4-mapped, or both not.
    pub fn from_gids(sgid: &[u8; 16], dgid: &[u8; 16]) -> Option<Self> {
        match (gid_ipv4(sgid), gid_ipv4(dgid)) {
            (Some(saddr), Some(daddr)) => Some(IpPair::V4 { saddr, daddr }),
            (None, None) => Some(IpPair::V6 {
                saddr: *sgid,
                daddr: *dgid,
            }),
            _ => None,
        }
    }

    /// Whether a received packet with IP source `src` and destination
    /// `dst` belongs to this path: it must come from our peer's address and
    /// be addressed to ours (C rxe's `check_addr()`).  The UDP source port
    /// is not checked: it is the peer's entropy, not an identity.
    pub fn accepts(&self, src: &[u8], dst: &[u8]) -> bool {
        match self {
            IpPair::V4 { saddr, daddr } => src == daddr.as_slice() && dst == saddr.as_slice(),
            IpPair::V6 { saddr, daddr } => src == daddr.as_slice() && dst == saddr.as_slice(),
        }
    }

    /// Whether the path is IPv4.
    pub fn is_v4(&self) -> bool {
        matches!(self, IpPair::V4 { .. })
    }
}

/// The Ethernet address of multicast group `mgid`: an IPv4-mapped
/// 224.0.0.0/4 address maps to 01:00:5e and its low 23 bits (RFC 1112), an
/// IPv6 ff00::/8 address to 33:33 and its low 32 bits (RFC 2464); `None`
/// for a GID that is neither.
pub fn multicast_mac(mgid: &[u8; 16]) -> Option<[u8; 6]> {
    if let Some(v4) = gid_ipv4(mgid) {
        return (v4[0] & 0xf0 == 0xe0).then(|| [0x01, 0x00, 0x5e, v4[1] & 0x7f, v4[2], v4[3]]);
    }
    (mgid[0] == 0xff).then(|| [0x33, 0x33, mgid[12], mgid[13], mgid[14], mgid[15]])
}

/// The GID of a packet's destination IP address `dst` (4 or 16 bytes): the
/// group a multicast datagram is for.
pub fn gid_of_ip(dst: &[u8]) -> Option<[u8; 16]> {
    match dst.len() {
        4 => {
            let mut g = [0u8; 16];
            g[10] = 0xff;
            g[11] = 0xff;
            g[12..].copy_from_slice(dst);
            Some(g)
        }
        16 => dst.try_into().ok(),
        _ => None,
    }
}

/// UDP source port of QP `qpn`'s packets: 0xc000 and up, spread by a hash
/// (RoCEv2 leaves the source port to the sender, for ECMP entropy).
pub fn source_port(qpn: u32) -> u16 {
    0xc000 | ((qpn.wrapping_mul(0x9e37_79b9) >> 18) as u16 & 0x3fff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multicast_macs() {
        let v4 = |a: [u8; 4]| gid_of_ip(&a).unwrap();
        assert_eq!(
            multicast_mac(&v4([239, 129, 2, 3])),
            Some([1, 0, 0x5e, 1, 2, 3])
        );
        assert_eq!(
            multicast_mac(&v4([224, 0, 0, 251])),
            Some([1, 0, 0x5e, 0, 0, 251])
        );
        assert_eq!(multicast_mac(&v4([10, 0, 0, 1])), None);
        let mut v6 = [0u8; 16];
        v6[0] = 0xff;
        v6[1] = 0x0e;
        v6[12..].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(
            multicast_mac(&v6),
            Some([0x33, 0x33, 0xde, 0xad, 0xbe, 0xef])
        );
        v6[0] = 0xfe;
        assert_eq!(multicast_mac(&v6), None);
        assert_eq!(gid_of_ip(&[1, 2, 3]), None);
        assert_eq!(gid_of_ip(&v6), Some(v6));
    }

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut g = [0u8; 16];
        g[10] = 0xff;
        g[11] = 0xff;
        g[12..].copy_from_slice(&a);
        g
    }

    #[test]
    fn ipv4_mapped_gids_give_ipv4() {
        let p = IpPair::from_gids(&v4([10, 0, 0, 1]), &v4([10, 0, 0, 2])).unwrap();
        assert_eq!(
            p,
            IpPair::V4 {
                saddr: [10, 0, 0, 1],
                daddr: [10, 0, 0, 2]
            }
        );
        assert!(p.is_v4());
    }

    #[test]
    fn other_gids_are_ipv6_and_mixing_is_refused() {
        let mut ll = [0u8; 16];
        ll[0] = 0xfe;
        ll[1] = 0x80;
        assert!(matches!(
            IpPair::from_gids(&ll, &ll),
            Some(IpPair::V6 { .. })
        ));
        assert!(IpPair::from_gids(&v4([1, 2, 3, 4]), &ll).is_none());
        assert!(IpPair::from_gids(&ll, &v4([1, 2, 3, 4])).is_none());
    }

    #[test]
    fn accepts_only_the_peer_to_us() {
        let p = IpPair::V4 {
            saddr: [10, 0, 0, 1],
            daddr: [10, 0, 0, 2],
        };
        assert!(p.accepts(&[10, 0, 0, 2], &[10, 0, 0, 1]));
        assert!(!p.accepts(&[10, 0, 0, 3], &[10, 0, 0, 1]), "forged source");
        assert!(
            !p.accepts(&[10, 0, 0, 2], &[10, 0, 0, 9]),
            "other destination"
        );
        assert!(!p.accepts(&[10, 0, 0, 1], &[10, 0, 0, 2]), "reversed");
        assert!(
            !p.accepts(&[10, 0, 0, 2, 0], &[10, 0, 0, 1]),
            "wrong length"
        );
        let mut a = [0u8; 16];
        a[15] = 1;
        let mut b = a;
        b[15] = 2;
        let p6 = IpPair::V6 { saddr: a, daddr: b };
        assert!(p6.accepts(&b, &a));
        assert!(!p6.accepts(&a, &b));
        assert!(!p6.accepts(&[10, 0, 0, 2], &[10, 0, 0, 1]));
    }

    #[test]
    fn loopback_path_accepts_itself() {
        let p = IpPair::V4 {
            saddr: [10, 0, 0, 1],
            daddr: [10, 0, 0, 1],
        };
        assert!(p.accepts(&[10, 0, 0, 1], &[10, 0, 0, 1]));
    }

    #[test]
    fn source_ports_are_in_the_rocev2_range() {
        for qpn in [0u32, 16, 17, 1000, 0xff_ffff, u32::MAX] {
            assert!(source_port(qpn) >= 0xc000);
        }
        assert_ne!(source_port(16), source_port(17));
    }
}
