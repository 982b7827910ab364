#!/usr/bin/env bash
# Two test VMs side by side, for what one kernel cannot hold: C rxe and
# rrxe each in the initial network namespace of its own VM (kernel ULPs
# such as NVMe over RDMA make their rdma_cm IDs only there, and both
# drivers bind UDP port 4791).  Each VM is scripts/vm-run.sh with one
# CPU, plus a virtio NIC (eth0 inside): the two NICs are joined by qemu's
# TCP socket backend on the host's loopback (VM a listens, VM b connects),
# an Ethernet wire and nothing else.  It loses nothing: a guest too slow to
# take a frame holds up the other's sending.  (The UDP backend lost up to
# 5% of the frames in bursts, in the host socket's receive buffer, when
# one TCG guest fell behind: VM_PAIR_WIRE=udp still gives it.  Loss is
# what the tests put on a wire with netem, by design.)  Both VMs share a
# directory, $RRXE_PAIR inside, to meet at barriers
# (tools/testing/selftests/rrxe/lib/pair.sh).
#
# Usage: vm-pair.sh 'command in VM a' 'command in VM b'.  VM a is
# 10.80.0.1 by convention, b 10.80.0.2 (the commands set the addresses).
# Exits 0 when both commands did; their output is prefixed [a] and [b].
# RRXE_OUT (a host directory, temporary by default) gets a/ and b/, each
# VM's RRXE_OUT, and pair/, the shared directory.  FLAVOR, VM_MEM and
# VM_TIMEOUT as for vm-run.sh; VM_MONITOR_DIR (debugging) puts each VM's
# qemu monitor there as a.sock and b.sock.
. "$(dirname "$0")/lib.sh"
rrxe_trap_errors
RRXE_STEP="starting the two $FLAVOR VMs"
[ $# = 2 ] || die "usage: scripts/vm-pair.sh 'command in VM a' 'command in VM b'"

OUT=${RRXE_OUT:-}
own_out=0
if [ -z "$OUT" ]; then OUT=$(mktemp -d /tmp/rrxe-pair.XXXXXX); own_out=1; fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT/pair"
mkdir -p "$OUT/a" "$OUT/b" "$OUT/pair"

# A free port on the host's loopback for the wire (VM_PAIR_WIRE=udp: the
# old lossy UDP wire, two ports, for investigations).
wire=${VM_PAIR_WIRE:-tcp}
case $wire in tcp | udp) ;; *) die "VM_PAIR_WIRE: '$wire' is not tcp or udp" ;; esac
# free_ports TYPE N: N distinct free ports of socket TYPE (STREAM, DGRAM).
free_ports() {
	python3 -c "import socket
s = [socket.socket(type=socket.SOCK_$1) for _ in range($2)]
for x in s: x.bind(('127.0.0.1', 0))
print(*(x.getsockname()[1] for x in s))"
}
if [ "$wire" = udp ]; then
	read -r port uport < <(free_ports DGRAM 2)
else
	read -r port < <(free_ports STREAM 1)
fi
[ -n "${port:-}" ] || die "no free port on 127.0.0.1 for the wire"

pids=()
# kill_tree PID: PID and everything below it (a VM still running when the
# other could not start: its vm-run.sh and qemu).
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill "$1" 2>/dev/null || true
}
cleanup() {
	local p
	for p in "${pids[@]}"; do kill_tree "$p"; done
	if [ $own_out = 1 ]; then rm -rf "$OUT"; fi
	return 0
}
trap cleanup EXIT

run_one() { # name cmd netdev mac
	VM_CPUS=1 VM_NAME="rrxe-$1" VM_MONITOR=${VM_MONITOR_DIR:+$VM_MONITOR_DIR/$1.sock} VM_PAIR="$OUT/pair" RRXE_OUT="$OUT/$1" VM_MAC=$4 \
		VM_NIC=$3 bash "$RRXE_TOP/scripts/vm-run.sh" "$2" 2>&1 | sed -u "s/^/[$1] /"
	return "${PIPESTATUS[0]}"
}

if [ "$wire" = udp ]; then
	nic_a="socket,udp=127.0.0.1:$uport,localaddr=127.0.0.1:$port"
	nic_b="socket,udp=127.0.0.1:$port,localaddr=127.0.0.1:$uport"
else
	nic_a="socket,listen=127.0.0.1:$port" nic_b="socket,connect=127.0.0.1:$port"
fi
run_one a "$1" "$nic_a" 52:54:00:80:00:01 &
pids+=($!)
# qemu's connecting end gives up at once if nobody listens yet: VM b
# starts once VM a's qemu listens (30 s at most, or until VM a ends).
if [ "$wire" = tcp ]; then
	listening() { [ -n "$(ss -Hltn "src 127.0.0.1:$port" 2>/dev/null)" ]; }
	for ((i = 0; i < 300; i++)); do
		listening || ! kill -0 "${pids[0]}" 2>/dev/null && break
		sleep 0.1
	done
	listening || die "VM a's qemu is not listening on 127.0.0.1:$port for the wire (its output above)"
fi
run_one b "$2" "$nic_b" 52:54:00:80:00:02 &
pids+=($!)
rca=0 rcb=0
wait "${pids[0]}" || rca=$?
wait "${pids[1]}" || rcb=$?
pids=()
if [ $rca != 0 ] || [ $rcb != 0 ]; then
	echo "rrxe: vm-pair: VM a exited $rca, VM b exited $rcb" >&2
	exit 1
fi
