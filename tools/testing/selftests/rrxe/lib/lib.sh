# SPDX-License-Identifier: GPL-2.0
# The rrxe selftests' shell library: helpers only, no side effects beyond
# the variables below, so the runner, the benchmarks and the other
# libraries source it too.  A test starts with lib/ksft.sh instead, which
# sources this and makes the script a kselftest.  A test is a bash script
# that exits 0 on success; `fail MSG` ends it with a message.
#
#   RRXE_SELFTESTS  tools/testing/selftests/rrxe
#   RRXE_LIB        its lib/ (these shell libraries)
#   RRXE_PROGS      its progs/ (the pyverbs and C check programs)
#   RRXE_TOP        the repository (out/progs holds the built programs)
#   RRXE_FLAVOR     release or debug: the running kernel's
#   RRXE_TEST_LEVEL quick (make test) or full (make test-full)
RRXE_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RRXE_SELFTESTS=${RRXE_LIB%/lib}
RRXE_PROGS=$RRXE_SELFTESTS/progs
RRXE_TOP=${RRXE_TOP:-${RRXE_SELFTESTS%/tools/testing/selftests/rrxe}}
# (scripts/vm-run.sh sets RRXE_FLAVOR; elsewhere kmemleak, a debug-only
# option, tells.)
if [ -z "${RRXE_FLAVOR:-}" ]; then
	RRXE_FLAVOR=release
	[ -e /sys/kernel/debug/kmemleak ] && RRXE_FLAVOR=debug
fi
: "${RRXE_TEST_LEVEL:=quick}"
export RRXE_LIB RRXE_SELFTESTS RRXE_PROGS RRXE_TOP RRXE_FLAVOR RRXE_TEST_LEVEL
# The pyverbs programs import the one helper package, rrxe_ksft.
export PYTHONPATH=$RRXE_LIB/py${PYTHONPATH:+:$PYTHONPATH}
# The debug kernel (KASAN, lockdep, kmemleak, under TCG) runs the data
# path about 50x slower: its pingpong cells move a tenth of the data (the
# same sizes, MTUs and flags); at level quick it takes the matrices' smoke
# subset and fewer lossy messages.
if [ "$RRXE_FLAVOR" = debug ]; then
	export PP_ITERS_1=${PP_ITERS_1:-100} PP_ITERS_4096=${PP_ITERS_4096:-100}
	export PP_ITERS_65536=${PP_ITERS_65536:-30} PP_ITERS_1048576=${PP_ITERS_1048576:-4}
	export PP_LONG_ITERS=${PP_LONG_ITERS:-2000}
	if [ "$RRXE_TEST_LEVEL" = quick ]; then
		export RRXE_MATRIX=${RRXE_MATRIX:-smoke} LOSS_MESSAGES=${LOSS_MESSAGES:-20}
	fi
fi

fail() { echo "FAIL: $*" >&2; exit 1; }

# Kernel messages that mean a test broke the kernel, whatever it
# printed: oopses, KASAN/KFENCE/UBSAN reports, lockdep and
# sleeping-in-atomic ("BUG:"/"WARNING:"), debugobjects, refcount and
# hung-task reports.
BAD_DMESG='BUG:|WARNING:|Oops|general protection|Call Trace|refcount_t:|UBSAN|KASAN|KFENCE|ODEBUG|kmemleak|rust_panic|panicked|blocked for more than|possible circular locking|inconsistent lock state|sleeping function called'

# The debug kernel at make test's level (KASAN, lockdep, kmemleak: ~10x
# slower): tests keep every code path but move less data and repeat less
# (make test-full has the full sizes).
debug_quick() { [ "${RRXE_FLAVOR:-release}" = debug ] && [ "${RRXE_TEST_LEVEL:-quick}" = quick ]; }
note() { echo "  # $*"; }

# Runs "$@" and requires it to fail with a message matching $1 (ERE).
expect_fail() {
	local pattern=$1; shift
	local out
	if out=$("$@" 2>&1); then fail "expected failure: $*"; fi
	echo "$out" | grep -Eqi -- "$pattern" || fail "'$*' failed, but not with /$pattern/: $out"
	note "refused as expected: $* -> $(echo "$out" | head -1)"
}

# veth pair NAME0/NAME1, both up, in the current namespace.
mkveth() {
	modprobe veth
	ip link add "$1" type veth peer name "$2"
	ip link set "$1" up
	ip link set "$2" up
}

