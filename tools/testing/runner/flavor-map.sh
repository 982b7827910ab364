#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The flavor map: where `make test` runs each selftest, generated from the
# test directories' settings files (never kept by hand).  Prints it as a
# reST table; with --check FILE, checks that FILE (testing.rst) holds
# exactly that table between the lines ".. flavor-map-begin" and
# ".. flavor-map-end" and exits 1 showing the difference otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
. "$here/selftests.sh"

table() {
	local d t rows=() w=4
	for d in "$RRXE_SELFTESTS"/*/; do
		d=${d%/}
		ksft_settings "$d" || continue
		for t in "$d"/*.sh; do
			[ -x "$t" ] || continue
			local fl=$S_FLAVOR
			[ "$S_LEVEL" = full ] && fl=full
			rows+=("$(basename "$d")/$(basename "$t")|$fl|$S_VMS|$S_TIMEOUT|$S_TIMEOUT_FULL")
			local n="$(basename "$d")/$(basename "$t")"
			((${#n} > w)) && w=${#n}
		done
	done
	local sep
	sep=$(printf '%*s' "$w" '' | tr ' ' '=')
	printf '%s ======== === ======= ==========\n' "$sep"
	printf "%-${w}s %-8s %-3s %-7s %s\n" test flavor VMs limit "full limit"
	printf '%s ======== === ======= ==========\n' "$sep"
	local r name fl vms to tf
	for r in "${rows[@]}"; do
		IFS='|' read -r name fl vms to tf <<<"$r"
		printf "%-${w}s %-8s %-3s %-7s %s\n" "$name" "$fl" "$vms" "$to" "$tf"
	done
	printf '%s ======== === ======= ==========\n' "$sep"
}

if [ "${1:-}" = --check ]; then
	doc=${2:?usage: flavor-map.sh [--check FILE]}
	have=$(sed -n '/^\.\. flavor-map-begin/,/^\.\. flavor-map-end/p' "$doc" | sed '1d;$d' | sed '/^$/d')
	want=$(table)
	if [ "$have" = "$want" ]; then
		echo "flavor map: $doc is current ($(($(wc -l <<<"$want") - 4)) tests)"
		exit 0
	fi
	echo "flavor map: $doc is not current (regenerate it with tools/testing/runner/flavor-map.sh):" >&2
	diff <(echo "$have") <(echo "$want") | sed 's/^/  /' >&2
	exit 1
fi
table
