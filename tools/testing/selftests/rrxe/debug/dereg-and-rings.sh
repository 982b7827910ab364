#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The security review's findings, each checked where the VM can
# show it (review_findings.py; hostile-user.sh covers the
# bounded error flush and create_qp's error path, forged-peers the UC
# responder):
#  1. rkeys: the first MR of a fresh device gets a random key byte (it was
#     always 0x100); KUnit rrxe_mr checks the byte's spread.
#  2. dereg_mr during an RDMA WRITE: nothing lands after it returns, the
#     WRITE completes in error.
#  5. ring memory per user context is capped: ENOMEM over the cap.
#  7. ring mappings after disassociation: zapped (read zeroes), freed.
# And the post verbs' state checks (post_states.py): librxe's doorbell on
# a QP below RTS fails with EINVAL, as on C rxe, so ibv_post_send does;
# post_states.py checks that itself, and make test-full also compares its
# lines with C rxe's (c_rxe_half oracle).
# Finding 8 (page iterator) has no test: the config's memory model
# (SPARSEMEM_VMEMMAP) made the old walk correct too.
# Every check runs even when an earlier one fails; the scenario fails
# naming all that did (so a run on the code before the fixes shows each).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
. "$RRXE_LIB/pingpong.sh"
F="/usr/bin/python3 $RRXE_PROGS/review_findings.py"
failed=""
try() { # NAME FUNCTION: runs FUNCTION under set -e in a subshell
	local rc
	set +e
	(set -e; "$2")
	rc=$?
	set -e
	if [ $rc != 0 ]; then failed+=" $1"; note "finding $1: FAILED"; fi
	return 0
}

first_keys() {
	local keys="" i
	for i in 1 2 3 4; do
		rdma link add rrxe0 type rrxe netdev veth0
		keys+="$($F first-key rrxe0) "
		rdma link delete rrxe0
	done
	note "first MR key of four fresh devices: $keys"
	[ "$(echo "$keys" | tr ' ' '\n' | sed '/^$/d' | sort -u | wc -l)" -gt 1 ] ||
		fail "the first MR of every fresh device has the same key ($keys)"
}

ring_cap() { $F ring-cap rrxe0; }

post_states() {
	rrxe_and_c_rxe oracle
	same_on_both post_states
	rrxe_and_c_rxe_down
}

zap() {
	$F zap rrxe0
	! has_ibdev rrxe0 || fail "rrxe0 still there after the zap test deleted it"
}

dereg_write() {
	local bytes=$((64 << 20))
	debug_quick && bytes=$((8 << 20))
	pp_setup_pair rrxe rrxe
	$F dereg-write ppa0 "$(pp_gid_index ppa0 10.77.0.1)" ppb0 "$(pp_gid_index ppb0 10.77.0.2)" "$bytes"
	note "requester: $(rdma statistic show link ppa0/1)"
}

mkveth veth0 veth1
modprobe rdma_rrxe
try 1-key first_keys
rdma link add rrxe0 type rrxe netdev veth0
try 5-ring-cap ring_cap
try 7-mmap zap
has_ibdev rrxe0 && rdma link delete rrxe0
try 2-dereg dereg_write
pp_teardown
ip link del veth0
try 30.6-doorbell post_states
rmmod rdma_rrxe || fail "rmmod after the findings"
[ -z "$failed" ] || fail "findings failing:$failed"