# nap SECONDS: sleeps without starting a process (read's time limit on a
# FIFO nobody writes).  Under TCG a fork and exec costs 0.1-0.3 s, more
# than the 0.1 s polls it would space.
nap() {
	if [ -z "${_NAP_FD:-}" ]; then
		local f
		f=$(mktemp -u /tmp/nap.XXXXXX)
		mkfifo "$f"
		exec {_NAP_FD}<>"$f"
		rm -f "$f"
	fi
	read -r -t "$1" -u "$_NAP_FD" _ || true
}

# poll_every STEP TRIES CMD...: runs CMD up to TRIES times, STEP seconds
# apart, until it succeeds; then once more (a condition met during the
# last gap counts); CMD's last status.
poll_every() {
	local step=$1 tries=$2 i
	shift 2
	for ((i = 0; i < tries; i++)); do "$@" && return 0; nap "$step"; done
	"$@"
}

# port_active DEV: port 1 of RDMA device DEV is ACTIVE (for wait_for).
port_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; }

# wait_for SECS CMD...: waits up to SECS seconds for CMD to succeed,
# trying ten times a second.
wait_for() { local t=$1; shift; poll_every 0.1 $((t * 10)) "$@"; }

# wait_slow SECS CMD...: wait_for trying once a second, for a CMD that
# starts processes (a pipeline through dmesg): ten of those a second take
# the CPUs from what they wait for.
wait_slow() { local t=$1; shift; poll_every 1 "$t" "$@"; }

# pid_gone PID...: every process PID has ended (for wait_for: no shell
# started).
pid_gone() {
	local p
	for p; do
		kill -0 "$p" 2>/dev/null && return 1
	done
	return 0
}

# paths_gone PATTERN...: no path matches any of the glob PATTERNs (quoted:
# expanded at each call, by bash itself).
paths_gone() {
	local p
	for p; do
		compgen -G "$p" >/dev/null && return 1
	done
	return 0
}

# ip_join NS DEV TAG GROUP...: a process in namespace NS holds IP-level
# memberships of the GROUPs (IPv4, or IPv6 if the address has a colon) on
# DEV: what programs DEV's multicast filter (ibv_attach_mcast does not, on
# rrxe or C rxe; rdma_cm joins at both levels).  /tmp/join.TAG says
# "joined" once they are held (ip_joined); the process is in JOIN_PID and
# ends when killed or after 600 s.
ip_join() {
	local ns=$1 dev=$2 tag=$3
	shift 3
	rm -f "/tmp/join.$tag"
	ip netns exec "$ns" /usr/bin/python3 -c '
import socket, struct, sys, time
ifx = socket.if_nametoindex(sys.argv[1])
socks = []
for g in sys.argv[2:]:
    if ":" in g:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                     socket.inet_pton(socket.AF_INET6, g) + struct.pack("@I", ifx))
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                     struct.pack("4s4si", socket.inet_aton(g), b"\0" * 4, ifx))
    socks.append(s)
print("joined", flush=True)
time.sleep(600)' "$dev" "$@" >"/tmp/join.$tag" &
	JOIN_PID=$!
}

# ip_joined TAG...: every ip_join TAG holds its groups (read by bash: no
# process per poll).
ip_joined() {
	local t l
	for t; do
		read -r l 2>/dev/null <"/tmp/join.$t" && [ "$l" = joined ] || return 1
	done
}

# pid_listening PID PORT: a TCP socket listens on PORT in the network
# namespace of process PID (its /proc/PID/net/tcp and tcp6, read without
# starting a process: `ip netns exec NS ss` costs half a second under TCG).
pid_listening() {
	local hex _sl local _rem st _rest f
	printf -v hex ':%04X' "$2"
	for f in "/proc/$1/net/tcp" "/proc/$1/net/tcp6"; do
		[ -r "$f" ] || continue
		while read -r _sl local _rem st _rest; do
			[[ $local == *"$hex" && $st == 0A ]] && return 0
		done <"$f"
	done
	return 1
}

# One field of `ibv_devinfo -v -d DEV` (first match), e.g. devinfo rrxe0
# state.  The fields plain ibv_devinfo prints are read without -v: -v
# queries every entry of the GID table (1024 by default: half a second on the
# debug kernel).
devinfo() {
	local v=-v
	case $2 in state | max_mtu | active_mtu | link_layer | transport | fw_ver | node_guid | vendor_id) v= ;; esac
	# shellcheck disable=SC2086
	ibv_devinfo $v -d "$1" | sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -1
}

