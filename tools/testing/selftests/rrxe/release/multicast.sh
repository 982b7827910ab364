#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Multicast: mcast_test.py between two rrxe devices in two
# namespaces: one UD sender on ppa0, three receivers attached with
# ibv_attach_mcast (two on ppb0, one on ppa0 through the IP stack's
# multicast loopback), an IPv4 and an IPv6 group: each datagram received
# once by each, detach stops delivery.  The groups are joined at the IP
# level first (what rdma_cm adds; ibv_attach_mcast only programs the
# netdev's multicast filter, as on C rxe).  rrxe to rrxe, and across
# drivers both ways (C rxe sending to two rrxe receivers and one of its
# own, and the reverse); rrxe to rrxe only on debug.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_py pyverbs
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"

pairs=("rrxe rrxe" "rxe rrxe" "rrxe rxe")
# The debug kernel's share: rrxe on both ends.
if debug_quick; then
	pairs=("rrxe rrxe")
fi
for pair in "${pairs[@]}"; do
	# shellcheck disable=SC2086
	pp_setup_pair $pair
	ip_join ppA vpa ppA 239.1.2.3 ff0e::1:2:3
	ja=$JOIN_PID
	ip_join ppB vpb ppB 239.1.2.3 ff0e::1:2:3
	jb=$JOIN_PID
	g4=$(pp_gid_index ppa0 10.77.0.1) || fail "no IPv4 GID on ppa0"
	g6=
	for ((i = 0; i < 100; i++)); do
		g6=$(grep -l "^fe80" /sys/class/infiniband/ppa0/ports/1/gids/* 2>/dev/null | head -1 | xargs -r basename) || true
		[ -n "$g6" ] && break
		sleep 0.1
	done
	[ -n "$g6" ] || fail "no link-local GID on ppa0"
	wait_for 10 ip_joined ppA ppB || fail "the IP-level joins did not happen within 10 s"
	out=$(timeout 120 /usr/bin/python3 -u "$RRXE_PROGS/mcast_test.py" ppa0 "$g4" "$g6" ppb0 2>&1) ||
		fail "mcast_test ($PP_LABEL): $out"
	echo "$out"
	note "multicast $PP_LABEL (sender's device first): $(grep -c '^ok:' <<<"$out") checks"
	kill "$ja" "$jb" 2>/dev/null || true
	wait 2>/dev/null || true
	pp_teardown
done
rmmod rdma_rrxe
