// SPDX-License-Identifier: GPL-2.0
//! The QP state machine against a second, flat transcription of the
//! kernel's `qp_state_table` (drivers/infiniband/core/verbs.c): every
//! (current, next, type) triple, and for every row the required/optional
//! attribute semantics of `ib_modify_qp_is_ok()`.

use rrxe_proto::qp_state::attr::*;
use rrxe_proto::qp_state::{
    check_modify_qp, modify_qp_is_ok, modify_qp_is_ok_raw, optional_attrs, required_attrs, QpState,
    QpType, TransitionError,
};

const TYPES: [QpType; 10] = [
    QpType::Smi,
    QpType::Gsi,
    QpType::Rc,
    QpType::Uc,
    QpType::Ud,
    QpType::RawIpv6,
    QpType::RawEthertype,
    QpType::RawPacket,
    QpType::XrcIni,
    QpType::XrcTgt,
];

/// Legal transitions.
const VALID: &[(QpState, QpState)] = &[
    (Reset, Reset),
    (Reset, Init),
    (Init, Reset),
    (Init, QErr),
    (Init, Init),
    (Init, Rtr),
    (Rtr, Reset),
    (Rtr, QErr),
    (Rtr, Rts),
    (Rts, Reset),
    (Rts, QErr),
    (Rts, Rts),
    (Rts, Sqd),
    (Sqd, Reset),
    (Sqd, QErr),
    (Sqd, Rts),
    (Sqd, Sqd),
    (Sqe, Reset),
    (Sqe, QErr),
    (Sqe, Rts),
    (QErr, Reset),
    (QErr, QErr),
];

use QpState::{Err as QErr, Init, Reset, Rtr, Rts, Sqd, Sqe};
use QpType::{Gsi, RawPacket, Rc, Smi, Uc, Ud, XrcIni, XrcTgt};

