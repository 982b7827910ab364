#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# (a header-field check with tcpdump: release only in make test.)
# The IP header of rrxe's packets carries the QP's address vector: a
# traffic class set in the AV's GRH (stock ib_write_bw --tclass) appears
# as the IPv4 TOS of the requests and of the responder's ACKs (C rxe does
# the same; rrxe used to send TOS 0 and TTL 64 whatever the AV said).
# Every captured packet, both ways, must also pass progs/icrc_check.py's
# ICRC check, written independently of rrxe's code.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ib_write_bw tcpdump
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/perftest.sh"

pp_setup_pair rrxe rrxe
cap=/tmp/ip-header.cap pcap=/tmp/ip-header.pcap
ip netns exec ppB tcpdump -i vpb -n -v -l udp port 4791 >"$cap" 2>/dev/null &
tp=$!
ip netns exec ppA tcpdump -i vpa -n -s 0 -w "$pcap" udp port 4791 2>/dev/null &
tw=$!
sleep 1
out=$(pt_run ib_write_bw ppa0 ppA ppb0 ppB 10.77.0.1 -s 1024 -n 20 --tclass=96) ||
	fail "ib_write_bw --tclass=96 failed: $out"
sleep 1
kill "$tp" "$tw" 2>/dev/null || true
wait "$tp" "$tw" 2>/dev/null || true
# Every packet on the wire, both ways, passes an ICRC check written
# independently of rrxe's code (zlib's CRC-32 over annex A17's masks).
icrc=$(/usr/bin/python3 "$RRXE_PROGS/icrc_check.py" "$pcap" --min 20) ||
	fail "a wrong ICRC on the wire: $icrc"
note "$icrc"
data=$(grep -c 'tos 0x60,.*length 10[0-9][0-9])' "$cap" || true)
acks=$(grep -c 'tos 0x60,.*length 48)' "$cap" || true)
other=$(grep -c 'proto UDP' "$cap" || true)
note "captured $other RoCE packets: $data data packets and $acks ACKs with TOS 0x60"
[ "$data" -gt 0 ] || fail "no 1 KiB RDMA WRITE packet with TOS 0x60: $(head -4 "$cap")"
[ "$acks" -gt 0 ] || fail "no ACK with TOS 0x60: $(head -4 "$cap")"
[ "$other" = "$((data + acks))" ] || fail "$((other - data - acks)) RoCE packets without TOS 0x60: $(grep -v 'tos 0x60' "$cap" | head -4)"
pp_teardown
