#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Retransmission: RC traffic between two rrxe devices, and between rrxe and
# C rxe each way, over a veth with netem dropping 5% of the packets in
# each direction: SENDs and RDMA WRITEs of 64 KiB (pyverbs, loss_test.py)
# must all complete and arrive byte-exact (sequence NAKs, duplicate ACKs,
# the retransmit timer), and the counters show the recovery.  Then RDMA
# READs of 1 MiB (byte-exact: a lost response packet makes the requester
# ask again for the rest, the responder executes the READ again from that
# PSN) and 200 fetch-and-adds from two QPs onto one counter (exactly 200
# afterwards, every original value once: a resent atomic is answered from
# the responder's saved result, never executed twice).  Then rounds of
# WRITE, ATOMIC WRITE, FLUSH and READ (persist_loss_test.py): every
# completion in order, no READ returns an ATOMIC WRITE older than its
# round's, each FLUSHed slot holds its data, so a lost FLUSH or ATOMIC
# WRITE acknowledgement is answered again, never executed out of turn.
# Between two rrxe devices only: C rxe as the requester resends an ATOMIC
# WRITE at address 0 (its req_retry() takes the address only for atomics,
# READs and WRITEs, and ATOMIC WRITE is none of them), which rrxe, as any
# responder, refuses with a remote access error when the first copy was
# lost.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe sch_netem
. "$RRXE_LIB/pingpong.sh"
lossy() {
	# Resolve the neighbours first: a lost ARP would fail the connection
	# setup (modify_qp to RTR resolves the peer's MAC), not test RoCE.
	ip netns exec ppA ping -c 1 -W 5 10.77.0.2 >/dev/null || fail "ping ppA -> ppB"
	ip netns exec ppB ping -c 1 -W 5 10.77.0.1 >/dev/null || fail "ping ppB -> ppA"
	ip netns exec ppA tc qdisc add dev vpa root netem loss 5%
	ip netns exec ppB tc qdisc add dev vpb root netem loss 5%
}
# lost PAIR WHAT: fails, after both devices' counters and the netem
# drops (which side stopped retransmitting or answering).
lost() {
	local dev
	for dev in ppa0 ppb0; do
		note "$dev: $(rdma statistic show link "$dev/1" 2>&1 | sed 's/^link [^ ]* //')"
	done
	note "vpa netem: $(ip netns exec ppA tc -s qdisc show dev vpa | sed -n 's/^ *Sent //p')"
	note "vpb netem: $(ip netns exec ppB tc -s qdisc show dev vpb | sed -n 's/^ *Sent //p')"
	fail "$1: $2"
}
modprobe sch_netem
pairs=("rrxe rrxe" "rxe rrxe" "rrxe rxe")
debug_quick && pairs=("rrxe rrxe" "rrxe rxe")
# C rxe as the requester gets a local ACK timeout of 14 (67 ms) instead of
# 12 (16.8 ms).  Its completer stops retrying for good when an ACK of its
# last PSN arrives after a timeout made it rewind: req_retry() marks the
# WQE posted again, so the ACK completes nothing but moves comp.psn up to
# req.psn; the resent message's ACK then completes it, and if that one is
# lost, the next timeout finds req.psn == comp.psn ("no point in retrying
# if we have already seen the last ack", rxe_comp.c) and neither resends
# nor re-arms the timer.  With window 1 nothing follows to complete the
# WQE, and the test stalls with both QPs in RTS.  That needs an ACK later
# than the timeout and then the loss of the resent message's ACK, which
# rrxe sends once per run of duplicates (C rxe once per duplicate):
# seen twice in this test, both times with C rxe sending (compat.rst).
# The longer timeout makes the late ACK rarer; rrxe as the requester
# keeps 12.
for pair in "${pairs[@]}"; do
	# shellcheck disable=SC2086
	pp_setup_pair $pair
	lossy
	timeout=12
	[ "${pair%% *}" = rxe ] && timeout=14
	/usr/bin/python3 "$RRXE_PROGS/loss_test.py" \
		ppa0 "$(pp_gid_index ppa0 10.77.0.1)" ppb0 "$(pp_gid_index ppb0 10.77.0.2)" "${LOSS_MESSAGES:-60}" \
		--timeout "$timeout" ||
		lost "$pair" "loss test"
	/usr/bin/python3 "$RRXE_PROGS/loss_test.py" \
		ppa0 "$(pp_gid_index ppa0 10.77.0.1)" ppb0 "$(pp_gid_index ppb0 10.77.0.2)" \
		--phases read,faa --size 1M --bytes "${LOSS_READ_BYTES:-4M}" --window 2 --atomics 200 \
		--timeout "$timeout" ||
		lost "$pair" "READ/atomic loss test"
	if [ "$pair" = "rrxe rrxe" ]; then
		/usr/bin/python3 "$RRXE_PROGS/persist_loss_test.py" \
			ppa0 "$(pp_gid_index ppa0 10.77.0.1)" ppb0 "$(pp_gid_index ppb0 10.77.0.2)" \
			--rounds "${PERSIST_ROUNDS:-150}" --window 4 ||
			lost "$pair" "FLUSH/ATOMIC WRITE loss test"
	fi
	note "$pair: passed with 5% loss"
	if [ "$pair" = "rrxe rrxe" ]; then
		stats=$(rdma statistic show link ppa0/1; rdma statistic show link ppb0/1)
		note "$stats"
		echo "$stats" | grep -Eq "retransmits [1-9]" || fail "no retransmissions counted"
		echo "$stats" | grep -Eq "(out_of_seq_request|duplicate_request) [1-9]" ||
			fail "no sequence/duplicate events counted"
		echo "$stats" | grep -Eq "read_replays [1-9]" || fail "no READ executed again after a loss"
		echo "$stats" | grep -Eq "atomic_replays [1-9]" || fail "no atomic answered from the saved result"
		echo "$stats" | grep -Eq "atomics_executed 200( |$)" || fail "atomics executed other than 200 times"
		echo "$stats" | grep -Eq "flushes_executed [1-9]" || fail "no FLUSH executed"
	fi
done
pp_teardown
