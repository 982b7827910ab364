#!/bin/bash
# rrxe against C rxe in one VM boot: ibv_rc_pingpong throughput at 4 KiB
# and 64 KiB (path MTU 1024, -c off), two devices in two namespaces over a
# veth, each driver on both ends; ROUNDS alternating rounds (default 3),
# the median per cell.  Prints "bench DRIVER SIZE MBITS USEC" lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/pingpong.sh"
rounds=${ROUNDS:-3}
declare -A iters=([4096]=2000 [65536]=500)
for ((r = 0; r < rounds; r++)); do
	for drv in rxe rrxe; do
		pp_setup_pair "$drv" "$drv"
		for size in 4096 65536; do
			line=$(run_pingpong ibv_rc_pingpong ppa0 ppA ppb0 ppB 10.77.0.1 -s "$size" -m 1024 -n "${iters[$size]}" | grep '^cell') ||
				fail "$drv $size: $line"
			mbit=$(echo "$line" | sed -n 's/.*PASS (\([0-9.]*\) Mbit\/sec, \([0-9.]*\) usec.*/\1/p')
			usec=$(echo "$line" | sed -n 's/.*PASS (\([0-9.]*\) Mbit\/sec, \([0-9.]*\) usec.*/\2/p')
			echo "bench $drv $size $mbit $usec"
		done
	done
done
pp_teardown
