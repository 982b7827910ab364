#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA: the kernel's NFSv4.2 server (nfsd with svcrdma) in
# namespace ppA and client (xprtrdma, proto=rdma, port 20049) in ppB,
# configured through the kernel's own interfaces (lib/nfs.sh), for each
# pairing: rrxe to rrxe, rrxe serving C rxe, C rxe serving rrxe (the
# last two on one pair of devices, an nfsd on each).  In each: files
# from 1 KiB (inline) to 1 MiB (make test) or 8 MiB (make test-full)
# written and read back byte-exact,
# the writes' data pulled by the server with RDMA READ (read chunks), the
# reads' pushed with RDMA WRITE (write chunks), the server's own copy
# checked too.  rrxe to rrxe also loses each end's device under fsync'd
# writes (`rdma link delete`, then added back): nothing hangs, every
# write that succeeded reads back byte-exact, new writes go through.
# Last, the modules unload.
. "$(dirname "$0")/../lib/ksft.sh"
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/nfs.sh"
nfs_test
[ "$RRXE_TEST_LEVEL" = full ] || NFS_SIZES="1024 65536 1048576"

# make test: across drivers only (debug/nfs-rdma.sh runs rrxe to rrxe
# and a disruption there, under KASAN); make test-full: all of it.
ran=0
if [ "$RRXE_TEST_LEVEL" = full ]; then
	nfs_pairing rrxe rrxe disrupt
	ran=1
fi
if c_rxe_half; then
	nfs_both_ways rrxe rxe
	ran=1
fi
((ran)) || ksft_skip "make test's form is the pairings with C rxe, which RRXE_NO_C_RXE=1 leaves out"
nfs_unload
