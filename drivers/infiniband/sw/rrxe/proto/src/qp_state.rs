// SPDX-License-Identifier: GPL-2.0
//! The IBTA queue-pair state machine: which `modify_qp` transitions are
//! legal, and which attributes each transition requires or allows, per QP
//! type.  A table-driven reimplementation of the kernel's
//! `ib_modify_qp_is_ok()` (drivers/infiniband/core/verbs.c).
//!
//! The numeric values are the kernel's: [`QpState`] is `enum ib_qp_state`,
//! [`QpType`] is `enum ib_qp_type` and the [`attr`] bits are
//! `enum ib_qp_attr_mask`, so raw values from the verbs layer can be passed
//! straight in (see [`modify_qp_is_ok_raw`]).

/// QP states (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum QpState {
    /// Reset.
    Reset = 0,
    /// Initialized.
    Init = 1,
    /// Ready to receive.
    Rtr = 2,
    /// Ready to send.
    Rts = 3,
    /// Send queue drained.
    Sqd = 4,
    /// Send queue error.
    Sqe = 5,
    /// Error.
    Err = 6,
}

impl QpState {
    /// Every state, in numeric order.
    pub const ALL: [QpState; 7] = [
        QpState::Reset,
        QpState::Init,
        QpState::Rtr,
        QpState::Rts,
        QpState::Sqd,
        QpState::Sqe,
        QpState::Err,
    ];

    /// From the raw `enum ib_qp_state` value.
    pub const fn from_raw(v: u32) -> Option<Self> {
        match v {
            0 => Some(QpState::Reset),
            1 => Some(QpState::Init),
            2 => Some(QpState::Rtr),
            3 => Some(QpState::Rts),
            4 => Some(QpState::Sqd),
            5 => Some(QpState::Sqe),
            6 => Some(QpState::Err),
            _ => None,
        }
    }

    /// The raw value.
    pub const fn raw(self) -> u32 {
        self as u32
    }
}

/// QP types (`enum ib_qp_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum QpType {
    /// Subnet management QP (QP0).
    Smi = 0,
    /// General services QP (QP1), a UD QP.
    Gsi = 1,
    /// Reliable connection.
    Rc = 2,
    /// Unreliable connection.
    Uc = 3,
    /// Unreliable datagram.
    Ud = 4,
    /// Raw IPv6.
    RawIpv6 = 5,
    /// Raw Ethertype.
    RawEthertype = 6,
    /// Raw packet.
    RawPacket = 8,
    /// XRC initiator.
    XrcIni = 9,
    /// XRC target.
    XrcTgt = 10,
}

impl QpType {
    /// From the raw `enum ib_qp_type` value (below `IB_QPT_MAX`).
    pub const fn from_raw(v: u32) -> Option<Self> {
        match v {
            0 => Some(QpType::Smi),
            1 => Some(QpType::Gsi),
            2 => Some(QpType::Rc),
            3 => Some(QpType::Uc),
            4 => Some(QpType::Ud),
            5 => Some(QpType::RawIpv6),
            6 => Some(QpType::RawEthertype),
            8 => Some(QpType::RawPacket),
            9 => Some(QpType::XrcIni),
            10 => Some(QpType::XrcTgt),
            _ => None,
        }
    }

    /// The raw value.
    pub const fn raw(self) -> u32 {
        self as u32
    }
}

/// `enum ib_qp_attr_mask` bits.
pub mod attr {
    /// `IB_QP_STATE`.
    pub const STATE: u32 = 1;
    /// `IB_QP_CUR_STATE`.
    pub const CUR_STATE: u32 = 1 << 1;
    /// `IB_QP_EN_SQD_ASYNC_NOTIFY`.
    pub const EN_SQD_ASYNC_NOTIFY: u32 = 1 << 2;
    /// `IB_QP_ACCESS_FLAGS`.
    pub const ACCESS_FLAGS: u32 = 1 << 3;
    /// `IB_QP_PKEY_INDEX`.
    pub const PKEY_INDEX: u32 = 1 << 4;
    /// `IB_QP_PORT`.
    pub const PORT: u32 = 1 << 5;
    /// `IB_QP_QKEY`.
    pub const QKEY: u32 = 1 << 6;
    /// `IB_QP_AV`.
    pub const AV: u32 = 1 << 7;
    /// `IB_QP_PATH_MTU`.
    pub const PATH_MTU: u32 = 1 << 8;
    /// `IB_QP_TIMEOUT`.
    pub const TIMEOUT: u32 = 1 << 9;
    /// `IB_QP_RETRY_CNT`.
    pub const RETRY_CNT: u32 = 1 << 10;
    /// `IB_QP_RNR_RETRY`.
    pub const RNR_RETRY: u32 = 1 << 11;
    /// `IB_QP_RQ_PSN`.
    pub const RQ_PSN: u32 = 1 << 12;
    /// `IB_QP_MAX_QP_RD_ATOMIC`.
    pub const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    /// `IB_QP_ALT_PATH`.
    pub const ALT_PATH: u32 = 1 << 14;
    /// `IB_QP_MIN_RNR_TIMER`.
    pub const MIN_RNR_TIMER: u32 = 1 << 15;
    /// `IB_QP_SQ_PSN`.
    pub const SQ_PSN: u32 = 1 << 16;
    /// `IB_QP_MAX_DEST_RD_ATOMIC`.
    pub const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    /// `IB_QP_PATH_MIG_STATE`.
    pub const PATH_MIG_STATE: u32 = 1 << 18;
    /// `IB_QP_CAP`.
    pub const CAP: u32 = 1 << 19;
    /// `IB_QP_DEST_QPN`.
    pub const DEST_QPN: u32 = 1 << 20;
    /// `IB_QP_RATE_LIMIT`.
    pub const RATE_LIMIT: u32 = 1 << 25;
    /// Bits every transition accepts in addition to its own.
    pub const ALWAYS_ALLOWED: u32 = STATE | RATE_LIMIT;
}

