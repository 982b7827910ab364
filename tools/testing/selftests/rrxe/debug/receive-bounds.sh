#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Receive bounds: what a remote host can make the
# receive path hold.  rx_bounds.py sets up, on ppa0, a UD QP with 64 KiB
# receives posted and a UD QP attached to the group 239.1.2.3; roce-flood
# --mode datagram writes valid datagrams (Q_Key, ICRC) and pcap_replay
# sends them from ppB's end of the veth:
#
# 1. the largest datagrams IPv4 carries (64 KiB of payload, in IP
#    fragments the receiver reassembles) to the UD QP: longer than any
#    MTU, each must be dropped and counted (rcv_dropped) in the receive
#    path, before any queue: rcvd_pkts does not move, the device's
#    rcv_queue_peak_bytes (the most one receive queue held) does not grow
#    and stays under the queue's byte bound (4 MiB), and the QP receives
#    none of them;
# 2. garbage to the multicast QPN 0xffffff: UD SENDs to the device's own
#    address and to 239.1.2.4 (joined at the IP level, attached by no
#    QP): no group matches, each is dropped and counted at once (again
#    nothing queued, rcvd_pkts unmoved);
# 3. then 20 real datagrams to 239.1.2.3 reach the group member, each
#    once and intact.
#
# The byte bound itself (a queue of packets that pass the checks, against
# a task that does not keep up) is checked by the KUnit case
# rrxe_skb_queue: in this VM the receive task keeps up with pcap_replay,
# and stalling it with real-time busy loops on both CPUs hung the VM.
#
# rcv_dropped must move by exactly the datagrams UDP handed over
# (Udp InDatagrams in ppA: a fragment lost on the veth loses its datagram
# before rrxe).  The same run with C rxe as ppa0 is reported for
# comparison: it has no length check for datagrams (its UD QP receives
# them) and also drops multicast garbage when no group matches (the group
# member must receive there too).  That comparison is not judged, so only
# make test-full runs it on this kernel (c_rxe_half oracle).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/attack.sh"

big=100
garbage=500
[ "$RRXE_TEST_LEVEL" = full ] && big=1000 garbage=10000
bound=$((4 << 20))
work=/tmp/rxbounds

udp_in() { ip netns exec ppA awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $2 }' /proc/net/snmp; }

