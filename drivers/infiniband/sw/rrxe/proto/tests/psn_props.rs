// SPDX-License-Identifier: GPL-2.0
//! Property tests of 24-bit PSN arithmetic against a plain i64 model.

use proptest::prelude::*;
use rrxe_proto::psn::{psn_compare, Psn, PSN_HALF, PSN_MASK, PSN_SPACE};
use std::cmp::Ordering;

/// Model: forward distance in 0..2^24, "after" when in 1..2^23.
fn model_cmp(a: u32, b: u32) -> Ordering {
    let d = (i64::from(a & PSN_MASK) - i64::from(b & PSN_MASK)).rem_euclid(i64::from(PSN_SPACE));
    if d == 0 {
        Ordering::Equal
    } else if d < i64::from(PSN_HALF) {
        Ordering::Greater
    } else {
        Ordering::Less
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn new_masks(v in any::<u32>()) {
        prop_assert_eq!(Psn::new(v).get(), v & PSN_MASK);
    }

    #[test]
    fn add_sub_inverse(a in any::<u32>(), n in any::<u32>()) {
        let p = Psn::new(a);
        prop_assert_eq!(p.add(n).sub(n), p);
        prop_assert_eq!(p.add(n).get(), ((u64::from(a & PSN_MASK) + u64::from(n)) % u64::from(PSN_SPACE)) as u32);
    }

    #[test]
    fn distance_is_add_inverse(a in any::<u32>(), n in 0..PSN_SPACE) {
        let p = Psn::new(a);
        prop_assert_eq!(p.distance_to(p.add(n)), n);
    }

    #[test]
    fn compare_matches_model(a in any::<u32>(), b in any::<u32>()) {
        prop_assert_eq!(psn_compare(a, b).cmp(&0), model_cmp(a, b));
        prop_assert_eq!(Psn::new(a).cmp_window(Psn::new(b)), model_cmp(a, b));
    }

    #[test]
    fn compare_antisymmetric_within_window(a in any::<u32>(), d in 1..PSN_HALF) {
        let p = Psn::new(a);
        let q = p.add(d);
        prop_assert!(q.is_after(p));
        prop_assert!(p.is_before(q));
        prop_assert!(!p.is_after(q));
    }

    #[test]
    fn next_is_after(a in any::<u32>()) {
        let p = Psn::new(a);
        prop_assert!(p.next().is_after(p));
        prop_assert_eq!(p.next().prev(), p);
        prop_assert_eq!(p.distance_to(p.next()), 1);
    }

    #[test]
    fn window_membership(start in any::<u32>(), len in 0..PSN_SPACE, off in 0..PSN_SPACE) {
        let s = Psn::new(start);
        prop_assert_eq!(s.add(off).in_window(s, len), off < len);
    }
}

#[test]
fn c_compare_edge_cases() {
    // Exactly half the space apart: C's shift makes both directions negative.
    assert!(psn_compare(0, PSN_HALF) < 0);
    assert!(psn_compare(PSN_HALF, 0) < 0);
    assert!(psn_compare(0, PSN_MASK) > 0);
    assert_eq!(psn_compare(0x0100_0000, 0), 0);
}
