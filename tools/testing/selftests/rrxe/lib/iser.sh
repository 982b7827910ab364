# shellcheck shell=bash
# iSER helpers (sourced after lib.sh and nvme.sh, inside the test VM):
# LIO's iSCSI target with the isert transport on a file-backed LUN,
# configured through configfs, and the ib_iser initiator, logged in by
# open-iscsi's iscsid and iscsiadm.
#
# Both isert's listener and ib_iser's connection are made in the initial
# network namespace (rdma_create_id(&init_net, ...) in ib_isert.c and
# iser_verbs.c), and so is iscsid's netlink socket: in one VM, both
# devices sit at the two ends of nvme_veth_up's veth (nvt0, the target,
# 10.79.0.2; nvh0, the initiator, 10.79.0.1); across drivers, the two-VM
# pair.
#
# open-iscsi is not installed on the host: scripts/setup.sh unpacks
# Debian's packages into out/open-iscsi, and iser_userspace runs them
# from there.  They keep their state in /etc/iscsi, which the VM's
# read-only root lacks: an overlay with a tmpfs upper layer covers /etc
# for the test's life.
#
#   iser_userspace               skips the test without out/open-iscsi
#   iser_target_up IP            target ISER_IQN, LUN 0 on ISER_IMG, an
#                                iSER portal on IP:3260, no authentication
#   iser_target_idle             waits for the session to end
#   iser_target_down             undoes iser_target_up
#   iser_login IP                iscsid started, login over iSER; BLKDEV is
#                                the session's disk
#   iser_logout                  logout, node deleted, iscsid stopped
#   iser_cleanup                 best effort, all of the above
ISER_IQN=iqn.2026-11.org.rrxe:iser-test
ISER_INITIATOR=iqn.2026-11.org.rrxe:initiator
ISER_IMG=${ISER_IMG:-/tmp/iser.img}
ISER_IMG_SIZE=${ISER_IMG_SIZE:-$((128 << 20))}
ISER_CFS=/sys/kernel/config/target
ISCSI_ROOT=$RRXE_TOP/out/open-iscsi
ISER_PORTAL=

ISER_ETC_OVERLAY=0
iser_userspace() {
	[ -x "$ISCSI_ROOT/sbin/iscsid" ] ||
		ksft_skip "open-iscsi is not unpacked in $ISCSI_ROOT (scripts/setup.sh does it)"
	if ! mountpoint -q /etc; then
		mkdir -p /tmp/etc-overlay/upper /tmp/etc-overlay/work
		mount -t overlay overlay \
			-o lowerdir=/etc,upperdir=/tmp/etc-overlay/upper,workdir=/tmp/etc-overlay/work /etc ||
			fail "overlay over /etc (for /etc/iscsi)"
		ISER_ETC_OVERLAY=1
	fi
	mkdir -p /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces /run/lock/iscsi
	iscsi_lib
	echo "InitiatorName=$ISER_INITIATOR" >/etc/iscsi/initiatorname.iscsi
	# The iscsid.conf of Debian's package, but for manual startup and a
	# session that fails its I/O 15 s (not 120) after losing its connection.
	sed -e 's/^node.startup = .*/node.startup = manual/' \
		-e 's/^node.session.timeo.replacement_timeout = .*/node.session.timeo.replacement_timeout = 15/' \
		"$ISCSI_ROOT/etc/iscsi/iscsid.conf" >/etc/iscsi/iscsid.conf
}

# open-iscsi's programs with their libraries from ISCSI_ROOT (the
# package's own directory, whatever the architecture's name; looked up
# once, as a fork costs a tenth of a second here and iscsiadm runs in
# polls).
ISCSI_LIBDIR=
iscsi_lib() {
	[ -n "$ISCSI_LIBDIR" ] || ISCSI_LIBDIR=$(dirname "$(ls "$ISCSI_ROOT"/usr/lib/*/libopeniscsiusr.so.0 | head -1)")
}
iscsi_run() {
	local prog=$1
	shift
	iscsi_lib
	LD_LIBRARY_PATH=$ISCSI_LIBDIR "$ISCSI_ROOT/sbin/$prog" "$@"
}
iscsiadm() { iscsi_run iscsiadm "$@"; }

iser_target_up() {
	local ip=$1 b=$ISER_CFS/core/fileio_1/iserdisk t=$ISER_CFS/iscsi/$ISER_IQN/tpgt_1
	modprobe target_core_mod
	modprobe target_core_file
	modprobe iscsi_target_mod
	modprobe ib_isert
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	truncate -s "$ISER_IMG_SIZE" "$ISER_IMG"
	mkdir -p "$b"
	echo "fd_dev_name=$ISER_IMG,fd_dev_size=$ISER_IMG_SIZE" >"$b/control"
	echo 1 >"$b/enable"
	mkdir -p "$t/lun/lun_0"
	ln -s "$b" "$t/lun/lun_0/iserdisk"
	# The portal is made as TCP; writing iser adds its iSER twin.
	ISER_PORTAL="$t/np/$ip:3260"
	mkdir "$ISER_PORTAL"
	echo 1 >"$ISER_PORTAL/iser" || fail "isert: no iSER portal on $ip:3260: $(dmesg | tail -2)"
	echo 0 >"$t/attrib/authentication"
	echo 1 >"$t/attrib/generate_node_acls"
	echo 0 >"$t/attrib/demo_mode_write_protect"
	echo 1 >"$t/enable"
}

# iser_no_session TPG: no session left on the portal group TPG.
iser_no_session() { [ -z "$(tr -d '\0\n' <"$1/dynamic_sessions")" ]; }

