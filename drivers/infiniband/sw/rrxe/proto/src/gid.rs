// SPDX-License-Identifier: GPL-2.0

//! RoCE addressing derived from a network device: the node/port GUID from
//! the MAC address (EUI-48 to modified EUI-64, as IPv6 does), the RoCE v2
//! GIDs of IPv4 and IPv6 addresses, and the IB MTU a netdev MTU allows.

/// Modified EUI-64 of a MAC address as a big-endian byte array: the MAC
/// split by `ff:fe`, with the universal/local bit inverted.
pub fn eui64_from_mac(mac: [u8; 6]) -> [u8; 8] {
    [
        mac[0] ^ 0x02,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]
}

/// GUID (node, port or system image) for a MAC address, as a host-order
/// integer whose big-endian bytes are [`eui64_from_mac`].
pub fn guid_from_mac(mac: [u8; 6]) -> u64 {
    u64::from_be_bytes(eui64_from_mac(mac))
}

/// Makes `mac` a locally administered unicast address (as the kernel's
/// `eth_random_addr` does to random bytes): multicast bit clear, local bit
/// set.
pub fn make_local_unicast(mac: &mut [u8; 6]) {
    mac[0] &= 0xfe;
    mac[0] |= 0x02;
}

/// The RoCE v2 GID of an IPv4 address: the IPv4-mapped IPv6 address
/// `::ffff:a.b.c.d`.
pub fn gid_from_ipv4(addr: [u8; 4]) -> [u8; 16] {
    let mut gid = [0u8; 16];
    gid[10] = 0xff;
    gid[11] = 0xff;
    gid[12..].copy_from_slice(&addr);
    gid
}

/// The default (link-local) GID of a port: `fe80::` + EUI-64 of the MAC.
pub fn link_local_gid(mac: [u8; 6]) -> [u8; 16] {
    let mut gid = [0u8; 16];
    gid[0] = 0xfe;
    gid[1] = 0x80;
    gid[8..].copy_from_slice(&eui64_from_mac(mac));
    gid
}

/// IB path MTU values (`enum ib_mtu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum IbMtu {
    /// 256 bytes
    Mtu256 = 1,
    /// 512 bytes
    Mtu512 = 2,
    /// 1024 bytes
    Mtu1024 = 3,
    /// 2048 bytes
    Mtu2048 = 4,
    /// 4096 bytes
    Mtu4096 = 5,
}

impl IbMtu {
    /// Payload bytes of this MTU.
    pub fn bytes(self) -> u32 {
        128 << (self as u32)
    }

    /// From the raw `enum ib_mtu` value; `None` if out of range.
    pub fn from_raw(v: u32) -> Option<Self> {
        match v {
            1 => Some(Self::Mtu256),
            2 => Some(Self::Mtu512),
            3 => Some(Self::Mtu1024),
            4 => Some(Self::Mtu2048),
            5 => Some(Self::Mtu4096),
            _ => None,
        }
    }
}

/// Worst-case RoCE v2 overhead inside an Ethernet frame's MTU: IPv6 (40) +
/// UDP (8) + BTH (12) + the largest extended header set (16) + ICRC (4),
/// rounded to the 80 bytes C rxe reserves.
pub const ROCE_MAX_HDR_LEN: u32 = 80;

/// The largest IB MTU whose packets fit a netdev MTU, capped at 4096 and
/// floored at 256 (the smallest IB MTU), as C rxe derives `active_mtu`.
pub fn ib_mtu_for_netdev_mtu(netdev_mtu: u32) -> IbMtu {
    let payload = netdev_mtu.saturating_sub(ROCE_MAX_HDR_LEN);
    match payload {
        p if p >= 4096 => IbMtu::Mtu4096,
        p if p >= 2048 => IbMtu::Mtu2048,
        p if p >= 1024 => IbMtu::Mtu1024,
        p if p >= 512 => IbMtu::Mtu512,
        _ => IbMtu::Mtu256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eui64_flips_ul_bit_and_inserts_fffe() {
        let mac = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56];
        assert_eq!(
            eui64_from_mac(mac),
            [0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56]
        );
        assert_eq!(guid_from_mac(mac), 0x505400fffe123456);
    }

    #[test]
    fn local_unicast_sets_local_clears_multicast() {
        for first in [0x00u8, 0x01, 0x03, 0xff, 0xfe] {
            let mut mac = [first, 1, 2, 3, 4, 5];
            make_local_unicast(&mut mac);
            assert_eq!(mac[0] & 0x01, 0, "multicast bit of {first:#x}");
            assert_eq!(mac[0] & 0x02, 0x02, "local bit of {first:#x}");
            assert_eq!(mac[0] & 0xfc, first & 0xfc);
            assert_eq!(&mac[1..], &[1, 2, 3, 4, 5]);
        }
    }

    #[test]
    fn ipv4_gid_is_v4_mapped() {
        let g = gid_from_ipv4([10, 0, 0, 1]);
        assert_eq!(g, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1]);
    }

    #[test]
    fn link_local_gid_layout() {
        let g = link_local_gid([0x02, 0, 0, 0, 0, 1]);
        assert_eq!(&g[..8], &[0xfe, 0x80, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&g[8..], &[0x00, 0, 0, 0xff, 0xfe, 0, 0, 1]);
    }

    #[test]
    fn mtu_mapping_matches_rxe_table() {
        assert_eq!(ib_mtu_for_netdev_mtu(1500), IbMtu::Mtu1024);
        assert_eq!(ib_mtu_for_netdev_mtu(9000), IbMtu::Mtu4096);
        assert_eq!(ib_mtu_for_netdev_mtu(4176), IbMtu::Mtu4096);
        assert_eq!(ib_mtu_for_netdev_mtu(4175), IbMtu::Mtu2048);
        assert_eq!(ib_mtu_for_netdev_mtu(68), IbMtu::Mtu256);
        assert_eq!(ib_mtu_for_netdev_mtu(0), IbMtu::Mtu256);
        assert_eq!(IbMtu::Mtu1024.bytes(), 1024);
    }
}
