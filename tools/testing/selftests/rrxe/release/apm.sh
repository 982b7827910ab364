#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Automatic path migration (apm_test.py), rrxe to rrxe in two namespaces:
# two IPv4 address pairs on the veth, the primary path on 10.77.0.0/24,
# the alternate path on 10.78.0.0/24, armed on both QPs (REARM).  Cutting
# the primary path (a bogus permanent neighbour entry for the peer's
# primary address) must
# not fail a WRITE: the requester migrates when its retries run out, the
# responder when the first packet arrives on the alternate path; both
# raise IB_EVENT_PATH_MIG and report MIGRATED with the alternate path as
# the primary one; WRITE and READ then work; an unarmed QP fails with
# RETRY_EXC_ERR, and so does one whose responder has the alternate path
# loaded but not armed (it counts the packets as rcv_foreign); arming without an alternate path is refused.  Then the
# first pair is loaded as the new alternate path and rearmed, the second
# pair cut, and the QPs migrate back.  ib_core accepts IB_QP_ALT_PATH on a
# RoCE port only from a device that opts in (patches/0008, rrxe does): on
# C rxe it still fails with EINVAL.  (C rxe
# stores an alternate path but never migrates, and drops packets from it:
# there is no cross-driver case.)
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"

pp_setup_pair rrxe rrxe
ip -n ppA addr add 10.78.0.1/24 dev vpa
ip -n ppB addr add 10.78.0.2/24 dev vpb
gA=$(pp_gid_index ppa0 10.77.0.1) || fail "no primary GID on ppa0"
gB=$(pp_gid_index ppb0 10.77.0.2) || fail "no primary GID on ppb0"
aA=$(pp_gid_index ppa0 10.78.0.1) || fail "no alternate GID on ppa0"
aB=$(pp_gid_index ppb0 10.78.0.2) || fail "no alternate GID on ppb0"
out=$(timeout 90 /usr/bin/python3 -u "$RRXE_PROGS/apm_test.py" \
	ppa0 "$gA" "$aA" ppb0 "$gB" "$aB" ppA vpa 10.77.0.2 10.78.0.2 ppB 2>&1) || fail "apm_test: $out"
echo "$out"
note "APM: $(grep -c '^ok:' <<<"$out") checks"
note "$(dmesg | grep -c 'migrated to the alternate path') migrations logged"
pp_teardown
rmmod rdma_rrxe

# The refusal is ib_core's, the same on both kernels: release only in
# make test.
if debug_quick; then
	exit 0
fi
pp_setup_pair rxe rxe
g=$(pp_gid_index ppa0 10.77.0.1) || fail "no GID on the C rxe device"
out=$(timeout 60 /usr/bin/python3 -u "$RRXE_PROGS/apm_test.py" --refused ppa0 "$g" "$g" 2>&1) ||
	fail "apm_test --refused: $out"
echo "$out"
pp_teardown
