// SPDX-License-Identifier: GPL-2.0
//! Performance management (IBTA 16.1): the answer to a PerfMgmt `Get`
//! MAD that ib_core hands the driver (`process_mad`), for `perfquery` and
//! for the port counters ib_core shows in sysfs (`ports/1/counters/`).
//! Attributes answered, as C rxe answers them: `ClassPortInfo`
//! (extended-width counters supported), `PortCounters` (only
//! `LinkDownedCounter`, saturating at 255) and `PortCountersExtended`
//! (data in 4-byte words, packets).  Everything else: the MAD status says
//! unsupported.  The MAD is 256 bytes, big endian; the attribute starts
//! at byte 64 (24-byte common header, 40 reserved bytes).

/// Size of a MAD.
pub const MAD_SIZE: usize = 256;

/// `IB_MAD_RESULT_SUCCESS`: processed.
pub const RESULT_SUCCESS: u32 = 1 << 0;
/// `IB_MAD_RESULT_REPLY`: `out` is a reply to send.
pub const RESULT_REPLY: u32 = 1 << 1;
/// `IB_MAD_RESULT_FAILURE`: not for this port.
pub const RESULT_FAILURE: u32 = 0;

const MGMT_CLASS: usize = 1;
const METHOD: usize = 3;
const STATUS: usize = 4;
const ATTR_ID: usize = 16;
/// The attribute data.
const ATTR: usize = 64;

const CLASS_PERF_MGMT: u8 = 0x04;
const METHOD_GET: u8 = 0x01;
const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
const ATTR_PORT_COUNTERS: u16 = 0x0012;
const ATTR_PORT_COUNTERS_EXT: u16 = 0x001d;
/// MAD status: the method is not supported for this class.
const STATUS_UNSUPPORTED_METHOD: u16 = 0x0008;
/// MAD status: the method/attribute combination is not supported.
const STATUS_UNSUPPORTED_METHOD_ATTR: u16 = 0x000c;
/// `ClassPortInfo.CapabilityMask`: `PortCountersExtended` has the full
/// set of 64-bit counters (`IB_PMA_CLASS_CAP_EXT_WIDTH`).
const CAP_EXT_WIDTH: u16 = 1 << 9;

/// What the device counted on its port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Times the link went down.
    pub link_downed: u64,
    /// Bytes sent (IP header onwards, as C rxe counts them).
    pub xmit_bytes: u64,
    /// Bytes received.
    pub rcv_bytes: u64,
    /// Packets sent.
    pub xmit_packets: u64,
    /// Packets received.
    pub rcv_packets: u64,
}

fn be16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

fn put16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

fn put64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_be_bytes());
}

/// Answers MAD `input` received for port `port` into `out` (zeroed
/// first); returns `RESULT_*` bits.
pub fn process(
    input: &[u8; MAD_SIZE],
    port: u32,
    c: &PortCounters,
    out: &mut [u8; MAD_SIZE],
) -> u32 {
    if port != 1 {
        return RESULT_FAILURE;
    }
    out.fill(0);
    if input[MGMT_CLASS] != CLASS_PERF_MGMT {
        put16(out, STATUS, STATUS_UNSUPPORTED_METHOD);
        return RESULT_SUCCESS;
    }
    if input[METHOD] != METHOD_GET {
        return RESULT_SUCCESS | RESULT_REPLY;
    }
    match be16(input, ATTR_ID) {
        ATTR_CLASS_PORT_INFO => put16(out, ATTR + 2, CAP_EXT_WIDTH),
        // IBTA 16.1.3.5: the counters stop at all ones instead of
        // wrapping.
        ATTR_PORT_COUNTERS => out[ATTR + 7] = c.link_downed.min(u64::from(u8::MAX)) as u8,
        ATTR_PORT_COUNTERS_EXT => {
            put64(out, ATTR + 8, c.xmit_bytes >> 2);
            put64(out, ATTR + 16, c.rcv_bytes >> 2);
            put64(out, ATTR + 24, c.xmit_packets);
            put64(out, ATTR + 32, c.rcv_packets);
        }
        _ => {
            put16(out, STATUS, STATUS_UNSUPPORTED_METHOD_ATTR);
            return RESULT_SUCCESS;
        }
    }
    RESULT_SUCCESS | RESULT_REPLY
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mad(class: u8, method: u8, attr: u16) -> [u8; MAD_SIZE] {
        let mut m = [0xa5u8; MAD_SIZE];
        m[MGMT_CLASS] = class;
        m[METHOD] = method;
        put16(&mut m, ATTR_ID, attr);
        m
    }

    const C: PortCounters = PortCounters {
        link_downed: 300,
        xmit_bytes: 4000,
        rcv_bytes: 8003,
        xmit_packets: 7,
        rcv_packets: 9,
    };

    #[test]
    fn extended_counters_in_words_and_packets() {
        let mut out = [0xffu8; MAD_SIZE];
        let r = process(&mad(4, 1, 0x1d), 1, &C, &mut out);
        assert_eq!(r, RESULT_SUCCESS | RESULT_REPLY);
        assert_eq!(&out[ATTR + 8..ATTR + 16], &1000u64.to_be_bytes());
        assert_eq!(&out[ATTR + 16..ATTR + 24], &2000u64.to_be_bytes());
        assert_eq!(&out[ATTR + 24..ATTR + 32], &7u64.to_be_bytes());
        assert_eq!(&out[ATTR + 32..ATTR + 40], &9u64.to_be_bytes());
        // Nothing else: the reply starts from zeroes.
        assert!(out[..ATTR + 8].iter().all(|&b| b == 0));
        assert!(out[ATTR + 40..].iter().all(|&b| b == 0));
    }

    #[test]
    fn port_counters_saturate_and_class_port_info() {
        let mut out = [0u8; MAD_SIZE];
        process(&mad(4, 1, 0x12), 1, &C, &mut out);
        assert_eq!(out[ATTR + 7], 255);
        let small = PortCounters {
            link_downed: 3,
            ..C
        };
        process(&mad(4, 1, 0x12), 1, &small, &mut out);
        assert_eq!(out[ATTR + 7], 3);
        process(&mad(4, 1, 0x01), 1, &C, &mut out);
        assert_eq!(be16(&out, ATTR + 2), 1 << 9);
    }

    #[test]
    fn what_is_not_answered() {
        let mut out = [0u8; MAD_SIZE];
        assert_eq!(process(&mad(4, 1, 0x12), 2, &C, &mut out), RESULT_FAILURE);
        assert_eq!(process(&mad(4, 1, 0x99), 1, &C, &mut out), RESULT_SUCCESS);
        assert_eq!(be16(&out, STATUS), STATUS_UNSUPPORTED_METHOD_ATTR);
        assert_eq!(
            process(&mad(0x81, 1, 0x12), 1, &C, &mut out),
            RESULT_SUCCESS
        );
        assert_eq!(be16(&out, STATUS), STATUS_UNSUPPORTED_METHOD);
        // A Set of PerfMgmt: an empty reply, as C rxe gives.
        assert_eq!(
            process(&mad(4, 2, 0x12), 1, &C, &mut out),
            RESULT_SUCCESS | RESULT_REPLY
        );
        assert!(out.iter().all(|&b| b == 0));
    }
}
