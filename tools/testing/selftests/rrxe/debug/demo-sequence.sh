#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The `make demo` sequence as assertions: link add, show, ibv_devices,
# ibv_devinfo (bound by stock librxe, Ethernet, ACTIVE, RoCE v2 GIDs),
# link delete, rmmod.
. "$(dirname "$0")/../lib/ksft.sh"

mkveth veth0 veth1
ip addr add 10.0.0.1/24 dev veth0
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
rdma link show | grep -q "^link rrxe0/1 state ACTIVE .*netdev veth0" || fail "rdma link show: $(rdma link show)"
ibv_devices | grep -q "rrxe0" || fail "ibv_devices does not list rrxe0"
out=$(ibv_devinfo -v -d rrxe0) || fail "ibv_devinfo failed"
echo "$out" | grep -q "transport:.*InfiniBand" || fail "transport"
echo "$out" | grep -q "link_layer:.*Ethernet" || fail "link_layer"
echo "$out" | grep -q "state:.*PORT_ACTIVE" || fail "port state"
echo "$out" | grep -q "::ffff:10.0.0.1, RoCE v2" || fail "IPv4 RoCE v2 GID missing: $(echo "$out" | grep GID)"
echo "$out" | grep -Eq "GID\[ *0\]:.*fe80::.*RoCE v2" || fail "link-local GID missing"
# The provider that bound it is the stock rxe one (driver id RXE, ABI 2).
[ "$(cat /sys/class/infiniband_verbs/uverbs*/ibdev | grep -c rrxe0)" = 1 ] || fail "no uverbs node"
for u in /sys/class/infiniband_verbs/uverbs*; do
	[ "$(cat "$u/ibdev")" = rrxe0 ] && { [ "$(cat "$u/abi_version")" = 2 ] || fail "abi_version $(cat "$u/abi_version")"; }
done
# node GUID is the EUI-64 of veth0's MAC
mac=$(cat /sys/class/net/veth0/address)
want=$(python3 -c "m=bytes.fromhex('$mac'.replace(':',''));e=bytes([m[0]^2])+m[1:3]+b'\xff\xfe'+m[3:];print(':'.join(e.hex()[i:i+4] for i in range(0,16,4)))")
[ "$(cat /sys/class/infiniband/rrxe0/node_guid)" = "$want" ] || fail "node_guid $(cat /sys/class/infiniband/rrxe0/node_guid) != $want"
rdma link delete rrxe0
has_ibdev rrxe0 && fail "rrxe0 still present after link delete"
rmmod rdma_rrxe
lsmod | grep -q rdma_rrxe && fail "module still loaded"
true
