// SPDX-License-Identifier: GPL-2.0
//! Fuzz target: any bytes, as raw transport packet and as L3 packet,
//! through parse, ICRC and validate (body shared with tests/corpus.rs).

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/exercise.rs"]
mod exercise;

fuzz_target!(|data: &[u8]| {
    let _ = exercise::exercise(data);
});
