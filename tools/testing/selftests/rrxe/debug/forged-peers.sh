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
#
# Then spoofed peers: packets from the QP's own peer address,
# which check_addr() lets in, must not hurt more than they do on C rxe
# (spoofed_peer.py asks for them, roce-flood --mode sequence builds them,
# atk_serve replays them): NAKs and an RNR NAK that acknowledge nothing
# outstanding, to an idle RC QP and to a busy one at its last
# acknowledged PSN (the QPs stay in RTS, the busy QP's SEND completes
# with success); an RDMA WRITE with an unknown rkey and a SEND longer
# than the posted receive to a UC QP without and with an SRQ (the
# message is dropped, the QP stays in RTS and delivers the peer's next
# SEND; with the SRQ, the receive the SEND took completes in error); an
# RDMA WRITE's first and nine middle packets with a spoiled ICRC, the
# last three of which rrxe checks in the receive task (dropped: nothing
# lands, the peer's WRITE at that PSN then does); on
# rrxe also, from the armed alternate path (a second address pair), a
# stale ACK, stale NAKs and requests out of sequence, which must not
# migrate the QP, then a valid SEND, which must.  C rxe, as the target,
# must print the same lines but for the APM ones (it has no APM) and its
# one deviation: it kills the UC QP on the over-long SEND (copy_data's
# -EINVAL for a message longer than the WQE is taken for a malformed WQE,
# class A; the WRITE with the unknown rkey it drops, as rrxe does).
# spoofed_peer.py checks rrxe's lines itself, so make test's debug run
# leaves the C rxe half out (c_rxe_half oracle); make test-full runs it.
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

# spoof DRIVER: spoofed_peer.py with its target device ppa0 on DRIVER
# (rrxe: with the APM checks), the peer's packets injected on request;
# its output in SPOOF_OUT.  rrxe reuses the rrxe pair of the forged
# packets (nothing of forged_peers.py is left on it: the program ended).
spoof() {
	local drv=$1 dir=$work/spoof-$1 pid rc=0 aA aB args
	mkdir -p "$dir"
	if [ "$drv" != rrxe ] || ! has_ibdev ppa0; then
		pp_setup_pair "$drv" rrxe
		atk_prepare
	fi
	ip -n ppA addr add 10.78.0.1/24 dev vpa
	ip -n ppB addr add 10.78.0.2/24 dev vpb
	gA=$(pp_gid_index ppa0 10.77.0.1) || fail "no GID on ppa0"
	gB=$(pp_gid_index ppb0 10.77.0.2) || fail "no GID on ppb0"
	aA=$(pp_gid_index ppa0 10.78.0.1) || fail "no alternate GID on ppa0"
	aB=$(pp_gid_index ppb0 10.78.0.2) || fail "no alternate GID on ppb0"
	args="--alt $aA $aB"
	[ "$drv" = rrxe ] || args=--c-rxe
	# shellcheck disable=SC2086
	timeout 240 /usr/bin/python3 "$RRXE_PROGS/spoofed_peer.py" ppa0 "$gA" ppb0 "$gB" "$dir" $args \
		>"$dir/log" 2>&1 &
	pid=$!
	atk_serve "$pid" "$dir"
	wait "$pid" || rc=$?
	SPOOF_OUT=$(cat "$dir/log")
	echo "$SPOOF_OUT" | sed "s/^/  # $drv: /"
	[ $rc = 0 ] || fail "spoofed_peer.py on $drv: exit $rc"
	note "$drv: $ATK_INJECTED injections"
	pp_teardown
}

spoof rrxe
out_rrxe=$SPOOF_OUT
if c_rxe_half oracle && modprobe -q rdma_rxe; then
	spoof rxe
	same_lines spoofed_peer "$out_rrxe" "$SPOOF_OUT" '^APM:\|over-long SEND'
	note "C rxe's deviation: $(grep 'after an over-long SEND' <<<"$SPOOF_OUT" | tr '\n' ' ')"
fi
