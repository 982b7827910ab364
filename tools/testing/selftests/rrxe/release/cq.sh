#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Completion queues through the stock librxe provider (pyverbs): the ring
# is mmap'd and polled from user memory; sizes, arming, refusals, and
# cleanup of CQs left open when the process exits.  Also run on C rxe.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
verbs_on_both cq_test.py
