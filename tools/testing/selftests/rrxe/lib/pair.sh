# Helpers for the two-VM tests (sourced inside each VM of
# scripts/vm-pair.sh after lib.sh, by run-pair.sh).  ROLE is a or b, PEER
# the other; VM a is 10.80.0.1 and VM b 10.80.0.2 on eth0, the wire
# between them.  SCEN names the running test; the shared directory
# $RRXE_PAIR carries barriers and values between the two VMs.
MY_IP=10.80.0.1 PEER_IP=10.80.0.2 PEER=b
if [ "$ROLE" = b ]; then MY_IP=10.80.0.2 PEER_IP=10.80.0.1 PEER=a; fi

# pair_sync NAME [SECONDS]: waits (default 300 s) until the other VM has
# reached the same barrier of this test; fails at once if the other
# VM's run of it failed.
pair_sync() {
	local t=${2:-300} i
	touch "$RRXE_PAIR/$SCEN.$1.$ROLE"
	for ((i = 0; i < t * 5; i++)); do
		# A directory read first: the other VM's new file is then seen
		# whatever the 9p client has cached of earlier lookups.
		ls "$RRXE_PAIR" >/dev/null
		[ -e "$RRXE_PAIR/$SCEN.$1.$PEER" ] && return 0
		[ -e "$RRXE_PAIR/$SCEN.failed.$PEER" ] && fail "VM $PEER failed this test (its log says why)"
		sleep 0.2
	done
	fail "VM $PEER did not reach barrier '$1' within $t s"
}

# pair_put KEY VALUE / pair_get KEY: a value for the other VM, published
# before a barrier both then pass; pair_get reads the other VM's.
pair_put() { printf '%s\n' "$2" >"$RRXE_PAIR/$SCEN.$1.$ROLE.val"; }
pair_get() {
	[ -e "$RRXE_PAIR/$SCEN.$1.$PEER.val" ] || fail "VM $PEER published no '$1'"
	cat "$RRXE_PAIR/$SCEN.$1.$PEER.val"
}

# pair_dev_up DEV DRV: driver DRV loaded and its device DEV on eth0 (the
# wire), port active.  pair_dev_down DEV DRV: the device deleted and the
# module unloaded.
pair_dev_up() {
	modprobe "rdma_$2"
	rdma link add "$1" type "$2" netdev eth0
	wait_for 20 port_active "$1" || fail "$1 ($2) not active"
}
pair_dev_down() {
	rdma link delete "$1"
	timeout 60 rmmod "rdma_$2" || fail "rmmod rdma_$2 after the teardown failed"
}
