# SPDX-License-Identifier: GPL-2.0
"""Host tests of icrc_check.py on C rxe's captured packets
(drivers/infiniband/sw/rrxe/proto/tests/captures): every one passes, a
changed byte fails, and the fields annex A17 masks may change freely."""

import glob
import os
import sys
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import icrc_check  # noqa: E402

CAPTURES = os.path.join(here, "../../../../../drivers/infiniband/sw/rrxe/proto/tests/captures")


def edited(path, frame_no, edit):
    """A copy of capture `path` with `edit(bytearray)` applied to the L3
    bytes of frame `frame_no` (1-based, untagged Ethernet)."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    off, n = 24, 0
    while off < len(data):
        incl = int.from_bytes(data[off + 8:off + 12], "little")
        n += 1
        if n == frame_no:
            l3 = bytearray(data[off + 16 + 14:off + 16 + incl])
            edit(l3)
            data[off + 16 + 14:off + 16 + incl] = l3
        off += 16 + incl
    fd, out = tempfile.mkstemp(suffix=".pcap")
    os.write(fd, bytes(data))
    os.close(fd)
    return out


class IcrcCheck(unittest.TestCase):
    def test_c_rxe_s_packets_all_pass_ipv4_and_ipv6(self):
        seen = {"IPv4": 0, "IPv6": 0}
        for path in sorted(glob.glob(os.path.join(CAPTURES, "*.pcap"))):
            counts, bad = icrc_check.check(path)
            self.assertEqual(bad, [], path)
            for k in seen:
                seen[k] += counts[k]
        self.assertGreater(seen["IPv4"], 100)
        self.assertGreater(seen["IPv6"], 10)

    def test_a_changed_payload_byte_fails(self):
        path = edited(os.path.join(CAPTURES, "v4_rc_write.pcap"), 1, lambda l3: l3.__setitem__(40, l3[40] ^ 1))
        counts, bad = icrc_check.check(path)
        self.assertEqual(len(bad), 1)
        self.assertIn("frame 1:", bad[0])

    def test_a_changed_ip_id_fails(self):
        def bump_id(l3):
            l3[5] ^= 1

        _, bad = icrc_check.check(edited(os.path.join(CAPTURES, "v4_rc_write.pcap"), 1, bump_id))
        self.assertEqual(len(bad), 1)

    def test_masked_fields_may_change(self):
        def v4(l3):
            l3[1], l3[8], l3[10], l3[11] = 0x60, 3, 0x12, 0x34   # TOS, TTL, IP checksum
            l3[26], l3[27] = 0xAB, 0xCD                          # UDP checksum
            l3[28 + 4] = 0xC0                                    # BTH FECN/BECN byte

        def v6(l3):
            l3[0], l3[1], l3[2], l3[3], l3[7] = 0x6A, 0xBC, 0xDE, 0xF1, 1

        self.assertEqual(icrc_check.check(edited(os.path.join(CAPTURES, "v4_rc_write.pcap"), 1, v4))[1], [])
        self.assertEqual(icrc_check.check(edited(os.path.join(CAPTURES, "v6_rc_write.pcap"), 1, v6))[1], [])


if __name__ == "__main__":
    unittest.main()
