// SPDX-License-Identifier: GPL-2.0
//! RDMA Extended Transport Header (RETH, 16 bytes): remote virtual address,
//! rkey and DMA length of an RDMA READ/WRITE, FLUSH or ATOMIC WRITE.

use zerocopy::big_endian::{U32, U64};

use super::header::{wire_header, Header};

/// Largest DMA length a responder accepts (C rxe, IBA C9-94): 2^31.
pub const RETH_MAX_DMA_LEN: u32 = 1 << 31;

wire_header! {
    /// RDMA extended transport header.
    pub struct Reth {
        va: U64,
        rkey: U32,
        len: U32,
    }
}

impl Header for Reth {}

impl Reth {
    /// A RETH for `len` bytes at `va` under `rkey`.
    pub fn new(va: u64, rkey: u32, len: u32) -> Self {
        Reth {
            va: U64::new(va),
            rkey: U32::new(rkey),
            len: U32::new(len),
        }
    }

    /// Remote virtual address.
    pub fn va(&self) -> u64 {
        self.va.get()
    }

    /// Sets the remote virtual address.
    pub fn set_va(&mut self, va: u64) {
        self.va.set(va);
    }

    /// Remote key.
    pub fn rkey(&self) -> u32 {
        self.rkey.get()
    }

    /// Sets the remote key.
    pub fn set_rkey(&mut self, rkey: u32) {
        self.rkey.set(rkey);
    }

    /// DMA length of the whole operation.
    pub fn len(&self) -> u32 {
        self.len.get()
    }

    /// True for a zero-length operation.
    pub fn is_empty(&self) -> bool {
        self.len.get() == 0
    }

    /// Sets the DMA length.
    pub fn set_len(&mut self, len: u32) {
        self.len.set(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = Reth::new(0x0102_0304_0506_0708, 0x1122_3344, 0x10);
        let mut b = [0u8; 16];
        assert_eq!(r.emit(&mut b), Ok(16));
        assert_eq!(b[..8], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(b[8..12], [0x11, 0x22, 0x33, 0x44]);
        assert_eq!(b[12..], [0, 0, 0, 0x10]);
        let (p, _) = Reth::parse(&b).unwrap();
        assert_eq!(*p, r);
    }
}