# run DRV: the three phases with ppa0 on driver DRV; sets the D_* deltas.
run() {
	local drv=$1 macA macB u0 u1 u2 s0 s1 s2 rc n
	rm -rf "$work"
	mkdir -p "$work"
	atk_start "$drv" rx_bounds.py "$work/prog.log" "$work/info" "$work/info" "$work/go"
	local ppid=$ATK_PID
	. "$work/info"
	ip_join ppA vpa rxbounds 239.1.2.3 239.1.2.4
	macA=$(atk_mac ppA vpa)
	macB=$(atk_mac ppB vpb)
	local common=(--src-mac "$macB" --local 10.77.0.1 --peer 10.77.0.2)
	atk_flood --mode datagram --out "$work/big.pcap" --summary "$work/big.sum" --seed 30 "${common[@]}" \
		--dst-mac "$macA" --qpn "$TARGET_QPN" --qkey "$QKEY" --len max --count "$big" 2>"$work/gen.log" ||
		fail "roce-flood --mode datagram: $(cat "$work/gen.log")"
	atk_flood --mode datagram --out "$work/mc1.pcap" --summary "$work/mc1.sum" --seed 31 "${common[@]}" \
		--dst-mac "$macA" --qpn 0xffffff --qkey "$QKEY" --len 1024 --count "$garbage" 2>>"$work/gen.log" ||
		fail "roce-flood --mode datagram: $(cat "$work/gen.log")"
	atk_flood --mode datagram --out "$work/mc2.pcap" --summary "$work/mc2.sum" --seed 32 "${common[@]}" \
		--dst-mac 01:00:5e:01:02:04 --dst 239.1.2.4 --qpn 0xffffff --qkey "$QKEY" --len 1024 --count "$garbage" \
		2>>"$work/gen.log" || fail "roce-flood --mode datagram: $(cat "$work/gen.log")"
	wait_for 10 ip_joined rxbounds || fail "ppA did not join the groups within 10 s"
	atk_quiet ppa0
	s0=$(atk_stats ppa0)
	u0=$(udp_in)
	atk_replay "$work/big.pcap"
	[ "$ATK_SENT" = "$(atk_sum "$work/big.sum" frames)" ] || fail "pcap_replay sent $ATK_SENT frames of $(atk_sum "$work/big.sum" frames)"
	note "$drv: $big datagrams of 64 KiB ($ATK_SENT fragments) in $ATK_SECS s"
	atk_quiet ppa0
	s1=$(atk_stats ppa0)
	u1=$(udp_in)
	atk_replay "$work/mc1.pcap"
	n=$ATK_SENT
	atk_replay "$work/mc2.pcap"
	n=$((n + ATK_SENT))
	note "$drv: $n datagrams to the multicast QPN (to 10.77.0.1 and 239.1.2.4)"
	atk_quiet ppa0
	s2=$(atk_stats ppa0)
	u2=$(udp_in)
	touch "$work/go"
	rc=0
	wait "$ppid" || rc=$?
	kill "$JOIN_PID" 2>/dev/null || true
	wait "$JOIN_PID" 2>/dev/null || true
	note "$(sed "2,\$s/^/  # /" "$work/prog.log")"
	[ $rc = 0 ] || fail "rx_bounds.py ($drv): exit $rc"
	d() { echo $(($(atk_get "$2" "$3") - $(atk_get "$1" "$3"))); }
	D_BIG_UDP=$((u1 - u0)) D_MC_UDP=$((u2 - u1))
	D_BIG_DROP=$(d "$s0" "$s1" rcv_dropped) D_BIG_RCVD=$(d "$s0" "$s1" rcvd_pkts)
	D_MC_DROP=$(d "$s1" "$s2" rcv_dropped) D_MC_RCVD=$(d "$s1" "$s2" rcvd_pkts)
	PEAK0=$(atk_get "$s0" rcv_queue_peak_bytes) PEAK2=$(atk_get "$s2" rcv_queue_peak_bytes)
	HAS_PEAK=$(grep -c '^rcv_queue_peak_bytes ' <<<"$s2" || true)
	TARGET_COMPLETIONS=$(sed -n 's/^TARGET_COMPLETIONS=//p' "$work/prog.log")
	note "$drv: 64 KiB datagrams: UDP handed over $D_BIG_UDP, rcv_dropped+$D_BIG_DROP rcvd_pkts+$D_BIG_RCVD," \
		"the UD QP received $TARGET_COMPLETIONS; multicast garbage: UDP handed over $D_MC_UDP," \
		"rcv_dropped+$D_MC_DROP rcvd_pkts+$D_MC_RCVD; rcv_queue_peak_bytes $PEAK0 -> $PEAK2"
	pp_teardown
}

if c_rxe_half oracle; then
	run rxe
	note "C rxe (comparison, not judged): its UD QP received $TARGET_COMPLETIONS of the $D_BIG_UDP 64 KiB" \
		"datagrams; its group member received every real datagram after the garbage"
fi

run rrxe
[ "$HAS_PEAK" = 1 ] || fail "ppa0 has no rcv_queue_peak_bytes counter"
[ "$D_BIG_UDP" -ge $((big * 9 / 10)) ] || fail "only $D_BIG_UDP of $big 64 KiB datagrams reached UDP in ppA"
[ "$D_BIG_DROP" = "$D_BIG_UDP" ] ||
	fail "rcv_dropped moved by $D_BIG_DROP for $D_BIG_UDP datagrams longer than any MTU"
[ "$D_BIG_RCVD" = 0 ] || fail "rcvd_pkts moved by $D_BIG_RCVD: datagrams longer than any MTU were queued"
[ "$TARGET_COMPLETIONS" = 0 ] || fail "the UD QP received $TARGET_COMPLETIONS datagrams longer than any MTU"
[ "$D_MC_UDP" -ge $((2 * garbage * 9 / 10)) ] || fail "only $D_MC_UDP of $((2 * garbage)) garbage datagrams reached UDP in ppA"
[ "$D_MC_DROP" = "$D_MC_UDP" ] || fail "rcv_dropped moved by $D_MC_DROP for $D_MC_UDP multicast datagrams no group matches"
[ "$D_MC_RCVD" = 0 ] || fail "rcvd_pkts moved by $D_MC_RCVD: multicast garbage was queued"
[ "$PEAK2" = "$PEAK0" ] || fail "rcv_queue_peak_bytes grew from $PEAK0 to $PEAK2: a queue took what it must not"
[ "$PEAK2" -le "$bound" ] || fail "rcv_queue_peak_bytes $PEAK2 over the bound $bound"
rmmod rdma_rrxe