use attr::*;

/// Attribute masks of one transition for every QP type.
#[derive(Clone, Copy)]
struct PerType {
    smi: u32,
    gsi: u32,
    rc: u32,
    uc: u32,
    ud: u32,
    raw_packet: u32,
    xrc_ini: u32,
    xrc_tgt: u32,
}

const NONE: PerType = PerType {
    smi: 0,
    gsi: 0,
    rc: 0,
    uc: 0,
    ud: 0,
    raw_packet: 0,
    xrc_ini: 0,
    xrc_tgt: 0,
};

impl PerType {
    const fn get(&self, t: QpType) -> u32 {
        match t {
            QpType::Smi => self.smi,
            QpType::Gsi => self.gsi,
            QpType::Rc => self.rc,
            QpType::Uc => self.uc,
            QpType::Ud => self.ud,
            QpType::RawPacket => self.raw_packet,
            QpType::XrcIni => self.xrc_ini,
            QpType::XrcTgt => self.xrc_tgt,
            QpType::RawIpv6 | QpType::RawEthertype => 0,
        }
    }
}

/// A legal transition: required and optional attributes.
#[derive(Clone, Copy)]
struct Transition {
    req: PerType,
    opt: PerType,
}

const PLAIN: Transition = Transition {
    req: NONE,
    opt: NONE,
};

/// Path attributes shared by UC/RC/XRC in RTR->RTS, RTS->RTS and SQD->RTS.
const CONN_PATH: u32 = CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE;
/// Attributes allowed by every datagram (UD/SMI/GSI) RTS-ish transition.
const DGRAM_RTS: u32 = CUR_STATE | QKEY;
/// Connected RESET->INIT requirements (and INIT->INIT options).
const CONN_INIT: u32 = PKEY_INDEX | PORT | ACCESS_FLAGS;
/// Connected INIT->RTR options.
const CONN_RTR_OPT: u32 = ALT_PATH | ACCESS_FLAGS | PKEY_INDEX;
/// RC-like INIT->RTR requirements.
const RC_RTR_REQ: u32 = AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
/// UC-like INIT->RTR requirements.
const UC_RTR_REQ: u32 = AV | PATH_MTU | DEST_QPN | RQ_PSN;
/// RC-like RTR->RTS requirements.
const RC_RTS_REQ: u32 = TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC;
/// RC SQD->SQD options.
const RC_SQD_OPT: u32 = PORT
    | AV
    | TIMEOUT
    | RETRY_CNT
    | RNR_RETRY
    | MAX_QP_RD_ATOMIC
    | MAX_DEST_RD_ATOMIC
    | ALT_PATH
    | ACCESS_FLAGS
    | PKEY_INDEX
    | MIN_RNR_TIMER
    | PATH_MIG_STATE;

/// RESET -> INIT: the QP's port, P_Key and Q_Key or access.
const RESET_TO_INIT: Transition = Transition {
    req: PerType {
        ud: PKEY_INDEX | PORT | QKEY,
        raw_packet: PORT,
        uc: CONN_INIT,
        rc: CONN_INIT,
        xrc_ini: CONN_INIT,
        xrc_tgt: CONN_INIT,
        smi: PKEY_INDEX | QKEY,
        gsi: PKEY_INDEX | QKEY,
    },
    opt: NONE,
};

/// INIT -> INIT: the same, all optional.
const INIT_TO_INIT: Transition = Transition {
    req: NONE,
    opt: PerType {
        ud: PKEY_INDEX | PORT | QKEY,
        uc: CONN_INIT,
        rc: CONN_INIT,
        xrc_ini: CONN_INIT,
        xrc_tgt: CONN_INIT,
        smi: PKEY_INDEX | QKEY,
        gsi: PKEY_INDEX | QKEY,
        ..NONE
    },
};

