#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The GID table follows the netdev's addresses (RoCE v2 GIDs for IPv4 as
# ::ffff:a.b.c.d, IPv6 as is), including addresses added and removed later.
# Only the first 16 of the 1024 entries: reading all of sysfs is slow under TCG.
. "$(dirname "$0")/../lib/ksft.sh"
G=/sys/class/infiniband/rrxe0/ports/1/gids
gids() { for i in $(seq 0 15); do cat $G/$i; done 2>/dev/null; }
export -f gids; export G
mkveth veth0 veth1
ip addr add 192.168.7.1/24 dev veth0
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
wait_for 5 bash -c 'gids | grep -q "0000:0000:0000:0000:0000:ffff:c0a8:0701"' || fail "IPv4 GID: $(gids)"
ip -6 addr add 2001:db8::7/64 dev veth0 nodad
wait_for 5 bash -c 'gids | grep -q "2001:0db8:0000:0000:0000:0000:0000:0007"' || fail "IPv6 GID not added: $(gids)"
# and the type is RoCE v2 for it
for f in $G/{0..15}; do
	if [ "$(cat "$f")" = "2001:0db8:0000:0000:0000:0000:0000:0007" ]; then
		t=$(cat "/sys/class/infiniband/rrxe0/ports/1/gid_attrs/types/$(basename "$f")")
		[ "$t" = "RoCE v2" ] || fail "type $t"
	fi
done
ip -6 addr del 2001:db8::7/64 dev veth0
wait_for 5 bash -c '! gids | grep -q "2001:0db8"' || fail "IPv6 GID not removed"
ip addr add 192.168.8.1/24 dev veth0
wait_for 5 bash -c 'gids | grep -q "ffff:c0a8:0801"' || fail "2nd IPv4 GID"
rdma link delete rrxe0
rmmod rdma_rrxe
