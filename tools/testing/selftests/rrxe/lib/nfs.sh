# shellcheck shell=bash
# NFS over RDMA helpers (sourced after lib.sh and pingpong.sh, inside the
# test VM): the kernel's NFSv4 server (nfsd, svcrdma) in one network
# namespace and its client (xprtrdma) in another, both driven through the
# kernel's own interfaces, so no nfs-utils is needed:
#
#   * nfsd through its filesystem (versions, lease and grace time, an
#     "rdma 20049" listener, threads) mounted for the server's namespace;
#   * the export through nfsd's caches, filled as rpc.mountd would answer
#     their upcalls: auth.unix.ip (the client's address -> a domain),
#     nfsd.fh (fsid 0 -> the exported path), nfsd.export (the path's
#     options).  NFSv4 only, so neither rpcbind nor the MOUNT protocol is
#     involved;
#   * the client by mount(2) with proto=rdma (mount -i: no mount.nfs).
#
# Both ends enter their namespace with `nsenter --net` only (not `ip netns
# exec`, which also makes a private mount namespace): the nfsd filesystem,
# the export and the client's mount all live in the VM's one mount
# namespace, so the test reaches them from anywhere.
#
#   nfs_server_up NS CLIENT_IP  nfsd in NS, exporting NFS_EXPORT (a fresh
#                               directory on the VM's /tmp tmpfs) as the
#                               NFSv4 root to CLIENT_IP, read-write
#                               (nfs_server_start, then nfs_server_ready)
#   nfs_server_down NS          stops it and empties its caches
#   nfs_mount NS SERVER_IP      mounts SERVER_IP:/ on NFS_MNT from NS
#   nfs_umount                  unmounts NFS_MNT (waits out a busy mount)
#   nfs_chunks                  "READ WRITE" chunk counts of NFS_MNT's
#                               transport (mountstats): calls whose data
#                               the server pulled with RDMA READ, replies
#                               it pushed with RDMA WRITE
#   nfs_cleanup                 all of the above that is still up

# nfs_test: what both NFS tests need, checked (skip otherwise), and their
# cleanup.
nfs_test() {
	ksft_require_cmd nsenter
	ksft_require_module rdma_rxe nfsd nfsv4 rpcrdma
	ksft_cleanup "nfs_cleanup; (pp_teardown) >/dev/null 2>&1 || true"
}

NFS_PORT=20049
NFS_EXPORT=${NFS_EXPORT:-/tmp/nfs-export}
NFS_MNT=${NFS_MNT:-/mnt/nfs}
NFS_DOMAIN=rrxe-nfs-client
NFS_THREADS=${NFS_THREADS:-4}
# file sizes nfs_pairing and nfs_both_ways write and read: inline (1 KiB)
# and chunked
NFS_SIZES=${NFS_SIZES:-"1024 65536 1048576 8388608"}
# nfsd's export flags (include/uapi/linux/nfsd/export.h): INSECURE_PORT
# (0x2: RPC-over-RDMA has no reserved source ports), NOSUBTREECHECK
# (0x400), FSID (0x2000: tmpfs has no device number, fsid=0 is the root).
NFS_EXPORT_FLAGS=$((0x2 | 0x400 | 0x2000))

# nfs_cache NS CACHE LINE: one record into nfsd's cache CACHE, as seen
# from NS (each network namespace has its own).
nfs_cache() {
	in_netns "$1" bash -c 'printf "%s\n" "$2" >"/proc/net/rpc/$1/channel"' _ "$2" "$3" ||
		fail "nfsd cache $2 refused: $3"
}