# iser_target_idle: after the initiator's logout, the target's session
# ends (within 60 s).  Before iser_target_down: LIO removes a portal group
# under a session still closing, whose close then uses it after it was
# freed (KASAN in iscsit_close_session, seen once on the debug kernel;
# testing.rst, iser-interop.sh).
iser_target_idle() {
	local t=$ISER_CFS/iscsi/$ISER_IQN/tpgt_1
	wait_for 60 iser_no_session "$t" ||
		fail "isert: a session stays on the target 60 s after the logout: $(tr '\0' ' ' <"$t/dynamic_sessions")"
}

iser_target_down() {
	local b=$ISER_CFS/core/fileio_1/iserdisk t=$ISER_CFS/iscsi/$ISER_IQN/tpgt_1
	if [ -d "$t" ]; then
		echo 0 >"$t/enable"
		rmdir "$t"/np/* 2>/dev/null || true
		rm -f "$t/lun/lun_0/iserdisk"
		rmdir "$t/lun/lun_0" "$t" "$ISER_CFS/iscsi/$ISER_IQN"
	fi
	[ ! -d "$ISER_CFS/iscsi" ] || rmdir "$ISER_CFS/iscsi"
	if [ -d "$b" ]; then rmdir "$b" "${b%/*}"; fi
	rm -f "$ISER_IMG"
}

# iser_login IP: iscsid, a node record for ISER_IQN at IP:3260 on the
# iser interface (no discovery), login; BLKDEV is its disk.
iser_login() {
	local ip=$1 d
	modprobe ib_iser
	modprobe sd_mod
	pgrep -x iscsid >/dev/null || iscsi_run iscsid -c /etc/iscsi/iscsid.conf -i /etc/iscsi/initiatorname.iscsi ||
		fail "iscsid does not start"
	iscsiadm -m node -o new -T "$ISER_IQN" -p "$ip:3260" -I iser >/dev/null || fail "iscsiadm: no node record for $ip:3260"
	iscsiadm -m node -T "$ISER_IQN" -p "$ip:3260" -I iser --login >/dev/null ||
		fail "iSER login to $ip:3260 failed: $(dmesg | grep -iE 'iser|iscsi' | tail -3)"
	wait_for 20 iser_disk >/dev/null || fail "no SCSI disk after the iSER login: $(iscsiadm -m session -P 3 2>&1 | tail -5)"
	d=$(iser_disk)
	BLKDEV=/dev/$d
	wait_for 10 test -b "$BLKDEV" || fail "$BLKDEV is not a block device"
	iscsiadm -m session -P 1 | grep -q "iface.transport_name: iser\|Iface Transport: iser" ||
		fail "the session is not over iSER: $(iscsiadm -m session -P 1 | head -20)"
}

iscsid_gone() { ! pgrep -x iscsid >/dev/null; }

iser_disk() { iscsiadm -m session -P 3 2>/dev/null | sed -n 's/.*Attached scsi disk \([a-z]*\).*/\1/p' | head -1 | grep .; }

iser_logout() {
	local ip=$1
	iscsiadm -m node -T "$ISER_IQN" -p "$ip:3260" -I iser --logout >/dev/null || fail "iSER logout failed"
	iscsiadm -m node -o delete -T "$ISER_IQN" >/dev/null || true
	iscsiadm -k 0 2>/dev/null || true
	wait_for 10 iscsid_gone || fail "iscsid still runs after iscsiadm -k 0"
	BLKDEV=
}

iser_cleanup() {
	[ -z "$FIO_BG" ] || kill "$FIO_BG" 2>/dev/null || true
	if pgrep -x iscsid >/dev/null; then
		iscsi_lib
		timeout 60 env LD_LIBRARY_PATH="$ISCSI_LIBDIR" "$ISCSI_ROOT/sbin/iscsiadm" -m node --logoutall=all >/dev/null 2>&1 || true
		iscsi_run iscsiadm -k 0 >/dev/null 2>&1 || pkill -x iscsid || true
		wait_for 10 iscsid_gone || pkill -9 -x iscsid || true
	fi
	(iser_target_down) 2>/dev/null || true
	modprobe -r ib_iser ib_isert iscsi_target_mod target_core_file target_core_mod 2>/dev/null || true
	if [ "$ISER_ETC_OVERLAY" = 1 ]; then umount /etc 2>/dev/null || umount -l /etc 2>/dev/null || true; fi
	return 0
}

# iser_disrupt LABEL DRV: `rdma link delete` of the initiator's device
# nvh0 under fio.  The session loses its connection: fio must end (I/O
# failed after the replacement timeout, 15 s, or completed) within 120 s,
# not hang; with nvh0 added back, iscsid reconnects the session and fio
# verifies through it again.
iser_disrupt() {
	local label=$1 drv=$2
	fio_under_delete "$label" nvh0
	rdma link add nvh0 type "$drv" netdev nvh || fail "$label: rdma link add nvh0 again"
	wait_for 20 port_active nvh0 || fail "$label: nvh0 not active again"
	wait_for 90 iser_logged_in || fail "$label: the session did not reconnect: $(iscsiadm -m session -P 1 2>&1 | grep -i state)"
	fio_verify "$label-after" 4M
	note "$label: nvh0 deleted under fio (fio status $FIO_STATUS), added back: the session reconnected and verifies"
}

iser_logged_in() { iscsiadm -m session -P 1 2>/dev/null | grep -q "iSCSI Session State: LOGGED_IN"; }
