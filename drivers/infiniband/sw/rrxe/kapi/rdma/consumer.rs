// SPDX-License-Identifier: GPL-2.0

//! Kernel verbs as a consumer (a ULP such as NVMe over RDMA, or
//! `samples/rust`) uses them: a protection domain ([`pd::Pd`]), a
//! directly polled completion queue ([`cq::Cq`]), reliable-connected queue
//! pairs connected over RoCE v2 ([`qp::RcQp`], [`roce_gid::RoceGid`]),
//! kernel buffers the device reaches ([`buffer::DmaBuf`]) and
//! fast-registration regions that give a peer a key to one of them
//! ([`fast_mr::FastRegMr`]).
//!
//! rrxe is a provider and does not use this side; it is shaped, like the
//! rest of `kapi`, to move upstream as part of `kernel::rdma`.
//!
//! # Memory safety of posted work
//!
//! A posted work request keeps using memory after `post_*` returns: the
//! device writes received data and READ responses into it, and a peer
//! holding a region's key reads and writes it.  The lifetimes make that
//! safe without `unsafe` in the consumer:
//!
//! - a QP borrows its PD and CQs, and every buffer its work requests name
//!   ([`buffer::Sge`] borrows the [`buffer::DmaBuf`] for the QP's
//!   lifetime `'a`), and destroying it (on drop) ends all of its work: no
//!   DMA into its buffers follows `ib_destroy_qp`;
//! - a fast-registration region borrows the buffer it maps, and
//!   deregistering it (on drop) ends every access through its keys before
//!   the buffer can go;
//! - the objects are destroyed in the reverse order of their creation,
//!   which Rust's drop order and these borrows enforce.
//!
//! Buffers are read and written by copy ([`buffer::DmaBuf::read`],
//! [`buffer::DmaBuf::write`]), never through references, because the
//! device may write them at any time while work naming them is
//! outstanding.

pub(crate) mod buffer;
pub(crate) mod cq;
pub(crate) mod fast_mr;
pub(crate) mod pd;
pub(crate) mod qp;
pub(crate) mod roce_gid;
