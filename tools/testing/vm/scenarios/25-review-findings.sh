# timeout: 400
# The security review's findings (issue 11), each checked where the VM can
# show it (review_findings.py; the hostile-user scenario 22 covers the
# bounded error flush, 21-forged-peers the UC responder):
#  1. rkeys: the first MR of a fresh device gets a random key byte (it was
#     always 0x100); KUnit rrxe_mr checks the byte's spread.
#  2. dereg_mr during an RDMA WRITE: nothing lands after it returns, the
#     WRITE completes in error.
#  5. ring memory per user context is capped: ENOMEM over the cap.
#  7. ring mappings after disassociation: zapped (read zeroes), freed.
# Finding 8 (page iterator) has no test: the config's memory model
# (SPARSEMEM_VMEMMAP) made the old walk correct too.
. "$RRXE_TOP/tools/testing/vm/pingpong.sh"
F="/usr/bin/python3 $RRXE_TOP/tools/testing/vm/review_findings.py"
mkveth veth0 veth1
modprobe rdma_rrxe

# 1. First key on four fresh devices.
keys=""
for i in 1 2 3 4; do
	rdma link add rrxe0 type rrxe netdev veth0
	keys+="$($F first-key rrxe0) "
	rdma link delete rrxe0
done
note "first MR key of four fresh devices: $keys"
[ "$(echo "$keys" | tr ' ' '\n' | sed '/^$/d' | sort -u | wc -l)" -gt 1 ] ||
	fail "the first MR of every fresh device has the same key ($keys)"

# 5. The ring cap.
rdma link add rrxe0 type rrxe netdev veth0
$F ring-cap rrxe0

# 7. Mappings after disassociation.
$F zap rrxe0
has_ibdev rrxe0 && fail "rrxe0 still there after the zap test deleted it"

# 2. Deregistration during a WRITE, between two devices in two namespaces.
bytes=$((64 << 20))
debug_quick && bytes=$((8 << 20))
pp_setup_pair rrxe rrxe
$F dereg-write ppa0 "$(pp_gid_index ppa0 10.77.0.1)" ppb0 "$(pp_gid_index ppb0 10.77.0.2)" "$bytes"
stats=$(rdma statistic show link ppa0/1)
note "requester: $stats"
pp_teardown
ip link del veth0
rmmod rdma_rrxe || fail "rmmod after the findings"
