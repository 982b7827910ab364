# Completion queues through the stock librxe provider (pyverbs): the ring
# is mmap'd and polled from user memory; sizes, arming, refusals, and
# cleanup of CQs left open when the process exits.
mkveth veth0 veth1
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/cq_test.py" rrxe0
# The same checks must pass on C rxe: the test is about the verbs, not us.
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev veth1
/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/cq_test.py" rxe0
rdma link delete rxe0
rdma link delete rrxe0
rmmod rdma_rrxe
