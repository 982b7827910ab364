# RDMA READ and atomics (pyverbs: read_test.py, atomic_test.py), rrxe and
# C rxe alike, two QPs on one device: data byte-exact, completion opcodes
# and lengths, pipelining under max_rd_atomic, exactly-once fetch-and-add
# from two QPs, and the error cases (rkey, rights, range, alignment, QP
# access, responder resources, local rights) with IBTA's statuses.  Both
# drivers must print the same check lines: any difference fails.
rrxe_and_c_rxe
ga=$GID_RRXE gb=$GID_RXE
for t in read_test atomic_test qp_ex_test; do
	out_r=$(/usr/bin/python3 "$RRXE_TOP/tools/testing/vm/$t.py" rrxe0 "$ga" 2>&1) ||
		fail "$t on rrxe: $out_r"
	echo "$out_r"
	c_rxe_half || continue
	out_c=$(ip netns exec nsrxe /usr/bin/python3 "$RRXE_TOP/tools/testing/vm/$t.py" rxe0 "$gb" 2>&1) ||
		fail "$t on C rxe: $out_c"
	if [ "$out_r" != "$out_c" ]; then
		echo "$out_r" >/tmp/$t-rrxe.txt
		echo "$out_c" >/tmp/$t-rxe.txt
		diff /tmp/$t-rrxe.txt /tmp/$t-rxe.txt | sed 's/^/  # /'
		fail "$t: rrxe and C rxe differ (above: < rrxe, > C rxe)"
	fi
	note "$t: $(echo "$out_r" | grep -c '^ok:') checks, identical on rrxe and C rxe"
done
stats=$(rdma statistic show link rrxe0/1)
note "$stats"
echo "$stats" | grep -Eq "atomics_executed [1-9]" || fail "no atomics counted"
echo "$stats" | grep -Eq "read_responses [1-9]" || fail "no READ responses counted"
rdma link delete rxe0
rdma link delete rrxe0
ip netns del nsrxe
rmmod rdma_rrxe
