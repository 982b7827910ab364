#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA on the debug kernel (KASAN, lockdep, kmemleak): the
# scenario of release/nfs-rdma.sh, NFS's READ and WRITE chunks through
# rrxe's fast registration, kernel QPs and connection manager.  make
# test: rrxe to rrxe, files up to 1 MiB, the client's link deleted under
# writes and added back (rrxe's device removal with xprtrdma's QPs, MRs
# and CQs on it).  make test-full adds 8 MiB, the server's link and the
# two pairings with C rxe.
. "$(dirname "$0")/../lib/ksft.sh"
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/nfs.sh"
nfs_test

if debug_quick; then
	NFS_SIZES="1024 65536 1048576"
	nfs_pairing rrxe rrxe disrupt-client
else
	nfs_pairing rrxe rrxe disrupt
fi
if ! debug_quick && c_rxe_half; then
	nfs_both_ways rrxe rxe
fi
nfs_unload
