# RC error paths, rrxe and C rxe alike (pyverbs, two QPs on one device):
# wrong rkey, no remote-write right, out-of-range write, bad lkey, RNR
# retries exhausted and RNR recovery, receive too small, destroy in flight.
mkveth veth0 veth1
ip addr add 10.0.0.1/24 dev veth0
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
c_rxe_in_ns veth1 rxe0
ip netns exec nsrxe ip addr add 10.0.0.2/24 dev veth1
idx() { for f in /sys/class/infiniband/$1/ports/1/gids/*; do [ "$(cat $f)" = "$2" ] && basename $f && return; done; }
wait_for 10 idx rrxe0 0000:0000:0000:0000:0000:ffff:0a00:0001 >/dev/null || fail "rrxe0 IPv4 GID missing"
wait_for 10 idx rxe0 0000:0000:0000:0000:0000:ffff:0a00:0002 >/dev/null || fail "rxe0 IPv4 GID missing"
/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/rc_errors_test.py" rrxe0 "$(idx rrxe0 0000:0000:0000:0000:0000:ffff:0a00:0001)"
ip netns exec nsrxe /usr/bin/python3 "$RRXE_TOP/tools/testing/vm/rc_errors_test.py" rxe0 "$(idx rxe0 0000:0000:0000:0000:0000:ffff:0a00:0002)"
rdma statistic show link rrxe0/1 | grep -q "retransmits\|rcvd_rnr_err" || fail "no counters: $(rdma statistic show link rrxe0/1)"
note "$(rdma statistic show link rrxe0/1)"
rdma link delete rxe0
rdma link delete rrxe0
ip netns del nsrxe
rmmod rdma_rrxe
