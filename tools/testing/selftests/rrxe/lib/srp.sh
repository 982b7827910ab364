# shellcheck shell=bash
# SRP over RDMA helpers (sourced after lib.sh, pingpong.sh and nvme.sh,
# inside the test VM): LIO's ib_srpt target on a file-backed backstore,
# configured through configfs as blktests does, and the ib_srp initiator,
# logging in through RDMA/CM (`dest=IP:PORT`).
#
# ib_srpt makes its RDMA/CM listener in the initial network namespace
# (ib_srpt.c: rdma_create_id(&init_net, ...)); ib_srp connects from the
# namespace of the process that writes add_target.  So the target's
# device srt0 sits on veth vst in the initial namespace (10.78.0.1) and
# the initiator's device sri0 on vsi in namespace srpI (10.78.0.2): two
# ends of a real link in one VM, of one driver or of C rxe and rrxe.
#
#   srp_link_up TGT_DRV INI_DRV  the two devices, ports active
#   srp_target_up                target port on srt0, LUN 0 on SRP_IMG
#   srp_login                    the initiator logs in; SRP_HOST is its SCSI
#                                host number, BLKDEV its disk (/dev/sdX)
#   srp_logout                   removes the remote port, waits for the host
#   srp_target_down              undoes srp_target_up
#   srp_link_down                undoes srp_link_up
#   srp_cleanup                  best effort, all of the above
SRP_PORT=5555
SRP_IMG=${SRP_IMG:-/tmp/srp.img}
SRP_IMG_SIZE=${SRP_IMG_SIZE:-$((128 << 20))}
SRP_TGT_IP=10.78.0.1
SRP_INI_IP=10.78.0.2
SRP_CFS=/sys/kernel/config/target
SRP_HOST=

srp_link_up() {
	local tgt=$1 ini=$2
	modprobe veth
	pp_load "$tgt"
	pp_load "$ini"
	ip netns add srpI
	ip link add vst type veth peer name vsi netns srpI
	ip link set vst mtu 9000 up
	ip addr add "$SRP_TGT_IP/24" dev vst
	pp_netdev_up srpI vsi "$SRP_INI_IP"
	rdma link add srt0 type "$tgt" netdev vst || fail "rdma link add srt0 type $tgt netdev vst"
	wait_for 20 port_active srt0 || fail "srt0 ($tgt): port not ACTIVE"
	pp_gid_index srt0 "$SRP_TGT_IP" >/dev/null || fail "srt0: no GID for $SRP_TGT_IP"
	pp_rdma_add srpI sri0 "$ini" vsi "$SRP_INI_IP"
}

srp_link_down() {
	local d
	for d in srt0 sri0; do
		[ ! -e "/sys/class/infiniband/$d" ] || rdma link delete "$d"
	done
	ip link del vst 2>/dev/null || true
	ip netns del srpI 2>/dev/null || true
	wait_for 20 paths_gone '/sys/class/infiniband/sr[ti]0' || fail "srt0/sri0 stayed after rdma link delete"
}

# The target port's name: the interface ID of srt0's GID 0, as
# xxxx:xxxx:xxxx:xxxx (one of the two forms ib_srpt accepts).
srp_port_name() {
	local g
	read -r g </sys/class/infiniband/srt0/ports/1/gids/0
	echo "${g#fe80:0000:0000:0000:}"
}

# srp_target_up: fileio backstore on SRP_IMG (tmpfs), target port for
# srt0 with LUN 0 and an ACL.  Over RDMA/CM, ib_srpt names the session
# after the connection's local address, the target's own IP, so that is
# the ACL's name.
srp_target_up() {
	local b=$SRP_CFS/core/fileio_0/srpdisk p t
	modprobe target_core_mod
	modprobe target_core_file
	modprobe ib_srpt
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	truncate -s "$SRP_IMG_SIZE" "$SRP_IMG"
	mkdir -p "$b"
	echo "fd_dev_name=$SRP_IMG,fd_dev_size=$SRP_IMG_SIZE" >"$b/control"
	echo 1 >"$b/enable"
	mkdir -p "$SRP_CFS/srpt"
	echo "$SRP_PORT" >"$SRP_CFS/srpt/discovery_auth/rdma_cm_port"
	p=$(srp_port_name)
	t=$SRP_CFS/srpt/$p/$p
	mkdir -p "$t/lun/lun_0" "$t/acls/$SRP_TGT_IP/lun_0"
	ln -s "$b" "$t/lun/lun_0/srpdisk"
	ln -s "$t/lun/lun_0" "$t/acls/$SRP_TGT_IP/lun_0/lun_0"
	echo 1 >"$t/enable"
}