/// (cur, next, type, required, optional); absent triples are (0, 0).
#[rustfmt::skip]
const ROWS: &[(QpState, QpState, QpType, u32, u32)] = &[
    (Reset, Init, Ud, PKEY_INDEX | PORT | QKEY, 0),
    (Reset, Init, RawPacket, PORT, 0),
    (Reset, Init, Uc, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
    (Reset, Init, Rc, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
    (Reset, Init, XrcIni, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
    (Reset, Init, XrcTgt, PKEY_INDEX | PORT | ACCESS_FLAGS, 0),
    (Reset, Init, Smi, PKEY_INDEX | QKEY, 0),
    (Reset, Init, Gsi, PKEY_INDEX | QKEY, 0),

    (Init, Init, Ud, 0, PKEY_INDEX | PORT | QKEY),
    (Init, Init, Uc, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
    (Init, Init, Rc, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
    (Init, Init, XrcIni, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
    (Init, Init, XrcTgt, 0, PKEY_INDEX | PORT | ACCESS_FLAGS),
    (Init, Init, Smi, 0, PKEY_INDEX | QKEY),
    (Init, Init, Gsi, 0, PKEY_INDEX | QKEY),

    (Init, Rtr, Ud, 0, PKEY_INDEX | QKEY),
    (Init, Rtr, Uc, AV | PATH_MTU | DEST_QPN | RQ_PSN, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX),
    (Init, Rtr, Rc, AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX),
    (Init, Rtr, XrcIni, AV | PATH_MTU | DEST_QPN | RQ_PSN, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX),
    (Init, Rtr, XrcTgt, AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX),
    (Init, Rtr, Smi, 0, PKEY_INDEX | QKEY),
    (Init, Rtr, Gsi, 0, PKEY_INDEX | QKEY),

    (Rtr, Rts, Ud, SQ_PSN, CUR_STATE | QKEY),
    (Rtr, Rts, Uc, SQ_PSN, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE),
    (Rtr, Rts, Rc, TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE),
    (Rtr, Rts, XrcIni, TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE),
    (Rtr, Rts, XrcTgt, TIMEOUT | SQ_PSN, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE),
    (Rtr, Rts, Smi, SQ_PSN, CUR_STATE | QKEY),
    (Rtr, Rts, Gsi, SQ_PSN, CUR_STATE | QKEY),

    (Rts, Rts, Ud, 0, CUR_STATE | QKEY),
    (Rts, Rts, Uc, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE),
    (Rts, Rts, Rc, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER),
    (Rts, Rts, XrcIni, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE),
    (Rts, Rts, XrcTgt, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER),
    (Rts, Rts, Smi, 0, CUR_STATE | QKEY),
    (Rts, Rts, Gsi, 0, CUR_STATE | QKEY),

    (Rts, Sqd, Ud, 0, EN_SQD_ASYNC_NOTIFY),
    (Rts, Sqd, Uc, 0, EN_SQD_ASYNC_NOTIFY),
    (Rts, Sqd, Rc, 0, EN_SQD_ASYNC_NOTIFY),
    (Rts, Sqd, XrcIni, 0, EN_SQD_ASYNC_NOTIFY),
    (Rts, Sqd, XrcTgt, 0, EN_SQD_ASYNC_NOTIFY),
    (Rts, Sqd, Smi, 0, EN_SQD_ASYNC_NOTIFY),
    (Rts, Sqd, Gsi, 0, EN_SQD_ASYNC_NOTIFY),

    (Sqd, Rts, Ud, 0, CUR_STATE | QKEY),
    (Sqd, Rts, Uc, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE),
    (Sqd, Rts, Rc, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE),
    (Sqd, Rts, XrcIni, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE),
    (Sqd, Rts, XrcTgt, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE),
    (Sqd, Rts, Smi, 0, CUR_STATE | QKEY),
    (Sqd, Rts, Gsi, 0, CUR_STATE | QKEY),

    (Sqd, Sqd, Ud, 0, PKEY_INDEX | QKEY),
    (Sqd, Sqd, Uc, 0, AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE),
    (Sqd, Sqd, Rc, 0, PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | MAX_DEST_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | MIN_RNR_TIMER | PATH_MIG_STATE),
    (Sqd, Sqd, XrcIni, 0, PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE),
    (Sqd, Sqd, XrcTgt, 0, PORT | AV | TIMEOUT | MAX_DEST_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | MIN_RNR_TIMER | PATH_MIG_STATE),
    (Sqd, Sqd, Smi, 0, PKEY_INDEX | QKEY),
    (Sqd, Sqd, Gsi, 0, PKEY_INDEX | QKEY),

    (Sqe, Rts, Ud, 0, CUR_STATE | QKEY),
    (Sqe, Rts, Uc, 0, CUR_STATE | ACCESS_FLAGS),
    (Sqe, Rts, Smi, 0, CUR_STATE | QKEY),
    (Sqe, Rts, Gsi, 0, CUR_STATE | QKEY),
];

fn expected(cur: QpState, next: QpState, t: QpType) -> Option<(u32, u32)> {
    if !VALID.contains(&(cur, next)) {
        return None;
    }
    Some(
        ROWS.iter()
            .find(|r| r.0 == cur && r.1 == next && r.2 == t)
            .map_or((0, 0), |r| (r.3, r.4)),
    )
}

/// All defined attribute bits (0..=20 and RATE_LIMIT) plus reserved 21..=24.
fn all_bits() -> impl Iterator<Item = u32> {
    (0..26).map(|b| 1u32 << b)
}

#[test]
fn table_matches_transcription_for_every_triple() {
    for cur in QpState::ALL {
        for next in QpState::ALL {
            for t in TYPES {
                let got = required_attrs(cur, next, t).zip(optional_attrs(cur, next, t));
                assert_eq!(got, expected(cur, next, t), "{cur:?} -> {next:?} {t:?}");
            }
        }
    }
}

#[test]
fn every_row_has_ib_modify_qp_is_ok_semantics() {
    let mut rows_checked = 0;
    for cur in QpState::ALL {
        for next in QpState::ALL {
            for t in TYPES {
                let Some((req, opt)) = expected(cur, next, t) else {
                    assert_eq!(
                        check_modify_qp(cur, next, t, STATE),
                        Err(TransitionError::IllegalTransition),
                        "{cur:?} -> {next:?}"
                    );
                    continue;
                };
                rows_checked += 1;
                let cur_ok = matches!(cur, Rtr | Rts | Sqd | Sqe);
                let ok = |mask: u32| modify_qp_is_ok(cur, next, t, mask);
                // Exactly the required set (with or without STATE/RATE_LIMIT).
                assert!(ok(req), "{cur:?}->{next:?} {t:?} req");
                assert!(
                    ok(req | STATE | RATE_LIMIT),
                    "{cur:?}->{next:?} {t:?} req+always"
                );
                // Every required bit is needed.
                for b in all_bits().filter(|b| req & b != 0) {
                    assert_eq!(
                        check_modify_qp(cur, next, t, (req | STATE) & !b),
                        Err(TransitionError::MissingRequired(b)),
                        "{cur:?}->{next:?} {t:?} missing {b:#x}"
                    );
                }
                // Every optional bit is accepted (CUR_STATE only in the
                // states that allow it); everything else is refused.
                for b in all_bits().filter(|b| (req | STATE | RATE_LIMIT) & b == 0) {
                    let want = if b == CUR_STATE && !cur_ok {
                        Err(TransitionError::CurStateNotAllowed)
                    } else if opt & b != 0 {
                        Ok(())
                    } else {
                        Err(TransitionError::NotAllowed(b))
                    };
                    assert_eq!(
                        check_modify_qp(cur, next, t, req | b),
                        want,
                        "{cur:?}->{next:?} {t:?} bit {b:#x}"
                    );
                }
                assert!(
                    ok(req | opt) || (opt & CUR_STATE != 0 && !cur_ok),
                    "{cur:?}->{next:?} {t:?} all"
                );
                // Raw interface agrees.
                assert!(modify_qp_is_ok_raw(cur.raw(), next.raw(), t.raw(), req));
            }
        }
    }
    assert_eq!(rows_checked, VALID.len() * TYPES.len());
}

#[test]
fn raw_values_are_the_kernels() {
    assert_eq!(
        [
            Reset.raw(),
            Init.raw(),
            Rtr.raw(),
            Rts.raw(),
            Sqd.raw(),
            Sqe.raw(),
            QErr.raw()
        ],
        [0, 1, 2, 3, 4, 5, 6]
    );
    assert_eq!(
        [Smi.raw(), Gsi.raw(), Rc.raw(), Uc.raw(), Ud.raw()],
        [0, 1, 2, 3, 4]
    );
    assert_eq!([RawPacket.raw(), XrcIni.raw(), XrcTgt.raw()], [8, 9, 10]);
    assert_eq!(
        (STATE, CUR_STATE, DEST_QPN, RATE_LIMIT),
        (1, 2, 1 << 20, 1 << 25)
    );
    assert!(!modify_qp_is_ok_raw(
        0,
        1,
        11,
        PKEY_INDEX | PORT | ACCESS_FLAGS
    ));
    assert!(!modify_qp_is_ok_raw(0, 1, 7, 0));
    assert!(!modify_qp_is_ok_raw(1, 7, 2, 0));
}
