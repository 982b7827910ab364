#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# VLAN upper devices.  A device is bound to the real netdev;
# the addresses of an 802.1Q VLAN on it give RoCE v2 GIDs in the device's
# table whose netdev is the VLAN device, and traffic from those GIDs
# leaves through the VLAN device (tagged) and is taken in from it, as C
# rxe does.  Between two namespaces (veth vpa/vpb, VLAN 100 on each):
# ibv_rc_pingpong and ibv_ud_pingpong from the VLAN GIDs, rping (rdma_cm,
# the CM's MADs on QP1 through the VLAN: ib_core finds the GID to answer
# from by the VLAN ID of the received datagram) over the VLAN's IPv4 and
# IPv6 addresses, and an untagged rping beside them; the VLAN devices'
# packet counters must show the traffic.  rrxe to rrxe and across drivers
# both ways (rrxe to rrxe only on debug).  Then the VLAN device removed
# takes its GIDs along, and `rdma link add` on a VLAN device is refused
# (EPERM), as on C rxe.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ibv_rc_pingpong ibv_ud_pingpong rping
ksft_require_module rdma_rxe 8021q
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/rdma_cm.sh"
modprobe 8021q

V6A=fd78:0000:0000:0000:0000:0000:0000:0001
V6B=fd78:0000:0000:0000:0000:0000:0000:0002

# vlan_up NS DEV IP4 IP6: VLAN 100 on DEV in NS, named DEV.100, up, with
# IP4/24 and IP6/64.
vlan_up() {
	ip -n "$1" link add link "$2" name "$2.100" type vlan id 100
	ip -n "$1" link set "$2.100" up
	ip -n "$1" addr add "$3/24" dev "$2.100"
	ip -n "$1" addr add "$4/64" dev "$2.100" nodad
}

no_gid() { ! gid_index "$@" >/dev/null; }

# pkts NS DEV: "TX RX", the packets NS's netdev DEV counted (one `ip -s`:
# a process per counter costs a quarter second under TCG).
pkts() {
	local out
	out=$(ip -n "$1" -s -o link show dev "$2") || return 1
	[[ $out =~ RX:[^\\]*\\[[:space:]]+[0-9]+[[:space:]]+([0-9]+).*TX:[^\\]*\\[[:space:]]+[0-9]+[[:space:]]+([0-9]+) ]] ||
		fail "no packet counts in: $out"
	echo "${BASH_REMATCH[2]} ${BASH_REMATCH[1]}"
}

# vlan_pkts: "tx_a rx_a tx_b rx_b" of the two VLAN devices.
vlan_pkts() {
	echo "$(pkts ppA vpa.100) $(pkts ppB vpb.100)"
}

# through_vlan WHAT BEFORE MIN: each VLAN device sent and received at
# least MIN packets since BEFORE (a vlan_pkts line).
through_vlan() {
	local what=$1 min=$3 b now i
	read -ra b <<<"$2"
	read -ra now <<<"$(vlan_pkts)"
	for i in 0 1 2 3; do
		((now[i] - b[i] >= min)) ||
			fail "$what ($PP_LABEL): the VLAN devices counted $(vlan_pkts), before $2: fewer than $min packets through them"
	done
	note "$what ($PP_LABEL): through the VLAN devices: $((now[0] - b[0])) sent by vpa.100, $((now[2] - b[2])) by vpb.100"
}

# pp_vlan TOOL ARGS...: a pingpong from the VLAN GIDs (the TCP exchange
# of QP numbers goes over the untagged addresses).
pp_vlan() {
	local tool=$1 sg cg port=$PP_PORT spid i crc=0 src=0
	shift
	PP_PORT=$((PP_PORT + 1))
	sg=$(pp_gid_index ppa0 10.78.0.1) || fail "ppa0: no VLAN GID"
	cg=$(pp_gid_index ppb0 10.78.0.2) || fail "ppb0: no VLAN GID"
	ip netns exec ppA timeout 90 "$tool" -d ppa0 -g "$sg" -p "$port" "$@" >"$CM_LOG/vlan-$port.server" 2>&1 &
	spid=$!
	pp_wait_server "$spid" "$port" || true
	ip netns exec ppB timeout 90 "$tool" -d ppb0 -g "$cg" -p "$port" "$@" 10.77.0.1 >"$CM_LOG/vlan-$port.client" 2>&1 || crc=$?
	[ $crc = 0 ] || kill "$spid" 2>/dev/null || true
	wait "$spid" || src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		tail -5 "$CM_LOG/vlan-$port.client" | sed 's/^/  # client: /'
		tail -5 "$CM_LOG/vlan-$port.server" | sed 's/^/  # server: /'
		fail "$tool over VLAN 100 ($PP_LABEL): client exit $crc, server exit $src"
	fi
	note "$tool over VLAN 100 ($PP_LABEL): $(grep -E 'bytes in' "$CM_LOG/vlan-$port.client" | tail -1)"
}

