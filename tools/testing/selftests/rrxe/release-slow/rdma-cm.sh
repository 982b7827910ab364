#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel consumers: the MAD layer's QP1 and the connection
# manager on rrxe.  Registration opens the port for ib_mad (no "Couldn't
# open port"); stock rdma_cm tools run between two namespaces: rping with
# data verification, ucmatose with several connections, udaddy (UD with
# SIDR), mckey (rdma_cm multicast join), rdma_server/rdma_client, and
# perftest over rdma_cm (ib_send_bw -R, ib_write_bw -R; not in a quick
# run on the debug kernel), rrxe to rrxe (across drivers:
# rdma-cm-interop.sh).  make test runs it on the release kernel, make
# test-full on both: on the debug kernel, make test's kernel consumers
# (nvme-rdma.sh, nfs-rdma.sh) use rdma_cm and QP1 too, and churn.sh
# removes devices under open contexts.  Then teardown with connections
# open: the client's namespace deleted mid-rping (its
# device goes with the veth; the server sees the disconnect), rmmod during
# ucmatose, a device moved between namespaces in exclusive mode with a
# connection open, and rping again after the module is reloaded; then the port
# counters of process_mad agree between the two ends, and link_downed
# counts a link down.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ib_send_bw ib_write_bw mckey rdma_client rdma_server rping ucmatose udaddy
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/perftest.sh"

. "$RRXE_LIB/rdma_cm.sh"

CM_KEEP_PAIR=1 cm_tools "rrxe rrxe"

# The client's namespace deleted mid-run (on the pair cm_tools left up):
# once its last process is gone the namespace goes, with it the veth and
# the client's rrxe device; the server sees the connection end and exits
# by itself.
ip netns exec ppA timeout 300 stdbuf -oL rping -s -v -a 10.77.0.1 -C 100000 -S 1000 >"$CM_LOG/ns.server" 2>&1 &
spid=$!
cm_wait_listener ppA 30 || fail "rping server: no listening rdma_cm ID after 30 s: $(tail -3 "$CM_LOG/ns.server")"
ip netns exec ppB timeout 300 rping -c -a 10.77.0.1 -C 100000 -S 1000 >"$CM_LOG/ns.client" 2>&1 &
cpid=$!
# Connected, and data flowing.
wait_for 60 grep -qs "ping data: rdma-ping-5:" "$CM_LOG/ns.server" ||
	fail "rping: no data after 60 s: server: $(tail -3 "$CM_LOG/ns.server"); client: $(tail -3 "$CM_LOG/ns.client")"
kill -0 "$cpid" 2>/dev/null || fail "rping client ended before the namespace was deleted: $(tail -3 "$CM_LOG/ns.client")"
t0=$SECONDS
ip netns delete ppB
kill "$cpid" 2>/dev/null || true
wait "$cpid" 2>/dev/null || true
wait_for 60 test ! -e /sys/class/infiniband/ppb0 || fail "ppb0 still there 60 s after its namespace was deleted"
wait_for 60 pid_gone "$spid" || fail "rping server still running 60 s after its peer's namespace went"
wait "$spid" 2>/dev/null || true
note "namespace deleted after $(grep -c "ping data" "$CM_LOG/ns.server") pings: ppb0 gone, server ended ($(tail -1 "$CM_LOG/ns.server")) in $((SECONDS - t0)) s"
pp_teardown

# rmmod during ucmatose: the module's exit unregisters the devices and
# ib_core tells the rdma_cm users (DEVICE_REMOVAL).  ucmatose does not
# always exit on that event by itself (seen here: it may go on waiting on
# its disassociated CQ), so a process still running after 5 s is killed
# and must then end at once: nothing of it is stuck in the kernel.
pp_setup_pair rrxe rrxe
ip netns exec ppA timeout 300 ucmatose -b 10.77.0.1 -c 4 -C 8000 -S 4096 >"$CM_LOG/rmmod.server" 2>&1 &
spid=$!
cm_wait_listener ppA 30 || fail "ucmatose server: no listening rdma_cm ID after 30 s: $(tail -3 "$CM_LOG/rmmod.server")"
ip netns exec ppB timeout 300 stdbuf -oL ucmatose -s 10.77.0.1 -c 4 -C 8000 -S 4096 >"$CM_LOG/rmmod.client" 2>&1 &
cpid=$!
# The four connections up and transferring.
wait_for 60 grep -Eqs "(receiving|initiating) data transfers|sending replies" "$CM_LOG/rmmod.client" ||
	fail "ucmatose: no transfers after 60 s: $(tail -3 "$CM_LOG/rmmod.client")"
t0=$SECONDS
kill -0 "$cpid" 2>/dev/null || fail "ucmatose client ended before rmmod: $(tail -3 "$CM_LOG/rmmod.client")"
timeout 60 rmmod rdma_rrxe || fail "rmmod rdma_rrxe during ucmatose failed or hung"
trm=$((SECONDS - t0))
ended=""
# Both get 5 s together to end by themselves, then SIGTERM.
wait_for 5 pid_gone "$spid" "$cpid" || true
for pid in "$spid" "$cpid"; do
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		wait_for 10 pid_gone "$pid" || fail "ucmatose ($pid) does not end on SIGTERM after rmmod: $(cat "/proc/$pid/wchan" 2>/dev/null)"
		ended+=" killed"
	else
		ended+=" ended"
	fi
	wait "$pid" 2>/dev/null || true
