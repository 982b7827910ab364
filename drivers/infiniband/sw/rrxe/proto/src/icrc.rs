// SPDX-License-Identifier: GPL-2.0
//! RoCEv2 invariant CRC (ICRC, IBTA annex A17), computed exactly as C rxe's
//! `rxe_icrc.c` does.
//!
//! The ICRC is a CRC-32 (the Ethernet/zlib polynomial, reflected) over:
//!
//! 1. 8 bytes of `0xff` standing in for the masked LRH.  C rxe folds these
//!    into its starting value: [`ICRC_SEED`] `= crc32_le(!0, [0xff; 8])`.
//! 2. The IP header and the UDP header with their variant fields set to all
//!    ones: IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label
//!    and hop limit; the UDP checksum.
//! 3. The BTH with byte 4 (FECN, BECN, resv6a; C's `resv8a`) set to `0xff`.
//! 4. Everything after the BTH up to the ICRC: extension headers, payload,
//!    pad.
//!
//! The result is inverted and stored as the last four bytes of the UDP
//! payload in little-endian order (C stores the CPU-order `u32` `~crc`; on
//! the little-endian hosts rxe runs on that is LE, and it is what hardware
//! RoCE sends).  This module's `u32` ICRC values are that number: the wire
//! bytes are `icrc.to_le_bytes()`, and it equals zlib's `crc32()` of the
//! masked byte stream 1-4.
//!
//! The CRC primitive comes from outside through [`Crc32`], whose contract is
//! the kernel's `crc32_le(seed, p, len)`: raw register update, no inversion
//! on entry or exit.
//!
//! [`IcrcMode::RxeCompat`] reproduces a quirk of C rxe: for opcodes whose
//! table entry has no payload offset (RC FLUSH, RD ACK, RD ATOMIC ACK) C
//! treats the payload as starting at the BTH and so CRCs the headers twice.
//! Only FLUSH can reach the ICRC check in C rxe; use `RxeCompat` to talk
//! FLUSH with a C rxe peer, [`IcrcMode::Ibta`] otherwise.

use core::marker::PhantomData;

use super::ip::{locate, IpVersion, L3Error, RoceLayout, UDP_HDR_LEN};
use super::opcode::{opcode_info, RC_FLUSH, RD_ACKNOWLEDGE, RD_ATOMIC_ACKNOWLEDGE};

/// A CRC-32 (polynomial 0xEDB88320, reflected) register update with the
/// kernel's `crc32_le()` semantics: start from `seed`, feed `data`, return
/// the register; no pre- or post-inversion.  So `!crc32_le(!0, d)` is the
/// usual zlib/Ethernet CRC-32 of `d`, and calls chain:
/// `crc32_le(crc32_le(s, a), b) == crc32_le(s, a ++ b)`.
pub trait Crc32 {
    /// Updates the CRC register `seed` with `data`.
    fn crc32_le(seed: u32, data: &[u8]) -> u32;
}

/// CRC register after `!0` and the 8 `0xff` bytes of the masked LRH.
pub const ICRC_SEED: u32 = 0xdebb_20e3;
/// Size of the ICRC on the wire.
pub const ICRC_LEN: usize = 4;
/// BTH length.
use super::bth::BTH_LEN;
/// Longest IP and UDP headers (IPv6).
const NET_MAX: usize = 40 + UDP_HDR_LEN;
/// Longest transport headers [`IcrcPrefix::start`] takes (BTH and extension
/// headers: RDMA WRITE FIRST with immediate has 32, an atomic request 40).
pub const MAX_TRANSPORT_HDR: usize = 64;
/// Offset of the identification in the IPv4 header.
const IPV4_ID_OFFSET: usize = 4;

/// Which ICRC coverage to use; see the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IcrcMode {
    /// Annex A17: every byte from the BTH to the ICRC once.
    #[default]
    Ibta,
    /// Bit-exact with C rxe, including its FLUSH double coverage.
    RxeCompat,
}

/// Why an ICRC could not be computed or did not match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcrcError {
    /// The L3 packet is not a RoCEv2 packet this crate handles.
    L3(L3Error),
    /// Network headers passed to [`IcrcHasher::new`] have the wrong length.
    BadHeaderLength,
    /// The packet's ICRC differs from the computed one.
    Mismatch {
        /// ICRC computed over the packet.
        computed: u32,
        /// ICRC found in the packet.
        received: u32,
    },
}

impl From<L3Error> for IcrcError {
    fn from(e: L3Error) -> Self {
        IcrcError::L3(e)
    }
}

