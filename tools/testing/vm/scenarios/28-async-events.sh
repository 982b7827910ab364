# Asynchronous events (pyverbs: async_test.py, ibv_get_async_event), on
# rrxe and on C rxe: QP_ACCESS_ERR at the responder of a WRITE and a READ
# with a wrong rkey, CQ_ERR on a send CQ overrun, SQ_DRAINED when SQD is
# reached with en_sqd_async_notify (idle, and with a 1 MiB WRITE in flight
# that completes; a WQE posted in SQD waits for RTS).  Both must print the
# same check lines, but for the named deviations of C rxe: it raises
# SQ_DRAINED without en_sqd_async_notify (IBTA says not to), and never
# executes a WQE posted in SQD, even after the QP returns to RTS.
rrxe_and_c_rxe
out_r=$(timeout 120 /usr/bin/python3 "$RRXE_TOP/tools/testing/vm/async_test.py" rrxe0 "$GID_RRXE" 2>&1) ||
	fail "async_test on rrxe: $out_r"
echo "$out_r"
if c_rxe_half; then
	out_c=$(ip netns exec nsrxe timeout 120 /usr/bin/python3 "$RRXE_TOP/tools/testing/vm/async_test.py" rxe0 "$GID_RXE" 2>&1) ||
		fail "async_test on C rxe: $out_c"
	same() { grep -v '^note:\|en_sqd_async_notify\|posted in SQD' <<<"$1"; }
	same "$out_r" >/tmp/async-rrxe.txt
	same "$out_c" >/tmp/async-rxe.txt
	if ! cmp -s /tmp/async-rrxe.txt /tmp/async-rxe.txt; then
		diff /tmp/async-rrxe.txt /tmp/async-rxe.txt | sed 's/^/  # /'
		fail "async_test: rrxe and C rxe differ (above: < rrxe, > C rxe)"
	fi
	note "async events: identical on rrxe and C rxe but for: $(grep deviation <<<"$out_c" | tr '\n' ' ')"
fi
rdma link delete rxe0
rdma link delete rrxe0
ip netns del nsrxe
rmmod rdma_rrxe
