#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench's VM side (run by bench.sh in one VM boot): rrxe against C rxe,
# A-B-B-A, the method of METHOD.md.  Both modules stay loaded; each driver
# has pairs of namespaces joined by their own veth (MTU 9000), one device
# per namespace:
#   R  rrxe  bRa/bRb   bra0/brb0   10.80.1.1/.2   every cell
#   C  rxe   bCa/bCb   bca0/bcb0   10.80.2.1/.2   every cell
#   R2 rrxe  bR2a/bR2b br2a0/br2b0 10.80.3.1/.2   the rrxe/rrxe control
#   C2 rxe   bC2a/bC2b bc2a0/bc2b0 10.80.4.1/.2   the rxe/rxe control
# A cell runs arm A (rrxe, pair R) and arm B (C rxe, pair C) in pairs,
# A then B in even pairs and B then A in odd ones, seconds apart, after one
# discarded warm-up run of each.  The two control cells run R, C, C2, R2 in
# even pairs and R2, C2, C, R in odd ones: each four runs give a pair of
# the comparison and one of each control (R2 against R, C2 against C).
# Every run: perftest time-based (-D BENCH_SECS, one second of margin at
# each end), its server pinned to CPU 0 and its client to CPU 1 for both
# drivers; around it /proc/stat (CPU ticks, context switches) and the
# veth's byte counters, read by bash (no process inside the window).  One
# line per run:
#   benchrun {"cell":...,"cmp":...,"arm":...,"pair":...,"order":...,
#             "value":...,"unit":...,"cpu_s":...,"sys_s":...,"ctxt":...,
#             "bytes":...,"t":...}
# (tools/testing/bench/benchstat.py reads them).  NVMe over RDMA lives in
# the initial namespace, where one driver at a time can bind UDP 4791: its
# runs load one module, connect, run fio write then read (two cells, each
# its own window) and unload, the drivers alternating the same way.  NFS
# over RDMA (lib/nfs.sh) runs last, in its own pair of namespaces per run:
# server and mount afresh, dd write then read of one file (two cells).
#
# Environment: BENCH_SECS (3: one second measured), BENCH_PAIRS (15: goal cells and controls),
# BENCH_PAIRS_REST (3: the other cells), BENCH_CELLS (comma-separated
# prefixes of cell names, e.g. ib_read,nvme; empty: all), NVME_SECS (6),
# NFS_BENCH_MB (256: the file the NFS cells write and read), BENCH_ARM_OFF
# (gso: the parameter abc's third arm turns off).
set -euo pipefail
lib=$(cd "$(dirname "$0")/../selftests/rrxe/lib" && pwd)
. "$lib/lib.sh"
. "$lib/pingpong.sh"
. "$lib/perftest.sh"
. "$lib/nvme.sh"
. "$lib/nfs.sh"

SECS=${BENCH_SECS:-3}
PAIRS=${BENCH_PAIRS:-15}
PAIRS_REST=${BENCH_PAIRS_REST:-3}
NVME_SECS=${NVME_SECS:-6}
NFS_BENCH_MB=${NFS_BENCH_MB:-256}
HZ=$(getconf CLK_TCK)
# perftest measures between margins of one second at each end (-f 1) and
# refuses a duration not above twice the margin.
((SECS > 2)) || { echo "bench: BENCH_SECS must be above 2 (is $SECS)" >&2; exit 1; }
RUN_TIMEOUT=$((SECS + 60))
FAILS_IN_A_ROW=3

declare -A DRV NSA NSB DEVA DEVB IPA GIDA GIDB VETH HOLD

