#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# C rxe and rrxe side by side in one boot: `ibv_devinfo -v` compared field
# by field.  Fields that must differ (names, GUIDs, GIDs) and the
# capabilities rrxe does not claim yet (Documentation/rrxe/compat.rst) are
# excluded; everything else must be identical.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd python3
ksft_require_module rdma_rxe
mkveth veth0 veth1
modprobe rdma_rrxe
c_rxe_in_ns veth0 rxe0
rdma link add rrxe0 type rrxe netdev veth1
ibv_devinfo -v -d rxe0 >/tmp/c.txt || fail "ibv_devinfo rxe0"
ibv_devinfo -v -d rrxe0 >/tmp/r.txt || fail "ibv_devinfo rrxe0"
python3 "$RRXE_PROGS/devinfo_compare.py" /tmp/c.txt /tmp/r.txt || fail "devinfo differs"
rrxe_and_c_rxe_down
rmmod rdma_rrxe
rmmod rdma_rxe
