#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Churn: object lifetimes under concurrency, and the
# device, its netdev, its namespace and the module going away under load.
# What teardown, races and disruption do not cover:
#  1. parallel processes creating and destroying PDs, CQs, MRs and QPs
#     (churn.py objects: random sizes, loopback SENDs, destroy orders,
#     whole-context close, process exit with objects alive) on both
#     devices of a pair, while checked RC traffic runs between them and a
#     third device is added and deleted in a loop (ib_core's device list
#     changing under open contexts);
#  2. namespace deletion with a device and traffic in it: the process
#     outside the namespace (the netns dies at once, with the veth, the
#     devices and rrxe's per-namespace socket), then inside it (the netns
#     dies when the process is killed);
#  3. netdev deletion and `rdma link delete` while traffic runs and
#     rrxe's packets sit in a netem queue (2 s delay), then rmmod at once:
#     the queued skbs outlive the device (and the module, in the second
#     case) and are freed or sent later;
#  4. rmmod while the object churn and the traffic run;
#  5. the end state: `rdma link` empty, no ib device, no UDP 4791 socket,
#     module refcount 0 after a reload, rmmod succeeds.
# Cycles per churn process: 100 (quick), 1000 (full); CHURN_CYCLES
# overrides.  Processes: 4 (2 per device).  The debug kernel's quick run
# (make test) runs 6 cycles per process and leaves out 2b (the path of
# 2a with a process exit) and 3a (netdev deletion under traffic, which
# disruption.sh covers, also on debug), for about 85 s.  Release quick:
# about 65 s; release full: about 195 s; debug full: 437 s (measured
# once).
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module sch_netem
. "$RRXE_LIB/pingpong.sh"

CHURN="/usr/bin/python3 $RRXE_PROGS/churn.py"
cycles=100
[ "$RRXE_TEST_LEVEL" = full ] && cycles=1000
debug_quick && cycles=6
cycles=${CHURN_CYCLES:-$cycles}
W=/tmp/churn
rm -rf $W
mkdir -p $W

gids() {
	ga=$(pp_gid_index ppa0 10.77.0.1) && gb=$(pp_gid_index ppb0 10.77.0.2) || fail "no GIDs"
}

# Traffic ppa0 -> ppb0 in the background (pid in $tpid, log $W/traffic.log),
# from namespace $1 (-: this one); until the stop file or the device goes
# (once its device is gone, a completion that does not come within $2
# seconds ends it).  Waits until the QPs are connected and a few messages
# went through.
start_traffic() {
	local ns=${1:--} pt=${2:-5}
	local args=(traffic ppa0 "$ga" ppb0 "$gb" --stop-file $W/stop --until-gone --poll-timeout "$pt")
	rm -f $W/stop
	: >$W/traffic.log
	if [ "$ns" != - ]; then
		# shellcheck disable=SC2086
		ip netns exec "$ns" $CHURN "${args[@]}" >$W/traffic.log 2>&1 &
	else
		# shellcheck disable=SC2086
		$CHURN "${args[@]}" >$W/traffic.log 2>&1 &
	fi
	tpid=$!
	# Packets counted on ppb0: the traffic flows.
	local r0
	r0=$(hw_counter ppb0 rcvd_pkts)
	flowing() { [ "$(hw_counter ppb0 rcvd_pkts)" -gt $((r0 + 100)) ]; }
	wait_for 60 flowing ||
		fail "traffic did not start: $(cat $W/traffic.log)"
}

# Waits up to $1 s for the traffic process to end by itself, else kills
# it; notes which.
end_traffic() {
	local secs=$1 what=$2
	if wait_for "$secs" pid_gone "$tpid"; then
		wait "$tpid" || fail "$what: traffic process failed: $(cat $W/traffic.log)"
		note "$what: traffic ended by itself: $(tail -1 $W/traffic.log)"
	else
		kill -9 "$tpid" 2>/dev/null || true
		wait "$tpid" 2>/dev/null || true
		note "$what: traffic process still waiting after ${secs}s, killed"
	fi
}

gone() { ! has_ibdev ppa0 && ! has_ibdev ppb0; }

modprobe sch_netem

