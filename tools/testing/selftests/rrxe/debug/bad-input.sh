#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad `rdma link add` requests each get a clear errno and leave the module
# working: unknown netdev, a second link on the same netdev (ours or C
# rxe's), a name clash, and C rxe and rrxe in one namespace (both need UDP
# port 4791 there).  (Non-Ethernet netdevs are accepted, as by C rxe: see
# netdev-kinds.)
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_module rdma_rxe
mkveth veth0 veth1
mkveth veth2 veth3
modprobe rdma_rrxe
expect_fail "No such device" rdma link add rrxe0 type rrxe netdev nosuchdev0
rdma link add rrxe0 type rrxe netdev veth0
expect_fail "File exists" rdma link add rrxe1 type rrxe netdev veth0
expect_fail "File exists" rdma link add rrxe0 type rrxe netdev veth1
modprobe rdma_rxe
expect_fail "File exists" rdma link add rxe0 type rxe netdev veth0
# C rxe reports the clash as EPERM.
expect_fail "Operation not permitted|Address already in use" rdma link add rxe1 type rxe netdev veth1
c_rxe_in_ns veth2 rxe2
ip link set veth3 netns nsrxe
expect_fail "File exists" ip netns exec nsrxe rdma link add rrxe2 type rrxe netdev veth2
expect_fail "Address already in use" ip netns exec nsrxe rdma link add rrxe3 type rrxe netdev veth3
dmesg | grep -q "rrxe: cannot bind UDP port 4791" || fail "no message for the port clash"
rdma link delete rxe2
# The namespace's port is free again once C rxe's last device is gone.
ip netns exec nsrxe rdma link add rrxe3 type rrxe netdev veth3
rdma link delete rrxe3
ip netns del nsrxe
# After all the refusals the module still creates devices.
rdma link add rrxe1 type rrxe netdev veth1
has_ibdev rrxe1 || fail "rrxe1 missing"
rdma link delete rrxe0
rdma link delete rrxe1
rmmod rdma_rrxe
rmmod rdma_rxe
