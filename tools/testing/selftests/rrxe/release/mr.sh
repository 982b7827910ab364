#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Memory registration through the stock librxe provider (pyverbs): pinned
# user memory, lkey = rkey, unique keys that change on re-registration,
# IBTA access rules, cleanup of MRs left when the process exits.  Also run
# on C rxe.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
verbs_on_both mr_test.py