done
has_ibdev ppa0 && fail "ppa0 still registered after rmmod"
note "rmmod during ucmatose: done in $trm s; server, client:$ended"
pp_teardown

# Exclusive network namespace mode: devices moved into their netdev's
# namespace, rping there, then a device moved to another namespace with
# the connection open: the move finishes (C rxe's stack has a syzbot
# report of a hang there) and the client sees its device go.
ksft_cleanup 'rdma system set netns shared 2>/dev/null || true'
rdma system set netns exclusive
modprobe rdma_rrxe
ip netns add nxA
ip netns add nxB
ip netns add nxC
ip link add vxa netns nxA type veth peer name vxb netns nxB
pp_netdev_up nxA vxa 10.77.2.1
pp_netdev_up nxB vxb 10.77.2.2
ip netns exec nxA rdma link add xa0 type rrxe netdev vxa
ip netns exec nxB rdma link add xb0 type rrxe netdev vxb
rdma dev set xa0 netns nxA
rdma dev set xb0 netns nxB
[ -z "$(rdma dev show)" ] || fail "exclusive mode: devices still visible in the initial namespace: $(rdma dev show)"
ip netns exec nxA rdma dev show | grep -q xa0 || fail "exclusive mode: xa0 not in nxA"
ip netns exec nxA timeout 300 rping -s -a 10.77.2.1 -C 100000 >"$CM_LOG/netns.server" 2>&1 &
spid=$!
cm_wait_listener nxA 30 || fail "exclusive mode: no listening rdma_cm ID in nxA after 30 s: $(tail -3 "$CM_LOG/netns.server")"
ip netns exec nxB timeout 300 stdbuf -oL rping -c -v -a 10.77.2.1 -C 100000 >"$CM_LOG/netns.client" 2>&1 &
cpid=$!
wait_for 60 grep -qs "ping data: rdma-ping-5:" "$CM_LOG/netns.client" ||
	fail "exclusive mode: no rping data after 60 s: $(tail -3 "$CM_LOG/netns.client")"
t0=$SECONDS
ip netns exec nxB timeout 60 rdma dev set xb0 netns nxC || fail "moving xb0 to nxC with a connection open failed or hung"
ip netns exec nxC rdma dev show | grep -q xb0 || fail "xb0 not in nxC after the move"
wait_for 60 pid_gone "$cpid" || fail "rping client still running 60 s after its device moved away"
wait "$cpid" 2>/dev/null || true
kill "$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
note "exclusive netns: xb0 moved to nxC with rping running in $((SECONDS - t0)) s; the client ended ($(tail -1 "$CM_LOG/netns.client"))"
ip netns exec nxA rdma link delete xa0
ip netns exec nxC rdma link delete xb0
ip netns delete nxA
ip netns delete nxB
ip netns delete nxC
rdma system set netns shared
ksft_cleanup ""

# Reloaded, it works again.
pp_setup_pair rrxe rrxe
cm_pair rping-after-reload rping -s -a 10.77.0.1 -C 20 -V -- rping -c -a 10.77.0.1 -C 20 -V

# The port counters ib_core reads through process_mad (PerfMgmt Get of
# PortCountersExtended and PortCounters: sysfs ports/1/counters, what
# perfquery would read; libibmad cannot open a RoCE port, on C rxe
# either): what one end sent, the other received (or dropped, counted).
pc() { cat "/sys/class/infiniband/$1/ports/1/counters/$2"; }
hw() { rdma statistic show link "$1/1" | tr ' ' '\n' | grep -A1 -x "$2" | tail -1; }
for ab in "ppa0 ppb0" "ppb0 ppa0"; do
	read -r a b <<<"$ab"
	xp=$(pc "$a" port_xmit_packets) rp=$(pc "$b" port_rcv_packets) dr=$(hw "$b" rcv_dropped)
	xd=$(pc "$a" port_xmit_data) rd=$(pc "$b" port_rcv_data)
	[ "$xp" -gt 20 ] && [ "$xd" -gt 0 ] || fail "$a: port_xmit_packets $xp, port_xmit_data $xd after an rping"
	[ "$xp" = $((rp + dr)) ] || fail "$a sent $xp packets, $b received $rp and dropped $dr"
	[ "$dr" != 0 ] || [ "$xd" = "$rd" ] || fail "$a sent $xd words, $b received $rd"
	[ $(($(hw "$a" sent_bytes) >> 2)) = "$xd" ] || fail "$a: port_xmit_data $xd is not sent_bytes/4 ($(hw "$a" sent_bytes))"
	note "counters $a -> $b: $xp packets, $xd words sent; $rp received, $dr dropped; rdma_sends $(hw "$a" rdma_sends), rdma_recvs $(hw "$b" rdma_recvs)"
done
ld=$(pc ppa0 link_downed)
ip -n ppA link set vpa down
ip -n ppA link set vpa up
wait_for 10 port_active ppa0 || fail "ppa0 not ACTIVE again"
[ "$(pc ppa0 link_downed)" -gt "$ld" ] || fail "link_downed did not count the link going down ($ld, then $(pc ppa0 link_downed))"
note "link_downed: $ld, after a down/up $(pc ppa0 link_downed) (hw counter $(hw ppa0 link_downed))"
pp_teardown
rmmod rdma_rrxe
