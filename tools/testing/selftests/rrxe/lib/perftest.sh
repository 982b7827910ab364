# shellcheck shell=bash
# perftest helpers for VM tests and benchmarks (sourced after lib.sh and
# pingpong.sh, inside the test VM).
#
#   pt_run TOOL DEV_S NS_S DEV_C NS_C SERVER_IP ARGS...
#       runs the stock perftest TOOL (ib_write_bw, ib_send_lat, ...) as
#       server on DEV_S in namespace NS_S and as client on DEV_C in NS_C,
#       both with ARGS and the RoCE v2 GID of their device; prints the
#       client's output; returns non-zero if either side failed.
#   pt_bw_avg OUTPUT     the "BW average" column (MB/s) of a *_bw result
#   pt_lat_typical OUTPUT the "t_typical" column (usec) of a *_lat result
#
# perftest converts CPU cycles to time with /proc/cpuinfo's "cpu MHz", so
# its figures are only real on a kernel with a calibrated clock (see
# configs/rrxe-vm.config); -F keeps it from refusing to run in a VM.

PT_TIMEOUT=${PT_TIMEOUT:-180}
PT_PORT=${PT_PORT:-19500}

# perftest measures the cycle counter against gettimeofday() with a linear
# regression and, when r^2 < 0.9, reports every figure as 0 ("Correlation
# coefficient r^2: ... < 0.9"). Under TCG on a loaded host a descheduled
# vCPU can spoil that calibration; it says nothing about the device. pt_run
# repeats such a run up to PT_CALIBRATION_TRIES times, saying so on stderr.
PT_CALIBRATION_TRIES=${PT_CALIBRATION_TRIES:-3}

pt_run() {
	local try out
	for ((try = 1; ; try++)); do
		# A fresh TCP port for each run: the last one may linger.
		PT_PORT=$((PT_PORT + 1))
		out=$(pt_run_once "$@") || {
			printf '%s\n' "$out"
			return 1
		}
		if ! grep -q 'Correlation coefficient' <<<"$out" || ((try >= PT_CALIBRATION_TRIES)); then
			printf '%s\n' "$out"
			return 0
		fi
		echo "pt_run: $1: perftest's clock calibration failed (try $try of $PT_CALIBRATION_TRIES), repeating" >&2
	done
}

pt_run_once() {
	local tool=$1 sdev=$2 sns=$3 cdev=$4 cns=$5 sip=$6
	shift 6
	local port=$PT_PORT sg cg spid crc=0 src=0 i
	# PT_SGID/PT_CGID: other GID indexes than the IPv4-mapped ones.
	sg=${PT_SGID:-$(pp_gid_index "$sdev")} || return 1
	cg=${PT_CGID:-$(pp_gid_index "$cdev")} || return 1
	ip netns exec "$sns" timeout "$PT_TIMEOUT" "$tool" -d "$sdev" -x "$sg" -p "$port" -F "$@" \
		>/tmp/pt-server.log 2>&1 &
	spid=$!
	pp_wait_server "$spid" "$port" || true
	ip netns exec "$cns" timeout "$PT_TIMEOUT" "$tool" -d "$cdev" -x "$cg" -p "$port" -F "$@" "$sip" \
		>/tmp/pt-client.log 2>&1 || crc=$?
	if [ $crc != 0 ]; then
		wait_for 5 pid_gone "$spid" || true
		kill "$spid" 2>/dev/null || true
	fi
	wait "$spid" || src=$?
	cat /tmp/pt-client.log
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "pt_run: $tool client exit $crc, server exit $src; server output:" >&2
		sed 's/^/    /' /tmp/pt-server.log >&2
		return 1
	fi
}

# The numeric result row: the first line after the "#bytes" header whose
# first field is a number.
pt_result_row() {
	awk '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print; exit }' <<<"$1"
}

pt_bw_avg() { # columns: #bytes #iterations BW_peak BW_average MsgRate
	pt_result_row "$1" | awk '{ print $4 }'
}

pt_lat_typical() { # columns: #bytes #iterations t_min t_max t_typical ...
	pt_result_row "$1" | awk '{ print $5 }'
}

# Is $1 a finite number greater than 0?
pt_positive() {
	awk -v x="$1" 'BEGIN { exit !(x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0) }'
}
