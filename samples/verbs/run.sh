#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the verbs samples inside the VM on two rrxe devices, and counts the
# system calls of their data paths.  From the host:
#
#   make samples-run                       (all three samples)
#   make vm-run CMD='bash samples/verbs/run.sh onesided'
#
# Two network namespaces joined by a veth: server sa0 (10.78.9.1, ns sA),
# client sb0 (10.78.9.2, ns sB), both rrxe, path MTU 1024.  Each program
# runs twice under `strace -f -c`, with N and with 2N messages: the
# difference of the call counts, divided by N, is what one more message
# costs in system calls (set-up and teardown cancel out).  Prints one
# `syscalls:` line per program and mode.  Exits non-zero if a sample
# fails its own checks.
#
# Environment: SAMPLES_BIN (the built samples; default out/samples),
# SAMPLES_N (N, default 2000; the one-sided rounds are N/10),
# SAMPLES_TIMEOUT (seconds each program may run, default 90).
set -euo pipefail
top=${RRXE_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${SAMPLES_BIN:-$top/out/samples}
N=${SAMPLES_N:-2000}
# Seconds a sample program may run (SAMPLES_TIMEOUT).
PROG_TIMEOUT=${SAMPLES_TIMEOUT:-90}
work=$(mktemp -d /tmp/samples.XXXXXX)
which=${1:-all}

for p in onesided sendrecv faa_counter; do
	[ -x "$bin/$p" ] || { echo "samples: $bin/$p missing: run 'make samples' on the host" >&2; exit 1; }
done
command -v strace >/dev/null || { echo "samples: strace missing (scripts/setup.sh installs it)" >&2; exit 1; }

setup() {
	modprobe rdma_rrxe
	ip netns add sA
	ip netns add sB
	ip link add vsa netns sA type veth peer name vsb netns sB
	ip -n sA link set lo up
	ip -n sB link set lo up
	ip -n sA link set vsa up
	ip -n sB link set vsb up
	ip -n sA addr add 10.78.9.1/24 dev vsa
	ip -n sB addr add 10.78.9.2/24 dev vsb
	ip netns exec sA rdma link add sa0 type rrxe netdev vsa
	ip netns exec sB rdma link add sb0 type rrxe netdev vsb
	local i
	for i in $(seq 100); do
		grep -qi "ffff:0a4e:0901" /sys/class/infiniband/sa0/ports/1/gids/* 2>/dev/null &&
			grep -qi "ffff:0a4e:0902" /sys/class/infiniband/sb0/ports/1/gids/* 2>/dev/null && return 0
		sleep 0.1
	done
	echo "samples: sa0/sb0 did not come up" >&2
	exit 1
}
teardown() {
	ip netns exec sA rdma link delete sa0 2>/dev/null || true
	ip netns exec sB rdma link delete sb0 2>/dev/null || true
	ip netns delete sA 2>/dev/null || true
	ip netns delete sB 2>/dev/null || true
	rm -rf "$work"
}
trap teardown EXIT

# calls FILE [SYSCALL]: the call count of strace -c's summary in FILE
# (all calls, or one system call's).
calls() {
	awk -v s="${2:-total}" '$NF == s { print $4; found = 1 } END { if (!found) print 0 }' "$1"
}

# pair NAME N SERVER-ARGS... -- CLIENT-ARGS...: runs the server in sA and
# the client in sB, both under strace -c (summaries in $work/NAME.N.{s,c}),
# and prints their output.  The server's port is 7471.
pair() {
	local name=$1 n=$2 sargs=() cargs=() spid rc=0
	shift 2
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	# Each under `timeout` (inside strace: its few calls are the same
	# with N and 2N messages and cancel out), so that a side left waiting
	# for a peer that failed ends, and the failure is reported.
	ip netns exec sA strace -f -c -o "$work/$name.$n.s" timeout -k 5 "$PROG_TIMEOUT" "${sargs[@]}" >"$work/$name.$n.sout" 2>&1 &
	spid=$!
	ip netns exec sB strace -f -c -o "$work/$name.$n.c" timeout -k 5 "$PROG_TIMEOUT" "${cargs[@]}" >"$work/$name.$n.cout" 2>&1 || rc=$?
	wait "$spid" || rc=$?
	sed 's/^/  /' "$work/$name.$n.sout" "$work/$name.$n.cout"
	if [ $rc != 0 ]; then
		echo "samples: $name failed (exit $rc; 124: a side still waiting after $PROG_TIMEOUT s)" >&2
		counters
		exit 1
	fi
}

# counters: both devices' non-zero port counters (after a failure: were
# packets dropped, retried, never sent?).
counters() {
	local d f v
	for d in sa0 sb0; do
		for f in /sys/class/infiniband/$d/ports/1/hw_counters/*; do
			v=$(cat "$f" 2>/dev/null) || continue
			[ "$v" = 0 ] || echo "samples: $d ${f##*/} $v" >&2
		done
	done
}

