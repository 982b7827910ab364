#!/bin/bash
# Runs inside each VM of scripts/vm-pair.sh (host side:
# tools/testing/vm-pair-tests.sh): brings up eth0, the wire to the other
# VM, then runs every scenario in vm/pair-scenarios/ (or those matching
# $2) in step with the other VM, each with a time limit and a kernel-log
# check, as run-scenarios.sh does for one VM.  Writes $RRXE_OUT/vm.tap.
# Usage: run-pair.sh ROLE [filter]; ROLE a or b.
here=$(cd "$(dirname "$0")" && pwd)
out=${RRXE_OUT:?}
export ROLE=${1:?usage: run-pair.sh a|b [filter]}
filter=${2:-}
: "${RRXE_PAIR:?run-pair.sh runs in a VM of scripts/vm-pair.sh}"
export RRXE_TEST_LEVEL=${RRXE_TEST_LEVEL:-quick} RRXE_FLAVOR=${RRXE_FLAVOR:-release}
# shellcheck disable=SC1091
. "$here/lib.sh"
# shellcheck disable=SC1091
. "$here/pair.sh"
tap="$out/vm.tap"
echo "TAP version 13" >"$tap"

ip link set eth0 up
ip addr add "$MY_IP/24" dev eth0
(SCEN=wire pair_sync up 120) || exit 1
wait_for 30 ping -c1 -W1 "$PEER_IP" >/dev/null || echo "run-pair: no ping reply from $PEER_IP over eth0" >&2

n=0
for s in "$here"/pair-scenarios/*.sh; do
	name=$(basename "$s" .sh)
	[ -n "$filter" ] && [[ "$name" != *$filter* ]] && continue
	n=$((n + 1))
	dmesg -C
	t0=$(date +%s.%N)
	limit=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$s" | head -1)
	SCEN=$name timeout -k 5 "${limit:-300}" bash -e -c ". '$here/lib.sh'; . '$here/pair.sh'; . '$s'" >"$out/$name.log" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	dmesg >"$out/$name.dmesg"
	why=$(scenario_why "$rc" "$out/$name.dmesg")
	if [ -z "$why" ]; then
		line="ok $n - $name # ${secs%???????}s"
	else
		touch "$RRXE_PAIR/$name.failed.$ROLE"
		line="not ok $n - $name # $why"
		sed 's/^/    /' "$out/$name.log" | tail -25
	fi
	echo "$line" | tee -a "$tap"
	# Both VMs leave the scenario (failed or not) before either starts
	# the next.
	touch "$RRXE_PAIR/$name.done.$ROLE"
	wait_for 600 test -e "$RRXE_PAIR/$name.done.$PEER" || echo "run-pair: VM $PEER did not finish $name" >&2
done
echo "1..$n" | tee -a "$tap"