# in_netns NS CMD...: CMD in network namespace NS only (`ip netns exec`
# also gives it a mount namespace of its own, where a mount it makes
# vanishes with it).
in_netns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }

has_ibdev() { [ -e "/sys/class/infiniband/$1" ]; }

# C rxe and rrxe both bind UDP port 4791 in the namespaces they serve, so
# they cannot share one.  Moves NETDEV into namespace nsrxe (created if
# needed) and adds C rxe's device NAME on it there; ib devices stay visible
# from every namespace.
c_rxe_in_ns() {
	ip netns list | grep -qw nsrxe || ip netns add nsrxe
	ip link set "$1" netns nsrxe
	ip netns exec nsrxe ip link set "$1" up
	modprobe rdma_rxe
	ip netns exec nsrxe rdma link add "$2" type rxe netdev "$1"
}

# c_rxe_half [oracle]: whether to run the C rxe half of a test that checks
# rrxe against C rxe: yes, wherever the test runs (make test runs each test
# on one flavor, so a comparison is made there or nowhere), but for an
# "oracle" half on the debug kernel's quick run: one that only confirms
# the expectations the rrxe half checks by itself (the kernel, hence C
# rxe, is pinned, so the answer cannot change between runs; make test-full
# and the release kernel still run it).  RRXE_NO_C_RXE=1 leaves every
# half out, for a quick look at rrxe alone.
c_rxe_half() {
	if [ "${RRXE_NO_C_RXE:-0}" = 1 ]; then
		note "C rxe half left out (RRXE_NO_C_RXE=1)"
		return 1
	fi
	if [ "${1:-}" = oracle ] && debug_quick; then
		note "C rxe half left out on the debug kernel's quick run: it confirms what the rrxe half checks (make test-full runs it)"
		return 1
	fi
	return 0
}

# hw_counter DEV NAME: the value of DEV's port-1 counter NAME (rdma
# statistic's), read from sysfs without starting a process.
hw_counter() {
	local v
	read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2" || return 1
	echo "$v"
}

# The index of GID $2 (full form) on device $1, if it has it.
gid_index() {
	gid_scan "$1" "$2"
}

# gid_scan DEV PATTERN [TYPE]: prints the lowest index of DEV's port-1 GID
# table whose GID matches PATTERN (hex digits and colons, `*` for any
# run of them) and whose type is TYPE (e.g. "RoCE v2"), if given.  The
# first 32 entries, where the wanted GID sits, are read with bash's own
# read (no process: each costs 0.1-0.3 s under TCG); the rest of the table
# with one grep.  GID_SCAN_MAX=N looks at the first N only (N <= 32).
gid_scan() {
	local d=/sys/class/infiniband/$1/ports/1 idx g best="" f
	for ((idx = 0; idx < ${GID_SCAN_MAX:-32}; idx++)); do
		read -r g <"$d/gids/$idx" 2>/dev/null || break
		# shellcheck disable=SC2053
		[[ $g == $2 ]] && _gid_type "$d" "$idx" "${3:-}" && { echo "$idx"; return 0; }
	done
	[ -z "${GID_SCAN_MAX:-}" ] || return 1
	for f in $(grep -lx -- "${2//\*/[0-9a-f:]*}" "$d"/gids/* 2>/dev/null || true); do
		idx=${f##*/}
		((idx >= 32)) || continue
		[ -n "$best" ] && ((idx >= best)) && continue
		_gid_type "$d" "$idx" "${3:-}" && best=$idx
	done
	[ -n "$best" ] || return 1
	echo "$best"
}

# _gid_type DIR IDX [TYPE]: entry IDX is of TYPE (any if empty).
_gid_type() {
	local type
	[ -n "$3" ] || return 0
	read -r type <"$1/gid_attrs/types/$2" 2>/dev/null && [ "$type" = "$3" ]
}

# rrxe0 on veth0 (10.0.0.1) and C rxe's rxe0 on veth1 (10.0.0.2, in
# namespace nsrxe, see verbs_on_both), each once its IPv4 RoCE v2 GID is
# there; GID_RRXE and GID_RXE are set to those GIDs' indices.  With
# "oracle" (see c_rxe_half), rxe0 is made only if c_rxe_half oracle says
# so; C_RXE_HALF says whether it was (GID_RXE is empty if not).
# rrxe_and_c_rxe_down removes what was made.
rrxe_and_c_rxe() {
	local gb=0000:0000:0000:0000:0000:ffff:0a00:0002
	mkveth veth0 veth1
	ip addr add 10.0.0.1/24 dev veth0
	rrxe0_up
	GID_RXE=
	if [ "${1:-}" = oracle ] && ! c_rxe_half oracle; then
		C_RXE_HALF=0
		return 0
	fi
	C_RXE_HALF=1
	c_rxe_in_ns veth1 rxe0
	ip netns exec nsrxe ip addr add 10.0.0.2/24 dev veth1
	wait_for 10 gid_index rxe0 $gb >/dev/null || fail "rxe0 IPv4 GID missing"
	GID_RXE=$(gid_index rxe0 $gb)
}

