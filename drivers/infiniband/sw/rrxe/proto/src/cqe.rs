// SPDX-License-Identifier: GPL-2.0
//! Completion entries as librxe reads them from the mapped CQ ring
//! (`struct ib_uverbs_wc`, 48 bytes, host byte order), with the status and
//! opcode values of `enum ib_wc_status` / `enum ib_uverbs_wc_opcode`.

/// `sizeof(struct ib_uverbs_wc)`.
pub const CQE_SIZE: usize = 48;

/// `enum ib_wc_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum WcStatus {
    /// Success.
    Success = 0,
    /// Local length error (receive buffer too small, bad SGE list).
    LocLenErr = 1,
    /// Local QP operation error (malformed WQE).
    LocQpOpErr = 2,
    /// Local protection error (bad lkey or access).
    LocProtErr = 4,
    /// Flushed: the QP is in the error state.
    WrFlushErr = 5,
    /// A memory window bind failed.
    MwBindErr = 6,
    /// Bad response from the responder.
    BadRespErr = 7,
    /// Local access error (responder side, bad rkey on a write).
    LocAccessErr = 8,
    /// The responder rejected the request as invalid.
    RemInvReqErr = 9,
    /// The responder refused remote access.
    RemAccessErr = 10,
    /// The responder failed the operation.
    RemOpErr = 11,
    /// Transport retries exhausted.
    RetryExcErr = 12,
    /// RNR retries exhausted.
    RnrRetryExcErr = 13,
    /// Fatal error.
    FatalErr = 18,
    /// Generic error.
    GeneralErr = 21,
}

/// `enum ib_uverbs_wc_opcode`.
pub mod wc_opcode {
    /// SEND completed (send side).
    pub const SEND: u32 = 0;
    /// RDMA WRITE completed.
    pub const RDMA_WRITE: u32 = 1;
    /// RDMA READ completed.
    pub const RDMA_READ: u32 = 2;
    /// Atomic compare-and-swap completed.
    pub const COMP_SWAP: u32 = 3;
    /// Atomic fetch-and-add completed.
    pub const FETCH_ADD: u32 = 4;
    /// A memory window bind completed.
    pub const BIND_MW: u32 = 5;
    /// A local invalidate completed.
    pub const LOCAL_INV: u32 = 6;
    /// FLUSH completed.
    pub const FLUSH: u32 = 8;
    /// ATOMIC WRITE completed.
    pub const ATOMIC_WRITE: u32 = 9;
    /// A fast registration completed (`IB_WC_REG_MR`; kernel CQs only).
    pub const REG_MR: u32 = 10;
    /// A SEND was received.
    pub const RECV: u32 = 128;
    /// An RDMA WRITE with immediate consumed a receive.
    pub const RECV_RDMA_WITH_IMM: u32 = 129;
}

/// `IB_WC_GRH`: a GRH (40 bytes) heads the receive buffer (UD).
pub const WC_GRH: u32 = 1 << 0;
/// `IB_WC_WITH_IMM` in `wc_flags`.
pub const WC_WITH_IMM: u32 = 1 << 1;

/// The network header a datagram arrived with, whose image is the GRH at
/// the head of the receive buffer (an IPv4 header fills its last 20
/// bytes).  Kernel consumers get it as `wc.network_hdr_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetHdr {
    /// RoCE v2 over IPv4.
    Ipv4,
    /// RoCE v2 over IPv6.
    Ipv6,
}
/// `IB_WC_WITH_INVALIDATE` in `wc_flags`: the kernel's value, which the
/// uverbs ABI passes through unchanged (C rxe writes the same).  Note that
/// libibverbs calls bit 2 `IBV_WC_IP_CSUM_OK` and its `IBV_WC_WITH_INV`
/// is bit 3, so an application testing `IBV_WC_WITH_INV` does not see it
/// on either driver; `invalidated_rkey` is still filled in.
pub const WC_WITH_INVALIDATE: u32 = 1 << 2;

