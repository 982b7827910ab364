// SPDX-License-Identifier: GPL-2.0
//! Compiles src/lib.rs as a *module* of another crate, the way the kernel
//! module includes it (`#[path = "proto/src/lib.rs"] mod proto;`, which
//! needs `unused_attributes` allowed for the inner `#![no_std]`).  This
//! fails to build if any file names the crate root (`crate::`), and it runs
//! the unit tests once more in that configuration.

#[allow(unused_attributes, dead_code, unreachable_pub)]
#[path = "../src/lib.rs"]
mod proto;

#[test]
fn usable_as_a_module() {
    let info = proto::opcode::opcode_info(proto::opcode::RC_SEND_ONLY).unwrap();
    assert_eq!(info.header_len(), 12);
    assert_eq!(proto::icrc::ICRC_SEED, 0xdebb_20e3);
    assert!(proto::qp_state::modify_qp_is_ok_raw(0, 0, 2, 1));
}
