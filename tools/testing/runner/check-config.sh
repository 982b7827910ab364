#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Checks the built kernel's .config against the kernel options the
# selftests need (tools/testing/selftests/rrxe/config, kselftest's `config`
# fragment): an option asked as =m may be built in (=y).  Prints one line;
# exits 1 naming each option that is missing or different.
# Usage: check-config.sh KERNEL_CONFIG
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
want=$here/../selftests/rrxe/config
have=${1:?usage: check-config.sh KERNEL_CONFIG}
[ -r "$have" ] || { echo "config: $have is not readable" >&2; exit 1; }
bad=()
while IFS='=' read -r opt val; do
	case $opt in '' | \#*) continue ;; esac
	got=$(sed -n "s/^$opt=//p" "$have")
	if [ "$got" = "$val" ] || { [ "$val" = m ] && [ "$got" = y ]; }; then continue; fi
	bad+=("$opt=$val (kernel: ${got:-not set})")
done <"$want"
if [ ${#bad[@]} = 0 ]; then
	echo "config: the kernel has the $(grep -c '^CONFIG_' "$want") options the selftests need"
	exit 0
fi
echo "config: the kernel lacks options the selftests need: ${bad[*]}" >&2
exit 1