/// INIT -> RTR: the path and the receive side (connected QPs).
const INIT_TO_RTR: Transition = Transition {
    req: PerType {
        uc: UC_RTR_REQ,
        rc: RC_RTR_REQ,
        xrc_ini: UC_RTR_REQ,
        xrc_tgt: RC_RTR_REQ,
        ..NONE
    },
    opt: PerType {
        ud: PKEY_INDEX | QKEY,
        uc: CONN_RTR_OPT,
        rc: CONN_RTR_OPT,
        xrc_ini: CONN_RTR_OPT,
        xrc_tgt: CONN_RTR_OPT,
        smi: PKEY_INDEX | QKEY,
        gsi: PKEY_INDEX | QKEY,
        ..NONE
    },
};

/// What may change on the way into RTS, from RTR, RTS or SQD: the path,
/// access and timers.
const TO_RTS_OPT: PerType = PerType {
    ud: DGRAM_RTS,
    uc: CONN_PATH,
    rc: CONN_PATH | MIN_RNR_TIMER,
    xrc_ini: CONN_PATH,
    xrc_tgt: CONN_PATH | MIN_RNR_TIMER,
    smi: DGRAM_RTS,
    gsi: DGRAM_RTS,
    ..NONE
};

/// RTR -> RTS: the send side (timeouts, retries, SQ PSN).
const RTR_TO_RTS: Transition = Transition {
    req: PerType {
        ud: SQ_PSN,
        uc: SQ_PSN,
        rc: RC_RTS_REQ,
        xrc_ini: RC_RTS_REQ,
        xrc_tgt: TIMEOUT | SQ_PSN,
        smi: SQ_PSN,
        gsi: SQ_PSN,
        ..NONE
    },
    opt: TO_RTS_OPT,
};

/// RTS -> RTS and SQD -> RTS: path, access and timers, optional.
const TO_RTS: Transition = Transition {
    req: NONE,
    opt: TO_RTS_OPT,
};

/// RTS -> SQD: the SQ_DRAINED request.
const RTS_TO_SQD: Transition = Transition {
    req: NONE,
    opt: PerType {
        ud: EN_SQD_ASYNC_NOTIFY,
        uc: EN_SQD_ASYNC_NOTIFY,
        rc: EN_SQD_ASYNC_NOTIFY,
        xrc_ini: EN_SQD_ASYNC_NOTIFY,
        xrc_tgt: EN_SQD_ASYNC_NOTIFY,
        smi: EN_SQD_ASYNC_NOTIFY,
        gsi: EN_SQD_ASYNC_NOTIFY,
        ..NONE
    },
};

/// SQD -> SQD: what may change while drained.
const SQD_TO_SQD: Transition = Transition {
    req: NONE,
    opt: PerType {
        ud: PKEY_INDEX | QKEY,
        uc: AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE,
        rc: RC_SQD_OPT,
        xrc_ini: RC_SQD_OPT & !(MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER),
        xrc_tgt: RC_SQD_OPT & !(RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC),
        smi: PKEY_INDEX | QKEY,
        gsi: PKEY_INDEX | QKEY,
        ..NONE
    },
};

/// SQE -> RTS (datagram QPs and UC only).
const SQE_TO_RTS: Transition = Transition {
    req: NONE,
    opt: PerType {
        ud: DGRAM_RTS,
        uc: CUR_STATE | ACCESS_FLAGS,
        smi: DGRAM_RTS,
        gsi: DGRAM_RTS,
        ..NONE
    },
};

/// The transition table; `None` means the transition is illegal.
const fn transition(cur: QpState, next: QpState) -> Option<Transition> {
    use QpState::*;
    let t = match (cur, next) {
        // Any state may go to RESET and to ERR, except RESET -> ERR.
        (Reset, Err) => return None,
        (_, Reset) | (_, Err) => PLAIN,
        (Reset, Init) => RESET_TO_INIT,
        (Init, Init) => INIT_TO_INIT,
        (Init, Rtr) => INIT_TO_RTR,
        (Rtr, Rts) => RTR_TO_RTS,
        (Rts, Rts) | (Sqd, Rts) => TO_RTS,
        (Rts, Sqd) => RTS_TO_SQD,
        (Sqd, Sqd) => SQD_TO_SQD,
        (Sqe, Rts) => SQE_TO_RTS,
        _ => return None,
    };
    Some(t)
}