nfs_server_start() {
	local ns=$1 client=$2 fs expiry
	modprobe nfsd
	modprobe rpcrdma
	fs=/run/rrxe-nfsd.$ns
	mkdir -p "$fs" "$NFS_EXPORT"
	in_netns "$ns" mount -t nfsd nfsd "$fs" || fail "mount nfsd filesystem for $ns"
	echo "-3 +4 -4.0 +4.1 +4.2" >"$fs/versions"
	echo 10 >"$fs/nfsv4leasetime"
	echo 10 >"$fs/nfsv4gracetime"
	echo "rdma $NFS_PORT" >"$fs/portlist" || fail "nfsd: no RPC-over-RDMA listener on port $NFS_PORT"
	expiry=$(($(date +%s) + 86400))
	nfs_cache "$ns" auth.unix.ip "nfsd $client $expiry $NFS_DOMAIN"
	nfs_cache "$ns" nfsd.fh "$NFS_DOMAIN 1 \\x00000000 $expiry $NFS_EXPORT"
	nfs_cache "$ns" nfsd.export "$NFS_DOMAIN $NFS_EXPORT $expiry $NFS_EXPORT_FLAGS 65534 65534 0"
	echo "$NFS_THREADS" >"$fs/threads"
}

# nfs_server_ready NS: waits out the grace period of NS's nfsd (10 s, the
# least nfsd takes), which refuses OPENs; without a client tracker
# (nfsdcld) it cannot be ended early.  Servers started together wait it
# out together.
nfs_server_ready() {
	local fs=/run/rrxe-nfsd.$1
	wait_for 40 grep -qx Y "$fs/v4_end_grace" || fail "nfsd in $1: the grace period did not end"
	grep -q "rdma $NFS_PORT" "$fs/portlist" || fail "nfsd in $1: portlist lacks rdma $NFS_PORT: $(cat "$fs/portlist")"
}

nfs_server_up() {
	nfs_server_start "$@"
	nfs_server_ready "$1"
}

nfs_server_down() {
	local ns=$1 fs=/run/rrxe-nfsd.$1 c now
	[ -d "$fs" ] && mountpoint -q "$fs" || return 0
	echo 0 >"$fs/threads"
	now=$(date +%s)
	for c in nfsd.export nfsd.fh auth.unix.ip; do
		in_netns "$ns" bash -c "echo $now >/proc/net/rpc/$c/flush" || true
	done
	umount "$fs"
}

nfs_mount() {
	local ns=$1 ip=$2
	mkdir -p "$NFS_MNT"
	in_netns "$ns" mount -i -t nfs4 -o "vers=4.2,proto=rdma,port=$NFS_PORT,addr=$ip" "$ip:/" "$NFS_MNT" ||
		fail "mount $ip:/ with proto=rdma from $ns: $(dmesg | tail -3)"
	grep -q " $NFS_MNT nfs4 .*proto=rdma" /proc/mounts || fail "$NFS_MNT is not an NFS over RDMA mount: $(grep " $NFS_MNT " /proc/mounts)"
}

nfs_umount() {
	mountpoint -q "$NFS_MNT" || return 0
	wait_for 30 umount "$NFS_MNT" || fail "umount $NFS_MNT: $(dmesg | tail -3)"
}

nfs_chunks() {
	awk -v m="$NFS_MNT" '
		$1 == "device" { on = ($5 == m) }
		on && $1 == "xprt:" && $2 == "rdma" { print $13, $14; exit }' /proc/self/mountstats
}

# (Runs from the test's exit trap: never fails, forces what it must.
# Finds the servers by their nfsd mounts, so it also works from outside
# the subshell that started them.)
nfs_cleanup() {
	local fs
	if [ -n "$NFS_WRITER" ]; then
		touch /tmp/nfs-writer.stop
		kill "$NFS_WRITER" 2>/dev/null || true
	fi
	if mountpoint -q "$NFS_MNT"; then
		umount -f "$NFS_MNT" 2>/dev/null || umount -l "$NFS_MNT" 2>/dev/null || true
	fi
	for fs in /run/rrxe-nfsd.*; do
		mountpoint -q "$fs" 2>/dev/null || continue
		(nfs_server_down "${fs#/run/rrxe-nfsd.}") >/dev/null 2>&1 || umount -l "$fs" 2>/dev/null || true
	done
	return 0
}

# nfs_same A B WHAT: fails unless files A and B have the same bytes,
# saying whether B differs or could not be read.
nfs_same() {
	local out st=0
	out=$(cmp "$1" "$2" 2>&1) || st=$?
	case $st in
	0) ;;
	1) fail "$3 differs: $out" ;;
	*) fail "$3 cannot be read: $out" ;;
	esac
}

