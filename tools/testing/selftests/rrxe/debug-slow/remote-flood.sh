#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attack 1, remote packets: from another network namespace,
# crafted RoCEv2 packets hit an rrxe device whose QPs carry live traffic.
# roce-flood (tools/testing/roce-flood) writes them: mutations of the real
# C rxe captures and synthesized packets, every opcode (the 256 values,
# invalid ones included), valid and corrupted ICRCs, every BTH field at
# its edges (TVer, pad, P_Key, M, SE, AckReq, reserved bits, QPN 0, 1,
# 2^24-1, random and the live QPs', PSNs inside and outside the window),
# the IPv4/UDP carrier's fields (IP and UDP lengths over and under,
# truncated frames, trailing bytes, IP options, fragments, checksums,
# ports, EtherType), oversized payloads, forged and martian source
# addresses, and one packet in ten over IPv6 (to vpa's link-local
# address: rrxe listens on IPv6 too; the live QPs are IPv4).  pcap_replay
# sends them from ppB's end of the veth at top speed while
# flood_traffic.py runs RC SENDs and WRITEs with ppa0 as requester and as
# responder.
#
# Pass: no kernel splat (the test and its runner check the log); the live
# traffic completes byte-exact or fails cleanly (an error completion);
# ppa0 still passes ibv_rc_pingpong afterwards; and ppa0's counters
# account for the packets as roce-flood predicts them (model.rs): exactly
# one rcv_foreign per packet from a forged address to a live QP, at least
# one rcv_dropped per packet the receive checks or the completer must
# drop (at least the ones made invalid on purpose), one duplicate_request,
# out_of_seq_request or rcv_dropped (full queue) per valid request far
# behind or ahead of the window, and no more in all than the packets sent
# plus the live traffic; exactly that many when the live traffic needed no
# retransmission.  The packet rate goes to the log (note).
#
# Sizes: make test 100,000 packets; make test-full 1,000,000 (10 rounds of
# 100,000 with different seeds: the pcap of a round lives in the VM's
# tmpfs).  The debug kernel (KASAN, lockdep: every packet costs 10-50x)
# sends 20,000 in make test, to stay within about 90 s; the release run
# and make test-full keep the volume.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_rc_pingpong
ksft_require_py pyverbs
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/attack.sh"

per_round=100000
rounds=1
[ "$RRXE_TEST_LEVEL" = full ] && rounds=10
debug_quick && per_round=10000
seed=${RRXE_FLOOD_SEED:-2011}
work=/tmp/flood
rm -rf "$work"
mkdir -p "$work"

atk_start rrxe flood_traffic.py "$work/traffic.log" "$work/live" "$work/live" "$work/stop" 4
tpid=$ATK_PID
live=$(cat "$work/live")
macA=$(atk_mac ppA vpa)
macB=$(atk_mac ppB vpb)
# vpa's link-local IPv6 address (rrxe listens on IPv6 too), once DAD is done.
ll6() { ip -n ppA -6 -o addr show dev vpa scope link | grep -v tentative | awk '{ sub("/.*", "", $4); print $4 }'; }
wait_for 20 test -n "$(ll6)" || fail "vpa has no usable link-local IPv6 address: $(ip -n ppA -6 addr show dev vpa)"
local6=$(ll6)
note "live QPs on ppa0 (type:qpn:psn): $live; vpa $macA $local6, vpb $macB; seed $seed"
sleep 1
kill -0 "$tpid" 2>/dev/null || fail "live traffic ended early: $(cat "$work/traffic.log")"

# Packets the stack dropped for a full backlog (second column, hex).
softnet_drops() {
	local s=0 _a b _r
	while read -r _a b _r; do s=$((s + 0x$b)); done </proc/net/softnet_stat
	echo "$s"
}
a0=$(atk_stats ppa0)
b0=$(atk_stats ppb0)
sd0=$(softnet_drops)
sent=0
secs=0
for ((k = 0; k < rounds; k++)); do
	atk_flood --mode flood --out "$work/flood.pcap" --summary "$work/sum.$k" --seed $((seed + k)) \
		--count "$per_round" --src-mac "$macB" --dst-mac "$macA" --local 10.77.0.1 --peer 10.77.0.2 \
		--live "$live" --local6 "$local6" --pmtu 1024 --captures "$RRXE_TOP/drivers/infiniband/sw/rrxe/proto/tests/captures" \
		2>>"$work/gen.log" || fail "roce-flood failed: $(cat "$work/gen.log")"
	atk_replay "$work/flood.pcap"
	[ "$ATK_SENT" = "$per_round" ] || fail "pcap_replay sent $ATK_SENT of $per_round packets"
	sent=$((sent + ATK_SENT))
	secs=$(awk -v a="$secs" -v b="$ATK_SECS" 'BEGIN { print a + b }')
	note "round $((k + 1))/$rounds: $ATK_SENT packets in $ATK_SECS s, $ATK_PPS packets/s (pcap_replay)"
done
rm -f "$work/flood.pcap"
touch "$work/stop"
trc=0
wait "$tpid" || trc=$?
note "$(sed "2,\$s/^/  # /" "$work/traffic.log")"
case $trc in
0) ;;
3) note "live traffic FAILED CLEANLY under the flood (allowed; see above)" ;;
*) fail "live traffic: exit $trc (corruption or hang): $(cat "$work/traffic.log")" ;;
esac
pps=$(awk -v n="$sent" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0) ? n / s : 0 }')
note "flood: $sent packets in $secs s: $pps packets/s at the rrxe device (pcap_replay)"

