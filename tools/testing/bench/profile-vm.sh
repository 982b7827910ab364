#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A CPU profile of one perftest cell on rrxe and on C rxe, in one VM boot
# (the VM side; run it through the stable door with a results directory):
#
#   RRXE_OUT=/tmp/prof make vm-run FLAVOR=release \
#       CMD='PROF_TOOL=ib_atomic_bw PROF_ARGS="-A FETCH_AND_ADD -m 1024" tools/testing/bench/profile-vm.sh'
#
# Each driver in turn gets the pair of namespaces of lib/pingpong.sh's
# pp_setup_pair (a veth between them), perftest's server pinned to CPU 0
# and its client to CPU 1; one warm-up run, then a run of PROF_SECS (6)
# during which `perf record -a -e cpu-clock` samples both CPUs for 4 s
# (TCG has no hardware PMU: the timer-based clock event) and /proc/stat's
# context switches are counted; before it, a run of the same length during
# which `perf stat -a -A` counts, per CPU for 4 s, context switches and
# migrations, and /proc/softirqs is read at its start and end (the hand-offs
# an operation costs; divide by perftest's iterations; the release kernel
# has no tracepoints, so wake-ups and work items are not counted).  Writes
# to $RRXE_OUT/prof: DRV-run.txt (perftest's output and the context
# switches), DRV-events.txt (the counts and that run's perftest output),
# DRV-flat.txt (samples by symbol), DRV-comm.txt (by command: perftest,
# workers, idle), DRV-cpu.txt (by CPU and command), DRV-cpusym.txt (by
# CPU and symbol), for DRV rrxe and rxe.  A profile, not a benchmark: one
# run each, no interval (make bench gives those).
set -euo pipefail
lib=$(cd "$(dirname "$0")/../selftests/rrxe/lib" && pwd)
. "$lib/lib.sh"
. "$lib/pingpong.sh"
. "$lib/perftest.sh"
tool=${PROF_TOOL:-ib_atomic_bw}
read -r -a args <<<"${PROF_ARGS:--A FETCH_AND_ADD -m 1024}"
secs=${PROF_SECS:-6}
out=${RRXE_OUT:?RRXE_OUT: where the profiles go}/prof
command -v perf >/dev/null || { echo "profile-vm: perf is not installed (linux-perf)" >&2; exit 1; }
mkdir -p "$out"
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
modprobe rdma_rxe
modprobe rdma_rrxe
port=18515
events=context-switches,cpu-migrations,task-clock

# table DRV SORT LINES NAME: the first LINES rows of DRV's samples by SORT
# (perf report's keys), without perf's header, in $out/DRV-NAME.txt.
table() {
	perf report -i "/tmp/$1.data" --no-children --sort "$2" --stdio -g none 2>>"$out/$1-report.err" |
		grep -v '^#' | grep -v '^$' | head -"$3" >"$out/$1-$4.txt" || true
}

# profile DRV: the warm-up run and the profiled run on DRV's pair
# (lib/pingpong.sh's: ppa0 in ppA, 10.77.0.1, and ppb0 in ppB, 10.77.0.2).
profile() {
	local drv=$1 ga gb run spid ppid c0
	pp_setup_pair "$drv" "$drv"
	ga=$(pp_gid_index ppa0 10.77.0.1)
	gb=$(pp_gid_index ppb0 10.77.0.2)
	for run in warm events run; do
		port=$((port + 1))
		ip netns exec ppA taskset -c 0 "$tool" -d ppa0 -x "$ga" -p "$port" -F "${args[@]}" \
			-D "$secs" -f 1 >/tmp/prof-srv.log 2>&1 &
		spid=$!
		pp_wait_server "$spid" "$port" || true
		case $run in
		events)
			perf stat -a -A -e "$events" -o "/tmp/$drv-events.txt" -- \
				sh -c 'cat /proc/softirqs >/tmp/softirqs.0; sleep 4; cat /proc/softirqs >/tmp/softirqs.1' \
				2>"$out/$drv-stat.err" &
			ppid=$!
			;;
		run)
			c0=$(awk '/^ctxt/ { print $2 }' /proc/stat)
			perf record -a -g -e cpu-clock -F 2000 -o "/tmp/$drv.data" -- sleep 4 2>"$out/$drv-record.err" &
			ppid=$!
			;;
		esac
		ip netns exec ppB taskset -c 1 "$tool" -d ppb0 -x "$gb" -p "$port" -F "${args[@]}" \
			-D "$secs" -f 1 10.77.0.1 >"$out/$drv-$run.txt" 2>&1 || echo "profile-vm: $tool on $drv failed" >&2
		wait "$spid" || true
		if [ $run = events ]; then
			wait "$ppid" || echo "profile-vm: perf stat on $drv failed" >&2
			{
				cat "/tmp/$drv-events.txt"
				echo "softirqs during the run (per CPU):"
				paste /tmp/softirqs.0 /tmp/softirqs.1 | awk 'NR > 1 && NF == 6 { printf "%10s %10d %10d\n", $1, $5 - $2, $6 - $3 }'
				cat "$out/$drv-events.txt"
			} >"$out/$drv-ev.tmp" 2>/dev/null || true
			mv "$out/$drv-ev.tmp" "$out/$drv-events.txt"
		fi
	done
	wait "$ppid" || true
	echo "context switches during the 4 s: $(($(awk '/^ctxt/ { print $2 }' /proc/stat) - c0))" >>"$out/$drv-run.txt"
	# perf.data is written in the VM's /tmp: perf cannot finish it on 9p.
	perf report -i "/tmp/$drv.data" --no-children --sort sym --stdio -g none 2>"$out/$drv-report.err" |
		grep -v '^$' | head -150 >"$out/$drv-flat.txt" || true
	table "$drv" comm 30 comm
	table "$drv" cpu,comm 30 cpu
	table "$drv" cpu,sym 80 cpusym
	pp_teardown
}

profile rrxe
profile rxe
echo "profile-vm: $tool ${args[*]}: $out/{rrxe,rxe}-{run,events,flat,comm,cpu,cpusym}.txt"
