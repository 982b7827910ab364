# shellcheck shell=bash
# rdma_cm tool pairs for VM tests (sourced after lib.sh and
# pingpong.sh, inside the test VM): server in namespace ppA, client in
# ppB (see pp_setup_pair).
#
#   cm_pair NAME SERVER_CMD... -- CLIENT_CMD...
#       runs one pair; both must exit 0 within 90 s, else the test
#       fails showing both outputs (kept in $CM_LOG).  CM_READY (an ERE),
#       if set, is what the server prints once it listens.

CM_LOG=/tmp/rdma-cm
mkdir -p "$CM_LOG"
CM_N=0

# cm_pair NAME SERVER_CMD -- CLIENT_CMD: the server in ppA, then the client
# in ppB; both must exit 0 within 90 s.  perftest's clock calibration can
# fail under TCG ("Correlation coefficient r^2 < 0.9", see perftest.sh):
# that side then exits without the closing handshake and its peer waits;
# such a run is repeated (up to PT_CALIBRATION_TRIES times, said on
# stderr).
cm_pair() {
	local name=$1 try
	shift
	for ((try = 1; ; try++)); do
		cm_pair_once "$name" "$@" && return 0
		grep -qs 'Correlation coefficient' "$CM_LOG/$CM_N-$name".* || break
		((try < ${PT_CALIBRATION_TRIES:-1})) || break
		echo "cm_pair: $name: perftest's clock calibration failed (try $try), repeating" >&2
	done
	sed 's/^/  # client: /' "$CM_LOG/$CM_N-$name.client" | tail -8
	sed 's/^/  # server: /' "$CM_LOG/$CM_N-$name.server" | tail -8
	fail "$name ($PP_LABEL): $CM_WHY"
}

# cm_wait_listener NS SECS: waits until namespace NS has an rdma_cm ID in
# state LISTEN, at most SECS seconds; false if none came (a caller whose
# server listens on the wildcard address, which shows no ID, goes on: the
# client's connect decides).
cm_wait_listener() {
	local end
	# In microseconds, in the shell's 64-bit arithmetic (mawk's printf
	# "%d" stops at 2^31 - 1, which made an earlier form of this wait not
	# wait at all).
	end=$(awk -v s="$2" 'BEGIN { printf "%.0f", s * 1000000 }')
	end=$((${EPOCHREALTIME/./} + end))
	while ! ip netns exec "$1" rdma resource show cm_id 2>/dev/null | grep -q 'state LISTEN'; do
		((${EPOCHREALTIME/./} < end)) || return 1
		nap 0.1
	done
}

cm_pair_once() {
	local name=$1 i
	shift
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	CM_N=$((CM_N + 1))
	local so="$CM_LOG/$CM_N-$name.server" co="$CM_LOG/$CM_N-$name.client" spid src=0 crc=0
	ip netns exec ppA timeout 90 "${srv[@]}" >"$so" 2>&1 &
	spid=$!
	# rdma_cm servers listen on no TCP port: wait until ppA shows a
	# listening rdma_cm ID (at most 1.5 s), or until the server prints
	# CM_READY (an ERE) if that is set.
	if [ -n "${CM_READY:-}" ]; then
		for ((i = 0; i < 300; i++)); do
			grep -Eqs -- "$CM_READY" "$so" && break
			kill -0 "$spid" 2>/dev/null || break
			nap 0.1
		done
	else
		cm_wait_listener ppA 1.5 || true
	fi
	ip netns exec ppB timeout 90 "${cli[@]}" >"$co" 2>&1 || crc=$?
	# A server that listens on the wildcard address shows no rdma_cm ID
	# to wait for, and on a loaded host any server may still be starting
	# when the client's REQ (REJECTED) or SIDR REQ (UNREACHABLE, udaddy)
	# arrives.  Then the client goes again, once, if the server still
	# waits for it.
	if [ $crc != 0 ] && kill -0 "$spid" 2>/dev/null && grep -qs 'Unexpected CM event\|REJECTED\|UNREACHABLE\|event 8' "$co"; then
		echo "cm_pair: $name ($PP_LABEL): the client was turned away while the server was starting; once more" >&2
		nap 1
		crc=0
		ip netns exec ppB timeout 90 "${cli[@]}" >"$co" 2>&1 || crc=$?
	fi
	if [ $crc != 0 ]; then
		wait_for 5 pid_gone "$spid" || true
		kill "$spid" 2>/dev/null || true
	fi
	wait "$spid" || src=$?
	CM_WHY="client exit $crc, server exit $src"
	[ $crc = 0 ] && [ $src = 0 ] || return 1
	note "$name $PP_LABEL: ok ($(grep -v '^-*$' "$co" | tail -1 | tr -s ' \t' ' '))"
}