/// One completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cqe {
    /// The WQE's cookie.
    pub wr_id: u64,
    /// Outcome.
    pub status: WcStatus,
    /// [`wc_opcode`] value.
    pub opcode: u32,
    /// Bytes received (receive completions).
    pub byte_len: u32,
    /// Immediate data as on the wire, if any.
    pub imm: Option<[u8; 4]>,
    /// The rkey a SEND with Invalidate invalidated (never with `imm`).
    pub invalidated: Option<u32>,
    /// Local QP number.
    pub qp_num: u32,
    /// Remote QP number (receive completions).
    pub src_qp: u32,
    /// UD receive: the buffer starts with the 40-byte GRH (`IB_WC_GRH`),
    /// the image of this network header.
    pub grh: Option<NetHdr>,
    /// UD receive: the VLAN ID of the VLAN device the datagram arrived on
    /// (kernel consumers: `IB_WC_WITH_VLAN`, which ib_core needs to find
    /// the GID to answer from; the uverbs completion has no such field).
    pub vlan: Option<u16>,
}

impl Cqe {
    /// The entry in `ib_uverbs_wc` layout.
    pub fn encode(&self) -> [u8; CQE_SIZE] {
        let mut b = [0u8; CQE_SIZE];
        b[0..8].copy_from_slice(&self.wr_id.to_ne_bytes());
        b[8..12].copy_from_slice(&(self.status as u32).to_ne_bytes());
        b[12..16].copy_from_slice(&self.opcode.to_ne_bytes());
        b[20..24].copy_from_slice(&self.byte_len.to_ne_bytes());
        let mut flags = if self.grh.is_some() { WC_GRH } else { 0 };
        if let Some(imm) = self.imm {
            b[24..28].copy_from_slice(&imm);
            flags |= WC_WITH_IMM;
        } else if let Some(rkey) = self.invalidated {
            b[24..28].copy_from_slice(&rkey.to_ne_bytes());
            flags |= WC_WITH_INVALIDATE;
        }
        b[36..40].copy_from_slice(&flags.to_ne_bytes());
        b[28..32].copy_from_slice(&self.qp_num.to_ne_bytes());
        b[32..36].copy_from_slice(&self.src_qp.to_ne_bytes());
        b[46] = 1; // port_num
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_ib_uverbs_wc() {
        let c = Cqe {
            wr_id: 0x0102_0304_0506_0708,
            status: WcStatus::RemAccessErr,
            opcode: wc_opcode::RECV,
            byte_len: 4096,
            imm: Some([0xaa, 0xbb, 0xcc, 0xdd]),
            invalidated: None,
            qp_num: 0x11,
            src_qp: 0x12,
            grh: None,
            vlan: None,
        };
        let b = c.encode();
        assert_eq!(u64::from_ne_bytes(b[0..8].try_into().unwrap()), c.wr_id);
        assert_eq!(u32::from_ne_bytes(b[8..12].try_into().unwrap()), 10);
        assert_eq!(u32::from_ne_bytes(b[12..16].try_into().unwrap()), 128);
        assert_eq!(u32::from_ne_bytes(b[20..24].try_into().unwrap()), 4096);
        assert_eq!(&b[24..28], &[0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(
            u32::from_ne_bytes(b[36..40].try_into().unwrap()),
            WC_WITH_IMM
        );
        assert_eq!(b[46], 1);
        let plain = Cqe { imm: None, ..c }.encode();
        assert_eq!(&plain[24..28], &[0; 4]);
        assert_eq!(&plain[36..40], &[0; 4]);
        let inv = Cqe {
            imm: None,
            invalidated: Some(0x0800_0142),
            ..c
        }
        .encode();
        assert_eq!(
            u32::from_ne_bytes(inv[24..28].try_into().unwrap()),
            0x0800_0142
        );
        assert_eq!(
            u32::from_ne_bytes(inv[36..40].try_into().unwrap()),
            WC_WITH_INVALIDATE
        );
        let grh = Cqe {
            grh: Some(NetHdr::Ipv6),
            vlan: Some(42),
            ..c
        }
        .encode();
        assert_eq!(
            u32::from_ne_bytes(grh[36..40].try_into().unwrap()),
            WC_GRH | WC_WITH_IMM
        );
    }
}
