#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Documentation/rrxe builds with Sphinx (Debian's python3-sphinx, which
# scripts/setup.sh installs) without a warning: -W turns every warning
# (a broken reference, a malformed table, a page left out of the index)
# into a failure.  No conf.py: the pages use plain reST, as the kernel's
# Documentation does outside its kernel-doc extensions.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=${RRXE_OUT:-$top/out/test}/docs
command -v sphinx-build >/dev/null ||
	{ echo "docs-check: sphinx-build not found (scripts/setup.sh installs python3-sphinx)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
if ! log=$(sphinx-build -W -n -q -b html -C -D master_doc=index -D project=rrxe \
	"$top/Documentation/rrxe" "$out/html" 2>&1); then
	echo "$log" >&2
	echo "docs-check: sphinx-build reported the above" >&2
	exit 1
fi
pages=$(find "$top/Documentation/rrxe" -name '*.rst' | wc -l)
echo "$pages pages built by sphinx-build $(sphinx-build --version | awk '{print $2}'), no warnings"