/// Why a `modify_qp` request is not acceptable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionError {
    /// `IB_QP_CUR_STATE` given while the current state is not RTR, RTS, SQD
    /// or SQE.
    CurStateNotAllowed,
    /// No such transition in the state machine.
    IllegalTransition,
    /// Required attributes missing from the mask (the missing bits).
    MissingRequired(u32),
    /// Attributes neither required nor optional (the offending bits).
    NotAllowed(u32),
}

/// Attributes a transition requires for a QP type; `None` if the
/// transition is illegal.
pub const fn required_attrs(cur: QpState, next: QpState, qp_type: QpType) -> Option<u32> {
    match transition(cur, next) {
        Some(t) => Some(t.req.get(qp_type)),
        None => None,
    }
}

/// Attributes a transition allows (besides the required ones and
/// [`attr::ALWAYS_ALLOWED`]); `None` if the transition is illegal.
pub const fn optional_attrs(cur: QpState, next: QpState, qp_type: QpType) -> Option<u32> {
    match transition(cur, next) {
        Some(t) => Some(t.opt.get(qp_type)),
        None => None,
    }
}

/// Checks a `modify_qp` request, with the reason when it is refused.
pub fn check_modify_qp(
    cur: QpState,
    next: QpState,
    qp_type: QpType,
    mask: u32,
) -> Result<(), TransitionError> {
    if mask & CUR_STATE != 0
        && !matches!(
            cur,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        )
    {
        return Err(TransitionError::CurStateNotAllowed);
    }
    let t = transition(cur, next).ok_or(TransitionError::IllegalTransition)?;
    let req = t.req.get(qp_type);
    let opt = t.opt.get(qp_type);
    if mask & req != req {
        return Err(TransitionError::MissingRequired(req & !mask));
    }
    let extra = mask & !(req | opt | ALWAYS_ALLOWED);
    if extra != 0 {
        return Err(TransitionError::NotAllowed(extra));
    }
    Ok(())
}

/// `ib_modify_qp_is_ok()`.
pub fn modify_qp_is_ok(cur: QpState, next: QpState, qp_type: QpType, mask: u32) -> bool {
    check_modify_qp(cur, next, qp_type, mask).is_ok()
}

/// [`modify_qp_is_ok`] on raw kernel values; false for unknown states or
/// types.
pub fn modify_qp_is_ok_raw(cur: u32, next: u32, qp_type: u32, mask: u32) -> bool {
    match (
        QpState::from_raw(cur),
        QpState::from_raw(next),
        QpType::from_raw(qp_type),
    ) {
        (Some(c), Some(n), Some(t)) => modify_qp_is_ok(c, n, t, mask),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rc_bring_up() {
        let rc = QpType::Rc;
        assert!(modify_qp_is_ok(
            QpState::Reset,
            QpState::Init,
            rc,
            STATE | CONN_INIT
        ));
        assert!(!modify_qp_is_ok(
            QpState::Reset,
            QpState::Init,
            rc,
            STATE | PKEY_INDEX | PORT
        ));
        assert!(modify_qp_is_ok(
            QpState::Init,
            QpState::Rtr,
            rc,
            STATE | RC_RTR_REQ
        ));
        assert_eq!(
            check_modify_qp(QpState::Init, QpState::Rtr, rc, STATE | UC_RTR_REQ),
            Err(TransitionError::MissingRequired(
                MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER
            ))
        );
        assert!(modify_qp_is_ok(
            QpState::Rtr,
            QpState::Rts,
            rc,
            STATE | RC_RTS_REQ
        ));
        assert_eq!(
            check_modify_qp(QpState::Rtr, QpState::Rts, rc, STATE | RC_RTS_REQ | QKEY),
            Err(TransitionError::NotAllowed(QKEY))
        );
    }

    #[test]
    fn cur_state_rule() {
        assert_eq!(
            check_modify_qp(QpState::Init, QpState::Init, QpType::Ud, CUR_STATE),
            Err(TransitionError::CurStateNotAllowed)
        );
        assert!(modify_qp_is_ok(
            QpState::Rts,
            QpState::Rts,
            QpType::Ud,
            CUR_STATE
        ));
    }

    #[test]
    fn illegal() {
        assert!(!modify_qp_is_ok(
            QpState::Reset,
            QpState::Err,
            QpType::Rc,
            STATE
        ));
        assert!(!modify_qp_is_ok(
            QpState::Reset,
            QpState::Rtr,
            QpType::Rc,
            STATE
        ));
        assert!(!modify_qp_is_ok(
            QpState::Sqe,
            QpState::Sqd,
            QpType::Ud,
            STATE
        ));
        assert!(!modify_qp_is_ok_raw(7, 0, 2, STATE));
        assert!(!modify_qp_is_ok_raw(0, 0, 7, STATE));
        assert!(modify_qp_is_ok_raw(6, 0, 2, STATE | RATE_LIMIT));
    }
}
