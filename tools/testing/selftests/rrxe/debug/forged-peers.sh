#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attack 2, forged peers: packets that carry everything a live
# QP accepts (its number, the PSN it expects, for WRITE a valid rkey and
# VA, P_Key, a valid ICRC) but come from another IP address than the QP's
# peer, RC and UC, SEND and WRITE (only, with immediate, first+last, and
# next to the expected PSN), from strangers on the peer's subnet and from
# other networks.  forged_peers.py sets up the target QPs on ppa0 and
# their peers on ppb0; roce-flood --mode forge writes the packets;
# pcap_replay sends them from ppB's end of the veth.  rrxe must behave like
# C rxe's check_addr(): drop each one before it touches the QP.
#
# Pass: nothing lands in the target's memory and nothing completes
# (forged_peers.py); the real peer's SEND and WRITE then land byte-exact
# from the PSNs it started with (the forged packets moved no PSN and
# consumed no receive); rcv_foreign and rcv_dropped on ppa0 moved by
# exactly the number of forged packets, rcvd_pkts and sent_pkts not at all
# (nothing accepted, nothing answered), and ppb0 received nothing.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/attack.sh"

repeat=5
[ "$RRXE_TEST_LEVEL" = full ] && repeat=50
work=/tmp/forge
rm -rf "$work"
mkdir -p "$work"

atk_start rrxe forged_peers.py "$work/peers.log" "$work/info" "$work/info" "$work/go"
ppid=$ATK_PID
. "$work/info"
note "targets on ppa0: RC QP $RC_QPN (PSN $RC_PSN), UC QP $UC_QPN (PSN $UC_PSN), rkey $RKEY, VA $VA"

atk_quiet ppa0
a0=$(atk_stats ppa0)
b0=$(atk_stats ppb0)
# Strangers on the peer's subnet, next to the peer's address, other
# private, documentation and public networks.
srcs=10.77.0.3,10.77.0.254,10.77.1.2,10.78.0.2,192.168.1.2,172.16.0.2,192.0.2.7,198.51.100.9,8.8.8.8
atk_flood --mode forge --out "$work/forge.pcap" --summary "$work/sum" --seed 21 --repeat "$repeat" \
	--src-mac "$(atk_mac ppB vpb)" --dst-mac "$(atk_mac ppA vpa)" --local 10.77.0.1 --peer 10.77.0.2 \
	--target "rc:$RC_QPN:$RC_PSN,uc:$UC_QPN:$UC_PSN" --forged-src "$srcs" \
	--rkey "$RKEY" --va "$VA" --len 256 --pmtu 1024 2>"$work/gen.log" ||
	fail "roce-flood --mode forge failed: $(cat "$work/gen.log")"
n=$(atk_sum "$work/sum" total)
[ "$(atk_sum "$work/sum" foreign)" = "$n" ] || fail "roce-flood: not every forged packet is foreign: $(cat "$work/sum")"
atk_replay "$work/forge.pcap"
[ "$ATK_SENT" = "$n" ] || fail "pcap_replay sent $ATK_SENT of $n packets"
note "$n forged packets (RC and UC, SEND and WRITE, 9 sources) in $ATK_SECS s, $ATK_PPS packets/s"
atk_quiet ppa0
a1=$(atk_stats ppa0)
b1=$(atk_stats ppb0)
touch "$work/go"
rc=0
wait "$ppid" || rc=$?
note "$(sed "2,\$s/^/  # /" "$work/peers.log")"
[ $rc = 0 ] || fail "forged_peers.py: exit $rc"

da() { echo $(($(atk_get "$a1" "$1") - $(atk_get "$a0" "$1"))); }
db() { echo $(($(atk_get "$b1" "$1") - $(atk_get "$b0" "$1"))); }
note "ppa0: rcv_foreign+$(da rcv_foreign) rcv_dropped+$(da rcv_dropped) rcvd_pkts+$(da rcvd_pkts) sent_pkts+$(da sent_pkts); ppb0: rcvd_pkts+$(db rcvd_pkts)"
[ "$(da rcv_foreign)" = "$n" ] || fail "rcv_foreign moved by $(da rcv_foreign), expected exactly $n"
[ "$(da rcv_dropped)" = "$n" ] || fail "rcv_dropped moved by $(da rcv_dropped), expected exactly $n"
[ "$(da rcvd_pkts)" = 0 ] || fail "ppa0 accepted $(da rcvd_pkts) forged packets (rcvd_pkts)"
[ "$(da sent_pkts)" = 0 ] || fail "ppa0 answered forged packets: sent_pkts moved by $(da sent_pkts)"
[ "$(db rcvd_pkts)" = 0 ] || fail "the real peer ppb0 received $(db rcvd_pkts) packets caused by forged ones"
pp_teardown