# --- 1. Parallel object churn with traffic and device add/delete ---------
pp_setup_pair rrxe rrxe
gids
t0=$SECONDS
start_traffic - 20
pids=()
for i in 1 2; do
	ip netns exec ppA $CHURN objects ppa0 "$ga" "$cycles" --seed "$i" >"$W/objects-a$i.log" 2>&1 &
	pids+=($!)
	ip netns exec ppB $CHURN objects ppb0 "$gb" "$cycles" --seed "$((i + 10))" >"$W/objects-b$i.log" 2>&1 &
	pids+=($!)
done
# A third device added and deleted while the others are in use; every
# fourth time with its own object churn running when it is deleted.
mkveth veth0 veth1
ip addr add 10.77.9.1/24 dev veth0
links=0 victims=0
while kill -0 "${pids[@]}" 2>/dev/null; do
	rdma link add churn0 type rrxe netdev veth0 || fail "rdma link add churn0 (cycle $links)"
	ibv_devinfo -d churn0 >/dev/null || fail "churn0 unusable"
	if [ $((links % 4)) = 0 ]; then
		gc=$(pp_gid_index churn0 10.77.9.1) || fail "churn0: no GID"
		$CHURN objects churn0 "$gc" 100000 --seed "$links" --until-gone --poll-timeout 5 >$W/victim.log 2>&1 &
		vpid=$!
		wait_for 60 grep -q ready $W/victim.log || fail "churn on churn0 did not start: $(cat $W/victim.log)"
	fi
	timeout 60 rdma link delete churn0 || fail "rdma link delete churn0 (cycle $links)"
	if [ $((links % 4)) = 0 ]; then
		# Its next verb fails (EIO) or its next poll times out (5 s).
		wait_for 40 pid_gone $vpid ||
			fail "churn on churn0 still running 40 s after the link delete: $(cat /proc/$vpid/stack 2>/dev/null)"
		wait $vpid || fail "churn on churn0 failed: $(tail -5 $W/victim.log)"
		victims=$((victims + 1))
	fi
	links=$((links + 1))
done
for p in "${pids[@]}"; do
	wait "$p" || fail "churn process failed: $(tail -5 $W/objects-*.log)"
done
touch $W/stop
wait "$tpid" || fail "traffic failed during the churn: $(cat $W/traffic.log)"
cat $W/objects-*.log
note "4 processes x $cycles object cycles, $links link add/delete cycles of churn0" \
	"($victims with churn on it: $(tail -1 $W/victim.log | sed 's/.*: stopped: //'))," \
	"$(tail -1 $W/traffic.log | sed 's/^churn traffic //') in $((SECONDS - t0)) s"
ip link del veth0
# The QPs of the churn are all gone: only traffic QPs were ever left, and
# they are closed.  (The kernel's own, QP1 of the MAD layer, owned by
# "[ib_core]", stay with the devices.)
n=$(rdma resource show qp 2>/dev/null | grep "ppa0\|ppb0" | grep -vc "comm \[" || true)
[ "$n" = 0 ] || fail "$n QPs left on ppa0/ppb0: $(rdma resource show qp)"

# --- 2a. Namespace deletion, the process outside it ---------------------
start_traffic
ip netns del ppB
# The last reference to ppB goes: its veth end is destroyed, with its
# peer, and so both devices.
wait_for 30 gone || fail "devices not removed with namespace ppB: $(rdma link show)"
note "netns ppB deleted under traffic: both devices removed"
end_traffic 60 "netns deletion (process outside)"
pp_teardown

# --- 2b. Namespace deletion, the process inside it; object churn too ----
if ! debug_quick; then
pp_setup_pair rrxe rrxe
gids
start_traffic ppB
ip netns exec ppB $CHURN objects ppb0 "$gb" 100000 --seed 7 --until-gone --poll-timeout 5 >$W/objects-ns.log 2>&1 &
cpid=$!
wait_for 60 grep -q ready $W/objects-ns.log || fail "churn in ppB did not start: $(cat $W/objects-ns.log)"
ip netns del ppB
# The namespace lives on while its processes do.
has_ibdev ppb0 || fail "ppb0 went while processes still hold namespace ppB"
kill -9 "$tpid" "$cpid" 2>/dev/null || true
wait "$tpid" "$cpid" 2>/dev/null || true
wait_for 30 gone || fail "devices not removed after the last process of ppB ended: $(rdma link show)"
note "netns ppB deleted, its processes killed: both devices removed"
pp_teardown
fi

