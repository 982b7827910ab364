#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UDP GSO batches (engine/requester/batch.rs, responder/read.rs,
# tx/batch.rs).  With the module parameter gso on (the default), 64 KiB
# RDMA WRITEs at MTU 1024, and the responses of 64 KiB READs, leave rrxe
# as batches: gso_batches counts them, and tcpdump on the receiving veth
# sees UDP datagrams longer than the MTU (veth passes a GSO skb whole; the
# receiving UDP stack cuts it before rrxe or C rxe gets
# it).  Cut in software before the sending veth (gso_max_segs 1), every
# segment is an ordinary RoCEv2 packet whose ICRC progs/icrc_check.py
# verifies (written independently of rrxe's code), over IPv4 and IPv6.
# Written N in sysfs at run time, nothing is batched.  The receiver of
# those WRITEs, with bulk_home on (the default, qp/placement.rs), leaves
# the ICRC of each message's first and middle packets to its receive task
# (icrc_deferred counts 63 a message, the first from its 8th packet on);
# with bulk_home N, to none.  Then SENDs and
# WRITEs of 64 KiB both ways at once (-b) between rrxe and C rxe at MTU
# 1024 and 4096 (make test: WRITEs at 1024, SENDs at 4096).  Then single packets lost out of batches: netem's corrupt
# cuts a GSO skb and flips a bit in its first segment, which the receiver
# drops, the rest of the batch arriving; loss_test.py's SENDs and WRITEs
# must all complete byte-exact (go-back-N from inside a batch), rrxe to
# rrxe and rrxe to C rxe.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ib_write_bw ib_send_bw tcpdump
ksft_require_module rdma_rxe sch_netem
ksft_require_py pyverbs
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/perftest.sh"

param=/sys/module/rdma_rrxe/parameters/gso
home=/sys/module/rdma_rrxe/parameters/bulk_home
# set_param FILE Y|N: writes one of rrxe's run-time parameters.
set_param() { echo "$2" >"$1" || fail "cannot write $2 to $1"; }
ksft_cleanup 'echo Y >/sys/module/rdma_rrxe/parameters/gso 2>/dev/null
	echo Y >/sys/module/rdma_rrxe/parameters/bulk_home 2>/dev/null; pp_teardown'

# capture NS DEV OUT -w|-v ARGS...: tcpdump on DEV (in NS) around one
# ib_write_bw from ppb0 (the client, which sends) to ppa0; -w: a pcap, -v:
# text.
capture() {
	local ns=$1 dev=$2 out=$3 how=$4 tp res
	shift 4
	if [ "$how" = -w ]; then
		ip netns exec "$ns" tcpdump -i "$dev" -n -s 0 -w "$out" udp port 4791 2>/tmp/gso-tcpdump.err &
	else
		ip netns exec "$ns" tcpdump -i "$dev" -n -l udp port 4791 >"$out" 2>/tmp/gso-tcpdump.err &
	fi
	tp=$!
	# It says so once it captures.
	wait_for 10 grep -q "listening on" /tmp/gso-tcpdump.err ||
		fail "tcpdump on $dev did not start: $(cat /tmp/gso-tcpdump.err)"
	res=0
	pt_run ib_write_bw ppa0 ppA ppb0 ppB 10.77.0.1 "$@" >/tmp/gso-bw.out || res=1
	sleep 1
	kill "$tp" 2>/dev/null || true
	wait "$tp" 2>/dev/null || true
	[ $res = 0 ] || fail "ib_write_bw $*: $(cat /tmp/gso-bw.out)"
}

# The longest UDP payload in a tcpdump text capture.
longest() { sed -n 's/.*UDP, length \([0-9]*\).*/\1/p' "$1" | sort -n | tail -1; }

pp_setup_pair rrxe rrxe
[ "$(cat "$param")" = Y ] || fail "gso is not on by default: $(cat "$param")"
[ "$(cat "$home")" = Y ] || fail "bulk_home is not on by default: $(cat "$home")"
b0=$(hw_counter ppb0 gso_batches)
d0=$(hw_counter ppa0 icrc_deferred)
capture ppA vpa /tmp/gso-rx.txt -v -s 65536 -n 40 -m 1024
b1=$(hw_counter ppb0 gso_batches)
d1=$(hw_counter ppa0 icrc_deferred)
note "bulk_home on: the receive task checked $((d1 - d0)) ICRCs of 40 messages of 64 packets"
# 63 a message, but the first: its first 7 packets precede the run
# (qp/placement.rs's BULK_PKTS, 8).
[ "$((d1 - d0))" -ge $((40 * 63 - 7)) ] || fail "$((d1 - d0)) ICRCs deferred, fewer than 63 a message"
set_param "$home" N
d2=$(hw_counter ppa0 icrc_deferred)
out=$(pt_run ib_write_bw ppa0 ppA ppb0 ppB 10.77.0.1 -s 65536 -n 20 -m 1024) ||
	fail "ib_write_bw with bulk_home N: $out"
d3=$(hw_counter ppa0 icrc_deferred)
set_param "$home" Y
[ "$d3" = "$d2" ] || fail "$((d3 - d2)) ICRCs deferred with bulk_home N"
note "bulk_home off: no ICRC deferred"

long=$(longest /tmp/gso-rx.txt)
note "gso on: $((b1 - b0)) batches for 40 WRITEs of 64 KiB, longest UDP payload on the receiving veth $long"
[ "$((b1 - b0))" -ge 40 ] || fail "fewer batches ($((b1 - b0))) than messages"
[ "${long:-0}" -gt 9000 ] || fail "no UDP datagram longer than the MTU reached the receiver"

