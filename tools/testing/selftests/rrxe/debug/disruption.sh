#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Disruptions while ibv_rc_pingpong runs between two rrxe devices.  rrxe
# supports disassociating user contexts, so neither rmmod nor `rdma link
# delete` waits for the processes: the devices go at once, the processes'
# next verb fails (EIO) and their ring mappings are zapped.  Checked: the
# removal returns promptly, a run ends (or can be killed) instead of
# hanging, the module unloads and reloads, nothing in dmesg.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_rc_pingpong
. "$RRXE_LIB/pingpong.sh"

start_pp() { # ITERS: server in ppA, client in ppB, in the background
	local g1 g2 port=$((PP_PORT++))
	g1=$(pp_gid_index ppa0 10.77.0.1) && g2=$(pp_gid_index ppb0 10.77.0.2) || fail "no GIDs"
	ip netns exec ppA ibv_rc_pingpong -d ppa0 -g "$g1" -p "$port" -s 4096 -n "$1" >/tmp/d-srv.log 2>&1 &
	srv=$!
	R0=$(hw_counter ppb0 rcvd_pkts)
	wait_for 10 pp_listening ppA "$port" || fail "server not listening"
	ip netns exec ppB ibv_rc_pingpong -d ppb0 -g "$g2" -p "$port" -s 4096 -n "$1" 10.77.0.1 >/tmp/d-cli.log 2>&1 &
	cli=$!
}

# mid_run: waits until the run started by start_pp is under way (400
# packets received on ppb0 since start_pp: connected, data
# flowing), instead of a fixed sleep.
mid_run() {
	flowing() { [ "$(hw_counter ppb0 rcvd_pkts)" -gt $((R0 + 400)) ]; }
	wait_for 60 flowing || fail "no traffic 60 s after the run started: $(tail -2 /tmp/d-cli.log)"
}

# settle: gives the processes up to 2 s to end by themselves (their next
# verb fails once the device is gone), then kills what is left.
settle() {
	wait_for 2 pid_gone "$cli" "$srv" || true
	kill -9 "$cli" "$srv" 2>/dev/null || true
	wait "$cli" "$srv" 2>/dev/null || true
}

# 0. Undisturbed, as a control.
pp_setup_pair rrxe rrxe
start_pp 500
wait "$cli" || fail "client failed: $(cat /tmp/d-cli.log)"
wait "$srv" || fail "server failed: $(cat /tmp/d-srv.log)"
note "control run: $(tail -1 /tmp/d-cli.log)"

# 1. rmmod mid-run: the devices go, the processes stop or are killed.
start_pp 1000000
mid_run
timeout 60 rmmod rdma_rrxe || fail "rmmod blocked or failed during a run"
has_ibdev ppa0 && fail "ppa0 still there after rmmod"
settle
note "after rmmod: client: $(tail -1 /tmp/d-cli.log)"
pp_teardown
pp_setup_pair rrxe rrxe

# 2. rdma link delete mid-run.
start_pp 1000000
mid_run
timeout 60 ip netns exec ppB rdma link delete ppb0 || fail "link delete blocked or failed"
has_ibdev ppb0 && fail "ppb0 still there"
settle
note "after link delete: client: $(tail -1 /tmp/d-cli.log)"

# 3. The netdevs go away mid-run (the veth pair is destroyed): on ppa0,
# which lived through 2, and ppb0 added again on vpb (a new pair costs
# seconds of ib_core's sysfs on the debug kernel).
pp_rdma_add ppB ppb0 rrxe vpb 10.77.0.2
start_pp 1000000
mid_run
ip -n ppB link del vpb
wait_for 30 paths_gone /sys/class/infiniband/ppb0 /sys/class/infiniband/ppa0 ||
	fail "devices not removed with their netdevs"
settle
pp_teardown
wait_for 30 rmmod rdma_rrxe || fail "rmmod after the disruptions failed: $(lsmod | grep rrxe)"
note "module unloaded"