# bench_pair NAME DRIVER OCTET: the pair NAME of DRIVER on 10.80.OCTET.0/24;
# a sleeping process in its first namespace keeps /proc/PID/net/dev there.
bench_pair() {
	local n=$1 drv=$2 o=$3 l=${1,,}
	DRV[$n]=$drv NSA[$n]=b${n}a NSB[$n]=b${n}b DEVA[$n]=b${l}a0 DEVB[$n]=b${l}b0
	IPA[$n]=10.80.$o.1 VETH[$n]=vb${l}a
	ip netns add "${NSA[$n]}"
	ip netns add "${NSB[$n]}"
	ip link add "vb${l}a" netns "${NSA[$n]}" type veth peer name "vb${l}b" netns "${NSB[$n]}"
	pp_netdev_up "${NSA[$n]}" "vb${l}a" "10.80.$o.1"
	pp_netdev_up "${NSB[$n]}" "vb${l}b" "10.80.$o.2"
	pp_rdma_add "${NSA[$n]}" "${DEVA[$n]}" "$drv" "vb${l}a" "10.80.$o.1"
	pp_rdma_add "${NSB[$n]}" "${DEVB[$n]}" "$drv" "vb${l}b" "10.80.$o.2"
	GIDA[$n]=$(pp_gid_index "${DEVA[$n]}" "10.80.$o.1")
	GIDB[$n]=$(pp_gid_index "${DEVB[$n]}" "10.80.$o.2")
	ip netns exec "${NSA[$n]}" sleep infinity &
	HOLD[$n]=$!
}

bench_pairs_down() {
	local n
	for n in "${!HOLD[@]}"; do
		kill "${HOLD[$n]}" 2>/dev/null || true
		rdma link delete "${DEVA[$n]}" 2>/dev/null || true
		rdma link delete "${DEVB[$n]}" 2>/dev/null || true
		ip netns delete "${NSA[$n]}" 2>/dev/null || true
		ip netns delete "${NSB[$n]}" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	HOLD=()
}

# stat_now: CPU busy ticks (user nice system irq softirq steal), kernel
# ticks (system irq softirq) and context switches so far, in BUSY KERN CTXT.
stat_now() {
	local key u n s idle iow irq sirq st rest
	while read -r key u n s idle iow irq sirq st rest; do
		case $key in
		cpu) BUSY=$((u + n + s + irq + sirq + st)) KERN=$((s + irq + sirq)) ;;
		ctxt) CTXT=$u ;;
		esac
	done </proc/stat
}

# wire_bytes FILE IFACE: received plus sent bytes of IFACE in the
# /proc/.../net/dev FILE (its namespace's view).
wire_bytes() {
	local ifc rx tx f
	while read -r ifc rx f f f f f f f tx f; do
		[ "$ifc" = "$2:" ] && { echo $((rx + tx)); return 0; }
	done <"$1"
	echo 0
}

# uptime_now: seconds since boot, for looking at drift.
uptime_now() { local u _; read -r u _ </proc/uptime; echo "$u"; }

# The figure of a run's output: MB/s for *_bw and pingpong, the mean
# latency (t_avg, column 3 of a time-based run) for *_lat.
value_of() { # TOOL OUTPUT
	case $1 in
	*_bw) pt_bw_avg "$2" ;;
	*_lat) pt_result_row "$2" | awk '{ print $3 }' ;;
	ibv_rc_pingpong) sed -n 's/.* = \([0-9.]*\) Mbit\/sec$/\1/p' <<<"$2" | awk '{ printf "%.2f\n", $1 / 8 * 1e6 / 1048576 }' ;;
	esac
}

# json_str TEXT: TEXT as a JSON string (quotes, backslashes, control
# characters escaped).
json_str() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }

