#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The VM keeps real time: a high-resolution clocksource (not jiffies), a
# calibrated CPU clock ("cpu MHz" non-zero), timers finer than a jiffy, and
# stock perftest (which turns CPU cycles into time with "cpu MHz") reports
# real bandwidth and latency for C rxe between two namespaces.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd ib_send_bw ib_send_lat ib_write_bw
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/perftest.sh"

cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
note "clocksource: $cs (available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
case $cs in
jiffies | refined-jiffies) fail "clocksource is $cs: no high-resolution clock" ;;
esac
mhz=$(awk -F: '/^cpu MHz/ { print $2 + 0; exit }' /proc/cpuinfo)
note "cpu MHz: $mhz"
pt_positive "$mhz" || fail "cpu MHz is '$mhz'"
# 100 sleeps of 1 ms take about 0.1 s with high-resolution timers, 0.4 s
# or more with a 4 ms jiffy.
t=$(python3 -c 'import time
t = time.monotonic()
for _ in range(100): time.sleep(0.001)
print(round(time.monotonic() - t, 3))')
note "100 x sleep(1 ms): $t s"
awk -v t="$t" 'BEGIN { exit !(t < 0.35) }' || fail "1 ms sleeps take $t s: timers have jiffy granularity"

if [ "$RRXE_FLAVOR" = debug ] && [ "$RRXE_TEST_LEVEL" = quick ]; then
	note "perftest figures: checked on the release kernel (the clock is the same)"
	exit 0
fi
pp_setup_pair rxe rxe
out=$(pt_run ib_write_bw ppa0 ppA ppb0 ppB 10.77.0.1 -s 65536 -n 200) || fail "ib_write_bw failed: $out"
bw=$(pt_bw_avg "$out")
note "C rxe ib_write_bw 64 KiB: $bw MB/s"
pt_positive "$bw" || fail "ib_write_bw average is '$bw': $out"
out=$(pt_run ib_send_bw ppa0 ppA ppb0 ppB 10.77.0.1 -s 65536 -n 200) || fail "ib_send_bw failed: $out"
bw=$(pt_bw_avg "$out")
note "C rxe ib_send_bw 64 KiB: $bw MB/s"
pt_positive "$bw" || fail "ib_send_bw average is '$bw': $out"
out=$(pt_run ib_send_lat ppa0 ppA ppb0 ppB 10.77.0.1 -s 2 -n 200) || fail "ib_send_lat failed: $out"
lat=$(pt_lat_typical "$out")
note "C rxe ib_send_lat 2 B: typical $lat usec"
pt_positive "$lat" || fail "ib_send_lat typical is '$lat': $out"
pp_teardown
