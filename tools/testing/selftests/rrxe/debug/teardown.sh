#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown paths: netdev removal removes the device; rmmod with devices
# present removes them all; unloading C rxe (which unregisters every device
# of the shared RXE driver id, ours included) leaves rrxe consistent.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_module rdma_rxe
mkveth veth0 veth1
mkveth veth2 veth3
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
ip link del veth0
wait_for 10 paths_gone /sys/class/infiniband/rrxe0 || fail "rrxe0 survived its netdev"
rdma link add rrxe1 type rrxe netdev veth2
rdma link add rrxe2 type rrxe netdev veth3
rmmod rdma_rrxe || fail "rmmod with devices"
has_ibdev rrxe1 && fail "rrxe1 left after rmmod"
has_ibdev rrxe2 && fail "rrxe2 left after rmmod"
modprobe rdma_rrxe
modprobe rdma_rxe
rdma link add rrxe1 type rrxe netdev veth2
rmmod rdma_rxe || fail "rmmod rdma_rxe"
# The device is gone or still fully usable; either way rrxe unloads cleanly.
if has_ibdev rrxe1; then ibv_devinfo -d rrxe1 >/dev/null || fail "rrxe1 broken"; fi
rmmod rdma_rrxe || fail "rmmod after C rxe unload"
# The autoload alias: `rdma link add ... type rrxe` loads the module.
rdma link add rrxe3 type rrxe netdev veth2 || fail "autoload"
lsmod | grep -q rdma_rrxe || fail "not autoloaded"
rdma link delete rrxe3
rmmod rdma_rrxe
ls /sys/class/infiniband | grep -q rrxe && fail "leftover: $(ls /sys/class/infiniband)"
true
