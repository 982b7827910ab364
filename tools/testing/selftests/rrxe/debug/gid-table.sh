#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The GID table follows the netdev's addresses (RoCE v2 GIDs for IPv4 as
# ::ffff:a.b.c.d, IPv6 as is), including addresses added and removed later.
# The table is scanned in index order, stopping at the first match.  Its
# length is the module parameter gid_tbl_len's (1024 by default).
. "$(dirname "$0")/../lib/ksft.sh"
G=/sys/class/infiniband/rrxe0/ports/1/gids
# has_gid PATTERN: one of the first 16 entries matches the bash PATTERN
# (gid_scan reads them with bash itself: no process per poll).
GID_SCAN_MAX=16
has_gid() { gid_scan rrxe0 "$1" >/dev/null; }
gids() { for i in $(seq 0 15); do cat $G/$i; done 2>/dev/null; }
mkveth veth0 veth1
ip addr add 192.168.7.1/24 dev veth0
modprobe rdma_rrxe
rdma link add rrxe0 type rrxe netdev veth0
# Its length: rdma_rrxe.gid_tbl_len if the kernel command line sets it
# (the debug quick run: 64), else C rxe's 1024.
want=1024
read -r -a cmdline </proc/cmdline
for a in "${cmdline[@]}"; do
	case $a in rdma_rrxe.gid_tbl_len=*) want=${a#*=} ;; esac
done
[ -e "$G/$((want - 1))" ] && [ ! -e "$G/$want" ] || fail "the GID table does not have $want entries"
note "GID table: $want entries"
wait_for 5 has_gid "0000:0000:0000:0000:0000:ffff:c0a8:0701" || fail "IPv4 GID: $(gids)"
ip -6 addr add 2001:db8::7/64 dev veth0 nodad
wait_for 5 has_gid "2001:0db8:0000:0000:0000:0000:0000:0007" || fail "IPv6 GID not added: $(gids)"
# and the type is RoCE v2 for it
has_gid_v2() { gid_scan rrxe0 "$1" "RoCE v2" >/dev/null; }
has_gid_v2 "2001:0db8:0000:0000:0000:0000:0000:0007" || fail "the IPv6 GID is not RoCE v2"
ip -6 addr del 2001:db8::7/64 dev veth0
no_gid() { ! has_gid "$1"; }
wait_for 5 no_gid "2001:0db8*" || fail "IPv6 GID not removed"
ip addr add 192.168.8.1/24 dev veth0
wait_for 5 has_gid "*ffff:c0a8:0801" || fail "2nd IPv4 GID"
rdma link delete rrxe0
rmmod rdma_rrxe