FAILS=0
# bench_run WARM PAIR TOOL ARGS...: one run of TOOL between pair PAIR's
# devices (server in its first namespace on CPU 0, client in the second on
# CPU 1); its figures in RUN (the benchrun fields after the run's identity,
# which emit adds).
bench_run() {
	local warm=$1 p=$2 tool=$3
	shift 3
	local port=$((PT_PORT += 1)) b0 b1 busy kern ctxt t out v spid crc=0 src=0 err="" unit=MB/s
	local dev=/proc/${HOLD[$p]}/net/dev
	local -a srv_args=(-d "${DEVA[$p]}") cli_args=(-d "${DEVB[$p]}")
	if [ "$tool" = ibv_rc_pingpong ]; then
		srv_args+=(-g "${GIDA[$p]}" -p "$port" "$@")
		cli_args+=(-g "${GIDB[$p]}" -p "$port" "$@" "${IPA[$p]}")
	else
		srv_args+=(-x "${GIDA[$p]}" -p "$port" -F "$@")
		cli_args+=(-x "${GIDB[$p]}" -p "$port" -F "$@" "${IPA[$p]}")
	fi
	t=$(uptime_now)
	b0=$(wire_bytes "$dev" "${VETH[$p]}")
	stat_now
	busy=$BUSY kern=$KERN ctxt=$CTXT
	ip netns exec "${NSA[$p]}" taskset -c 0 timeout "$RUN_TIMEOUT" "$tool" "${srv_args[@]}" >/tmp/bench-srv.log 2>&1 &
	spid=$!
	pp_wait_server "$spid" "$port" || true
	out=$(ip netns exec "${NSB[$p]}" taskset -c 1 timeout "$RUN_TIMEOUT" "$tool" "${cli_args[@]}" 2>&1) || crc=$?
	[ $crc = 0 ] || wait_for 5 pid_gone "$spid" || kill "$spid" 2>/dev/null || true
	wait "$spid" || src=$?
	stat_now
	b1=$(wire_bytes "$dev" "${VETH[$p]}")
	v=$(value_of "$tool" "$out")
	if [ $crc != 0 ] || [ $src != 0 ]; then
		err="client exit $crc, server exit $src: $(tail -1 <<<"$out")"
	elif grep -q 'Correlation coefficient' <<<"$out"; then
		err="perftest's clock calibration failed"
	elif ! pt_positive "$v"; then
		err="no figure in the output: $(tail -1 <<<"$out")"
	fi
	if [ -n "$err" ]; then
		v=null
		FAILS=$((FAILS + 1))
		echo "bench-fail $tool ${DRV[$p]} (pair $p): $err" >&2
		sed 's/^/    server: /' /tmp/bench-srv.log | tail -3 >&2
	else
		FAILS=0
	fi
	[[ $tool == *_lat ]] && unit=usec
	run_fields "$v" "$unit" "$busy" "$kern" "$ctxt" $((b1 - b0)) "$t" "$warm" "$err"
}

# run_fields VALUE UNIT BUSY0 KERN0 CTXT0 BYTES T WARM ERR: sets RUN, a
# run's benchrun fields, from its figure and the /proc/stat readings
# before it (stat_now's BUSY, KERN and CTXT hold the ones after).
run_fields() {
	RUN=$(printf '"value":%s,"unit":"%s","cpu_s":%s,"sys_s":%s,"ctxt":%d,"bytes":%d,"t":%s%s%s' \
		"$1" "$2" "$(ticks_s $((BUSY - $3)))" "$(ticks_s $((KERN - $4)))" \
		$((CTXT - $5)) "$6" "$7" \
		"$([ "$8" = 1 ] && echo ',"warmup":true')" \
		"$([ -n "$9" ] && echo ",\"error\":$(json_str "$9")")")
}

# ticks_s TICKS: TICKS of /proc/stat in seconds.
ticks_s() { awk -v d="$1" -v hz="$HZ" 'BEGIN { printf "%.2f", d / hz }'; }

