#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A hostile local user: out/progs/hostile_user
# (tools/testing/selftests/rrxe/progs/hostile_user.c) speaks the rxe user ABI directly,
# without librxe, and writes garbage into everything user space shares
# with the driver: the SQ, RQ and CQ ring indices, send and receive WQEs
# (opcodes, flags, num_sge, lengths, lkeys, inline sizes), a producer
# index claiming the whole ring of a QP in the error state doorbell after
# doorbell (the flush must stay bounded: a CPU-time threshold per
# doorbell), doorbells from several threads while another destroys the
# QP, children that _exit without cleanup or are SIGKILLed mid-doorbell,
# mmap at wrong offsets/sizes and after destroy, and create_qp failing
# after the driver allocated its rings (review finding 6: the rings and
# their charge must be gone when the call returns).  Then
# out/progs/stalled_copy parks resize_cq and modify_srq in their copy to
# user memory (a userfaultfd page whose fault is resolved only later):
# meanwhile the traffic of QPs using the same CQ or SRQ must complete
# (no lock the engine takes is held across a user copy), and a WRITE
# into an ODP region over such a page must fail at once instead of
# waiting.  Each program exits non-zero
# when something that must hold does not (a garbage WQE completing
# successfully, a verb not answering, the CPU hog).  Then: nothing is
# left (rdma resource counts back to what the kernel holds, the MAD
# layer's QP1 with its CQ and PD, after the process exits), the device
# still runs a stock ibv_rc_pingpong, and `rdma link delete` and
# `rmmod rdma_rrxe` succeed.  The harness fails the scenario on any
# kernel splat; the debug run's final kmemleak scan covers leaks.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_rc_pingpong
. "$RRXE_LIB/pingpong.sh"

prog=$RRXE_TOP/out/progs/hostile_user
stalled=$RRXE_TOP/out/progs/stalled_copy
for p in "$prog" "$stalled"; do
	[ -x "$p" ] || fail "$p missing (tools/testing/runner/build-progs.sh builds it)"
done
# COUNT scales every phase's repetitions (rings rounds, 10x COUNT races,
# 3x COUNT children, ...).
if [ "$RRXE_TEST_LEVEL" = full ]; then
	n=8
elif debug_quick; then
	n=1
else
	n=2
fi

pp_setup_loop rrxe
# Every phase runs even if one fails (each may expose something else);
# the scenario fails at the end, naming the phases that did.
failed=""
# What the kernel holds on the device before any process (the MAD layer's
# QP1, its CQ and PD): the same must be left after each phase.
base=$(rdma resource show | grep -w ppl0 || true)
[ -n "$base" ] || fail "ppl0 missing from 'rdma resource show'"
note "before: $base"
for phase in rings wqes storm race fork maps createfail; do
	note "phase $phase (-n $n)"
	ip netns exec ppL "$prog" -d ppl0 -n "$n" "$phase" || failed+=" $phase"
	# Whatever the phase did, the process is gone: so is everything it had.
	res=$(rdma resource show | grep -w ppl0 || true)
	[ -n "$res" ] || fail "ppl0 missing from 'rdma resource show' after hostile_user $phase"
	note "$res"
	[ "$res" = "$base" ] || fail "resources left on ppl0 after hostile_user $phase: $res (before: $base)"
done

# A verb parked in its copy to user memory holds up nobody's traffic.
note "stalled_copy"
uffd=ok
ip netns exec ppL "$stalled" -d ppl0 all || case $? in
	4) uffd=missing ;;
	*) failed+=" stalled_copy" ;;
	esac
res=$(rdma resource show | grep -w ppl0 || true)
note "$res"
[ "$res" = "$base" ] || fail "resources left on ppl0 after stalled_copy: $res (before: $base)"

# The device still works.
run_pingpong ibv_rc_pingpong ppl0 ppL ppl0 ppL 10.77.1.1 -s 4096 -n 100 ||
	fail "ibv_rc_pingpong on ppl0 after the hostile user"

pp_teardown
rmmod rdma_rrxe || fail "rmmod rdma_rrxe after the hostile user"
! grep -q '^rdma_rrxe ' /proc/modules || fail "rdma_rrxe still loaded"
[ -z "$failed" ] || fail "hostile_user phases failed:$failed (see above)"
[ "$uffd" = ok ] || ksft_skip "no userfaultfd in this kernel (CONFIG_USERFAULTFD): stalled_copy did not run"
