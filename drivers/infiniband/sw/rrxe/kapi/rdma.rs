// SPDX-License-Identifier: GPL-2.0

//! RDMA (`ib_core`) abstractions: device allocation, registration and
//! unregistration with a typed driver vtable, the attribute structures the
//! query verbs fill and their capability bits, access flags, the rxe user
//! ABI's layout, user-data buffers, and `rdma link` type registration.
//! Each type that holds a C object states in its `# Invariants` section
//! what it owns or borrows and for how long; the driver data of a QP, CQ,
//! SRQ, AH or MW (stored after ib_core's object, `size_ib_*`) lives from
//! the create verb's success to the destroy verb, and only verbs between
//! the two reach it.

pub(crate) mod access;
pub(crate) mod ah;
pub(crate) mod attr;
pub(crate) mod caps;
// A client's view of devices: rrxe is a provider and does not use it;
// samples/rust does.
#[allow(dead_code)]
pub(crate) mod client;
// Kernel verbs as a consumer uses them: rrxe is a provider and does not
// use them; samples/rust does.
#[allow(dead_code)]
pub(crate) mod consumer;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod event;
pub(crate) mod fast_reg;
pub(crate) mod link;
pub(crate) mod mad;
pub(crate) mod mr;
pub(crate) mod mw;
pub(crate) mod qp;
pub(crate) mod rxe_uapi;
pub(crate) mod srq;
pub(crate) mod stats;
pub(crate) mod udata;
pub(crate) mod umap;
mod vtable;
pub(crate) mod wr;