# emit CELL PAIRNO (CMP ARM ORDER)...: the last run (RUN) as a benchrun
# line for each comparison it belongs to.
emit() {
	local cell=$1 pno=$2
	shift 2
	while [ $# -ge 3 ]; do
		echo "benchrun {\"cell\":\"$cell\",\"cmp\":\"$1\",\"arm\":\"$2\",\"pair\":$pno,\"order\":\"$3\",$RUN}"
		shift 3
	done
}

# wanted CELL: the cell is in BENCH_CELLS (prefixes), or BENCH_CELLS is empty.
wanted() {
	local p
	[ -z "${BENCH_CELLS:-}" ] && return 0
	for p in ${BENCH_CELLS//,/ }; do
		[[ $1 == "$p"* ]] && return 0
	done
	return 1
}

# too_many_fails CELL: the last FAILS_IN_A_ROW runs failed (the cell ends:
# a broken cell costs seconds, not the budget).
too_many_fails() {
	((FAILS >= FAILS_IN_A_ROW)) || return 1
	echo "bench-fail $1: $FAILS failed runs in a row, cell ended" >&2
}

# abba CELL PAIRS TOOL ARGS...: rrxe (A, pair R) against C rxe (B, pair C),
# after a discarded warm-up of each.
abba() {
	local cell=$1 pairs=$2 tool=$3 p
	shift 3
	wanted "$cell" || return 0
	FAILS=0
	bench_run 1 R "$tool" "$@" && emit "$cell" 0 rrxe/rxe A AB
	bench_run 1 C "$tool" "$@" && emit "$cell" 0 rrxe/rxe B AB
	for ((p = 0; p < pairs; p++)); do
		if ((p % 2 == 0)); then
			bench_run 0 R "$tool" "$@" && emit "$cell" "$p" rrxe/rxe A AB
			bench_run 0 C "$tool" "$@" && emit "$cell" "$p" rrxe/rxe B AB
		else
			bench_run 0 C "$tool" "$@" && emit "$cell" "$p" rrxe/rxe B BA
			bench_run 0 R "$tool" "$@" && emit "$cell" "$p" rrxe/rxe A BA
		fi
		if too_many_fails "$cell"; then return 0; fi
	done
}

# abba_controlled CELL PAIRS TOOL ARGS...: abba with both noise-floor
# controls from the same runs.  Even pairs run R C C2 R2, odd pairs R2 C2
# C R: rrxe/rxe is R then C (AB) or C then R (BA); rxe/rxe (A C2, B C) is
# C then C2 (BA) or C2 then C (AB); rrxe/rrxe (A R2, B R) is R then R2
# (BA) or R2 then R (AB).  A run of R or C counts in two comparisons.
abba_controlled() {
	local cell=$1 pairs=$2 tool=$3 p
	shift 3
	wanted "$cell" || return 0
	FAILS=0
	bench_run 1 R "$tool" "$@" && emit "$cell" 0 rrxe/rxe A AB rrxe/rrxe B AB
	bench_run 1 C "$tool" "$@" && emit "$cell" 0 rrxe/rxe B AB rxe/rxe B AB
	bench_run 1 C2 "$tool" "$@" && emit "$cell" 0 rxe/rxe A AB
	bench_run 1 R2 "$tool" "$@" && emit "$cell" 0 rrxe/rrxe A AB
	for ((p = 0; p < pairs; p++)); do
		if ((p % 2 == 0)); then
			bench_run 0 R "$tool" "$@" && emit "$cell" "$p" rrxe/rxe A AB rrxe/rrxe B BA
			bench_run 0 C "$tool" "$@" && emit "$cell" "$p" rrxe/rxe B AB rxe/rxe B BA
			bench_run 0 C2 "$tool" "$@" && emit "$cell" "$p" rxe/rxe A BA
			bench_run 0 R2 "$tool" "$@" && emit "$cell" "$p" rrxe/rrxe A BA
		else
			bench_run 0 R2 "$tool" "$@" && emit "$cell" "$p" rrxe/rrxe A AB
			bench_run 0 C2 "$tool" "$@" && emit "$cell" "$p" rxe/rxe A AB
			bench_run 0 C "$tool" "$@" && emit "$cell" "$p" rrxe/rxe B BA rxe/rxe B AB
			bench_run 0 R "$tool" "$@" && emit "$cell" "$p" rrxe/rxe A BA rrxe/rrxe B AB
		fi
		if too_many_fails "$cell"; then return 0; fi
	done
}

# The rrxe module parameter the third arm of abc turns off (BENCH_ARM_OFF,
# gso by default; bulk_home compares the placement of bulk transfers), and
# the comparison's name: gso/nogso, bulk_home/nobulk_home.
OFF_PARAM=${BENCH_ARM_OFF:-gso}
OFF_CMP="$OFF_PARAM/no$OFF_PARAM"
[ -w "/sys/module/rdma_rrxe/parameters/$OFF_PARAM" ] || modprobe rdma_rrxe
[ -w "/sys/module/rdma_rrxe/parameters/$OFF_PARAM" ] ||
	{ echo "bench: BENCH_ARM_OFF=$OFF_PARAM: rrxe has no such writable parameter" >&2; exit 1; }

# arm_param Y|N: OFF_PARAM of rrxe (every rrxe device).
arm_param() { echo "$1" >"/sys/module/rdma_rrxe/parameters/$OFF_PARAM"; }

# bench_run_off WARM TOOL ARGS...: a run of pair R with rrxe's OFF_PARAM off.
bench_run_off() {
	local warm=$1
	shift
	arm_param N
	bench_run "$warm" R "$@" || true
	arm_param Y
}

# abc CELL PAIRS TOOL ARGS...: abba with a third arm, rrxe with OFF_PARAM
# off (pair R, arm N): rrxe/rxe is R against C as in abba; OFF_CMP (e.g.
# gso/nogso) is R (A) against N (B).  Even pairs run R C N, odd pairs N C
# R; after a discarded warm-up of each.
abc() {
	local cell=$1 pairs=$2 tool=$3 p
	shift 3
	wanted "$cell" || return 0
	FAILS=0
	bench_run 1 R "$tool" "$@" && emit "$cell" 0 rrxe/rxe A AB "$OFF_CMP" A AB
	bench_run 1 C "$tool" "$@" && emit "$cell" 0 rrxe/rxe B AB
	bench_run_off 1 "$tool" "$@" && emit "$cell" 0 "$OFF_CMP" B AB
	for ((p = 0; p < pairs; p++)); do
		if ((p % 2 == 0)); then
			bench_run 0 R "$tool" "$@" && emit "$cell" "$p" rrxe/rxe A AB "$OFF_CMP" A AB
			bench_run 0 C "$tool" "$@" && emit "$cell" "$p" rrxe/rxe B AB
			bench_run_off 0 "$tool" "$@" && emit "$cell" "$p" "$OFF_CMP" B AB
		else
			bench_run_off 0 "$tool" "$@" && emit "$cell" "$p" "$OFF_CMP" B BA
			bench_run 0 C "$tool" "$@" && emit "$cell" "$p" rrxe/rxe B BA
			bench_run 0 R "$tool" "$@" && emit "$cell" "$p" rrxe/rxe A BA "$OFF_CMP" A BA
		fi
		if too_many_fails "$cell"; then return 0; fi
	done
}

perftest_cells() {
	local size mtu tool
	# The goal cells, many pairs; two of them with the noise-floor controls.
	abba_controlled ib_write_bw/65536/4096/1 "$PAIRS" ib_write_bw -s 65536 -m 4096 -D "$SECS" -f 1
	abc ib_write_bw:gso/65536/4096/1 "$PAIRS_REST" ib_write_bw -s 65536 -m 4096 -D "$SECS" -f 1
	abba_controlled ib_send_lat/2/1024/1 "$PAIRS" ib_send_lat -s 2 -m 1024 -D "$SECS" -f 1
	abba ib_read_bw/65536/4096/1 "$PAIRS" ib_read_bw -s 65536 -m 4096 -D "$SECS" -f 1
	abba ib_read_lat/2/1024/1 "$PAIRS" ib_read_lat -s 2 -m 1024 -D "$SECS" -f 1
	abba ib_atomic_bw:FAA/8/1024/1 "$PAIRS" ib_atomic_bw -A FETCH_AND_ADD -m 1024 -D "$SECS" -f 1
	abc ib_write_bw/65536/1024/4 "$PAIRS" ib_write_bw -s 65536 -m 1024 -q 4 -D "$SECS" -f 1
	# The goal cells of UDP GSO (issue 33), against C rxe and gso off.
	abc ib_write_bw/65536/1024/1 "$PAIRS" ib_write_bw -s 65536 -m 1024 -D "$SECS" -f 1
	abc ib_send_bw/65536/1024/1 "$PAIRS" ib_send_bw -s 65536 -m 1024 -D "$SECS" -f 1
	# The rest, few pairs; SENDs and WRITEs of several packets also
	# against gso off.
	for tool in ib_send_bw ib_write_bw ib_read_bw; do
		for mtu in 1024 4096; do
			for size in 4096 65536; do
				case $tool/$size/$mtu in
				ib_write_bw/65536/4096 | ib_read_bw/65536/4096) continue ;;
				ib_write_bw/65536/1024 | ib_send_bw/65536/1024) continue ;;
				ib_read_bw/* | */4096/4096)
					abba "$tool/$size/$mtu/1" "$PAIRS_REST" "$tool" -s "$size" -m "$mtu" -D "$SECS" -f 1 ;;
				*) abc "$tool/$size/$mtu/1" "$PAIRS_REST" "$tool" -s "$size" -m "$mtu" -D "$SECS" -f 1 ;;
				esac
			done
		done
	done
	abba ib_write_lat/2/1024/1 "$PAIRS_REST" ib_write_lat -s 2 -m 1024 -D "$SECS" -f 1
	abba ib_atomic_bw:CAS/8/1024/1 "$PAIRS_REST" ib_atomic_bw -A CMP_AND_SWAP -m 1024 -D "$SECS" -f 1
	abba ib_atomic_lat:FAA/8/1024/1 "$PAIRS_REST" ib_atomic_lat -A FETCH_AND_ADD -m 1024 -D "$SECS" -f 1
	abba ib_atomic_lat:CAS/8/1024/1 "$PAIRS_REST" ib_atomic_lat -A CMP_AND_SWAP -m 1024 -D "$SECS" -f 1
	# ibv_rc_pingpong has no time mode: a fixed count, about BENCH_SECS on
	# either driver at this size (they move ~10-20 MB/s here).
	abba ibv_rc_pingpong/4096/1024/1 "$PAIRS_REST" ibv_rc_pingpong -s 4096 -m 1024 -n $((SECS * 1000))
	abba ibv_rc_pingpong/65536/1024/1 "$PAIRS_REST" ibv_rc_pingpong -s 65536 -m 1024 -n $((SECS * 80))
}

