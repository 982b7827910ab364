# timeout: 900
# quick-flavors: release
# (make test runs it on release only; on debug, 22-hostile-user runs its
# QPs and a stock pingpong over the loopback path.)
# The pingpong matrix with server and client on one rrxe device (packets
# to its own address are handed to its receive path directly).
PP_LONG_ITERS=0 bash "$RRXE_TOP/tools/testing/vm/pingpong-matrix.sh" loop:rrxe "${RRXE_MATRIX:-$RRXE_TEST_LEVEL}"
