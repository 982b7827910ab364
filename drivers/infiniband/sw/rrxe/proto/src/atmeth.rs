// SPDX-License-Identifier: GPL-2.0
//! Atomic Extended Transport Header (AtomicETH, 28 bytes) of CmpSwap and
//! FetchAdd: remote address, rkey, swap-or-add operand and compare operand.
//! The header is not 8-byte aligned on the wire (it follows the 12-byte
//! BTH); the zerocopy big-endian fields make that harmless.

use zerocopy::big_endian::{U32, U64};

use super::header::{wire_header, Header};

wire_header! {
    /// Atomic extended transport header.
    pub struct AtomicEth {
        va: U64,
        rkey: U32,
        swap_add: U64,
        comp: U64,
    }
}

impl Header for AtomicEth {}

impl AtomicEth {
    /// An AtomicETH.  For FetchAdd `swap_add` is the addend and `comp` is
    /// unused (0).
    pub fn new(va: u64, rkey: u32, swap_add: u64, comp: u64) -> Self {
        AtomicEth {
            va: U64::new(va),
            rkey: U32::new(rkey),
            swap_add: U64::new(swap_add),
            comp: U64::new(comp),
        }
    }

    /// Remote virtual address (must be 8-byte aligned).
    pub fn va(&self) -> u64 {
        self.va.get()
    }

    /// Remote key.
    pub fn rkey(&self) -> u32 {
        self.rkey.get()
    }

    /// Swap value (CmpSwap) or addend (FetchAdd).
    pub fn swap_add(&self) -> u64 {
        self.swap_add.get()
    }

    /// Compare value (CmpSwap).
    pub fn comp(&self) -> u64 {
        self.comp.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        assert_eq!(<AtomicEth as Header>::LEN, 28);
        let mut b = [0u8; 28];
        AtomicEth::new(8, 2, 3, 4).emit(&mut b).unwrap();
        assert_eq!(b[7], 8);
        assert_eq!(b[11], 2);
        assert_eq!(b[19], 3);
        assert_eq!(b[27], 4);
    }
}