# --- 3a. Netdev deletion with rrxe's packets queued in netem -------------
if ! debug_quick; then
pp_setup_pair rrxe rrxe
gids
start_traffic
ip netns exec ppA tc qdisc add dev vpa root netem delay 2s
ip netns exec ppB tc qdisc add dev vpb root netem delay 2s
sleep 1
q=$(ip netns exec ppA tc -s qdisc show dev vpa | sed -n 's/.*backlog \([0-9]*b\) \([0-9]*p\).*/\1 \2/p')
ip -n ppA link del vpa
wait_for 30 gone || fail "devices not removed with their netdevs"
note "veth deleted with $q queued in netem: devices removed"
end_traffic 60 "netdev deletion"
wait_for 30 rmmod rdma_rrxe || fail "rmmod after netdev deletion: $(lsmod | grep rrxe)"
pp_teardown
fi

# --- 3b. rdma link delete with packets queued, then rmmod at once --------
pp_setup_pair rrxe rrxe
gids
start_traffic
ip netns exec ppA tc qdisc add dev vpa root netem delay 2s
sleep 1
q=$(ip netns exec ppA tc -s qdisc show dev vpa | sed -n 's/.*backlog \([0-9]*b\) \([0-9]*p\).*/\1 \2/p')
timeout 60 ip netns exec ppA rdma link delete ppa0 || fail "rdma link delete ppa0 under traffic"
timeout 60 ip netns exec ppB rdma link delete ppb0 || fail "rdma link delete ppb0 under traffic"
kill -9 "$tpid" 2>/dev/null || true
wait "$tpid" 2>/dev/null || true
timeout 60 rmmod rdma_rrxe || fail "rmmod with rrxe's packets queued in netem: $(lsmod | grep rrxe)"
note "links deleted and module unloaded with $q queued in netem (2 s)"
# netem sends them (to a namespace without the device or its socket)
# after the module is gone.
sleep 3
ip netns exec ppA tc -s qdisc show dev vpa | sed -n 's/^ *Sent/  # vpa netem after unload: Sent/p'
pp_teardown

# --- 4. rmmod while object churn and traffic run --------------------------
pp_setup_pair rrxe rrxe
gids
start_traffic
pids=()
for i in 1 2; do
	ip netns exec ppA $CHURN objects ppa0 "$ga" 100000 --seed "$((20 + i))" --until-gone --poll-timeout 5 >"$W/rm-a$i.log" 2>&1 &
	pids+=($!)
	ip netns exec ppB $CHURN objects ppb0 "$gb" 100000 --seed "$((30 + i))" --until-gone --poll-timeout 5 >"$W/rm-b$i.log" 2>&1 &
	pids+=($!)
done
for f in $W/rm-a1.log $W/rm-a2.log $W/rm-b1.log $W/rm-b2.log; do
	wait_for 60 grep -q ready "$f" || fail "churn did not start: $(cat "$f")"
done
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "a churn process ended early: $(tail -3 $W/rm-*.log)"; done
t1=$SECONDS
timeout 60 rmmod rdma_rrxe || fail "rmmod under churn and traffic: $(lsmod | grep rrxe)"
gone || fail "devices left after rmmod"
note "rmmod under churn and traffic returned in $((SECONDS - t1)) s"
ended=0
for p in "${pids[@]}" "$tpid"; do
	if wait_for 30 pid_gone $p; then ended=$((ended + 1)); else kill -9 "$p" 2>/dev/null || true; fi
	wait "$p" 2>/dev/null || true
done
note "$ended of 5 processes ended by themselves after rmmod, the rest killed"
pp_teardown

# --- 5. Nothing left --------------------------------------------------------
[ -z "$(rdma link show)" ] || fail "rdma link shows: $(rdma link show)"
[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ] || fail "ib devices left: $(ls /sys/class/infiniband)"
ss -Hulnp 'sport = :4791' | grep -q . && fail "UDP 4791 still bound: $(ss -Hulnp 'sport = :4791')"
pgrep -f churn.py && fail "churn processes left"
if lsmod | grep -q '^rdma_rrxe'; then
	wait_for 30 rmmod rdma_rrxe || fail "rmmod at the end: $(lsmod | grep rrxe)"
fi
modprobe rdma_rrxe
ref=$(cat /sys/module/rdma_rrxe/refcnt)
[ "$ref" = 0 ] || fail "rdma_rrxe refcount $ref after a reload with nothing open"
rmmod rdma_rrxe || fail "final rmmod"
note "end state clean: no links, no ib devices, no UDP 4791 socket, refcount 0, module unloaded"