/// Incremental ICRC: start from the network headers and the BTH, then feed
/// the rest of the transport packet (possibly in pieces, e.g. from a
/// fragmented buffer), then [`IcrcHasher::finish`].
pub struct IcrcHasher<C: Crc32> {
    crc: u32,
    _crc: PhantomData<C>,
}

impl<C: Crc32> IcrcHasher<C> {
    /// Starts an ICRC.  `ip_udp` is the IP header (20 bytes for IPv4, 40 for
    /// IPv6) followed by the UDP header, exactly as on the wire; `bth` the
    /// 12-byte BTH.  Masking is done on a private copy.
    pub fn new(version: IpVersion, ip_udp: &[u8], bth: &[u8]) -> Result<Self, IcrcError> {
        if bth.len() != BTH_LEN {
            return Err(IcrcError::BadHeaderLength);
        }
        IcrcPrefix::new(version, ip_udp)?.start(bth)
    }

    /// Feeds transport bytes that follow the BTH.
    pub fn update(&mut self, data: &[u8]) {
        self.crc = C::crc32_le(self.crc, data);
    }

    /// The ICRC (wire bytes are `to_le_bytes()`).
    pub fn finish(self) -> u32 {
        !self.crc
    }
}

/// The masked IP and UDP headers of a packet (coverage 2 above), kept to
/// start the ICRCs of several packets that share them but for the IPv4
/// identification: the segments of one UDP GSO batch (`gso`), whose
/// headers the sender never writes one by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcrcPrefix {
    version: IpVersion,
    masked: [u8; NET_MAX],
}

impl IcrcPrefix {
    /// The prefix of a packet with IP and UDP headers `ip_udp`, exactly as
    /// on the wire (as [`IcrcHasher::new`] takes them).
    pub fn new(version: IpVersion, ip_udp: &[u8]) -> Result<Self, IcrcError> {
        let net_len = version.hdr_len() + UDP_HDR_LEN;
        if ip_udp.len() != net_len {
            return Err(IcrcError::BadHeaderLength);
        }
        // `net_len` is at most `NET_MAX` (IPv6).
        let mut masked = [0u8; NET_MAX];
        masked[..net_len].copy_from_slice(ip_udp);
        mask_network(version, &mut masked[..net_len]);
        Ok(Self { version, masked })
    }

    /// Gives the IPv4 header the identification `id` (IPv6 has none: no
    /// change).
    pub fn set_ipv4_id(&mut self, id: u16) {
        if self.version == IpVersion::V4 {
            self.masked[IPV4_ID_OFFSET..IPV4_ID_OFFSET + 2].copy_from_slice(&id.to_be_bytes());
        }
    }

    /// Starts the ICRC of the packet whose transport headers (the BTH,
    /// then any extension headers: at most [`MAX_TRANSPORT_HDR`] bytes)
    /// are `transport`, in one CRC update over the prefix and them.
    pub fn start<C: Crc32>(&self, transport: &[u8]) -> Result<IcrcHasher<C>, IcrcError> {
        let net_len = self.version.hdr_len() + UDP_HDR_LEN;
        let total = net_len + transport.len();
        if transport.len() < BTH_LEN || transport.len() > MAX_TRANSPORT_HDR {
            return Err(IcrcError::BadHeaderLength);
        }
        let mut pseudo = [0u8; NET_MAX + MAX_TRANSPORT_HDR];
        pseudo[..net_len].copy_from_slice(&self.masked[..net_len]);
        pseudo[net_len..total].copy_from_slice(transport);
        // BTH byte 4: FECN, BECN and the six reserved bits.
        pseudo[net_len + 4] = 0xff;
        Ok(IcrcHasher {
            crc: C::crc32_le(ICRC_SEED, &pseudo[..total]),
            _crc: PhantomData,
        })
    }
}

/// Sets the variant fields of the IP and UDP headers to all ones.
fn mask_network(version: IpVersion, net: &mut [u8]) {
    let ones: &[usize] = match version {
        // TOS, TTL, header checksum, then UDP checksum.
        IpVersion::V4 => &[1, 8, 10, 11, 26, 27],
        // Traffic class + flow label (keeping the version nibble),
        // hop limit, then UDP checksum.
        IpVersion::V6 => &[1, 2, 3, 7, 46, 47],
    };
    for &i in ones {
        if let Some(b) = net.get_mut(i) {
            *b = 0xff;
        }
    }
    if version == IpVersion::V6 {
        if let Some(b) = net.get_mut(0) {
            *b |= 0x0f;
        }
    }
}

/// Computes the ICRC of a full L3 packet (starting at the IP header) in
/// [`IcrcMode::Ibta`] mode.  The ICRC bytes currently in the packet are not
/// covered and may hold anything.
pub fn icrc_compute<C: Crc32>(l3: &[u8]) -> Result<u32, IcrcError> {
    icrc_compute_mode::<C>(l3, IcrcMode::Ibta)
}

