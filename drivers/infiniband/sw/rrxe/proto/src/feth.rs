// SPDX-License-Identifier: GPL-2.0
//! Flush Extended Transport Header (FETH, 4 bytes) of the FLUSH operation:
//! placement type in bits 3:0 and selectivity level in bits 5:4.

use zerocopy::big_endian::U32;

use super::header::{wire_header, Header};

/// Placement-type bits.
pub const FETH_PLT_MASK: u32 = 0x0000_000f;
/// Selectivity-level bits.
pub const FETH_SEL_MASK: u32 = 0x0000_0030;
/// Shift of the selectivity level.
pub const FETH_SEL_SHIFT: u32 = 4;
/// Placement type: global visibility (`IB_FLUSH_GLOBAL`).
pub const FLUSH_GLOBAL: u32 = 1 << 0;
/// Placement type: persistence (`IB_FLUSH_PERSISTENT`).
pub const FLUSH_PERSISTENT: u32 = 1 << 1;
/// Selectivity: the memory range of the RETH (`IB_FLUSH_RANGE`).
pub const FLUSH_RANGE: u32 = 0;
/// Selectivity: the whole memory region (`IB_FLUSH_MR`).
pub const FLUSH_MR: u32 = 1;

wire_header! {
    /// Flush extended transport header.
    pub struct Feth {
        bits: U32,
    }
}

impl Header for Feth {}

impl Feth {
    /// An FETH with the given placement type and selectivity level.
    pub fn new(placement_type: u32, selectivity: u32) -> Self {
        let bits =
            ((selectivity << FETH_SEL_SHIFT) & FETH_SEL_MASK) | (placement_type & FETH_PLT_MASK);
        Feth {
            bits: U32::new(bits),
        }
    }

    /// Placement type (`FLUSH_GLOBAL` / `FLUSH_PERSISTENT` bits).
    pub fn placement_type(&self) -> u32 {
        self.bits.get() & FETH_PLT_MASK
    }

    /// Selectivity level (`FLUSH_RANGE` or `FLUSH_MR`).
    pub fn selectivity(&self) -> u32 {
        (self.bits.get() & FETH_SEL_MASK) >> FETH_SEL_SHIFT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let f = Feth::new(FLUSH_GLOBAL | FLUSH_PERSISTENT, FLUSH_MR);
        let mut b = [0u8; 4];
        f.emit(&mut b).unwrap();
        assert_eq!(b, [0, 0, 0, 0x13]);
        assert_eq!((f.placement_type(), f.selectivity()), (3, 1));
    }
}
