# Helpers for VM scenarios (sourced inside the test VM).  A scenario is a
# bash script that exits 0 on success; `fail MSG` ends it with a message.

fail() { echo "FAIL: $*" >&2; exit 1; }

# Kernel messages that mean a scenario broke the kernel, whatever it
# printed: oopses, KASAN/KFENCE/UBSAN reports, lockdep and
# sleeping-in-atomic ("BUG:"/"WARNING:"), debugobjects, refcount and
# hung-task reports.
BAD_DMESG='BUG:|WARNING:|Oops|general protection|Call Trace|refcount_t:|UBSAN|KASAN|KFENCE|ODEBUG|kmemleak|rust_panic|panicked|blocked for more than|possible circular locking|inconsistent lock state|sleeping function called'

# scenario_why RC DMESG: why a scenario that exited RC (124: its time
# limit) and left the kernel log DMESG failed; nothing if it passed.
scenario_why() {
	local why=""
	[ "$1" = 0 ] || why="exit $1"
	[ "$1" = 124 ] && why="timed out"
	if grep -Eq "$BAD_DMESG" "$2"; then
		why="${why:+$why, }kernel log: $(grep -Em1 "$BAD_DMESG" "$2")"
	fi
	echo "$why"
}

# `make test` on the debug kernel (KASAN, lockdep, kmemleak: ~10x slower):
# scenarios keep every rrxe code path but drop repetitions that only
# matter for C rxe or for volume (the release run and make test-full
# have them).
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

# Waits up to $1 seconds for a command to succeed.
wait_for() {
	local t=$1; shift
	local i
	for ((i = 0; i < t * 10; i++)); do "$@" && return 0; sleep 0.1; done
	return 1
}

# One field of `ibv_devinfo -v -d DEV` (first match), e.g. devinfo rrxe0 state
devinfo() {
	ibv_devinfo -v -d "$1" | sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -1
}

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

# Whether to run the C rxe half of a scenario that checks rrxe against C
# rxe: not on the debug kernel's make test (C rxe's answers do not depend
# on the flavor; the release run and make test-full compare them), for
# the CI budget.
c_rxe_half() {
	if debug_quick; then
		note "C rxe half: compared on the release kernel (make test) and here in make test-full"
		return 1
	fi
	return 0
}

# The index of GID $2 (full form) on device $1, if it has it (one grep
# over the whole table: a process per entry takes seconds under TCG).
gid_index() {
	local f
	f=$(grep -lx -- "$2" /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | head -1)
	[ -n "$f" ] || return 1
	basename "$f"
}

# rrxe0 on veth0 (10.0.0.1) and C rxe's rxe0 on veth1 (10.0.0.2, in
# namespace nsrxe, see verbs_on_both), each once its IPv4 RoCE v2 GID is
# there; GID_RRXE and GID_RXE are set to those GIDs' indices.
rrxe_and_c_rxe() {
	local gb=0000:0000:0000:0000:0000:ffff:0a00:0002
	mkveth veth0 veth1
	ip addr add 10.0.0.1/24 dev veth0
	rrxe0_up
	c_rxe_in_ns veth1 rxe0
	ip netns exec nsrxe ip addr add 10.0.0.2/24 dev veth1
	wait_for 10 gid_index rxe0 $gb >/dev/null || fail "rxe0 IPv4 GID missing"
	GID_RXE=$(gid_index rxe0 $gb)
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

# Fails the scenario, showing the difference, unless outputs $2 and $3 of
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

# Runs the pyverbs check SCRIPT.py (in tools/testing/vm) on rrxe0 and,
# unless c_rxe_half skips it, on C rxe's rxe0 (see rrxe_and_c_rxe), and
# fails unless both print the same lines but for those matching the grep
# pattern $2 (C rxe's named deviations).  The outputs are left in OUT_RRXE
# and OUT_RXE (empty when the C rxe half is skipped).
same_on_both() {
	local t=$1 skip=${2:-} py=$RRXE_TOP/tools/testing/vm/$1.py
	OUT_RRXE=$(timeout 120 /usr/bin/python3 "$py" rrxe0 "$GID_RRXE" 2>&1) ||
		fail "$t on rrxe: $OUT_RRXE"
	echo "$OUT_RRXE"
	OUT_RXE=
	c_rxe_half || return 0
	OUT_RXE=$(ip netns exec nsrxe timeout 120 /usr/bin/python3 "$py" rxe0 "$GID_RXE" 2>&1) ||
		fail "$t on C rxe: $OUT_RXE"
	same_lines "$t" "$OUT_RRXE" "$OUT_RXE" "$skip"
}

# Runs the pyverbs test SCRIPT (in tools/testing/vm) against rrxe0 on veth0
# and then, unchanged, against C rxe's rxe0 on veth1: the checks are about
# the verbs, so both drivers must pass them.  Both drivers bind UDP port
# 4791 in the namespaces they serve, so C rxe's veth1 lives in namespace
# nsrxe (devices stay visible from every namespace).
verbs_on_both() {
	local script="$RRXE_TOP/tools/testing/vm/$1"
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
