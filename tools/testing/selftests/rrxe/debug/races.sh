#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Concurrent lifecycle operations: parallel `rdma link add` on one netdev
# (exactly one wins), link delete racing netdev removal, and rmmod racing
# netdev removal.  Pass = the right end state and a clean kernel log.
. "$(dirname "$0")/../lib/ksft.sh"
mkveth veth0 veth1
modprobe rdma_rrxe
for i in 1 2 3 4 5 6 7 8; do
	rdma link add "rrxe$i" type rrxe netdev veth0 2>/dev/null &
done
wait
n=$(rdma link show | grep -c "netdev veth0 *$")
[ "$n" = 1 ] || fail "$n devices on veth0: $(rdma link show)"
for l in $(rdma link show | awk '{print $2}' | cut -d/ -f1); do rdma link delete "$l"; done

n=10
debug_quick && n=4
for i in $(seq 1 $n); do
	mkveth "a$i" "b$i"
	rdma link add "r$i" type rrxe netdev "a$i"
	ip link del "a$i" 2>/dev/null &
	rdma link delete "r$i" 2>/dev/null &
	wait
	wait_for 10 paths_gone /sys/class/infiniband/r$i || fail "r$i survived"
done

for i in 1 2 3 4 5; do
	mkveth "c$i" "d$i"
	rdma link add "s$i" type rrxe netdev "c$i"
done
ip link del c1 &
ip link del c2 &
rmmod rdma_rrxe &
wait
# rmmod may have lost the race to a netdev removal's queued unregister and
# then succeeds on retry; either way nothing may be left.
wait_for 10 sh -c '! lsmod | grep -q rdma_rrxe || rmmod rdma_rrxe 2>/dev/null' || fail "module stuck"
ls /sys/class/infiniband 2>/dev/null | grep -q '^s[0-9]' && fail "left: $(ls /sys/class/infiniband)"
true
