// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 ICRC in the module: the protocol core's ICRC (masking and
//! framing, `proto::icrc`) over the kernel's accelerated CRC32.

use crate::kapi::crc32::crc32_le;
use crate::proto::icrc::Crc32;

/// [`Crc32`] backed by the kernel's `crc32_le`.
pub(crate) struct KernelCrc32;

impl Crc32 for KernelCrc32 {
    fn crc32_le(seed: u32, data: &[u8]) -> u32 {
        crc32_le(seed, data)
    }
}

#[kernel::macros::kunit_tests(rrxe_icrc)]
mod tests {
    use super::*;
    use crate::proto::icrc::{icrc_compute, icrc_verify, SoftCrc32};

    /// An RC ACK sent by C rdma_rxe over IPv4, captured in the test VM
    /// (proto/tests/captures/v4_rc_send.pcap, Ethernet header removed).
    const RXE_V4_ACK: [u8; 48] = [
        0x45, 0x00, 0x00, 0x30, 0x4f, 0xc9, 0x40, 0x00, 0x40, 0x11, 0xd6, 0xf1, 0x0a, 0x00, 0x00,
        0x01, 0x0a, 0x00, 0x00, 0x02, 0xc1, 0x21, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00,
        0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x64, 0x81, 0x92, 0x1f, 0x00, 0x00, 0x01, 0x5e,
        0xbb, 0x42, 0x13,
    ];

    #[test]
    fn kernel_crc_matches_reference() {
        let data: [u8; 61] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        for seed in [0u32, !0, 0x1234_5678] {
            assert_eq!(
                KernelCrc32::crc32_le(seed, &data),
                SoftCrc32::crc32_le(seed, &data)
            );
            assert_eq!(KernelCrc32::crc32_le(seed, &[]), seed);
        }
    }

    #[test]
    fn verifies_a_packet_from_c_rxe() {
        assert!(icrc_verify::<KernelCrc32>(&RXE_V4_ACK).is_ok());
        assert_eq!(
            icrc_compute::<KernelCrc32>(&RXE_V4_ACK).ok(),
            icrc_compute::<SoftCrc32>(&RXE_V4_ACK).ok()
        );
    }

    #[test]
    fn rejects_a_corrupted_packet() {
        let mut p = RXE_V4_ACK;
        let last = p.len() - 5; // a byte of the AETH, inside the ICRC coverage
        p[last] ^= 0x40;
        assert!(icrc_verify::<KernelCrc32>(&p).is_err());
    }
}
