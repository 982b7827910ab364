#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The two-VM kselftest runner, inside each VM of scripts/vm-pair.sh (host
# side: vm-pair-tests.sh): brings up eth0, the wire to the other VM, then
# runs the tests of the directories whose settings say vms=2 (or those
# whose DIR/TEST.sh name contains $2) in step with the other VM, each with
# its directory's time limit and a kernel-log check, as run-tests.sh does
# for one VM.  Writes $RRXE_OUT/selftests.tap and results.tsv.
# Usage: run-pair.sh ROLE [filter]; ROLE a or b.
here=$(cd "$(dirname "$0")" && pwd)
out=${RRXE_OUT:?}
export ROLE=${1:?usage: run-pair.sh a|b [filter]}
filter=${2:-}
: "${RRXE_PAIR:?run-pair.sh runs in a VM of scripts/vm-pair.sh}"
# shellcheck disable=SC1091
. "$here/selftests.sh"
# shellcheck disable=SC1091
. "$RRXE_LIB/pair.sh"
tap="$out/selftests.tap"
echo "TAP version 13" >"$tap"
: >"$out/results.tsv"

ip link set eth0 up
ip addr add "$MY_IP/24" dev eth0
(SCEN=wire pair_sync up 120) || exit 1
wait_for 30 ping -c1 -W1 "$PEER_IP" >/dev/null || echo "run-pair: no ping reply from $PEER_IP over eth0" >&2

n=0
while read -r limit t; do
	n=$((n + 1))
	# SCEN names the test's barriers in the shared directory.
	export SCEN=$(basename "$t" .sh)
	dmesg -C
	ksft_run_one "$n" "$t" "$limit" "$out" || touch "$RRXE_PAIR/$SCEN.failed.$ROLE"
	# Both VMs leave the test (failed or not) before either starts the
	# next.
	touch "$RRXE_PAIR/$SCEN.done.$ROLE"
	wait_for 600 test -e "$RRXE_PAIR/$SCEN.done.$PEER" || echo "run-pair: VM $PEER did not finish $SCEN" >&2
done < <(ksft_tests 2 "$filter")
echo "1..$n" >>"$tap"
