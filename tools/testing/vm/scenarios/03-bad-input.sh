# Bad `rdma link add` requests each get a clear errno and leave the module
# working: unknown netdev, a second link on the same netdev (ours or C
# rxe's), a non-Ethernet netdev, a VLAN-less name clash.
mkveth veth0 veth1
modprobe rdma_rrxe
expect_fail "No such device" rdma link add rrxe0 type rrxe netdev nosuchdev0
rdma link add rrxe0 type rrxe netdev veth0
expect_fail "File exists" rdma link add rrxe1 type rrxe netdev veth0
expect_fail "Invalid argument" rdma link add rrxe1 type rrxe netdev lo
expect_fail "File exists" rdma link add rrxe0 type rrxe netdev veth1
modprobe rdma_rxe
expect_fail "File exists" rdma link add rxe0 type rxe netdev veth0
rdma link add rxe1 type rxe netdev veth1
expect_fail "File exists" rdma link add rrxe1 type rrxe netdev veth1
rdma link delete rxe1
# After all the refusals the module still creates devices.
rdma link add rrxe1 type rrxe netdev veth1
has_ibdev rrxe1 || fail "rrxe1 missing"
dmesg | grep -q "rrxe: lo: not an Ethernet device" || fail "no message for lo"
rdma link delete rrxe0
rdma link delete rrxe1
rmmod rdma_rrxe
rmmod rdma_rxe
