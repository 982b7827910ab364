// SPDX-License-Identifier: GPL-2.0

//! Invalidating an rkey, which both sides of a QP do: the requester for a
//! LOCAL_INV WQE (`requester/local_op.rs`), the responder for a SEND with
//! Invalidate (`responder.rs`).  The key names a type 2 memory window or a
//! fast-registration region; the tables (`mw.rs`, `mr.rs`) check that the
//! QP may invalidate it.

use crate::mw::{is_window_key, QpIdent};
use crate::qp::Qp;
use crate::stats::Counter;

/// Invalidates `rkey` for QP `qp`: a type 2 memory window (counted in
/// `mw_invalidations`) or a fast registration of a region in its PD.
/// LOCAL_INV (`by` None) or a SEND with Invalidate received by QP `by`
/// (for a window, the QP it was bound through).  The error is the reason
/// it fails.
pub(super) fn rkey(
    qp: &Qp,
    rkey: u32,
    by: Option<QpIdent>,
) -> core::result::Result<(), &'static str> {
    if is_window_key(rkey) {
        qp.dev.mws.invalidate(rkey, qp.init.pd, by)?;
        qp.count(Counter::MwInvalidations);
        Ok(())
    } else {
        qp.dev.mrs.invalidate_fast(rkey, qp.init.pd)
    }
}
