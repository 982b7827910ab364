# NVMe over RDMA helpers (sourced inside the test VM after lib.sh): the
# kernel target (nvmet, nvmet-rdma, a memory-backed null_blk namespace),
# the kernel host (nvme-rdma through Debian's nvme-cli) and fio runs on
# its block device.  Used by nvme-rdma.sh (rrxe on both ends, one VM), the
# two-VM pairing with C rxe (pair/nvme-interop.sh) and make bench.
#
# Both ULPs make their rdma_cm IDs in the initial network namespace, so
# their devices are there too.  For two devices in one VM, nvme_veth_up
# puts them at the two ends of a veth and routes the host's packets out of
# it (a rule for locally generated packets, accept_local on the other
# end) instead of delivering them locally, so they cross the link and
# netem acts on them.
NQN=${NQN:-rrxe-test}

# nvme_veth_up DRIVER: devices nvh0 (host, 10.79.0.1 on veth nvh) and nvt0
# (target, 10.79.0.2 on nvt) of DRIVER (rrxe or rxe), ports active.
nvme_veth_up() {
	local drv=$1 d
	modprobe "rdma_$drv"
	ip link add nvh type veth peer name nvt
	ip link set nvh mtu 9000 up
	ip link set nvt mtu 9000 up
	ip addr add 10.79.0.1/24 dev nvh
	ip addr add 10.79.0.2/24 dev nvt
	ip rule add pref 10 iif lo to 10.79.0.2 lookup 100
	ip rule add pref 11 iif lo to 10.79.0.1 lookup 101
	ip route add 10.79.0.2 dev nvh src 10.79.0.1 table 100
	ip route add 10.79.0.1 dev nvt src 10.79.0.2 table 101
	# The local table moves after these rules.
	ip rule del pref 0 lookup local
	ip rule add pref 100 lookup local
	for d in nvh nvt; do
		sysctl -qw "net.ipv4.conf.$d.accept_local=1" "net.ipv4.conf.$d.rp_filter=0"
	done
	sysctl -qw net.ipv4.conf.all.rp_filter=0
	rdma link add nvh0 type "$drv" netdev nvh
	rdma link add nvt0 type "$drv" netdev nvt
	for d in nvh0 nvt0; do
		wait_for 20 port_active "$d" || fail "$d ($drv) not active"
	done
}

# Undoes nvme_veth_up (the devices go with their netdevs).
nvme_veth_down() {
	ip rule del pref 100 lookup local
	ip rule add pref 0 lookup local
	ip rule del pref 10
	ip rule del pref 11
	ip link del nvh
	wait_for 20 paths_gone '/sys/class/infiniband/nv[ht]0' || fail "nvh0/nvt0 stayed after their veth went"
}

# nvme_target_up ADDR: subsystem $NQN with a 1 GiB null_blk namespace,
# port 4420 on ADDR (IPv4), nvmet-rdma with a shared receive queue.
nvme_target_up() {
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1
	modprobe nvmet
	modprobe nvmet-rdma use_srq=1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	local c=/sys/kernel/config/nvmet
	mkdir "$c/subsystems/$NQN"
	echo 1 >"$c/subsystems/$NQN/attr_allow_any_host"
	mkdir "$c/subsystems/$NQN/namespaces/1"
	echo -n /dev/nullb0 >"$c/subsystems/$NQN/namespaces/1/device_path"
	echo 1 >"$c/subsystems/$NQN/namespaces/1/enable"
	mkdir "$c/ports/1"
	echo "$1" >"$c/ports/1/addr_traddr"
	echo rdma >"$c/ports/1/addr_trtype"
	echo 4420 >"$c/ports/1/addr_trsvcid"
	echo ipv4 >"$c/ports/1/addr_adrfam"
	ln -s "$c/subsystems/$NQN" "$c/ports/1/subsystems/$NQN"
}

nvme_target_down() {
	local c=/sys/kernel/config/nvmet
	rm -f "$c/ports/1/subsystems/$NQN"
	rmdir "$c/ports/1" 2>/dev/null || true
	if [ -d "$c/subsystems/$NQN" ]; then
		echo 0 >"$c/subsystems/$NQN/namespaces/1/enable"
		rmdir "$c/subsystems/$NQN/namespaces/1"
		rmdir "$c/subsystems/$NQN"
	fi
}

# nvme_host_up ADDR: connects to $NQN at ADDR (2 I/O queues, a
# controller loss timeout of NVME_LOSS_TMO seconds (8), 1 s reconnect
# delay) and waits for the namespace's block device; NVDEV is its path.
nvme_host_up() {
	modprobe nvme-rdma
	timeout 60 nvme connect -t rdma -a "$1" -s 4420 -n "$NQN" -i 2 -l "${NVME_LOSS_TMO:-8}" -c 1 ||
		fail "nvme connect to $1 failed: $(dmesg | tail -5)"
	wait_for 20 bash -c 'ls /sys/class/nvme/nvme*/nvme*n1 >/dev/null 2>&1' || fail "no NVMe namespace after connect"
	NVDEV=/dev/$(basename "$(ls -d /sys/class/nvme/nvme*/nvme*n1 | head -1)")
	wait_for 10 test -b "$NVDEV" || fail "$NVDEV did not appear"
}