# nfs_files LABEL SIZE...: writes one file of each SIZE (bytes) of random
# data through NFS_MNT (fsync'd), drops the client's page cache, reads each
# back through the mount and checks it byte for byte, and checks the
# server's own copy in NFS_EXPORT; fails unless both the writes and the
# reads moved data in RDMA chunks (the sizes must include one past the
# inline threshold, 4 KiB).
nfs_files() {
	local label=$1 s r0 w0 r1 w1
	shift
	read -r r0 w0 < <(nfs_chunks)
	for s; do
		head -c "$s" /dev/urandom >"/tmp/nfs-src.$s"
		dd if="/tmp/nfs-src.$s" of="$NFS_MNT/f.$s" bs=1M conv=fsync status=none ||
			fail "$label: writing $s bytes to $NFS_MNT: $(dmesg | tail -3)"
	done
	echo 3 >/proc/sys/vm/drop_caches
	for s; do
		nfs_same "/tmp/nfs-src.$s" "$NFS_MNT/f.$s" "$label: $s bytes read back through NFS"
		nfs_same "/tmp/nfs-src.$s" "$NFS_EXPORT/f.$s" "$label: the server's copy of $s bytes"
	done
	read -r r1 w1 < <(nfs_chunks)
	((r1 > r0)) || fail "$label: no NFS WRITE went in a read chunk (read chunks $r0 -> $r1)"
	((w1 > w0)) || fail "$label: no NFS READ came back in a write chunk (write chunks $w0 -> $w1)"
	note "$label: $# files ($*) written and read back byte-exact; read chunks +$((r1 - r0)), write chunks +$((w1 - w0))"
	rm -f "$NFS_MNT"/f.* /tmp/nfs-src.*
}

# nfs_disrupt LABEL NS DEV DRV NETDEV IP: `rdma link delete` of DEV (the
# DRV device on NETDEV in NS, address IP: either end) while a writer
# fsyncs 256 KiB files (32 names in turn) through NFS_MNT without pause,
# then the same link added back; the writer goes on until two more files
# have gone through after that, so the outage falls inside its run.  NFS
# may recover (the mount is hard) or fail a write with an error (a client
# whose device went away); either way: the writer ends within its timeout
# (nothing hangs), every file whose last write succeeded reads back
# byte-exact, and writes go through again.  NFS_DISRUPT_FAILED: the
# writes that failed.
NFS_WRITER=
nfs_disrupt() {
	local label=$1 ns=$2 dev=$3 drv=$4 netdev=$5 ip=$6 i st=0 before n
	head -c $((256 * 1024)) /dev/urandom >/tmp/nfs-src.d
	rm -f /tmp/nfs-writer.log /tmp/nfs-writer.stop
	touch /tmp/nfs-writer.log
	timeout 180 bash -c 'for ((i = 0; i < 2000; i++)); do
		[ ! -e /tmp/nfs-writer.stop ] || break
		if dd if=/tmp/nfs-src.d of="$1/d.$((i % 32))" bs=64K conv=fsync status=none 2>/dev/null; then
			echo "ok $i"
		else
			echo "failed $i"
		fi >>/tmp/nfs-writer.log
	done' _ "$NFS_MNT" >/dev/null 2>&1 &
	NFS_WRITER=$!
	wait_for 60 grep -q "ok 1" /tmp/nfs-writer.log || fail "$label: the writer made no progress before the disruption"
	pid_gone "$NFS_WRITER" && fail "$label: the writer ended before the disruption: $(tail -2 /tmp/nfs-writer.log)"
	rdma link delete "$dev" || fail "$label: rdma link delete $dev"
	wait_for 10 test ! -e "/sys/class/infiniband/$dev" || fail "$label: $dev not removed"
	nap 1
	pp_rdma_add "$ns" "$dev" "$drv" "$netdev" "$ip"
	before=$(nfs_writer_oks)
	wait_slow 150 nfs_writer_past $((before + 2)) ||
		fail "$label: no two writes went through within 150 s after $dev came back: $(tail -2 /tmp/nfs-writer.log)"
	touch /tmp/nfs-writer.stop
	wait "$NFS_WRITER" || st=$?
	NFS_WRITER=
	((st == 0)) || fail "$label: the writer did not end within 180 s (status $st)"
	echo 3 >/proc/sys/vm/drop_caches
	# A file name is reused every 32 writes: its last write decides.
	for i in $(awk '{ last[$2 % 32] = $1 } END { for (f in last) if (last[f] == "ok") print f }' /tmp/nfs-writer.log); do
		nfs_same /tmp/nfs-src.d "$NFS_MNT/d.$i" "$label: file $i, last written without an error,"
	done
	n=$(wc -l </tmp/nfs-writer.log)
	NFS_DISRUPT_FAILED=$(grep -c '^failed' /tmp/nfs-writer.log || true)
	note "$label: $dev deleted and added back under fsync'd writes: $((n - NFS_DISRUPT_FAILED)) of $n files written and read back byte-exact, $NFS_DISRUPT_FAILED failed with an error, writes go through again"
	rm -f "$NFS_MNT"/d.* /tmp/nfs-src.d /tmp/nfs-writer.log /tmp/nfs-writer.stop
}

