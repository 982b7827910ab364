# shellcheck shell=bash
# Helpers for the attack tests (remote-flood, forged-peers;
# sourced after lib.sh and pingpong.sh, inside the test VM).  Crafted
# packets are written by roce-flood (tools/testing/roce-flood, built on the
# host into $RRXE_TOP/out/progs) and replayed with pcap_replay
# (tools/testing/selftests/rrxe/progs/pcap_replay.c: AF_PACKET, sendmmsg) from ppB's
# end of the veth, so they arrive at ppa0 (ppA, 10.77.0.1) from another
# namespace.
#
#   atk_flood ARGS...          runs roce-flood
#   atk_prepare                rp_filter off in ppA (forged sources pass
#                              the stack and reach rrxe)
#   atk_mac NS DEV             hardware address of DEV in NS
#   atk_stats DEV              DEV's counters as "name value" lines
#   atk_get STATS NAME         one value of atk_stats output
#   atk_quiet DEV              waits until DEV's counters stop moving
#   atk_replay FILE            pcap_replay FILE on vpb (in ppB); sets
#                              ATK_SENT, ATK_SECS, ATK_PPS; fails on any
#                              packet it could not send
#   atk_sum FILE KEY           one value of a roce-flood summary
#   atk_serve PID DIR          injects the packets program PID asks for
#                              (rrxe_ksft.handoff.Injector) until it ends

ATK_BIN=${ATK_BIN:-$RRXE_TOP/out/progs/roce-flood}
ATK_REPLAY=${ATK_REPLAY:-$RRXE_TOP/out/progs/pcap_replay}

atk_flood() {
	[ -x "$ATK_BIN" ] || fail "$ATK_BIN missing (tools/testing/runner/build-progs.sh builds it before the VM boots)"
	"$ATK_BIN" "$@"
}

atk_prepare() {
	local k
	for k in all default vpa; do
		ip netns exec ppA sysctl -qw "net.ipv4.conf.$k.rp_filter=0"
	done
	[ -x "$ATK_REPLAY" ] || fail "$ATK_REPLAY missing (tools/testing/runner/build-progs.sh builds it)"
	# Neighbours resolved before anything is measured.
	ip netns exec ppB ping -c 1 -W 5 10.77.0.1 >/dev/null || fail "ping ppB -> ppA"
}

atk_mac() { ip -n "$1" -o link show "$2" | grep -o 'link/ether [0-9a-f:]*' | awk '{print $2}'; }

# atk_stats DEV: DEV's counters, a "name value" line each (split in bash:
# a process per line costs seconds on the debug kernel).
atk_stats() {
	local -a w
	local i
	# shellcheck disable=SC2207
	w=($(rdma statistic show link "$1/1"))
	for ((i = 2; i + 1 < ${#w[@]}; i += 2)); do
		echo "${w[i]} ${w[i + 1]}"
	done
}

# atk_get STATS NAME: NAME's value in an atk_stats output (0 if absent).
atk_get() {
	local k v
	while read -r k v; do
		[ "$k" = "$2" ] && { echo "$v"; return 0; }
	done <<<"$1"
	echo 0
}

atk_quiet() {
	local prev="" cur i
	for ((i = 0; i < 100; i++)); do
		cur=$(atk_stats "$1")
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
		nap 0.3
	done
	fail "$1: counters still moving after 30 s"
}

atk_replay() {
	local out failed
	out=$(ip netns exec ppB "$ATK_REPLAY" vpb "$1" 2>&1) || fail "pcap_replay $1: $out"
	# Parsed by bash itself: a process per field costs a second or more
	# per replay on the debug kernel.
	ATK_SENT="" ATK_SECS="" ATK_PPS="" failed=""
	[[ $out =~ sent=([0-9]+) ]] && ATK_SENT=${BASH_REMATCH[1]}
	[[ $out =~ seconds=([0-9.]+) ]] && ATK_SECS=${BASH_REMATCH[1]}
	[[ $out =~ pps=([0-9]+) ]] && ATK_PPS=${BASH_REMATCH[1]}
	[[ $out =~ failed=([0-9]+) ]] && failed=${BASH_REMATCH[1]}
	[ -n "$ATK_SENT" ] || fail "pcap_replay printed no packet count: $out"
	[ "${failed:-0}" = 0 ] || fail "pcap_replay could not send $failed packets: $out"
}

atk_sum() { sed -n "s/^$2=//p" "$1"; }

# atk_start SRV_DRV PROG LOG READY ARGS...: devices ppa0 (SRV_DRV) and
# ppb0 (rrxe) in two namespaces (pp_setup_pair), the attack tools ready
# (atk_prepare), and the pyverbs program PROG (in progs/) started in the
# background as `PROG ppa0 GID_A ppb0 GID_B ARGS...` with its output in
# LOG; returns once PROG has written the file READY.  Sets gA and gB (the
# GID indices) and ATK_PID (PROG's pid).
atk_start() {
	local drv=$1 prog=$2 log=$3 ready=$4
	shift 4
	pp_setup_pair "$drv" rrxe
	atk_prepare
	gA=$(pp_gid_index ppa0 10.77.0.1) || fail "no GID on ppa0"
	gB=$(pp_gid_index ppb0 10.77.0.2) || fail "no GID on ppb0"
	/usr/bin/python3 "$RRXE_PROGS/$prog" ppa0 "$gA" ppb0 "$gB" "$@" >"$log" 2>&1 &
	ATK_PID=$!
	wait_for 60 test -s "$ready" || fail "$prog did not start: $(cat "$log")"
}

# atk_serve PID DIR: until process PID ends, serves its requests for
# packets (rrxe_ksft.handoff.Injector): for DIR/inject.N (N = 1, 2, ...),
# one line of roce-flood --mode sequence arguments (after defaults that
# send from the peer ppB, 10.77.0.2, to ppA, 10.77.0.1: a request may
# name other addresses), the packets are built, replayed from ppB, and
# DIR/injected.N is created.  Sets ATK_INJECTED to the number served.
atk_serve() {
	local pid=$1 dir=$2 n=1 args src dst
	src=$(atk_mac ppB vpb)
	dst=$(atk_mac ppA vpa)
	while ! pid_gone "$pid"; do
		if [ ! -s "$dir/inject.$n" ]; then
			nap 0.05
			continue
		fi
		read -r args <"$dir/inject.$n"
		# shellcheck disable=SC2086
		atk_flood --mode sequence --out "$dir/inject.pcap" --src-mac "$src" --dst-mac "$dst" \
			--local 10.77.0.1 --peer 10.77.0.2 $args >/dev/null 2>"$dir/gen.log" ||
			fail "roce-flood --mode sequence $args: $(cat "$dir/gen.log")"
		atk_replay "$dir/inject.pcap"
		touch "$dir/injected.$n"
		n=$((n + 1))
	done
	ATK_INJECTED=$((n - 1))
}