# nvme_run DRIVER ARM PAIRNO ORDER WARM: one NVMe/RDMA run on DRIVER in the
# initial namespace (module loaded for it, unloaded after): fio sequential
# write, then read, each its own benchrun line.
nvme_run() {
	local drv=$1 arm=$2 pno=$3 order=$4 warm=$5 rw v b0 busy kern ctxt t err
	(
		nvme_veth_up "$drv"
		nvme_target_up 10.79.0.2
		nvme_host_up 10.79.0.2
		for rw in write read; do
			err=""
			t=$(uptime_now)
			b0=$(wire_bytes /proc/net/dev nvh)
			stat_now
			busy=$BUSY kern=$KERN ctxt=$CTXT
			v=$(fio_seq_mbs "$rw" "$NVME_SECS") && pt_positive "$v" || { err="fio $rw failed"; v=null; }
			stat_now
			run_fields "$v" MB/s "$busy" "$kern" "$ctxt" $(($(wire_bytes /proc/net/dev nvh) - b0)) "$t" "$warm" "$err"
			emit "nvme_seq_$rw/131072/4096/2" "$pno" rrxe/rxe "$arm" "$order"
		done
		nvme_host_down
		nvme_target_down
		modprobe -r nvme-rdma nvmet-rdma nvmet null_blk
		nvme_veth_down
	) || { echo "bench-fail nvme $drv (setup or teardown)" >&2; nvme_cleanup; }
	rmmod "rdma_$drv" 2>/dev/null || true
}

