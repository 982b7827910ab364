#!/usr/bin/env bash
# make vm-run CMD='...': boot the test VM (qemu TCG, the host's own Debian
# userspace read-only over virtio-9p, the way virtme-ng does it), run CMD as
# root inside, stream its output, exit with CMD's exit status.
#
# Inside the VM: the repo is at the same path as on the host (read-only,
# its own share, so a clone under /tmp or /root is visible too), the
# kernel tree's kselftest helpers (ktap_helpers.sh) at $KSFT_LIB,
# /lib/modules/$KVER holds the cached kernel's modules plus rdma_rrxe (so
# `modprobe rdma_rrxe` and `modprobe rdma_rxe` work), $RRXE_OUT is a
# writable directory shared with the host, /tmp is a tmpfs.
#
# Environment: VM_CPUS (2), VM_MEM (2048, MiB), VM_TIMEOUT (seconds, 1800),
# VM_LOGLEVEL (console loglevel inside, 1: only emergencies; dmesg has all),
# RRXE_OUT (host directory for results; a temporary one by default),
# FLAVOR (release or debug: which cached kernel boots).  For the two-VM
# runs of scripts/vm-pair.sh: VM_NIC (a qemu -netdev backend, e.g.
# "socket,udp=...": the VM gets a virtio NIC on it, eth0 inside, MAC
# VM_MAC), VM_PAIR (a host directory both VMs share, at $RRXE_PAIR
# inside), VM_NAME (the hostname).
. "$(dirname "$0")/lib.sh"
rrxe_trap_errors
RRXE_STEP="starting the $FLAVOR VM"

CMD=${1:-${RRXE_VM_CMD:-}}
[ -n "$CMD" ] || die "usage: scripts/vm-run.sh 'command' (or make vm-run CMD='...')"
[ -f "$KDIR/arch/x86/boot/bzImage" ] || die "no $FLAVOR kernel at $KDIR: run 'make kernel FLAVOR=$FLAVOR' (or 'make module') first"
[ -d "$KMODROOT/lib/modules" ] || die "no modules of the $FLAVOR kernel in $KMODROOT: run 'make module FLAVOR=$FLAVOR'"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run scripts/setup.sh"
# The VM mounts its modules over /lib/modules; a Debian host without a
# kernel package may lack the (empty) mount point.
[ -d /lib/modules ] || mkdir -p /lib/modules

OUT=${RRXE_OUT:-}
own_out=0
if [ -z "$OUT" ]; then OUT=$(mktemp -d /tmp/rrxe-vm.XXXXXX); own_out=1; fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/.rc"
printf '%s\n' "$CMD" >"$OUT/.cmd"
cleanup() {
	if [ $own_out = 1 ]; then rm -rf "$OUT"; fi
	return 0
}
trap cleanup EXIT

# vm_clock: sets clock to the kernel parameters of the VM's clock.  The
# VM kernel has no ACPI (configs/rrxe-vm.config), so no HPET or PM timer,
# and under TCG its TSC calibration against the PIT fails.  But a TCG
# guest's TSC is the host's: where that is invariant, the VM is told its
# rate (measured by scripts/tsc_khz.c, built here) and that it is
# reliable (no watchdog against jiffies).  Elsewhere the VM's
# clocksource is jiffies (4 ms steps; perftest-clock.sh fails), which is
# said at each boot.
vm_clock() {
	local bin="$RRXE_TOP/out/host/tsc_khz" src="$RRXE_TOP/scripts/tsc_khz.c" khz
	clock=
	if ! grep -qw constant_tsc /proc/cpuinfo || ! grep -qw nonstop_tsc /proc/cpuinfo; then
		echo "rrxe: note: this host's TSC is not invariant: the VM's clock is jiffies (4 ms steps)" >&2
		return
	fi
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		mkdir -p "${bin%/*}"
		# Built under a temporary name: two VMs of a pair may start at once.
		cc -O2 -o "$bin.$$" "$src" && mv -f "$bin.$$" "$bin" ||
			die "building $src failed (cc output above)"
	fi
	khz=$("$bin") && [ "${khz:-0}" -gt 0 ] || die "$bin could not measure the TSC (printed '$khz')"
	clock="tsc_early_khz=$khz tsc=reliable"
}

kver=$(cat "$KDIR/include/config/kernel.release")
append="console=ttyS0 quiet loglevel=4 panic=-1 oops=panic"
# The root is the host's / read-only: cached without coherency (loose);
# programs start 3x faster than with 9p's default (no cache), 10x on the
# debug kernel.
append+=" root=rrxe_root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro"
vm_clock
append+=" $clock"
append+=" init=$RRXE_TOP/scripts/vm-init.sh rrxe.out=$OUT rrxe.kver=$kver rrxe.top=$RRXE_TOP"
append+=" rrxe.loglevel=${VM_LOGLEVEL:-1} rrxe.name=${VM_NAME:-rrxe-vm} rrxe.flavor=$FLAVOR ${VM_APPEND:-}"

share() { # tag path [ro]
	local ro=""; [ "${3:-}" = ro ] && ro=",readonly=on"
	echo "-fsdev local,id=$1,path=$2,security_model=none,multidevs=remap$ro -device virtio-9p-pci,fsdev=$1,mount_tag=$1"
}

# One CPU per socket, as SeaBIOS's MP table (the VM kernel has no ACPI,
# so no MADT) describes them.
cpus=${VM_CPUS:-2}

extra=()
if [ -n "${VM_NIC:-}" ]; then
	extra+=(-netdev "$VM_NIC,id=rrxe_nic" -device "virtio-net-pci,netdev=rrxe_nic,mac=${VM_MAC:-52:54:00:12:34:56}")
fi
if [ -n "${VM_PAIR:-}" ]; then
	mkdir -p "$VM_PAIR"
	# shellcheck disable=SC2207
	extra+=($(share rrxe_pair "$VM_PAIR"))
	append+=" rrxe.pair=$VM_PAIR"
fi

# VM_MONITOR=PATH: qemu's human monitor on a Unix socket (debugging: e.g.
# "info registers" samples where a spinning guest CPU is).
monitor=none
if [ -n "${VM_MONITOR:-}" ]; then monitor="unix:$VM_MONITOR,server=on,wait=off"; fi

qrc=0
# shellcheck disable=SC2046
timeout --foreground -k 10 "${VM_TIMEOUT:-1800}" qemu-system-x86_64 \
	-machine pc -accel tcg,thread=multi -cpu "${VM_CPU:-max}" -smp "$cpus,sockets=$cpus,cores=1" -m "${VM_MEM:-2048}" \
	-nodefaults -no-user-config -display none -serial stdio -monitor "$monitor" -no-reboot \
	-kernel "$KDIR/arch/x86/boot/bzImage" -append "$append" \
	$(share rrxe_root / ro) \
	$(share rrxe_mods "$KMODROOT/lib/modules/$kver" ro) \
	$(share rrxe_out "$OUT") \
	$(share rrxe_top "$RRXE_TOP" ro) \
	$(share rrxe_ksft "$KDIR/tools/testing/selftests/kselftest" ro) \
	"${extra[@]}" </dev/null || qrc=$?
if [ -f "$OUT/.rc" ]; then
	exit "$(cat "$OUT/.rc")"
fi
echo "rrxe: error: the VM ended without reporting CMD's status (qemu exit $qrc; 124: VM_TIMEOUT=${VM_TIMEOUT:-1800} s passed; the console output above shows how far it got)" >&2
exit 125
