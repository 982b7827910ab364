#!/bin/bash
# rrxe against C rxe in one VM boot (run by tools/testing/bench.sh).  Two
# namespaces joined by a veth (MTU 9000), one device each, the same driver
# on both ends; ROUNDS alternating rounds (default 5): in each round every
# cell runs first on C rxe, then on rrxe (or the other way round in odd
# rounds, so neither driver always runs on a warmer machine).
#
# Cells: stock perftest ib_send_bw and ib_write_bw (sizes BW_SIZES, path
# MTU 1024 and 4096), ib_send_lat and ib_write_lat (2 B and 4 KiB, both
# MTUs), ib_read_bw (4 KiB, 64 KiB, 256 KiB) and ib_read_lat (2 B, 4 KiB)
# at both MTUs, ib_atomic_bw and ib_atomic_lat (fetch-and-add and
# compare-and-swap: tools ib_atomic_*:FAA and :CAS), ib_write_bw -q 4
# (four QPs), ibv_rc_pingpong (4 KiB and 64 KiB, MTU 1024), and NVMe over
# RDMA: fio sequential write and read through nvme-rdma to nvmet-rdma
# (null_blk) on two devices of the driver at the ends of a veth in the
# initial namespace (NVME_SECS seconds each, default 10; cells
# nvme_seq_write and nvme_seq_read, 128 KiB blocks, 2 jobs of depth 16;
# BENCH_CELLS=nvme measures only these).  Prints one line per measurement:
#   bench TOOL MTU SIZE QPS DRIVER VALUE UNIT ROUND
# and, first, the VM's memcpy bandwidth:
#   memcpy MB/s VALUE   (MB = 2^20 bytes, as perftest counts)
set -euo pipefail
here=$(cd "$(dirname "$0")/../selftests/rrxe/lib" && pwd)
. "$here/lib.sh"
. "$here/pingpong.sh"
. "$here/perftest.sh"
. "$here/nvme.sh"
rounds=${ROUNDS:-5}
read -r -a bw_sizes <<<"${BW_SIZES:-1024 4096 16384 65536 262144}"
read -r -a mtus <<<"${BENCH_MTUS:-1024 4096}"

# Iterations per size: about 16 MiB per bandwidth run, at least 100.
bw_iters() { local n=$((16 * 1024 * 1024 / $1)); echo $((n < 100 ? 100 : n > 4000 ? 4000 : n)); }
LAT_ITERS=${LAT_ITERS:-1000}

# memcpy in user space inside the VM: 64 MiB copies, best of 5.
python3 - <<'PY'
import time
n = 64 << 20
a = bytearray(n); b = bytearray(n)
best = 0.0
for _ in range(5):
    t = time.perf_counter()
    b[:] = a
    best = max(best, n / (time.perf_counter() - t) / 2**20)
print(f"memcpy MB/s {best:.1f}")
PY

cell() { # tool[:label] mtu size qps driver round args...
	local tool=$1 mtu=$2 size=$3 qps=$4 drv=$5 round=$6 out v unit
	shift 6
	out=$(pt_run "${tool%%:*}" ppa0 ppA ppb0 ppB 10.77.0.1 "$@") || {
		echo "bench-fail $tool $mtu $size $qps $drv" >&2
		printf '%s\n' "$out" | tail -5 >&2
		return 0
	}
	case ${tool%%:*} in
	*_bw) v=$(pt_bw_avg "$out") unit=MB/s ;;
	*_lat) v=$(pt_lat_typical "$out") unit=usec ;;
	esac
	pt_positive "$v" || { echo "bench-fail $tool $mtu $size $qps $drv: '$v'" >&2; return 0; }
	echo "bench $tool $mtu $size $qps $drv $v $unit $round"
}

