#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The port follows the netdev: admin down -> DOWN/DISABLED, peer down (no
# carrier) -> DOWN/POLLING, up again -> ACTIVE/LINK_UP; MTU changes move
# active_mtu.
. "$(dirname "$0")/../lib/ksft.sh"
mkveth veth0 veth1
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
[ "$(devinfo rrxe0 state)" = "PORT_ACTIVE (4)" ] || fail "not active: $(devinfo rrxe0 state)"
ip link set veth0 down
[ "$(devinfo rrxe0 state)" = "PORT_DOWN (1)" ] || fail "admin down: $(devinfo rrxe0 state)"
[ "$(devinfo rrxe0 phys_state)" = "DISABLED (3)" ] || fail "phys admin down: $(devinfo rrxe0 phys_state)"
rdma link show rrxe0/1 | grep -q "state DOWN" || fail "rdma link show: $(rdma link show rrxe0/1)"
ip link set veth0 up
ip link set veth1 down
[ "$(devinfo rrxe0 state)" = "PORT_DOWN (1)" ] || fail "no carrier: $(devinfo rrxe0 state)"
[ "$(devinfo rrxe0 phys_state)" = "POLLING (2)" ] || fail "phys no carrier: $(devinfo rrxe0 phys_state)"
ip link set veth1 up
wait_for 5 sh -c '[ "$(ibv_devinfo -d rrxe0 | grep -c PORT_ACTIVE)" = 1 ]' || fail "not active again"
[ "$(devinfo rrxe0 phys_state)" = "LINK_UP (5)" ] || fail "phys up: $(devinfo rrxe0 phys_state)"
[ "$(devinfo rrxe0 active_mtu)" = "1024 (3)" ] || fail "mtu 1500: $(devinfo rrxe0 active_mtu)"
ip link set veth0 mtu 9000
[ "$(devinfo rrxe0 active_mtu)" = "4096 (5)" ] || fail "mtu 9000: $(devinfo rrxe0 active_mtu)"
ip link set veth0 mtu 1100
[ "$(devinfo rrxe0 active_mtu)" = "512 (2)" ] || fail "mtu 1100: $(devinfo rrxe0 active_mtu)"
rdma link delete rrxe0
rmmod rdma_rrxe
