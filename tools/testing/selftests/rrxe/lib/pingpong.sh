# shellcheck shell=bash
# Pingpong helpers for VM tests (sourced after lib.sh, inside the test VM).
#
#   pp_setup_pair SRV_DRV CLI_DRV  two namespaces ppA/ppB joined by veth
#                                  vpa/vpb (10.77.0.1/2), RDMA device ppa0
#                                  (SRV_DRV) in ppA and ppb0 (CLI_DRV) in ppB
#   pp_setup_loop DRV              one namespace ppL, one device ppl0 on vpl
#                                  (10.77.1.1); server and client share it
#   pp_teardown                    removes what the setups made
#   pp_gid_index DEV [IP] [SECS]   index of DEV's RoCE v2 IPv4-mapped GID
#   run_pingpong TOOL DEV_S NS_S DEV_C NS_C SERVER_IP ARGS...
#                                  one cell: ibv_{rc,uc}_pingpong server and
#                                  client with ARGS; prints a "cell" line,
#                                  counts PP_CELLS/PP_PASSED, returns 0 on PASS
#
# Drivers are "rxe" (C rdma_rxe) or "rrxe".  Devices get distinct names and
# every namespace holds at most one device: ib devices are visible from all
# namespaces (rdma system netns mode shared), and C rxe and rrxe cannot both
# bind UDP 4791 in one namespace.  The veth MTU is 9000 so that active_mtu
# is 4096 (at 1500 it is 1024, and -m 4096 then fails the run).

PP_TIMEOUT=${PP_TIMEOUT:-120}       # seconds, per server/client process
PP_NETDEV_MTU=${PP_NETDEV_MTU:-9000}
PP_PORT=${PP_PORT:-20000}           # next TCP port; one per run (TIME_WAIT)
PP_LOG=${PP_LOG:-/tmp/pingpong}     # server/client output, kept per run
PP_LABEL=${PP_LABEL:-}              # "rxe->rrxe", "loop:rxe"; set by setups
PP_CELLS=${PP_CELLS:-0}
PP_PASSED=${PP_PASSED:-0}

# pp_modprobe MODULE: loads MODULE unless it is loaded (modprobe reads
# the module index each time, 0.4 s on the debug kernel).
pp_modprobe() { [ -d "/sys/module/$1" ] || modprobe "$1"; }

pp_load() {
	case $1 in
	rxe) pp_modprobe rdma_rxe ;;
	rrxe) pp_modprobe rdma_rrxe ;;
	*) fail "unknown driver '$1' (rxe or rrxe)" ;;
	esac
}

# "A/B": the active MTUs of RDMA devices A and B (one ibv_devinfo for
# both: each run costs 0.3 to 0.7 s on the debug kernel).
pp_active_mtus() {
	ibv_devinfo 2>/dev/null | awk -v a="$1" -v b="$2" '
		/^hca_id:/ { dev = $2 }
		/^[[:space:]]*active_mtu:/ { mtu[dev] = $2 }
		END { printf "%s/%s", (a in mtu) ? mtu[a] : "?", (b in mtu) ? mtu[b] : "?" }'
}

