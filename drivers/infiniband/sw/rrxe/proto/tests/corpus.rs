// SPDX-License-Identifier: GPL-2.0
//! Runs every file of the fuzz seed corpus (fuzz/corpus/parse_validate)
//! through the fuzz target's parse + validate body, and pins down what the
//! named seeds must produce.

#[path = "support/exercise.rs"]
mod exercise;

use exercise::exercise;
use rrxe_proto::ip::L3Error;
use rrxe_proto::validate::ValidateError;
use rrxe_proto::ParseError;
use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/parse_validate")
}

#[test]
fn every_corpus_file_runs() {
    let mut n = 0;
    for entry in std::fs::read_dir(corpus_dir()).expect("corpus dir") {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let _ = exercise(&data);
        n += 1;
    }
    assert!(n >= 5, "corpus has only {n} files");
}

fn seed(name: &str) -> Vec<u8> {
    std::fs::read(corpus_dir().join(format!("{name}.bin"))).expect(name)
}

#[test]
fn valid_seeds_parse_and_carry_good_icrc() {
    for name in [
        "v4_rc_send_only",
        "v6_rc_write_first",
        "v4_ud_send_imm_ecn",
        "v4_rc_ack",
        "v6_rc_cmp_swap",
        "v4_rc_flush",
        "scapy_uc_send_only",
    ] {
        let o = exercise(&seed(name));
        assert_eq!(o.l3, Some(Ok(())), "{name}");
        assert_eq!(o.icrc_ok, Some(true), "{name}");
    }
    let o = exercise(&seed("v4_rc_send_only"));
    assert_eq!(o.rc_validate, Some(Ok(())));
    let o = exercise(&seed("v4_ud_send_imm_ecn"));
    assert_eq!(o.rc_validate, Some(Err(ValidateError::WrongTransport)));
}

#[test]
fn malformed_seeds_are_rejected() {
    // CNP is not in rxe's opcode table, but its hardware ICRC is still
    // checkable from the L3 framing.
    let cnp = seed("cx4lx_cnp_capture");
    assert_eq!(
        exercise(&cnp).l3,
        Some(Err(ParseError::UnknownOpcode(0x81)))
    );
    assert!(rrxe_proto::icrc::icrc_verify::<rrxe_proto::icrc::SoftCrc32>(&cnp).is_ok());
    assert_eq!(
        exercise(&seed("unknown_opcode")).l3,
        Some(Err(ParseError::UnknownOpcode(0x15)))
    );
    let o = exercise(&seed("bad_tver"));
    assert_eq!(
        o.rc_validate,
        Some(Err(ValidateError::BadTransportVersion(1)))
    );
    assert_eq!(o.icrc_ok, Some(false));
    assert_eq!(
        exercise(&seed("truncated")).l3,
        Some(Err(ParseError::L3(L3Error::BadUdpLength)))
    );
}