/// [`icrc_compute`] with an explicit [`IcrcMode`].
pub fn icrc_compute_mode<C: Crc32>(l3: &[u8], mode: IcrcMode) -> Result<u32, IcrcError> {
    let layout = locate(l3)?;
    compute_at::<C>(l3, &layout, mode)
}

fn compute_at<C: Crc32>(l3: &[u8], lay: &RoceLayout, mode: IcrcMode) -> Result<u32, IcrcError> {
    let bad = IcrcError::L3(L3Error::BadUdpLength);
    let ip_udp = l3.get(..lay.bth_offset).ok_or(bad)?;
    let roce = l3.get(lay.bth_offset..lay.end()).ok_or(bad)?;
    let covered_len = lay.roce_len.checked_sub(ICRC_LEN).ok_or(bad)?;
    let covered = roce.get(..covered_len).ok_or(bad)?;
    let bth = covered.get(..BTH_LEN).ok_or(bad)?;
    let after_bth = covered.get(BTH_LEN..).ok_or(bad)?;
    let mut h = IcrcHasher::<C>::new(lay.version, ip_udp, bth)?;
    let opcode = bth.first().copied().unwrap_or(0);
    if mode == IcrcMode::RxeCompat && c_payload_offset_is_zero(opcode) {
        // C: headers after the BTH, then "payload" from offset 0 to the
        // ICRC, i.e. the unmasked BTH and all headers again.
        let hdr_len = opcode_info(opcode).map_or(BTH_LEN, |i| i.header_len());
        let ext = covered.get(BTH_LEN..hdr_len).ok_or(bad)?;
        h.update(ext);
        h.update(covered);
    } else {
        h.update(after_bth);
    }
    Ok(h.finish())
}

/// Opcodes whose C `rxe_opcode[]` entry leaves `offset[RXE_PAYLOAD]` at 0.
fn c_payload_offset_is_zero(opcode: u8) -> bool {
    matches!(opcode, RC_FLUSH | RD_ACKNOWLEDGE | RD_ATOMIC_ACKNOWLEDGE)
}

/// Reads the ICRC stored at the end of the RoCE packet.
fn stored_icrc(l3: &[u8], lay: &RoceLayout) -> Result<u32, IcrcError> {
    let start = lay.end().checked_sub(ICRC_LEN);
    let bytes = start
        .and_then(|s| l3.get(s..lay.end()))
        .ok_or(IcrcError::L3(L3Error::BadUdpLength))?;
    let mut le = [0u8; ICRC_LEN];
    le.copy_from_slice(bytes);
    Ok(u32::from_le_bytes(le))
}

/// Checks the ICRC of a full L3 packet ([`IcrcMode::Ibta`]).
pub fn icrc_verify<C: Crc32>(l3: &[u8]) -> Result<(), IcrcError> {
    icrc_verify_mode::<C>(l3, IcrcMode::Ibta)
}

/// [`icrc_verify`] with an explicit [`IcrcMode`].
pub fn icrc_verify_mode<C: Crc32>(l3: &[u8], mode: IcrcMode) -> Result<(), IcrcError> {
    let lay = locate(l3)?;
    let computed = compute_at::<C>(l3, &lay, mode)?;
    let received = stored_icrc(l3, &lay)?;
    if computed == received {
        Ok(())
    } else {
        Err(IcrcError::Mismatch { computed, received })
    }
}

/// Computes the ICRC of a full L3 packet and writes it into the packet's
/// last four RoCE bytes ([`IcrcMode::Ibta`]); returns it.
pub fn icrc_fill<C: Crc32>(l3: &mut [u8]) -> Result<u32, IcrcError> {
    icrc_fill_mode::<C>(l3, IcrcMode::Ibta)
}

/// [`icrc_fill`] with an explicit [`IcrcMode`].
pub fn icrc_fill_mode<C: Crc32>(l3: &mut [u8], mode: IcrcMode) -> Result<u32, IcrcError> {
    let lay = locate(l3)?;
    let icrc = compute_at::<C>(l3, &lay, mode)?;
    let start = lay.end().checked_sub(ICRC_LEN);
    let dst = match start {
        Some(s) => l3.get_mut(s..lay.end()),
        None => None,
    };
    let dst = dst.ok_or(IcrcError::L3(L3Error::BadUdpLength))?;
    dst.copy_from_slice(&icrc.to_le_bytes());
    Ok(icrc)
}

/// A bit-at-a-time [`Crc32`]: slow, dependency-free, for tests, fuzzing and
/// as a reference.  The kernel passes its own `crc32_le`.
pub struct SoftCrc32;

