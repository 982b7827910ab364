#!/bin/bash
# RC/UC pingpong matrix (ibv_rc_pingpong, ibv_uc_pingpong of rdma-core) in
# the test VM:
#   pingpong-matrix.sh <server-driver> <client-driver> [smoke|quick|full]
#   pingpong-matrix.sh loop:<driver> [smoke|quick|full]
# Drivers: rxe (C rdma_rxe) or rrxe.  A pair runs the server on ppa0 in
# netns ppA and the client on ppb0 in netns ppB (veth, 10.77.0.0/24);
# loop:<driver> runs both on one device (ppl0).  See pingpong.sh.
# Prints one "cell ..." line per run and "matrix: N cells, M passed"; exits
# non-zero if a cell failed.  Example:
#   make vm-run CMD='bash $RRXE_LIB/pingpong-matrix.sh rxe rxe full'
# Knobs: PP_FILTER (ERE on the cell line, e.g. 'rc .*size=4096'), the
# PP_ITERS_<size> iteration counts below, PP_LONG_ITERS (the long 4 KiB RC
# run, full only; 0 skips it) and PP_LONG_TIMEOUT, PP_MAX_FAILS (stop after that many failed cells; 0, the
# default, runs them all), PP_TIMEOUT (s per process, 120), PP_LOG
# (/tmp/pingpong, server/client output of every run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/pingpong.sh"

usage() { echo "usage: $0 <rxe|rrxe> <rxe|rrxe> [smoke|quick|full]  |  $0 loop:<rxe|rrxe> [smoke|quick|full]" >&2; exit 2; }

[ $# -ge 1 ] || usage
srv=$1
shift
case $srv in
loop:*)
	drv=${srv#loop:}
	# Tolerate "loop:X loop:X" and "loop:X -".
	if [ $# -ge 1 ] && { [ "$1" = "$srv" ] || [ "$1" = - ]; }; then shift; fi
	;;
*)
	[ $# -ge 1 ] || usage
	cli=$1
	shift
	;;
esac
mode=${1:-quick}
case $mode in smoke | quick | full) ;; *) usage ;; esac

# Iterations per message size: each cell takes seconds, not minutes, under
# TCG with C rxe.
# Messages per cell: the smoke and quick forms move a quarter of the full
# form's (the same sizes, MTUs and flags, so every path; the full form has
# the volume).  The debug kernel's lib.sh sets its own smaller counts.
div=1
[ "$mode" = full ] || div=4
PP_ITERS_1=${PP_ITERS_1:-$((1000 / div))}
PP_ITERS_4096=${PP_ITERS_4096:-$((1000 / div))}
PP_ITERS_65536=${PP_ITERS_65536:-$((1000 / div))}
PP_ITERS_1048576=${PP_ITERS_1048576:-$((100 / div))}
# 100000 x 4 KiB takes 35-45 s on an idle 2-core host, but about 7 min
# when another TCG VM shares the host (it then runs about 10x slower).
PP_LONG_ITERS=${PP_LONG_ITERS:-100000}
PP_LONG_TIMEOUT=${PP_LONG_TIMEOUT:-600}
PP_FILTER=${PP_FILTER:-}
PP_MAX_FAILS=${PP_MAX_FAILS:-0}

if [ -n "${drv:-}" ]; then
	pp_setup_loop "$drv"
	ends=(ppl0 ppL ppl0 ppL 10.77.1.1)
else
	pp_setup_pair "$srv" "$cli"
	ends=(ppa0 ppA ppb0 ppB 10.77.0.1)
fi

failed=()
# cell rc|uc SIZE MTU [ARGS...]; -n in ARGS overrides PP_ITERS_<SIZE>.
cell() {
	local kind=$1 size=$2 mtu=$3
	shift 3
	local args=(-s "$size" -m "$mtu")
	if [[ " $* " != *" -n "* ]]; then
		local iters_var=PP_ITERS_$size
		args+=(-n "${!iters_var:-1000}")
	fi
	args+=("$@")
	if [ -n "$PP_FILTER" ] && ! [[ "cell $kind $PP_LABEL $(pp_describe "${args[@]}")" =~ $PP_FILTER ]]; then
		return 0
	fi
	if [ "$PP_MAX_FAILS" -gt 0 ] && [ ${#failed[@]} -ge "$PP_MAX_FAILS" ]; then
		return 0
	fi
	run_pingpong "ibv_${kind}_pingpong" "${ends[@]}" "${args[@]}" ||
		failed+=("$kind $(pp_describe "${args[@]}")")
}

t0=$SECONDS
if [ "$mode" = smoke ]; then
	# The debug kernel's share: RC single- and multi-packet with events,
	# UC multi-packet, both path MTUs.
	cell rc 4096 1024 -c
	cell rc 65536 4096 -c -e
	cell uc 65536 1024 -c
elif [ "$mode" = quick ]; then
	cell rc 1 1024 -c
	cell rc 4096 1024 -c
	cell rc 65536 4096 -c -e
	cell rc 1048576 4096 -c
	cell uc 4096 1024 -c
	cell uc 65536 4096 -c -e
else
	for mtu in 1024 4096; do
		for size in 1 4096 65536 1048576; do
			cell rc "$size" "$mtu" -c
			cell rc "$size" "$mtu" -c -e
		done
	done
	# UC: no retransmission, a lost packet loses the message and the run
	# hangs until the timeout; veth does not lose packets.
	for mtu in 1024 4096; do
		for size in 1 4096 65536 1048576; do
			cell uc "$size" "$mtu" -c
		done
	done
	cell uc 4096 1024 -c -e
	if [ "$PP_LONG_ITERS" -gt 0 ]; then
		PP_TIMEOUT=$PP_LONG_TIMEOUT cell rc 4096 1024 -n "$PP_LONG_ITERS"
	fi
fi
pp_teardown

echo "matrix: $PP_CELLS cells, $PP_PASSED passed ($PP_LABEL, $mode, $((SECONDS - t0))s)"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'failed: %s\n' "${failed[@]}"
	exit 1
fi
