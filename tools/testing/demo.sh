#!/bin/bash
# `make demo`, run inside the test VM: the mission end to end, every
# command echoed.  Load rdma_rrxe (its KUnit suites run at load), put an
# rrxe device on each end of a veth pair between two namespaces, drive them
# with the stock rdma-core tools (ibv_devinfo, ibv_rc_pingpong with buffer
# validation), do the same with the kernel's C rxe for comparison, show the
# counters, and tear everything down.
set -eEuo pipefail
trap 'echo "demo: error: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/selftests/rrxe/lib/lib.sh"
. "$here/selftests/rrxe/lib/pingpong.sh"

bold() { printf '\n\033[1m%s\033[0m\n' "$*"; }
run() { printf '\033[1m$ %s\033[0m\n' "$*"; "$@"; }
SIZE=65536 ITERS=500

bold "== 1. load the Rust driver (its KUnit suites run at load)"
dmesg -C
run modprobe rdma_rrxe
run lsmod

bold "== 2. two namespaces joined by a veth pair, an rrxe device on each end"
modprobe veth
run ip netns add demoA
run ip netns add demoB
run ip link add va netns demoA type veth peer name vb netns demoB
for x in A:a:1 B:b:2; do
	IFS=: read -r ns dev n <<<"$x"
	run ip -n "demo$ns" link set lo up
	run ip -n "demo$ns" link set "v$dev" mtu 9000 up
	run ip -n "demo$ns" addr add "10.99.0.$n/24" dev "v$dev"
	run ip netns exec "demo$ns" rdma link add "rrxe$dev" type rrxe netdev "v$dev"
done
run rdma link show
wait_for 20 port_active rrxea && wait_for 20 port_active rrxeb || fail "ports not ACTIVE"
ga=$(pp_gid_index rrxea 10.99.0.1) && gb=$(pp_gid_index rrxeb 10.99.0.2) || fail "no RoCE v2 GIDs"

bold "== 3. the stock librxe provider drives it (ibv_devinfo)"
run ibv_devices
run ibv_devinfo -d rrxea

# pingpong DEV_S NS_S GID_S DEV_C NS_C GID_C SERVER_IP: prints the client's
# result line, sets MBIT.
pingpong() {
	local sdev=$1 sns=$2 sg=$3 cdev=$4 cns=$5 cg=$6 sip=$7 port=$((18515 + RANDOM % 1000))
	local args=(-s "$SIZE" -n "$ITERS" -m 1024 -c -p "$port")
	printf '\033[1m$ ip netns exec %s ibv_rc_pingpong -d %s -g %s %s &\033[0m\n' "$sns" "$sdev" "$sg" "${args[*]}"
	ip netns exec "$sns" timeout 120 ibv_rc_pingpong -d "$sdev" -g "$sg" "${args[@]}" >/tmp/demo-server 2>&1 &
	local spid=$! i
	for ((i = 0; i < 100; i++)); do pp_listening "$sns" "$port" && break; sleep 0.1; done
	printf '\033[1m$ ip netns exec %s ibv_rc_pingpong -d %s -g %s %s %s\033[0m\n' "$cns" "$cdev" "$cg" "${args[*]}" "$sip"
	ip netns exec "$cns" timeout 120 ibv_rc_pingpong -d "$cdev" -g "$cg" "${args[@]}" "$sip" | tee /tmp/demo-client ||
		fail "client failed"
	wait "$spid" || fail "server failed: $(cat /tmp/demo-server)"
	! grep -q "invalid data" /tmp/demo-server || fail "server saw invalid data"
	MBIT=$(sed -n 's/.* = \([0-9.]*\) Mbit\/sec$/\1/p' /tmp/demo-client)
	[ -n "$MBIT" ] || fail "no throughput line"
}

bold "== 4. RC SEND between the two rrxe devices, buffers checked (-c), ${ITERS} x ${SIZE} B"
pingpong rrxea demoA "$ga" rrxeb demoB "$gb" 10.99.0.1
rrxe_mbit=$MBIT

bold "== 5. the same with the kernel's C rxe (other namespaces: both bind UDP 4791)"
run ip netns add demoC
run ip netns add demoD
run ip link add vc netns demoC type veth peer name vd netns demoD
for x in C:c:1 D:d:2; do
	IFS=: read -r ns dev n <<<"$x"
	ip -n "demo$ns" link set lo up
	ip -n "demo$ns" link set "v$dev" mtu 9000 up
	ip -n "demo$ns" addr add "10.98.0.$n/24" dev "v$dev"
done
run modprobe rdma_rxe
run ip netns exec demoC rdma link add rxec type rxe netdev vc
run ip netns exec demoD rdma link add rxed type rxe netdev vd
wait_for 20 port_active rxec && wait_for 20 port_active rxed || fail "C rxe ports not ACTIVE"
gc=$(pp_gid_index rxec 10.98.0.1) && gd=$(pp_gid_index rxed 10.98.0.2) || fail "no C rxe GIDs"
pingpong rxec demoC "$gc" rxed demoD "$gd" 10.98.0.1
rxe_mbit=$MBIT
echo
printf 'throughput (%s B messages, same VM boot): rrxe %s Mbit/s, C rxe %s Mbit/s, rrxe/C rxe = %s\n' \
	"$SIZE" "$rrxe_mbit" "$rxe_mbit" "$(echo "scale=2; $rrxe_mbit / $rxe_mbit" | bc)"

bold "== 6. the driver's KUnit results (from the kernel log at load)"
dmesg | awk '
	/# [a-z0-9_]+: pass:[0-9]+ fail:[0-9]+ skip:[0-9]+ total:[0-9]+/ {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^pass:/) { p = substr($i, 6) }
			if ($i ~ /^fail:/) { f = substr($i, 6) }
		}
		name = $0; sub(/.*# /, "", name); sub(/:.*/, "", name)
		if (name == "Totals") next
		suites++; if (f == 0) suites_ok++
		pass += p; fail += f
		printf "  suite %-20s %s passed, %s failed\n", name, p, f
	}
	END {
		printf "KUnit: %d of %d suites passed; %d cases passed, %d failed\n", suites_ok, suites, pass, fail
		if (suites == 0 || fail > 0) exit 1
	}' || fail "KUnit failures or no KUnit output"

bold "== 7. the device's counters"
run rdma statistic show link rrxea/1

bold "== 8. clean teardown"
run rdma link delete rrxea
run rdma link delete rrxeb
run rdma link delete rxec
run rdma link delete rxed
ip netns del demoA && ip netns del demoB && ip netns del demoC && ip netns del demoD
run rdma link show
run rmmod rdma_rrxe
run rmmod rdma_rxe
if dmesg | grep -Eq 'BUG:|WARNING:|Oops|KASAN|UBSAN|rust_panic'; then
	dmesg | grep -E -A5 'BUG:|WARNING:|Oops|KASAN|UBSAN|rust_panic' | head -30
	fail "the kernel log has a splat (above)"
fi
echo
echo "demo: rdma_rrxe loaded, two rrxe devices driven by the unmodified rdma-core userspace," \
	"RC traffic checked byte for byte, compared with C rxe, removed cleanly"
