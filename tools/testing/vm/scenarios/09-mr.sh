# Memory registration through the stock librxe provider (pyverbs): pinned
# user memory, lkey = rkey, unique keys that change on re-registration,
# IBTA access rules, cleanup of MRs left when the process exits.  The same
# checks run against C rxe.
mkveth veth0 veth1
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/mr_test.py" rrxe0
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev veth1
/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/mr_test.py" rxe0
rdma link delete rxe0
rdma link delete rrxe0
rmmod rdma_rrxe
