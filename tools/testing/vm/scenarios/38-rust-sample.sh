# samples/rust (issue 17): rrxe_sample_client, a module built on rrxe's
# kapi layer as an ib_core client.  Loaded with an rrxe device present
# (ib_core tells it of existing devices at registration), then a C rxe
# device added in a namespace (the same driver id: rrxe registers as
# rxe, for librxe) and both deleted; its log must name each
# device as it comes and goes, with the port's state, MTU and GID table
# size as ib_query_port gives them; unloading it unregisters the client.
mkveth vrs0 vrs1
modprobe rdma_rrxe
rdma link add rs0 type rrxe netdev vrs0
wait_for 20 grep -q ACTIVE /sys/class/infiniband/rs0/ports/1/state || fail "rs0 not active"
mtu=$(devinfo rs0 active_mtu | cut -d' ' -f1)
dmesg -C
modprobe rrxe_sample_client || fail "modprobe rrxe_sample_client"
log() { dmesg | grep "rrxe_sample_client:"; }
wait_for 5 bash -c 'dmesg | grep -q "rrxe_sample_client: rs0 added"' || fail "no 'rs0 added' line: $(log)"
log | grep -q "rs0 port 1: ACTIVE, active MTU $mtu, [0-9]* GID slots" ||
	fail "rs0's port line does not match ibv_devinfo (ACTIVE, MTU $mtu): $(log)"
note "$(log | sed 's/^\[[ 0-9.]*\] //' | tr '\n' ';')"
c_rxe_in_ns vrs1 rxs0
wait_for 10 bash -c 'dmesg | grep -q "rrxe_sample_client: rxs0 added"' || fail "no 'rxs0 added' line: $(log)"
# rrxe registers with C rxe's driver id (librxe binds to it).
id=$(log | sed -n 's/.*rs0 added: driver id \([0-9]*\),.*/\1/p' | head -1)
log | grep -q "rxs0 added: driver id $id," || fail "rs0 and rxs0 report different driver ids: $(log)"
log | grep -q "2 device(s) known" || fail "the client did not count two devices: $(log)"
ip netns exec nsrxe rdma link delete rxs0
wait_for 10 bash -c 'dmesg | grep -q "rrxe_sample_client: rxs0 removed; 1 device(s) known"' || fail "no 'rxs0 removed' line: $(log)"
rdma link delete rs0
wait_for 10 bash -c 'dmesg | grep -q "rrxe_sample_client: rs0 removed; 0 device(s) known"' || fail "no 'rs0 removed' line: $(log)"
rmmod rrxe_sample_client || fail "rmmod rrxe_sample_client"
note "after removal: $(log | tail -2 | sed 's/^\[[ 0-9.]*\] //' | tr '\n' ';')"
ip netns del nsrxe
rmmod rdma_rxe rdma_rrxe