# Index of DEV's IPv4-mapped (::ffff:a.b.c.d) RoCE v2 GID, the one for IP
# if given; waits up to SECS (20) for it: GIDs appear asynchronously after
# the address is added.
pp_gid_index() {
	local dev=$1 ip=${2:-} secs=${3:-20}
	local want=0000:0000:0000:0000:0000:ffff: i
	if [ -n "$ip" ]; then
		# shellcheck disable=SC2086
		want+=$(printf '%02x%02x:%02x%02x' ${ip//./ })
	fi
	for ((i = 0; i < secs * 10; i++)); do
		gid_scan "$dev" "$want*" "RoCE v2" && return 0
		nap 0.1
	done
	echo "pp_gid_index: no RoCE v2 GID ::ffff:${ip:-*} on $dev after ${secs}s" >&2
	return 1
}

pp_teardown() {
	local dev ns
	for dev in ppa0 ppb0 ppl0; do
		if [ -e "/sys/class/infiniband/$dev" ]; then
			rdma link delete "$dev" 2>/dev/null || true
		fi
	done
	for ns in ppA ppB ppL; do
		ip netns delete "$ns" 2>/dev/null || true
	done
	for dev in ppa0 ppb0 ppl0; do
		wait_for 10 test ! -e "/sys/class/infiniband/$dev" || fail "$dev not removed"
	done
}

# Brings up lo and NETDEV (MTU PP_NETDEV_MTU, address IP/24) in NS.
pp_netdev_up() {
	local ns=$1 dev=$2 ip=$3
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "$dev" mtu "$PP_NETDEV_MTU" up
	[ -z "$ip" ] || ip -n "$ns" addr add "$ip/24" dev "$dev"
}

# Adds RDMA device NAME of type DRV on NETDEV in NS and waits until its
# port is active and its GID for IP is there.
pp_rdma_add() {
	local ns=$1 name=$2 drv=$3 netdev=$4 ip=$5
	pp_load "$drv"
	ip netns exec "$ns" rdma link add "$name" type "$drv" netdev "$netdev" ||
		fail "rdma link add $name type $drv netdev $netdev (netns $ns)"
	wait_for 20 port_active "$name" || fail "$name: port not ACTIVE"
	pp_gid_index "$name" "$ip" >/dev/null || fail "$name: no GID for $ip"
}

pp_setup_pair() {
	local srv=$1 cli=$2
	pp_teardown
	pp_modprobe veth
	ip netns add ppA
	ip netns add ppB
	ip link add vpa netns ppA type veth peer name vpb netns ppB
	pp_netdev_up ppA vpa 10.77.0.1
	pp_netdev_up ppB vpb 10.77.0.2
	pp_rdma_add ppA ppa0 "$srv" vpa 10.77.0.1
	pp_rdma_add ppB ppb0 "$cli" vpb 10.77.0.2
	PP_LABEL="$srv->$cli"
	note "pair: ppa0 ($srv, ppA, 10.77.0.1) <-> ppb0 ($cli, ppB, 10.77.0.2)," \
		"active_mtu $(pp_active_mtus ppa0 ppb0)"
}

# Loopback: the veth's peer only gives it a carrier; traffic never leaves
# the device (the destination MAC is its own).
pp_setup_loop() {
	local drv=$1
	pp_teardown
	pp_modprobe veth
	ip netns add ppL
	ip link add vpl netns ppL type veth peer name vplp netns ppL
	pp_netdev_up ppL vplp ""
	pp_netdev_up ppL vpl 10.77.1.1
	pp_rdma_add ppL ppl0 "$drv" vpl 10.77.1.1
	PP_LABEL="loop:$drv"
	note "loop: ppl0 ($drv, ppL, 10.77.1.1), active_mtu $(devinfo ppl0 active_mtu | cut -d' ' -f1)"
}

# "size=4096 mtu=1024 n=1000 -c -e" from pingpong arguments (tool defaults
# filled in).
pp_describe() {
	local size=4096 mtu=1024 iters=1000 extra=""
	while [ $# -gt 0 ]; do
		case $1 in
		-s) size=$2; shift ;;
		-m) mtu=$2; shift ;;
		-n) iters=$2; shift ;;
		-r) extra+=" rx=$2"; shift ;;
		*) extra+=" $1" ;;
		esac
		shift
	done
	echo "size=$size mtu=$mtu n=$iters$extra"
}

# pp_wait_server PID PORT: waits (up to 30 s) until process PID listens
# on TCP PORT; fails at once if it died first.
pp_wait_server() {
	local i
	for ((i = 0; i < 300; i++)); do
		pid_listening "$1" "$2" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		nap 0.1
	done
	return 1
}

pp_listening() {
	ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q .
}

