#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the ICRC of every RoCEv2 packet in a capture, computed here
independently of rrxe's code (zlib's CRC-32 over the masked fields of
IBTA annex A17): 8 bytes of 0xff for the LRH; the IPv4 header with TOS,
TTL and header checksum set to all ones (IPv6: traffic class, flow label
and hop limit); the UDP header with its checksum all ones; the BTH with
its byte 4 all ones; then everything up to the ICRC, which is the last 4
bytes, little-endian.

usage: icrc_check.py CAPTURE.pcap [--min N]

Reads a classic pcap file (tcpdump -w) of Ethernet frames (VLAN tags
skipped), takes every UDP packet to port 4791, prints one line with the
count of packets checked per IP version and of bad ones (the first few
named), and exits 1 if any ICRC is wrong or fewer than N (default 1)
packets were checked."""
import struct
import sys
import zlib

ROCE_PORT = 4791


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = {0xA1B2C3D4: "<", 0xD4C3B2A1: ">", 0xA1B23C4D: "<", 0x4D3CB2A1: ">"}.get(magic)
    if endian is None:
        sys.exit(f"icrc_check: {path}: not a pcap file")
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    if linktype != 1:
        sys.exit(f"icrc_check: {path}: link type {linktype}, not Ethernet")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "IIII", data[off:off + 16])[2]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def l3_of(frame):
    """(ethertype, L3 bytes) with VLAN tags skipped."""
    off, etype = 12, struct.unpack("!H", frame[12:14])[0]
    while etype in (0x8100, 0x88A8):
        off += 4
        etype = struct.unpack("!H", frame[off:off + 2])[0]
    return etype, frame[off + 2:]


def masked_headers(etype, l3):
    """(masked IP + UDP header bytes, offset of the BTH) or None if not
    RoCEv2."""
    if etype == 0x0800 and l3 and l3[0] == 0x45 and l3[9] == 17:
        ip = bytearray(l3[:20])
        ip[1] = 0xFF                        # TOS
        ip[8] = 0xFF                        # TTL
        ip[10:12] = b"\xff\xff"             # header checksum
        udp_off = 20
    elif etype == 0x86DD and l3 and l3[0] >> 4 == 6 and l3[6] == 17:
        ip = bytearray(l3[:40])
        ip[0] |= 0x0F                       # traffic class (low nibble)
        ip[1:4] = b"\xff\xff\xff"           # traffic class, flow label
        ip[7] = 0xFF                        # hop limit
        udp_off = 40
    else:
        return None
    udp = bytearray(l3[udp_off:udp_off + 8])
    if len(udp) < 8 or struct.unpack("!H", udp[2:4])[0] != ROCE_PORT:
        return None
    udp[6:8] = b"\xff\xff"                  # UDP checksum
    return bytes(ip) + bytes(udp), udp_off + 8


def check(path):
    """({"IPv4": n, "IPv6": n}, [what is wrong with each bad packet])."""
    counts, bad = {"IPv4": 0, "IPv6": 0}, []
    for i, frame in enumerate(frames(path)):
        etype, l3 = l3_of(frame)
        got = masked_headers(etype, l3)
        if got is None:
            continue
        hdrs, bth_off = got
        ip_len = (struct.unpack("!H", l3[2:4])[0] if etype == 0x0800
                  else 40 + struct.unpack("!H", l3[4:6])[0])
        pkt = l3[:ip_len]
        if len(pkt) < bth_off + 12 + 4:
            bad.append(f"frame {i + 1}: truncated")
            continue
        bth = bytearray(pkt[bth_off:bth_off + 12])
        bth[4] = 0xFF
        stream = b"\xff" * 8 + hdrs + bytes(bth) + pkt[bth_off + 12:-4]
        want = zlib.crc32(stream) & 0xFFFFFFFF
        have = struct.unpack("<I", pkt[-4:])[0]
        counts["IPv4" if etype == 0x0800 else "IPv6"] += 1
        if want != have:
            bad.append(f"frame {i + 1}: ICRC {have:#010x}, computed {want:#010x} "
                       f"(opcode {pkt[bth_off]:#04x}, {len(pkt)} bytes)")
    return counts, bad


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__.split("usage: ")[1].split("\n")[0])
    want = int(args[args.index("--min") + 1]) if "--min" in args else 1
    counts, bad = check(args[0])
    total = counts["IPv4"] + counts["IPv6"]
    print(f"icrc_check: {total} RoCEv2 packets ({counts['IPv4']} IPv4, {counts['IPv6']} IPv6), "
          f"{len(bad)} with a wrong ICRC" + "".join("\n  " + b for b in bad[:5]))
    return 1 if bad or total < want else 0


if __name__ == "__main__":
    sys.exit(main())