impl Crc32 for SoftCrc32 {
    fn crc32_le(seed: u32, data: &[u8]) -> u32 {
        let mut crc = seed;
        for &b in data {
            crc ^= u32::from(b);
            for _ in 0..8 {
                let lsb = crc & 1;
                crc >>= 1;
                if lsb != 0 {
                    crc ^= 0xedb8_8320;
                }
            }
        }
        crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_crc_known_answer() {
        assert_eq!(!SoftCrc32::crc32_le(!0, b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn seed_is_masked_lrh() {
        assert_eq!(SoftCrc32::crc32_le(!0, &[0xff; 8]), ICRC_SEED);
    }

    /// IPv4 and UDP headers as on the wire: 10.0.0.1 to 10.0.0.2, ID `id`,
    /// a non-zero checksum and TTL (masked), UDP length 1048.
    fn v4_header(id: u16) -> [u8; 28] {
        let [hi, lo] = id.to_be_bytes();
        [
            0x45, 0x02, 0x04, 0x2c, hi, lo, 0x40, 0x00, 0x40, 0x11, 0x12, 0x34, 10, 0, 0, 1, 10, 0,
            0, 2, 0xc1, 0x21, 0x12, 0xb7, 0x04, 0x18, 0xab, 0xcd,
        ]
    }

    #[test]
    fn prefix_with_id_is_the_header_with_that_id() {
        let bth = [
            0x07, 0x40, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x05,
        ];
        let mut prefix = IcrcPrefix::new(IpVersion::V4, &v4_header(0)).unwrap();
        for id in [0u16, 1, 2, 0x1234, 0xffff] {
            prefix.set_ipv4_id(id);
            let mut a = prefix.start::<SoftCrc32>(&bth).unwrap();
            let mut b = IcrcHasher::<SoftCrc32>::new(IpVersion::V4, &v4_header(id), &bth).unwrap();
            a.update(b"payload");
            b.update(b"payload");
            assert_eq!(a.finish(), b.finish(), "id {id}");
        }
        // A different ID is a different ICRC (the ID is covered).
        let p0 = IcrcPrefix::new(IpVersion::V4, &v4_header(0)).unwrap();
        let p1 = IcrcPrefix::new(IpVersion::V4, &v4_header(1)).unwrap();
        assert_ne!(
            p0.start::<SoftCrc32>(&bth).unwrap().finish(),
            p1.start::<SoftCrc32>(&bth).unwrap().finish()
        );
    }

    #[test]
    fn prefix_takes_extension_headers_in_the_same_update() {
        // RDMA WRITE FIRST: BTH then a 16-byte RETH, fed at once or after.
        let mut t = [0u8; BTH_LEN + 16];
        t[0] = 0x06;
        t[4] = 0x12; // FECN/BECN: masked either way
        t[BTH_LEN..].copy_from_slice(&[7; 16]);
        let prefix = IcrcPrefix::new(IpVersion::V4, &v4_header(9)).unwrap();
        let whole = prefix.start::<SoftCrc32>(&t).unwrap().finish();
        let mut parts =
            IcrcHasher::<SoftCrc32>::new(IpVersion::V4, &v4_header(9), &t[..BTH_LEN]).unwrap();
        parts.update(&t[BTH_LEN..]);
        assert_eq!(whole, parts.finish());
    }

    #[test]
    fn prefix_ignores_ipv4_id_on_ipv6_and_checks_lengths() {
        let mut p = IcrcPrefix::new(IpVersion::V6, &[0x60; 48]).unwrap();
        let before = p;
        p.set_ipv4_id(0x1234);
        assert_eq!(p, before);
        assert!(IcrcPrefix::new(IpVersion::V6, &[0; 28]).is_err());
        assert!(IcrcPrefix::new(IpVersion::V4, &[0; 48]).is_err());
        assert!(p.start::<SoftCrc32>(&[0; BTH_LEN - 1]).is_err());
        assert!(p.start::<SoftCrc32>(&[0; MAX_TRANSPORT_HDR + 1]).is_err());
        assert!(p.start::<SoftCrc32>(&[0; MAX_TRANSPORT_HDR]).is_ok());
    }

    #[test]
    fn hasher_rejects_bad_lengths() {
        assert!(IcrcHasher::<SoftCrc32>::new(IpVersion::V4, &[0; 27], &[0; 12]).is_err());
        assert!(IcrcHasher::<SoftCrc32>::new(IpVersion::V6, &[0; 48], &[0; 11]).is_err());
        assert!(IcrcHasher::<SoftCrc32>::new(IpVersion::V6, &[0; 48], &[0; 12]).is_ok());
    }
}