# run_pingpong TOOL DEV_S NS_S DEV_C NS_C SERVER_IP ARGS...
run_pingpong() {
	local tool=$1 sdev=$2 sns=$3 cdev=$4 cns=$5 sip=$6
	shift 6
	local kind=${tool#ibv_}
	kind=${kind%_pingpong}
	local port=$PP_PORT
	PP_PORT=$((PP_PORT + 1))
	PP_CELLS=$((PP_CELLS + 1))
	local desc
	desc="cell $kind $PP_LABEL $(pp_describe "$@")"
	mkdir -p "$PP_LOG"
	local sout="$PP_LOG/$kind-$port.server" cout="$PP_LOG/$kind-$port.client"
	: >"$sout"
	: >"$cout"
	local sg="" cg="" why="" src=0 crc=0 spid t0 secs="" i f klines
	klines=$(dmesg | wc -l)
	sg=$(pp_gid_index "$sdev") || why="no GID on $sdev"
	cg=$(pp_gid_index "$cdev") || why="no GID on $cdev"
	if [ -z "$why" ]; then
		t0=$EPOCHREALTIME
		# stdbuf -oL: stdout and stderr interleave in order in the file.
		ip netns exec "$sns" timeout "$PP_TIMEOUT" stdbuf -oL \
			"$tool" -d "$sdev" -g "$sg" -p "$port" "$@" >"$sout" 2>&1 &
		spid=$!
		# Until it listens (or dies: then the client fails to connect).
		pp_wait_server "$spid" "$port" || true
		ip netns exec "$cns" timeout "$PP_TIMEOUT" stdbuf -oL \
			"$tool" -d "$cdev" -g "$cg" -p "$port" "$@" "$sip" >"$cout" 2>&1 || crc=$?
		if [ $crc != 0 ]; then
			# A failed client usually leaves the server waiting forever.
			wait_for 5 pid_gone "$spid" || true
			kill "$spid" 2>/dev/null || true
		fi
		wait "$spid" || src=$?
		secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
		[ $crc = 0 ] || why="client exit $crc"
		[ $crc != 124 ] || why="client timed out (${PP_TIMEOUT}s)"
		[ $src = 0 ] || why="${why:+$why, }server exit $src"
		[ $src != 124 ] || why="${why:+$why, }server timed out"
		# -c: the server checks the received buffer, prints, exits 0 anyway.
		if grep -q "invalid data" "$sout"; then
			why="${why:+$why, }server: $(grep -m1 "invalid data" "$sout")"
		fi
		for f in "$sout" "$cout"; do
			grep -q "Mbit/sec" "$f" || { [ -n "$why" ] || why="no result line in $f"; }
		done
	fi
	if [ -z "$why" ]; then
		local mbit usec
		mbit=$(sed -n 's/.* = \([0-9.]*\) Mbit\/sec$/\1/p' "$cout")
		usec=$(sed -n 's/.* = \([0-9.]*\) usec\/iter$/\1/p' "$cout")
		echo "$desc: PASS ($mbit Mbit/sec, $usec usec/iter, ${secs}s)"
		PP_PASSED=$((PP_PASSED + 1))
		return 0
	fi
	echo "$desc: FAIL ($why)"
	echo "    server: $tool -d $sdev -g ${sg:-?} -p $port $* (netns $sns), output $sout:"
	sed 's/^/      /' "$sout"
	echo "    client: $tool -d $cdev -g ${cg:-?} -p $port $* $sip (netns $cns), output $cout:"
	sed 's/^/      /' "$cout"
	echo "    kernel log during the cell (last 20 lines):"
	dmesg | tail -n +"$((klines + 1))" | tail -20 | sed 's/^/      /'
	# Whether packets were lost, retried or dropped, and where: both
	# devices' counters since they were added (not only this cell's).
	for f in "$sdev" "$cdev"; do
		echo "    $f's non-zero counters: $(pp_counters "$f")"
	done
	return 1
}

# pp_counters DEV: DEV's non-zero port-1 hw counters, "name=value ...".
pp_counters() {
	local c v out=""
	for c in "/sys/class/infiniband/$1/ports/1/hw_counters/"*; do
		v=$(hw_counter "$1" "${c##*/}" 2>/dev/null) || continue
		[ "$v" = 0 ] || out+="${c##*/}=$v "
	done
	echo "${out:-none}"
}
