# timeout: 1500
# Wire compatibility: the pingpong matrix between C rdma_rxe and rrxe, each
# direction (C rxe server / rrxe client, then the reverse).
PP_LONG_ITERS=0 bash "$RRXE_TOP/tools/testing/vm/pingpong-matrix.sh" rxe rrxe "${RRXE_MATRIX:-$RRXE_TEST_LEVEL}"
# (On the debug kernel's quick run one direction: rrxe is requester and
# responder in both.)
debug_quick && exit 0
PP_LONG_ITERS=0 bash "$RRXE_TOP/tools/testing/vm/pingpong-matrix.sh" rrxe rxe "${RRXE_MATRIX:-$RRXE_TEST_LEVEL}"