rrxe_and_c_rxe_down() {
	! has_ibdev rxe0 || rdma link delete rxe0
	rdma link delete rrxe0
	! ip netns list | grep -qw nsrxe || ip netns del nsrxe
	# Without C rxe's half, veth1 stayed here with veth0.
	ip link del veth0 2>/dev/null || true
}

# Loads rdma_rrxe (with module parameters "$@") and adds rrxe0 on veth0
# (10.0.0.1, see rrxe_and_c_rxe); GID_RRXE is its IPv4 GID's index.
rrxe0_up() {
	local ga=0000:0000:0000:0000:0000:ffff:0a00:0001
	modprobe rdma_rrxe "$@"
	rdma link add rrxe0 type rrxe netdev veth0
	wait_for 10 gid_index rrxe0 $ga >/dev/null || fail "rrxe0 IPv4 GID missing"
	GID_RRXE=$(gid_index rrxe0 $ga)
}

# Fails the test, showing the difference, unless outputs $2 and $3 of
# check $1 have the same lines, but for those matching the grep pattern $4
# (named deviations; none if empty).
same_lines() {
	local t=$1 a=$2 b=$3 skip=${4:-} f=/tmp/${1//[^A-Za-z0-9_-]/_}
	if [ -n "$skip" ]; then
		a=$(grep -v "$skip" <<<"$a" || true)
		b=$(grep -v "$skip" <<<"$b" || true)
	fi
	if [ "$a" != "$b" ]; then
		echo "$a" >"$f-1.txt"
		echo "$b" >"$f-2.txt"
		diff "$f-1.txt" "$f-2.txt" | sed 's/^/  # /'
		fail "$t: outputs differ (above: < first, > second)"
	fi
}

# Runs the pyverbs check SCRIPT.py (in progs/) on rrxe0 and,
# unless rrxe_and_c_rxe left C rxe out or c_rxe_half says not to, on C
# rxe's rxe0 (see rrxe_and_c_rxe), and
# fails unless both print the same lines but for those matching the grep
# pattern $2 (C rxe's named deviations).  The outputs are left in OUT_RRXE
# and OUT_RXE (empty when the C rxe half is skipped).
same_on_both() {
	local t=$1 skip=${2:-} py=$RRXE_PROGS/$1.py
	OUT_RRXE=$(timeout 120 /usr/bin/python3 "$py" rrxe0 "$GID_RRXE" 2>&1) ||
		fail "$t on rrxe: $OUT_RRXE"
	echo "$OUT_RRXE"
	OUT_RXE=
	[ "${C_RXE_HALF:-1}" = 1 ] && c_rxe_half || return 0
	OUT_RXE=$(ip netns exec nsrxe timeout 120 /usr/bin/python3 "$py" rxe0 "$GID_RXE" 2>&1) ||
		fail "$t on C rxe: $OUT_RXE"
	same_lines "$t" "$OUT_RRXE" "$OUT_RXE" "$skip"
}

# Runs the pyverbs test SCRIPT (in progs/) against rrxe0 on veth0
# and then, unchanged, against C rxe's rxe0 on veth1: the checks are about
# the verbs, so both drivers must pass them.  Both drivers bind UDP port
# 4791 in the namespaces they serve, so C rxe's veth1 lives in namespace
# nsrxe (devices stay visible from every namespace).
verbs_on_both() {
	local script="$RRXE_PROGS/$1"
	shift
	mkveth veth0 veth1
	modprobe rdma_rrxe
	rdma link add rrxe0 type rrxe netdev veth0
	c_rxe_in_ns veth1 rxe0
	/usr/bin/python3 "$script" rrxe0 "$@"
	if c_rxe_half; then
		/usr/bin/python3 "$script" rxe0 "$@"
	fi
	rdma link delete rxe0
	rdma link delete rrxe0
	ip netns del nsrxe
	rmmod rdma_rrxe
}