srp_target_down() {
	local p t b=$SRP_CFS/core/fileio_0/srpdisk
	[ -d "$SRP_CFS/srpt" ] || return 0
	for t in "$SRP_CFS"/srpt/*/*/enable; do
		[ -e "$t" ] || continue
		t=${t%/enable}
		echo 0 >"$t/enable"
		rm -f "$t"/acls/*/lun_0/lun_0 "$t/lun/lun_0/srpdisk"
		rmdir "$t"/acls/*/lun_0 "$t"/acls/* "$t/lun/lun_0" "$t" 2>/dev/null || true
		p=${t%/*}
		rmdir "$p"
	done
	echo 0 >"$SRP_CFS/srpt/discovery_auth/rdma_cm_port" || true
	rmdir "$SRP_CFS/srpt"
	if [ -d "$b" ]; then rmdir "$b" "${b%/*}"; fi
	rm -f "$SRP_IMG"
}

# srp_login: ib_srp on sri0 logs in to the target at SRP_TGT_IP:SRP_PORT
# from namespace srpI; sets SRP_HOST and BLKDEV.  id_ext and ioc_guid must
# both equal ib_srpt's service GUID.
srp_login() {
	local s r h
	modprobe ib_srp
	modprobe sd_mod
	read -r s </sys/module/ib_srpt/parameters/srpt_service_guid
	s=${s#0x}
	in_netns srpI bash -c 'echo "$1" >/sys/class/infiniband_srp/srp-sri0-1/add_target' _ \
		"id_ext=$s,ioc_guid=$s,dest=$SRP_TGT_IP:$SRP_PORT" ||
		fail "SRP login to $SRP_TGT_IP:$SRP_PORT failed: $(dmesg | grep -iE 'srp' | tail -3)"
	r=$(ls -d /sys/class/srp_remote_ports/port-* 2>/dev/null | head -1)
	[ -n "$r" ] || fail "SRP login made no remote port"
	h=${r##*/port-}
	SRP_HOST=${h%%:*}
	wait_for 20 srp_disk_of "$SRP_HOST" >/dev/null || fail "SRP host $SRP_HOST: no SCSI disk after the login"
	BLKDEV=/dev/$(srp_disk_of "$SRP_HOST")
	wait_for 10 test -b "$BLKDEV" || fail "$BLKDEV is not a block device"
}

# srp_disk_of HOST: the block device of HOST's LUN 0 (sdX), if there.
srp_disk_of() {
	local d
	for d in /sys/class/scsi_device/"$1":0:0:0/device/block/*; do
		[ -e "$d" ] || return 1
		echo "${d##*/}"
		return 0
	done
	return 1
}

srp_logout() {
	local r
	[ -n "$SRP_HOST" ] || return 0
	for r in /sys/class/srp_remote_ports/port-"$SRP_HOST":*; do
		[ -e "$r/delete" ] && echo 1 >"$r/delete"
	done
	wait_for 30 test ! -e "/sys/class/scsi_host/host$SRP_HOST" || fail "SRP host $SRP_HOST stayed after logout"
	SRP_HOST=
}

srp_cleanup() {
	[ -z "$FIO_BG" ] || kill "$FIO_BG" 2>/dev/null || true
	(srp_logout) 2>/dev/null || true
	modprobe -r ib_srp 2>/dev/null || true
	(srp_target_down) 2>/dev/null || true
	modprobe -r ib_srpt target_core_file target_core_mod 2>/dev/null || true
	(srp_link_down) 2>/dev/null || true
	return 0
}

# srp_pairing TGT_DRV INI_DRV SIZE [disrupt]: the target on a TGT_DRV
# device, the initiator on an INI_DRV one; fio writes SIZE per job with
# verify headers and verifies it through the SCSI disk; logout, all taken
# down.  With "disrupt", then a second login and the initiator's device
# deleted under fio (srp_disrupt).
srp_pairing() {
	local tgt=$1 ini=$2
	srp_link_up "$tgt" "$ini"
	srp_target_up
	srp_login
	fio_verify "srp-$tgt-$ini" "$3"
	srp_logout
	if [ "${4:-}" = disrupt ]; then
		srp_login
		srp_disrupt "srp $tgt->$ini"
	fi
	srp_target_down
	srp_link_down
	BLKDEV=
}

# srp_disrupt LABEL: `rdma link delete` of the initiator's device sri0
# under fio: ib_srp removes the SCSI host, fio ends with I/O errors (not a
# hang) within 120 s, and the remote port is gone.
srp_disrupt() {
	local label=$1
	fio_under_delete "$label" sri0
	((FIO_STATUS != 0)) || fail "$label: fio reported no error although its disk's device went away"
	wait_for 30 test ! -e "/sys/class/scsi_host/host$SRP_HOST" || fail "$label: SCSI host $SRP_HOST stayed after sri0 went"
	SRP_HOST=
	note "$label: sri0 deleted under fio: fio ended with I/O errors (status $FIO_STATUS), the SCSI host went"
}
