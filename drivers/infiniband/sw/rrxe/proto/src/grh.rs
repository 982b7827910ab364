// SPDX-License-Identifier: GPL-2.0
//! The 40 bytes a UD receive buffer starts with (`IB_WC_GRH`): for RoCEv2
//! the received packet's IP header in the layout of `union
//! rdma_network_hdr` (include/rdma/ib_verbs.h), which is what librxe
//! applications and `ibv_init_ah_from_wc` parse.  An IPv6 header is the
//! whole 40 bytes (it has the layout of an IB GRH); an IPv4 header takes
//! the last 20, after 20 zero bytes.

/// Bytes of the GRH at the head of a UD receive buffer.
pub const GRH_LEN: usize = 40;

/// The GRH for a packet whose IP header starts `l3`; `None` if `l3` holds
/// no complete option-free IPv4 or IPv6 header.
pub fn from_ip_header(l3: &[u8]) -> Option<[u8; GRH_LEN]> {
    let mut g = [0u8; GRH_LEN];
    match l3.first()? >> 4 {
        4 => {
            // IHL 5: RoCEv2 packets carry no IPv4 options.
            if l3[0] & 0x0f != 5 {
                return None;
            }
            g[20..].copy_from_slice(l3.get(..20)?);
        }
        6 => g.copy_from_slice(l3.get(..GRH_LEN)?),
        _ => return None,
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_header_goes_after_twenty_zero_bytes() {
        let mut ip = [0u8; 28];
        ip[0] = 0x45;
        for (i, b) in ip.iter_mut().enumerate().skip(1) {
            *b = i as u8;
        }
        let g = from_ip_header(&ip).unwrap();
        assert_eq!(&g[..20], &[0u8; 20]);
        assert_eq!(&g[20..], &ip[..20]);
    }

    #[test]
    fn ipv6_header_is_the_grh() {
        let mut ip = [0u8; 48];
        ip[0] = 0x60;
        for (i, b) in ip.iter_mut().enumerate().skip(1) {
            *b = i as u8;
        }
        assert_eq!(&from_ip_header(&ip).unwrap()[..], &ip[..40]);
    }

    #[test]
    fn short_or_odd_headers_are_refused() {
        assert_eq!(from_ip_header(&[]), None);
        assert_eq!(from_ip_header(&[0x45; 19]), None);
        assert_eq!(from_ip_header(&[0x46; 24]), None);
        assert_eq!(from_ip_header(&[0x60; 39]), None);
        assert_eq!(from_ip_header(&[0x50; 40]), None);
    }
}