# nvme_host_down: disconnects and waits until no controller is left.
nvme_host_down() {
	timeout 120 nvme disconnect -n "$NQN" >/dev/null || fail "nvme disconnect failed or hung"
	wait_for 30 paths_gone '/sys/class/nvme/nvme[0-9]*' || fail "the host controller stayed after nvme disconnect"
}

# nvme_io_moving: the host's namespace (or BLKDEV, SRP's and iSER's disk)
# completes I/O (its sectors-written counter grows within 10 s).
nvme_io_moving() {
	local st w0 w i dev=${BLKDEV:-$NVDEV}
	st=/sys/block/${dev#/dev/}/stat
	read -r _ _ _ _ _ _ w0 _ <"$st"
	for ((i = 0; i < 100; i++)); do
		nap 0.1
		read -r _ _ _ _ _ _ w _ <"$st"
		[ "$w" -gt "$w0" ] && return 0
	done
	return 1
}

# fio_verify NAME SIZE: writes SIZE with verify headers (queue depth 32,
# 2 jobs) to BLKDEV (SRP's and iSER's disk) or else NVDEV, reads back and
# verifies; fails the test on any error.
fio_verify() {
	local out
	out=$(timeout 600 fio --name="$1" --filename="${BLKDEV:-$NVDEV}" --rw=randwrite --bs=64k --size="$2" \
		--direct=1 --ioengine=libaio --iodepth=32 --numjobs=2 --offset_increment="$2" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --group_reporting 2>&1) ||
		{
			echo "$out" | grep -iE 'verify|error|err=|bad|mismatch|crc|expected|received' | head -20 | sed 's/^/  # /'
			echo "$out" | grep -E '^ *(READ|WRITE):' | sed 's/^/  # /'
			[ -z "${RRXE_OUT:-}" ] || printf '%s\n' "$out" >"$RRXE_OUT/fio-$1.log"
			fail "fio $1: write/verify failed (the whole output: \$RRXE_OUT/fio-$1.log)"
		}
	note "fio $1: $(echo "$out" | grep -E '^ *(READ|WRITE):' | sed 's/, io=.*//' | tr -s ' ' | tr '\n' ';')"
}

# fio_seq_mbs RW SECONDS: sequential RW (read or write) on NVDEV, 128 KiB
# blocks, queue depth 16, 2 jobs, time based; prints the bandwidth in MB/s
# (2^20 bytes, as perftest counts).
fio_seq_mbs() {
	local out
	out=$(timeout $(($2 + 120)) fio --name="seq$1" --filename="$NVDEV" --rw="$1" --bs=128k --size=256M \
		--direct=1 --ioengine=libaio --iodepth=16 --numjobs=2 --offset_increment=256M \
		--time_based --runtime="$2" --ramp_time=1 --group_reporting --output-format=terse --terse-version=3 2>&1) ||
		{ echo "$out" | tail -5 >&2; return 1; }
	# Terse v3: field 7 is the read bandwidth, 48 the write's, in KiB/s.
	echo "$out" | tail -1 | awk -F';' -v rw="$1" '{ kb = (rw == "read") ? $7 : $48; printf "%.1f\n", kb / 1024 }'
}

# fio_under_delete LABEL DEV: random 64 KiB writes (queue depth 16, time
# based, at most 120 s) to BLKDEV in the background; once they reach the
# disk, `rdma link delete DEV`; then waits for fio, which must end within
# its 120 s (not hang).  FIO_STATUS is its exit status; FIO_BG is its pid
# while it runs (a cleanup kills it).
FIO_BG=
fio_under_delete() {
	local label=$1 dev=$2
	timeout 120 fio --name=disrupt --filename="$BLKDEV" --rw=randwrite --bs=64k --size=64M \
		--direct=1 --ioengine=libaio --iodepth=16 --time_based --runtime=60 >/tmp/disrupt-fio.log 2>&1 &
	FIO_BG=$!
	nvme_io_moving || fail "$label: fio's writes do not reach $BLKDEV"
	rdma link delete "$dev" || fail "$label: rdma link delete $dev"
	FIO_STATUS=0
	wait "$FIO_BG" || FIO_STATUS=$?
	FIO_BG=
	((FIO_STATUS != 124)) || fail "$label: fio still running 120 s after $dev was deleted"
}

# Best effort, after a failure: no controller, target, module or veth of
# these helpers left.
nvme_cleanup() {
	timeout 120 nvme disconnect-all >/dev/null 2>&1 || true
	nvme_target_down 2>/dev/null || true
	modprobe -r nvme-rdma nvmet-rdma nvmet null_blk 2>/dev/null || true
	if ip link show nvh >/dev/null 2>&1; then (nvme_veth_down) >/dev/null 2>&1 || true; fi
	return 0
}