nvme_cells() {
	local p
	wanted nvme_seq_write || wanted nvme_seq_read || return 0
	# No warm-up: every run loads its module and connects afresh, so a
	# warm-up run would warm nothing the next one measures.
	for ((p = 0; p < PAIRS_REST; p++)); do
		if ((p % 2 == 0)); then
			nvme_run rrxe A "$p" AB 0
			nvme_run rxe B "$p" AB 0
		else
			nvme_run rxe B "$p" BA 0
			nvme_run rrxe A "$p" BA 0
		fi
	done
}

# nfs_seq_mbs RW: dd of an NFS_BENCH_MB file through NFS_MNT in 1 MiB
# blocks, write (fsync'd, so the data has reached the server) or read
# (after the client's page cache is dropped); prints MB/s (2^20 bytes).
nfs_seq_mbs() {
	local t0 t1
	[ "$1" = read ] && echo 3 >/proc/sys/vm/drop_caches
	t0=$(date +%s%N)
	if [ "$1" = write ]; then
		timeout 300 dd if=/dev/zero of="$NFS_MNT/bench" bs=1M count="$NFS_BENCH_MB" conv=fsync status=none || return 1
	else
		timeout 300 dd if="$NFS_MNT/bench" of=/dev/null bs=1M status=none || return 1
	fi
	t1=$(date +%s%N)
	awk -v mb="$NFS_BENCH_MB" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f\n", mb / (ns / 1e9) }'
}