# cm_tools "SRV_DRV CLI_DRV"...: for each pair of drivers, two devices in
# two namespaces (pp_setup_pair) and every stock rdma_cm tool between
# them: rping with data verification, ucmatose with several connections,
# udaddy (UD with SIDR), mckey (multicast join), rdma_server/rdma_client,
# and perftest over rdma_cm (ib_send_bw -R, ib_write_bw -R).  The MAD
# layer must open the ports (no "Couldn't open port").  CM_KEEP_PAIR=1
# leaves the last pair up for the caller.
cm_tools() {
	local pair klines
	for pair; do
		klines=$(dmesg | wc -l)
		# shellcheck disable=SC2086
		pp_setup_pair $pair
		if dmesg | tail -n +"$((klines + 1))" | grep -E "Couldn't (open|create|start)|ib_mad|ib_cm"; then
			fail "the MAD layer could not open a port ($PP_LABEL)"
		fi
		cm_pair rping rping -s -a 10.77.0.1 -C 100 -S 1000 -V -- rping -c -a 10.77.0.1 -C 100 -S 1000 -V
		cm_pair ucmatose ucmatose -b 10.77.0.1 -c 4 -C 20 -- ucmatose -s 10.77.0.1 -c 4 -C 20
		cm_pair udaddy udaddy -b 10.77.0.1 -c 2 -- udaddy -s 10.77.0.1 -c 2
		# Datagrams sent before the receiver has joined are lost (UD):
		# the sender starts once the receiver says it joined
		# (line-buffered).  Not with C rxe sending (the client, ppb0):
		# it completes all of mckey's sends but often transmits fewer
		# datagrams (its own sent_pkts counter shows 1, 8 or 9 of 10;
		# everything it sent reached rrxe's receiver), so the receiver
		# waits forever.
		if [ "${pair#* }" = rxe ]; then
			note "mckey $PP_LABEL: skipped (C rxe as the multicast sender loses datagrams it completed)"
		else
			CM_READY=joined cm_pair mckey stdbuf -oL mckey -m 239.1.1.1 -b 10.77.0.1 -- mckey -m 239.1.1.1 -b 10.77.0.2 -s
		fi
		cm_pair rdma_client rdma_server -- rdma_client -s 10.77.0.1
		# perftest over rdma_cm connects as rping does (RC, the same CM
		# exchange): the debug kernel's quick run leaves it to the
		# release kernel (rdma-cm-interop.sh) and make test-full.
		if debug_quick; then
			note "ib_send_bw -R, ib_write_bw -R $PP_LABEL: on the release kernel (rdma-cm-interop.sh) and in make test-full"
		else
			cm_pair ib_send_bw_R ib_send_bw -F -R -n 200 -- ib_send_bw -F -R -n 200 10.77.0.1
			cm_pair ib_write_bw_R ib_write_bw -F -R -n 200 -- ib_write_bw -F -R -n 200 10.77.0.1
		fi
		[ "$pair" = "${!#}" ] && [ "${CM_KEEP_PAIR:-0}" = 1 ] || pp_teardown
	done
}
