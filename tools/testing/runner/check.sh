# SPDX-License-Identifier: GPL-2.0
# check NAME CMD...: runs one of the tree's own checks (sourced by
# run-all.sh and host-checks.sh): prints a PASS line with CMD's last line
# of output, or a FAIL line with all of it, and adds one to $pass or $fail.
check() {
	local name=$1 out t=$SECONDS
	shift
	if out=$("$@" 2>&1); then
		pass=$((pass + 1))
		printf '  PASS  %-7s  %-38s %7s s  %s\n' host "$name" "$((SECONDS - t))" "$(tail -1 <<<"$out")"
	else
		fail=$((fail + 1))
		printf '  FAIL  %-7s  %-38s %7s s\n' host "$name" "$((SECONDS - t))"
		sed 's/^/      /' <<<"$out"
	fi
}