pairs=("rrxe rrxe" "rxe rrxe" "rrxe rxe")
if debug_quick; then
	pairs=("rrxe rrxe")
fi
for pair in "${pairs[@]}"; do
	# shellcheck disable=SC2086
	pp_setup_pair $pair
	vlan_up ppA vpa 10.78.0.1 fd78::1
	vlan_up ppB vpb 10.78.0.2 fd78::2
	ia=$(pp_gid_index ppa0 10.78.0.1) || fail "ppa0: no GID for the VLAN address"
	pp_gid_index ppb0 10.78.0.2 >/dev/null || fail "ppb0: no GID for the VLAN address"
	nd=$(cat /sys/class/infiniband/ppa0/ports/1/gid_attrs/ndevs/"$ia")
	[ "$nd" = vpa.100 ] || fail "ppa0: the VLAN GID's netdev is '$nd', not vpa.100"
	wait_for 20 gid_index ppa0 $V6A >/dev/null || fail "ppa0: no GID for fd78::1"
	wait_for 20 gid_index ppb0 $V6B >/dev/null || fail "ppb0: no GID for fd78::2"

	before=$(vlan_pkts)
	pp_vlan ibv_rc_pingpong -s 4096 -n 200
	through_vlan ibv_rc_pingpong "$before" 200
	before=$(vlan_pkts)
	pp_vlan ibv_ud_pingpong -s 1024 -n 200
	through_vlan ibv_ud_pingpong "$before" 200
	before=$(vlan_pkts)
	cm_pair rping-vlan4 rping -s -a 10.78.0.1 -C 50 -S 1000 -V -- rping -c -a 10.78.0.1 -C 50 -S 1000 -V
	through_vlan "rping over 10.78.0.1" "$before" 50
	before=$(vlan_pkts)
	cm_pair rping-vlan6 rping -s -a fd78::1 -C 50 -S 1000 -V -- rping -c -a fd78::1 -C 50 -S 1000 -V
	through_vlan "rping over fd78::1" "$before" 50
	# Untagged beside it: nothing of it goes through the VLAN devices.
	before=$(vlan_pkts)
	cm_pair rping-untagged rping -s -a 10.77.0.1 -C 50 -S 1000 -V -- rping -c -a 10.77.0.1 -C 50 -S 1000 -V
	read -ra b <<<"$before"
	read -ra now <<<"$(vlan_pkts)"
	((now[0] - b[0] < 10)) || fail "untagged rping ($PP_LABEL): $((now[0] - b[0])) packets went through vpa.100"

	# The VLAN device removed: its GIDs leave the table.
	ip -n ppA link del vpa.100
	wait_for 20 no_gid ppa0 $V6A || fail "ppa0: the GID of fd78::1 stayed after its VLAN device was deleted"
	pp_gid_index ppa0 10.78.0.1 1 2>/dev/null && fail "ppa0: the GID of 10.78.0.1 stayed after its VLAN device was deleted"
	note "VLAN device deleted ($PP_LABEL): its GIDs left ppa0's table"
	pp_teardown
done

# As C rxe: a device is not bound to a VLAN device itself.
ip netns add vlx
ip -n vlx link add vlr type dummy
ip -n vlx link set vlr up
ip -n vlx link add link vlr name vlr.7 type vlan id 7
ip -n vlx link set vlr.7 up
modprobe rdma_rrxe
expect_fail "not permitted" ip netns exec vlx rdma link add vlx0 type rrxe netdev vlr.7
ip netns del vlx