atk_quiet ppa0
a1=$(atk_stats ppa0)
b1=$(atk_stats ppb0)
sd=$(($(softnet_drops) - sd0))
da() { echo $(($(atk_get "$a1" "$1") - $(atk_get "$a0" "$1"))); }
db() { echo $(($(atk_get "$b1" "$1") - $(atk_get "$b0" "$1"))); }
S() { cat "$work"/sum.* | awk -F= -v k="$1" '$1 == k { s += $2 } END { print s + 0 }'; }
note "prediction: $(cat "$work"/sum.* | awk -F= '$1 !~ /\./ { s[$1] += $2 } END { for (k in s) printf "%s=%s ", k, s[k] }')"
note "ppa0 counters moved: $(for c in rcvd_pkts rcv_dropped rcv_foreign duplicate_request out_of_seq_request sent_pkts retransmits completion_errors; do printf '%s+%s ' "$c" "$(da "$c")"; done)"
note "ppb0: sent_pkts+$(db sent_pkts) retransmits+$(db retransmits) rcvd_seq_err+$(db rcvd_seq_err); softnet drops +$sd"

total=$(S total) foreign=$(S foreign) uncertain=$(S uncertain)
edrop=$(($(S check_drop) + $(S resp_drop)))
esum=$((edrop + $(S duplicate) + $(S out_of_seq)))
[ "$total" = "$sent" ] || fail "summaries count $total packets, pcap_replay sent $sent"
[ "$(S other)" = 0 ] || fail "roce-flood made $(S other) packets of unpredictable effect"
dforeign=$(da rcv_foreign)
ddrop=$(da rcv_dropped)
dsum=$((ddrop + $(da duplicate_request) + $(da out_of_seq_request)))
live_pkts=$(db sent_pkts)
retrans=$(($(da retransmits) + $(db retransmits)))
if [ $trc = 0 ]; then
	[ "$dforeign" = "$foreign" ] ||
		fail "rcv_foreign moved by $dforeign, expected exactly $foreign (packets from forged addresses to live QPs;" \
			"$(S uncertain_foreign) more would count if the stack let through what model.rs expects it to drop:" \
			"$(cat "$work"/sum.* | grep '^reason.foreign_if' | tr '\n' ' '))"
else
	[ "$dforeign" -le "$foreign" ] || fail "rcv_foreign moved by $dforeign, more than the $foreign forged packets"
fi
[ "$ddrop" -ge $((edrop - sd)) ] ||
	fail "rcv_dropped moved by $ddrop, fewer than the $edrop packets the checks must drop ($(S known_invalid) made invalid on purpose)"
[ "$dsum" -ge $((esum - sd)) ] ||
	fail "rcv_dropped+duplicate_request+out_of_seq_request moved by $dsum, expected at least $esum"
[ "$ddrop" -le $((edrop + uncertain + live_pkts)) ] ||
	fail "rcv_dropped moved by $ddrop, more than $edrop predicted + $uncertain uncertain + $live_pkts live packets"
[ "$(da duplicate_request)" -le $(($(S duplicate) + live_pkts)) ] ||
	fail "duplicate_request moved by $(da duplicate_request), more than $(S duplicate) predicted + $live_pkts live packets"
[ "$(da out_of_seq_request)" -le $(($(S out_of_seq) + live_pkts)) ] ||
	fail "out_of_seq_request moved by $(da out_of_seq_request), more than $(S out_of_seq) predicted + $live_pkts live packets"
[ "$dsum" -le $((esum + uncertain + live_pkts)) ] ||
	fail "rcv_dropped+duplicate_request+out_of_seq_request moved by $dsum, more than $esum predicted + $uncertain uncertain + $live_pkts live packets"
# No packet lost to a full queue (those count rcv_dropped too): then every
# valid request far ahead counted out_of_seq_request and every one far
# behind duplicate_request (plus the live retransmissions' duplicates).
if [ "$ddrop" = "$edrop" ]; then
	[ "$(da out_of_seq_request)" = "$(S out_of_seq)" ] ||
		fail "out_of_seq_request moved by $(da out_of_seq_request), expected exactly $(S out_of_seq)"
	[ "$(da duplicate_request)" -ge "$(S duplicate)" ] ||
		fail "duplicate_request moved by $(da duplicate_request), expected at least $(S duplicate)"
	note "counters: rcv_dropped exactly $edrop, out_of_seq_request exactly $(S out_of_seq)," \
		"duplicate_request $(S duplicate) + $(($(da duplicate_request) - $(S duplicate))) from $retrans live retransmissions"
fi
if [ "$retrans" = 0 ] && [ $trc = 0 ]; then
	[ "$dsum" -le $((esum + uncertain)) ] ||
		fail "no retransmission, yet rcv_dropped+duplicate_request+out_of_seq_request moved by $dsum > $esum predicted + $uncertain uncertain"
	note "counters: rcv_foreign exactly $foreign; drops+duplicates+out-of-sequence $dsum for $esum predicted (+$((dsum - esum)) of $uncertain uncertain)"
else
	note "counters: rcv_foreign $dforeign of $foreign; rcv_dropped $ddrop for $edrop predicted;" \
		"duplicate_request $(da duplicate_request) for $(S duplicate); out_of_seq_request $(da out_of_seq_request) for $(S out_of_seq)" \
		"(+ up to $uncertain uncertain and $live_pkts live packets: $retrans retransmissions)"
fi

run_pingpong ibv_rc_pingpong ppa0 ppA ppb0 ppB 10.77.0.1 -s 4096 -n 200 ||
	fail "ibv_rc_pingpong after the flood failed"
pp_teardown