# per_msg NAME N SIDE [SYSCALL]: (calls with 2N - calls with N) / N.
per_msg() {
	local a b
	a=$(calls "$work/$1.$2.$3" "${4:-total}")
	b=$(calls "$work/$1.$((2 * $2)).$3" "${4:-total}")
	awk -v a="$a" -v b="$b" -v n="$2" 'BEGIN { printf "%.4f", (b - a) / n }'
}

setup
S=10.78.9.1 C=10.78.9.2

if [ "$which" = all ] || [ "$which" = onesided ]; then
	echo "== onesided: RDMA WRITE and READ into the server's buffer, the server's CPU idle"
	r=$((N / 10))
	for n in $r $((2 * r)); do
		pair onesided "$n" "$bin/onesided" server sa0 $S 7471 -- "$bin/onesided" client sb0 $C $S 7471 "$n"
	done
	echo "syscalls: onesided server per round: $(per_msg onesided $r s)" \
		"(all calls: $(calls "$work/onesided.$r.s") with $r rounds, $(calls "$work/onesided.$((2 * r)).s") with $((2 * r)))"
	echo "syscalls: onesided client per round: $(per_msg onesided $r c) (WRITE and READ chained in one post)"
	echo "syscalls: onesided client doorbell writes per round: $(per_msg onesided $r c write)"
fi

if [ "$which" = all ] || [ "$which" = sendrecv ]; then
	for mode in poll events; do
		echo "== sendrecv ($mode): SENDs in batches of 16, completions by $mode"
		for n in $N $((2 * N)); do
			pair "sr-$mode" "$n" "$bin/sendrecv" server sa0 $S 7471 "$mode" "$n" -- \
				"$bin/sendrecv" client sb0 $C $S 7471 "$mode" "$n" 64 16
		done
		echo "syscalls: sendrecv $mode client per message: $(per_msg "sr-$mode" "$N" c)" \
			"(write: $(per_msg "sr-$mode" "$N" c write), read: $(per_msg "sr-$mode" "$N" c read))"
		echo "syscalls: sendrecv $mode server per message: $(per_msg "sr-$mode" "$N" s)" \
			"(write: $(per_msg "sr-$mode" "$N" s write), read: $(per_msg "sr-$mode" "$N" s read))"
	done
fi

if [ "$which" = all ] || [ "$which" = faa ]; then
	echo "== faa_counter: 4 clients, fetch-and-add on one counter in the server's memory"
	f=$((N / 4))
	ip netns exec sA timeout -k 5 "$PROG_TIMEOUT" "$bin/faa_counter" server sa0 $S 7471 4 >"$work/faa.s" 2>&1 &
	spid=$!
	cpids=()
	for i in 1 2 3 4; do
		ip netns exec sB timeout -k 5 "$PROG_TIMEOUT" "$bin/faa_counter" client sb0 $C $S 7471 "$f" >"$work/faa.c$i" 2>&1 &
		cpids+=($!)
	done
	rc=0
	for p in "${cpids[@]}"; do wait "$p" || rc=1; done
	wait "$spid" || rc=1
	sed 's/^/  /' "$work/faa.s" "$work"/faa.c[1-4]
	[ $rc = 0 ] || { echo "samples: faa_counter failed" >&2; counters; exit 1; }
fi
echo "samples: all passed"
