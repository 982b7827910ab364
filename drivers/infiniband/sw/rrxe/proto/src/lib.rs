// SPDX-License-Identifier: GPL-2.0
//! rrxe protocol core: the pure, allocation-free part of a soft RoCEv2
//! device, shared verbatim by the host crate `rrxe_proto` (tests, fuzzing,
//! benchmarks) and the `rdma_rrxe` kernel module.
//!
//! * Wire headers as zero-copy views and builders: [`bth`], [`reth`],
//!   [`aeth`], [`atmeth`], [`atmack`], [`deth`], [`rdeth`], [`immdt`],
//!   [`ieth`], [`feth`], the IP/UDP carriers in [`ip`], the common
//!   [`header::Header`] trait, whole packets in [`packet`] and [`builder`],
//!   many packets of a message in one UDP GSO batch in [`gso`].
//! * Protocol facts: the [`opcode`] table, 24-bit [`psn`] arithmetic, AETH
//!   syndromes and timers in [`aeth`], the RoCEv2 [`icrc`].
//! * Decisions: receive checks in [`validate`], the IBTA QP state machine in
//!   [`qp_state`], the requester's window in [`window`], a QP's wire
//!   [`path`], who runs an engine task in [`task`].
//!
//! Dual build: the kernel module includes this file as a module
//! (`#[path = "proto/src/lib.rs"] mod proto;`), so no item here names the
//! crate root; siblings are reached through `super::`.  Nothing here
//! allocates, uses `unsafe`, or panics on any input.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod aeth;
pub mod atmack;
pub mod atmeth;
pub mod bth;
pub mod builder;
pub mod cqe;
pub mod deth;
pub mod feth;
pub mod gid;
pub mod grh;
pub mod gso;
pub mod header;
pub mod icrc;
pub mod ieth;
pub mod immdt;
pub mod ip;
pub mod mw;
pub mod opcode;
pub mod packet;
pub mod path;
pub mod pma;
pub mod post;
pub mod psn;
pub mod qp_state;
pub mod rdeth;
pub mod resources;
pub mod reth;
pub mod segment;
pub mod task;
pub mod validate;
pub mod window;
pub mod wqe;

// Short paths for the most used items (unused by some users of the module).
#[allow(unused_imports)]
pub use self::header::{Header, HeaderError};
#[allow(unused_imports)]
pub use self::icrc::{Crc32, IcrcMode};
#[allow(unused_imports)]
pub use self::packet::{Packet, ParseError};
#[allow(unused_imports)]
pub use self::psn::Psn;
