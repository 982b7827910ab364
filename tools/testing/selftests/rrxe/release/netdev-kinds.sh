#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe binds where C rxe binds: any netdev but a VLAN device.  On veth,
# dummy, tun and lo, for rrxe and (in its own namespace) C rxe: `rdma link
# add` works, the GID table follows the netdev's addresses, ibv_devinfo
# shows the device, the node GUID is set (random for tun, which has no
# hardware address), the namespace's UDP port 4791 is open while the
# device exists and closed after `rdma link delete`.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_module rdma_rxe
modprobe rdma_rrxe
modprobe rdma_rxe
modprobe veth
modprobe dummy
modprobe tun
G4=0000:0000:0000:0000:0000:ffff:

# make_netdev NS KIND NAME IP4: creates NAME of KIND in NS with IP4/24
# (and an IPv6 address), up.
make_netdev() {
	local ns=$1 kind=$2 name=$3 ip=$4
	case $kind in
	veth) ip -n "$ns" link add "$name" type veth peer name "${name}p" && ip -n "$ns" link set "${name}p" up ;;
	dummy) ip -n "$ns" link add "$name" type dummy ;;
	tun) ip netns exec "$ns" ip tuntap add mode tun dev "$name" ;;
	lo) ;;
	esac
	ip -n "$ns" link set "$name" up
	ip -n "$ns" addr add "$ip/24" dev "$name"
}

udp4791_open() { ip netns exec "$1" ss -Huln 'sport = :4791' | grep -q .; }

check_kind() { # DRIVER KIND
	local drv=$1 kind=$2 ns="nk-$1-$2" dev="nk${1}${2}" nd ip hex
	nd=$kind
	[ "$kind" = lo ] || nd="n$kind"
	ip=10.$((RANDOM % 200 + 20)).0.1
	hex=$(printf '%02x%02x:%02x%02x' ${ip//./ })
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	make_netdev "$ns" "$kind" "$nd" "$ip"
	udp4791_open "$ns" && fail "$ns: port 4791 open before any device"
	ip netns exec "$ns" rdma link add "$dev" type "$drv" netdev "$nd" || fail "$drv on $kind: rdma link add"
	has_ibdev "$dev" || fail "$drv on $kind: no device"
	wait_for 10 bash -c "grep -qx '$G4$hex' /sys/class/infiniband/$dev/ports/1/gids/* 2>/dev/null" ||
		fail "$drv on $kind: no GID for $ip"
	out=$(ibv_devinfo -v -d "$dev") || fail "$drv on $kind: ibv_devinfo"
	echo "$out" | grep -q "::ffff:$ip, RoCE v2" || fail "$drv on $kind: ibv_devinfo lacks the GID"
	guid=$(cat "/sys/class/infiniband/$dev/node_guid")
	[ "$guid" != 0000:0000:0000:0000 ] || fail "$drv on $kind: node GUID is 0"
	udp4791_open "$ns" || fail "$drv on $kind: UDP port 4791 not open"
	note "$drv on $kind: port $(devinfo "$dev" state), GUID $guid, GID ::ffff:$ip"
	ip netns exec "$ns" rdma link delete "$dev" || fail "$drv on $kind: rdma link delete"
	has_ibdev "$dev" && fail "$drv on $kind: device left after delete"
	wait_for 5 bash -c "! ip netns exec $ns ss -Huln 'sport = :4791' | grep -q ." ||
		fail "$drv on $kind: UDP port 4791 still open after delete"
	ip netns del "$ns"
}

for kind in veth dummy tun lo; do
	check_kind rrxe "$kind"
	# C rxe's side: the reference rrxe must match.
	check_kind rxe "$kind"
done
# Two tun devices get different (random) GUIDs.
ip netns add nkt
make_netdev nkt tun t1 10.55.0.1
make_netdev nkt tun t2 10.56.0.1
ip netns exec nkt rdma link add rt1 type rrxe netdev t1
ip netns exec nkt rdma link add rt2 type rrxe netdev t2
[ "$(cat /sys/class/infiniband/rt1/node_guid)" != "$(cat /sys/class/infiniband/rt2/node_guid)" ] ||
	fail "two tun devices share a GUID"
rdma link delete rt1
rdma link delete rt2
ip netns del nkt
rmmod rdma_rrxe
rmmod rdma_rxe