round_of() { # driver round
	local drv=$1 r=$2 mtu size line mbit op label
	pp_setup_pair "$drv" "$drv"
	for mtu in "${mtus[@]}"; do
		for size in "${bw_sizes[@]}"; do
			cell ib_write_bw "$mtu" "$size" 1 "$drv" "$r" -s "$size" -m "$mtu" -n "$(bw_iters "$size")"
		done
		for size in 4096 65536; do
			cell ib_send_bw "$mtu" "$size" 1 "$drv" "$r" -s "$size" -m "$mtu" -n "$(bw_iters "$size")"
		done
		for size in 2 4096; do
			cell ib_send_lat "$mtu" "$size" 1 "$drv" "$r" -s "$size" -m "$mtu" -n "$LAT_ITERS"
			cell ib_write_lat "$mtu" "$size" 1 "$drv" "$r" -s "$size" -m "$mtu" -n "$LAT_ITERS"
			cell ib_read_lat "$mtu" "$size" 1 "$drv" "$r" -s "$size" -m "$mtu" -n "$LAT_ITERS"
		done
		for size in 4096 65536 262144; do
			cell ib_read_bw "$mtu" "$size" 1 "$drv" "$r" -s "$size" -m "$mtu" -n "$(bw_iters "$size")"
		done
	done
	for op in FETCH_AND_ADD CMP_AND_SWAP; do
		label=FAA
		if [ "$op" = CMP_AND_SWAP ]; then label=CAS; fi
		cell "ib_atomic_bw:$label" 1024 8 1 "$drv" "$r" -A "$op" -m 1024 -n 2000
		cell "ib_atomic_lat:$label" 1024 8 1 "$drv" "$r" -A "$op" -m 1024 -n "$LAT_ITERS"
	done
	cell ib_write_bw 1024 65536 4 "$drv" "$r" -s 65536 -m 1024 -q 4 -n "$(bw_iters 65536)"
	for size in 4096 65536; do
		line=$(run_pingpong ibv_rc_pingpong ppa0 ppA ppb0 ppB 10.77.0.1 -s "$size" -m 1024 \
			-n "$((16 * 1024 * 1024 / size / 4))" | grep '^cell') || { echo "bench-fail pingpong $size $drv" >&2; continue; }
		mbit=$(sed -n 's/.*PASS (\([0-9.]*\) Mbit\/sec.*/\1/p' <<<"$line")
		pt_positive "$mbit" && echo "bench ibv_rc_pingpong 1024 $size 1 $drv $(awk -v m="$mbit" 'BEGIN { printf "%.2f", m / 8 }') MB/s $r"
	done
	pp_teardown
}

# NVMe over RDMA on DRIVER: both ends in the initial namespace (nvme.sh),
# the veth at MTU 9000 (path MTU 4096).
nvme_cells() { # driver round
	local drv=$1 r=$2 rw v
	(
		nvme_veth_up "$drv"
		nvme_target_up 10.79.0.2
		nvme_host_up 10.79.0.2
		for rw in write read; do
			if v=$(fio_seq_mbs "$rw" "${NVME_SECS:-10}") && pt_positive "$v"; then
				echo "bench nvme_seq_$rw 4096 131072 2 $drv $v MB/s $r"
			else
				echo "bench-fail nvme_seq_$rw $drv" >&2
			fi
		done
		nvme_host_down
		nvme_target_down
		modprobe -r nvme-rdma nvmet-rdma nvmet null_blk
		nvme_veth_down
	) || { echo "bench-fail nvme $drv (setup or teardown)" >&2; nvme_cleanup; }
	rmmod "rdma_$drv" 2>/dev/null || true
}

for ((r = 0; r < rounds; r++)); do
	if ((r % 2 == 0)); then order="rxe rrxe"; else order="rrxe rxe"; fi
	for drv in $order; do
		# BENCH_CELLS=nvme: the NVMe cells only.
		if [ "${BENCH_CELLS:-all}" != nvme ]; then round_of "$drv" "$r"; fi
		nvme_cells "$drv" "$r"
	done
done