# READ responses: the responder (ppa0, the server) batches them.
r0=$(hw_counter ppa0 gso_batches)
out=$(pt_run ib_read_bw ppa0 ppA ppb0 ppB 10.77.0.1 -s 65536 -n 40 -m 1024) ||
	fail "ib_read_bw: $out"
r1=$(hw_counter ppa0 gso_batches)
note "READ responses: $((r1 - r0)) batches for 40 READs of 64 KiB"
[ "$((r1 - r0))" -ge 40 ] || fail "fewer READ response batches ($((r1 - r0))) than READs"

# Cut before the sending veth: what a NIC without USO, or a real wire, sees.
ip -n ppB link set vpb gso_max_segs 1 || fail "cannot set gso_max_segs on vpb"
capture ppB vpb /tmp/gso-v4.pcap -w -s 65536 -n 20 -m 1024
icrc=$(/usr/bin/python3 "$RRXE_PROGS/icrc_check.py" /tmp/gso-v4.pcap --min 1200) ||
	fail "IPv4, batches cut by the stack: $icrc"
note "IPv4: $icrc"
b2=$(hw_counter ppb0 gso_batches)
[ "$b2" -gt "$b1" ] || fail "no batch counted while gso_max_segs was 1"

# IPv6 (RoCE v2 GIDs of fd77::1 and fd77::2).
ip -n ppA addr add fd77::1/64 dev vpa nodad
ip -n ppB addr add fd77::2/64 dev vpb nodad
sg="" cg=""
for ((i = 0; i < 100; i++)); do
	sg=$(gid_scan ppa0 'fd77:*' 'RoCE v2' 2>/dev/null) &&
		cg=$(gid_scan ppb0 'fd77:*' 'RoCE v2' 2>/dev/null) && break
	nap 0.1
done
[ -n "$sg" ] && [ -n "$cg" ] || fail "no RoCE v2 GIDs for fd77::1 and fd77::2"
PT_SGID=$sg PT_CGID=$cg capture ppB vpb /tmp/gso-v6.pcap -w -s 65536 -n 20 -m 1024
icrc=$(/usr/bin/python3 "$RRXE_PROGS/icrc_check.py" /tmp/gso-v6.pcap --min 1200) ||
	fail "IPv6, batches cut by the stack: $icrc"
note "IPv6: $icrc"
grep -q "0 IPv4, [1-9]" <<<"$icrc" || fail "the IPv6 capture holds IPv4 packets: $icrc"
ip -n ppB link set vpb gso_max_segs 65535

# Off at run time: one skb per packet.
set_param "$param" N
[ "$(cat "$param")" = N ] || fail "$param reads $(cat "$param") after writing N"
b3=$(hw_counter ppb0 gso_batches)
capture ppA vpa /tmp/gso-off.txt -v -s 65536 -n 20 -m 1024
b4=$(hw_counter ppb0 gso_batches)
long=$(longest /tmp/gso-off.txt)
[ "$b4" = "$b3" ] || fail "$((b4 - b3)) batches sent with gso off"
[ "${long:-0}" -le 1100 ] || fail "a $long-byte UDP datagram with gso off"
note "gso off: no batch, longest UDP payload $long"
set_param "$param" Y

# Across drivers, both directions at once: WRITE and SEND at MTU 1024 and
# 4096 (make test: WRITE at 1024, SEND at 4096).
cross_runs="ib_write_bw@1024 ib_send_bw@1024 ib_write_bw@4096 ib_send_bw@4096"
[ "$RRXE_TEST_LEVEL" = full ] || cross_runs="ib_write_bw@1024 ib_send_bw@4096"
for pair in "rrxe rxe" "rxe rrxe"; do
	# shellcheck disable=SC2086
	pp_setup_pair $pair
	rr=ppa0
	[ "${pair%% *}" = rxe ] && rr=ppb0
	b0=$(hw_counter $rr gso_batches)
	for run in $cross_runs; do
		tool=${run%@*} mtu=${run#*@}
		out=$(pt_run "$tool" ppa0 ppA ppb0 ppB 10.77.0.1 -b -s 65536 -n 100 -m "$mtu") ||
			fail "$pair: $tool -b MTU $mtu: $out"
		pt_positive "$(pt_bw_avg "$out")" || fail "$pair: $tool -b MTU $mtu: no bandwidth: $out"
	done
	b1=$(hw_counter $rr gso_batches)
	note "$pair: $cross_runs (-b) passed, rrxe sent $((b1 - b0)) batches"
	[ "$((b1 - b0))" -gt 0 ] || fail "$pair: rrxe sent no batch"
done

# Single packets lost out of batches.
for pair in "rrxe rrxe" "rrxe rxe"; do
	# shellcheck disable=SC2086
	pp_setup_pair $pair
	ip netns exec ppA ping -c 1 -W 5 10.77.0.2 >/dev/null || fail "ping ppA -> ppB"
	# QP a (ppa0) sends; its side corrupts.
	ip netns exec ppA tc qdisc add dev vpa root netem corrupt 10%
	r0=$(hw_counter ppa0 retransmits 2>/dev/null || echo 0)
	/usr/bin/python3 "$RRXE_PROGS/loss_test.py" \
		ppa0 "$(pp_gid_index ppa0 10.77.0.1)" ppb0 "$(pp_gid_index ppb0 10.77.0.2)" \
		"${GSO_LOSS_MESSAGES:-30}" ||
		fail "$pair: loss test with corrupted segments"
	note "$pair: 64 KiB SENDs and WRITEs byte-exact with 10% of batches losing a segment;" \
		"rrxe retransmits $(($(hw_counter ppa0 retransmits) - r0)), batches $(hw_counter ppa0 gso_batches)"
	[ "$(hw_counter ppa0 retransmits)" -gt "$r0" ] || fail "$pair: nothing was resent"
done
pp_teardown
