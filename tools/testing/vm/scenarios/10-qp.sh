# Queue pairs through the stock librxe provider (pyverbs): rings mapped by
# librxe, the IBTA state machine with its required attributes, bad values
# and illegal transitions refused, query.  The same checks run against C rxe.
mkveth veth0 veth1
ip addr add 10.0.0.1/24 dev veth0
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
c_rxe_in_ns veth1 rxe0
ip netns exec nsrxe ip addr add 10.0.0.2/24 dev veth1
sleep 1
idx() { for f in /sys/class/infiniband/$1/ports/1/gids/*; do [ "$(cat $f)" = "$2" ] && basename $f && return; done; }
g0=$(idx rrxe0 0000:0000:0000:0000:0000:ffff:0a00:0001)
g1=$(idx rxe0 0000:0000:0000:0000:0000:ffff:0a00:0002)
[ -n "$g0" ] && [ -n "$g1" ] || fail "IPv4 GIDs missing"
/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/qp_test.py" rrxe0 "$g0" --strict
/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/qp_test.py" rxe0 "$g1"
rdma link delete rxe0
rdma link delete rrxe0
ip netns del nsrxe
rmmod rdma_rrxe
