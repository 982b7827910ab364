// SPDX-License-Identifier: GPL-2.0

//! Verbs that need more than one layer below them: the QP verbs, which
//! create the QP object, drive the engine (scheduling, the doorbell, the
//! error state's flush) and keep the device's QP table.  The device-level
//! verbs are in `device.rs`; CQs and MRs in `cq.rs` and `mr.rs`; MR
//! prefetching, which runs on the engine's workqueue, in `advise.rs`.

pub(crate) mod advise;
pub(crate) mod post;
pub(crate) mod qp;
