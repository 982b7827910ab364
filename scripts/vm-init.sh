#!/bin/bash
# PID 1 of the test VM (see scripts/vm-run.sh): mount the pseudo and scratch
# filesystems over the read-only host root, run the command, report its exit
# status to the host and power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p"; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
# What udev would add: /dev/fd (bash's process substitution) and friends.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
for d in /tmp /run /var/tmp /var/log /var/lib/dhcp /root /mnt; do
	[ -d "$d" ] && mount -t tmpfs tmpfs "$d"
done
mount -t debugfs debugfs /sys/kernel/debug
kver=$(arg rrxe.kver)
mount -t tmpfs tmpfs /lib/modules
mkdir -p "/lib/modules/$kver"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro rrxe_mods "/lib/modules/$kver"
export RRXE_OUT=$(arg rrxe.out) RRXE_TOP=$(arg rrxe.top)
# The kernel flavor the VM booted (release or debug), for the tests.
RRXE_FLAVOR=$(arg rrxe.flavor)
[ -z "$RRXE_FLAVOR" ] || export RRXE_FLAVOR
# The repository, at its host path even if that is under a tmpfs above.
mkdir -p "$RRXE_TOP"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro rrxe_top "$RRXE_TOP"
# The kernel tree's kselftest helpers (ktap_helpers.sh), which every
# selftest sources (tools/testing/selftests/rrxe/lib/ksft.sh).
export KSFT_LIB=/run/rrxe/kselftest
mkdir -p "$KSFT_LIB"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro rrxe_ksft "$KSFT_LIB"
mkdir -p "$RRXE_OUT"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rrxe_out "$RRXE_OUT"
# Two-VM runs (scripts/vm-pair.sh): the directory both VMs share.
pair=$(arg rrxe.pair)
if [ -n "$pair" ]; then
	mkdir -p "$pair"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rrxe_pair "$pair"
	export RRXE_PAIR=$pair
fi
hostname "$(arg rrxe.name)"
ip link set lo up
# Tests read dmesg themselves; keep the console for CMD's output unless
# VM_LOGLEVEL asked for kernel messages (e.g. 8 for everything).
echo "$(arg rrxe.loglevel)" >/proc/sys/kernel/printk

cd "$RRXE_TOP" 2>/dev/null || cd /
bash -c "$(cat "$RRXE_OUT/.cmd")" </dev/null
rc=$?
echo "$rc" >"$RRXE_OUT/.rc"
sync
# Immediate reboot(2) (qemu -no-reboot exits); sysrq as the fallback.
reboot -ff >/dev/null 2>&1
echo b >/proc/sysrq-trigger