# nfs_run DRIVER ARM PAIRNO ORDER: NFS over RDMA on DRIVER at both ends
# (server in ppA, client in ppB, lib/nfs.sh; its own namespaces, the
# perftest pairs are gone by then): a sequential write, then a read, of
# one file, each its own benchrun line.  nfsd's grace period (10 s) is
# waited out before either.
nfs_run() {
	local drv=$1 arm=$2 pno=$3 order=$4 rw v b0 busy kern ctxt t err
	(
		pp_setup_pair "$drv" "$drv" >/dev/null
		nfs_server_up ppA 10.77.0.2
		nfs_mount ppB 10.77.0.1
		for rw in write read; do
			err=""
			t=$(uptime_now)
			b0=$(in_netns ppA cat /proc/net/dev | wire_bytes /dev/stdin vpa)
			stat_now
			busy=$BUSY kern=$KERN ctxt=$CTXT
			v=$(nfs_seq_mbs "$rw") && pt_positive "$v" || { err="dd $rw failed"; v=null; }
			stat_now
			run_fields "$v" MB/s "$busy" "$kern" "$ctxt" \
				$(($(in_netns ppA cat /proc/net/dev | wire_bytes /dev/stdin vpa) - b0)) "$t" 0 "$err"
			emit "nfs_seq_$rw/1048576/4096/1" "$pno" rrxe/rxe "$arm" "$order"
		done
		rm -f "$NFS_MNT/bench"
		nfs_umount
		nfs_server_down ppA
		pp_teardown
	) || { echo "bench-fail nfs $drv (setup or teardown)" >&2; nfs_cleanup; (pp_teardown) >/dev/null 2>&1 || true; }
}

nfs_cells() {
	local p
	wanted nfs_seq_write || wanted nfs_seq_read || return 0
	# No warm-up, as for NVMe: every run starts a server and mounts afresh.
	for ((p = 0; p < PAIRS_REST; p++)); do
		if ((p % 2 == 0)); then
			nfs_run rrxe A "$p" AB
			nfs_run rxe B "$p" AB
		else
			nfs_run rxe B "$p" BA
			nfs_run rrxe A "$p" BA
		fi
	done
	modprobe -r nfsv4 rpcrdma nfsd 2>/dev/null || true
}

echo "bench: BENCH_SECS=$SECS BENCH_PAIRS=$PAIRS BENCH_PAIRS_REST=$PAIRS_REST BENCH_CELLS=${BENCH_CELLS:-all} NVME_SECS=$NVME_SECS, $(nproc) CPUs"
modprobe rdma_rxe
modprobe rdma_rrxe
bench_pair R rrxe 1
bench_pair C rxe 2
bench_pair R2 rrxe 3
bench_pair C2 rxe 4
t0=$SECONDS
perftest_cells
echo "bench: perftest cells took $((SECONDS - t0)) s"
bench_pairs_down
rmmod rdma_rrxe rdma_rxe || true
t0=$SECONDS
nvme_cells
echo "bench: NVMe cells took $((SECONDS - t0)) s"
t0=$SECONDS
modprobe rdma_rxe
modprobe rdma_rrxe
nfs_cells
rmmod rdma_rrxe rdma_rxe || true
echo "bench: NFS cells took $((SECONDS - t0)) s"
echo "bench: done"
