#!/bin/bash
# Captures real RoCEv2 traffic of the C rdma_rxe for the protocol core's
# known-answer tests.  Run inside the test VM:
#   make vm-run CMD='bash tools/testing/capture/capture-rxe.sh'
# Two namespaces joined by a veth pair, one C rxe device in each, stock
# rdma-core and perftest tools as traffic (perftest with -F: under TCG its
# CPU-frequency check fails the run otherwise), tcpdump on one end.  Writes
# $RRXE_OUT/<name>.pcap; tools/testing/capture/README.md says how the
# committed files were made.
set -eu
out=${RRXE_OUT:?}
modprobe veth
modprobe rdma_rxe
modprobe sch_netem || true
ip netns add n1
ip netns add n2
ip link add veth1 netns n1 type veth peer name veth2 netns n2
for i in 1 2; do
	ip -n n$i link set lo up
	ip -n n$i link set veth$i up
	ip -n n$i addr add 10.0.0.$i/24 dev veth$i
	ip -n n$i -6 addr add 2001:db8::$i/64 dev veth$i nodad
done
ip netns exec n1 rdma link add rxe1 type rxe netdev veth1
ip netns exec n2 rdma link add rxe2 type rxe netdev veth2
sleep 1

# GID index of an address on a device (sysfs spelling of the GID).
gid_index() {
	local dev=$1 want=$2 f
	for f in /sys/class/infiniband/$dev/ports/1/gids/*; do
		if [ "$(cat "$f")" = "$want" ]; then basename "$f"; return; fi
	done 2>/dev/null
	echo "no GID $want on $dev" >&2; return 1
}
v4g1=$(gid_index rxe1 0000:0000:0000:0000:0000:ffff:0a00:0001)
v4g2=$(gid_index rxe2 0000:0000:0000:0000:0000:ffff:0a00:0002)
v6g1=$(gid_index rxe1 2001:0db8:0000:0000:0000:0000:0000:0001)
v6g2=$(gid_index rxe2 2001:0db8:0000:0000:0000:0000:0000:0002)

# capture NAME MAXPKTS SERVER-CMD -- CLIENT-CMD (server in n1, client in n2)
capture() {
	local name=$1 max=$2; shift 2
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done; shift
	cli=("$@")
	ip netns exec n1 tcpdump -q -n -i veth1 -s 0 -c "$max" -w "$out/$name.pcap" udp port 4791 2>/dev/null &
	local td=$!
	sleep 1
	ip netns exec n1 timeout 60 "${srv[@]}" >"$out/$name.server.log" 2>&1 &
	local sv=$!
	sleep 1
	ip netns exec n2 timeout 60 "${cli[@]}" 10.0.0.1 >"$out/$name.client.log" 2>&1 || echo "$name: client failed" >&2
	wait $sv || echo "$name: server failed" >&2
	sleep 1
	kill -INT $td 2>/dev/null || true
	wait $td 2>/dev/null || true
	echo "$name: $(tcpdump -r "$out/$name.pcap" 2>/dev/null | wc -l) packets"
}

capture v4_rc_send 40 ibv_rc_pingpong -d rxe1 -g "$v4g1" -s 64 -n 4 -- ibv_rc_pingpong -d rxe2 -g "$v4g2" -s 64 -n 4
capture v6_rc_send 40 ibv_rc_pingpong -d rxe1 -g "$v6g1" -s 3000 -m 1024 -n 2 -- ibv_rc_pingpong -d rxe2 -g "$v6g2" -s 3000 -m 1024 -n 2
capture v4_uc_send 20 ibv_uc_pingpong -d rxe1 -g "$v4g1" -s 64 -n 4 -- ibv_uc_pingpong -d rxe2 -g "$v4g2" -s 64 -n 4
capture v4_ud_send 20 ibv_ud_pingpong -d rxe1 -g "$v4g1" -s 64 -n 4 -- ibv_ud_pingpong -d rxe2 -g "$v4g2" -s 64 -n 4
capture v4_rc_write 60 ib_write_bw -F -d rxe1 -x "$v4g1" -s 2500 -m 1024 -n 5 -- ib_write_bw -F -d rxe2 -x "$v4g2" -s 2500 -m 1024 -n 5
capture v6_rc_write 60 ib_write_bw -F -d rxe1 -x "$v6g1" -s 256 -n 5 -- ib_write_bw -F -d rxe2 -x "$v6g2" -s 256 -n 5
capture v4_rc_read 60 ib_read_bw -F -d rxe1 -x "$v4g1" -s 2500 -m 1024 -n 5 -- ib_read_bw -F -d rxe2 -x "$v4g2" -s 2500 -m 1024 -n 5
capture v6_rc_atomic 60 ib_atomic_bw -F -d rxe1 -x "$v6g1" -A CMP_AND_SWAP -n 5 -- ib_atomic_bw -F -d rxe2 -x "$v6g2" -A CMP_AND_SWAP -n 5
capture v4_rc_fetch_add 60 ib_atomic_bw -F -d rxe1 -x "$v4g1" -A FETCH_AND_ADD -n 5 -- ib_atomic_bw -F -d rxe2 -x "$v4g2" -A FETCH_AND_ADD -n 5
# Loss on the responder's egress: sequence errors, NAKs and retransmits.
ip netns exec n2 tc qdisc add dev veth2 root netem loss 15%
capture v4_rc_write_loss 150 ib_write_bw -F -d rxe1 -x "$v4g1" -s 4096 -m 1024 -n 20 -- ib_write_bw -F -d rxe2 -x "$v4g2" -s 4096 -m 1024 -n 20
ip netns exec n2 tc qdisc del dev veth2 root
rdma link delete rxe1
rdma link delete rxe2
