#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The acknowledgement of a duplicate request (found with NVMe between C
# rxe and rrxe): requests injected as if from the target QP's
# peer: SEND at the expected PSN e, RDMA READ of 2 KiB (PSNs e+1 and
# e+2), then, as a requester's go-back-N resends them, the SEND at e and
# the READ again.  Two rules, each from a failure seen with C rxe's
# requester:
# - an ACK never carries a READ's PSN (e+1, e+2): C rxe retires a READ
#   whose last PSN an ACK names, whether or not its last response
#   arrived (under loss, NVMe writes landed with a stale last KiB);
# - a duplicate SEND followed by a READ the responder executed is not
#   acknowledged again: the resent READ's response acknowledges it, and
#   a separate ACK reaches the requester after responses to later
#   requests, which C rxe's completer, in the middle of a READ response,
#   takes as the end of it, failing the READ at its next packet (its QP
#   then goes to the error state: the NVMe queue reconnected, and with
#   virtio-net's page pool C rxe's error path deadlocked the VM).
# The responses are captured on the peer's side: rrxe answers ACK at e,
# READ RESPONSE FIRST and LAST at e+1 and e+2, nothing for the duplicate
# SEND, and the READ again.  C rxe (release) answers the duplicate SEND
# with an ACK at e, which is noted, not required.
. "$(dirname "$0")/../lib/ksft.sh"
ksft_require_cmd tcpdump
ksft_require_py pyverbs
ksft_require_module rdma_rxe
. "$RRXE_LIB/pingpong.sh"
. "$RRXE_LIB/attack.sh"
work=/tmp/ackpsn
drivers="rrxe"
c_rxe_half && drivers="rrxe rxe"
for drv in $drivers; do
	rm -rf "$work"
	mkdir -p "$work"
	atk_start "$drv" ack_psn_target.py "$work/target.log" "$work/info" "$work/info" "$work/go"
	tpid=$ATK_PID
	. "$work/info"
	# The wire's view: rrxe sends a READ's response packets as one UDP
	# GSO batch, which veth passes whole; cut before vpa, the capture on
	# vpb holds one packet per response.
	ip -n ppA link set vpa gso_max_segs 1
	ip netns exec ppB tcpdump -i vpb -U -w "$work/resp.pcap" "udp port 4791 and src 10.77.0.1" 2>/dev/null &
	dpid=$!
	sleep 1
	atk_flood --mode sequence --out "$work/seq.pcap" --src-mac "$(atk_mac ppB vpb)" \
		--dst-mac "$(atk_mac ppA vpa)" --local 10.77.0.1 --peer 10.77.0.2 \
		--target "rc:$QPN:$PSN" --ops send:0,read:1:2048,send:0,read:1:2048 --rkey "$RKEY" --va "$VA" \
		>/dev/null 2>"$work/gen.log" || fail "roce-flood --mode sequence: $(cat "$work/gen.log")"
	atk_replay "$work/seq.pcap"
	sleep 1
	touch "$work/go"
	wait "$tpid" || fail "$drv target: $(cat "$work/target.log")"
	sleep 0.5
	kill "$dpid"
	wait "$dpid" 2>/dev/null || true
	# (opcode, PSN - e) of each response, in order.
	got=$(/usr/bin/python3 - "$work/resp.pcap" "$PSN" <<'PY'
import struct, sys
data, e = open(sys.argv[1], "rb").read(), int(sys.argv[2])
off, out = 24, []
while off + 16 <= len(data):
    incl = struct.unpack_from("<I", data, off + 8)[0]
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(pkt) >= 54:
        psn = int.from_bytes(pkt[51:54], "big")
        out.append(f"{pkt[42]:#04x}@{(psn - e) & 0xffffff}")
print(" ".join(out))
PY
)
	note "$drv as the target answered: $got (0x11 ACK, 0x0d/0x0f READ RESPONSE FIRST/LAST, @PSN-e)"
	case " $got " in
	*" 0x11@1 "* | *" 0x11@2 "*) fail "$drv acknowledged the duplicate SEND at the READ's PSN: $got" ;;
	esac
	want="0x11@0 0x0d@1 0x0f@2 0x0d@1 0x0f@2"
	if [ "$drv" = rxe ]; then
		# C rxe acknowledges the duplicate SEND again, at e.
		want="0x11@0 0x0d@1 0x0f@2 0x11@0 0x0d@1 0x0f@2"
	fi
	[ "$got" = "$want" ] || fail "$drv: responses '$got', want '$want'"
	kill "$tpid" 2>/dev/null || true
	pp_teardown
done