# nfs_writer_oks: the files nfs_disrupt's writer has written so far;
# nfs_writer_past N: at least N.
nfs_writer_oks() { grep -c '^ok' /tmp/nfs-writer.log || true; }
nfs_writer_past() { (($(nfs_writer_oks) >= $1)); }

# nfs_pairing SRV_DRV CLI_DRV [disrupt|disrupt-client]: server (SRV_DRV
# device ppa0, ppA, 10.77.0.1) and client (CLI_DRV device ppb0, ppB) on
# pingpong.sh's pair; nfs_files with NFS_SIZES, then nfs_disrupt on the
# server's link and on the client's ("disrupt") or on the client's
# ("disrupt-client"); all taken down again.
nfs_pairing() {
	local srv=$1 cli=$2
	pp_setup_pair "$srv" "$cli"
	nfs_server_up ppA 10.77.0.2
	nfs_mount ppB 10.77.0.1
	# shellcheck disable=SC2086
	nfs_files "$srv->$cli" $NFS_SIZES
	case ${3:-} in
	disrupt)
		nfs_disrupt "$srv->$cli, the server's link" ppA ppa0 "$srv" vpa 10.77.0.1
		nfs_disrupt "$srv->$cli, the client's link" ppB ppb0 "$cli" vpb 10.77.0.2
		;;
	disrupt-client) nfs_disrupt "$srv->$cli, the client's link" ppB ppb0 "$cli" vpb 10.77.0.2 ;;
	esac
	nfs_umount
	nfs_server_down ppA
	pp_teardown
}

# nfs_both_ways DRV_A DRV_B: DRV_A's device ppa0 (ppA, 10.77.0.1) and
# DRV_B's ppb0 (ppB, 10.77.0.2), an nfsd in each namespace (started
# together, so their grace periods overlap); ppB's client mounts ppA's
# export, then ppA's client ppB's: nfs_files with NFS_SIZES each way on
# one pair of devices.
nfs_both_ways() {
	local a=$1 b=$2
	pp_setup_pair "$a" "$b"
	nfs_server_start ppA 10.77.0.2
	nfs_server_start ppB 10.77.0.1
	nfs_server_ready ppA
	nfs_server_ready ppB
	nfs_mount ppB 10.77.0.1
	# shellcheck disable=SC2086
	nfs_files "$a->$b" $NFS_SIZES
	nfs_umount
	nfs_mount ppA 10.77.0.2
	# shellcheck disable=SC2086
	nfs_files "$b->$a" $NFS_SIZES
	nfs_umount
	nfs_server_down ppA
	nfs_server_down ppB
	pp_teardown
}

# nfs_unload: the NFS modules and rdma_rrxe unload (nothing left holding
# them; the namespaces' teardown is asynchronous, hence the wait).
nfs_unload() {
	wait_for 30 modprobe -r nfsv4 rpcrdma nfsd || fail "NFS modules do not unload: $(lsmod | grep -E 'rpcrdma|nfs')"
	rmmod rdma_rrxe || fail "rdma_rrxe does not unload after NFS over RDMA"
}
