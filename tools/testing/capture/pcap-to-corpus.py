#!/usr/bin/env python3
"""Seeds the fuzz corpus from captures: for each pcap given, writes the L3
packet (Ethernet header removed) of the first packet of every distinct
RoCE opcode to DIR/cap_<pcap name>_<opcode>.bin.

usage: pcap-to-corpus.py DIR file.pcap...
"""
import os
import struct
import sys


def frames(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        name = os.path.basename(path).rsplit(".", 1)[0]
        seen = set()
        for f in frames(path):
            l3 = f[14:]
            hdr = 20 if l3[0] >> 4 == 4 else 40
            opcode = l3[hdr + 8]  # IP, UDP (8), then BTH byte 0
            if opcode in seen:
                continue
            seen.add(opcode)
            open(os.path.join(out, f"cap_{name}_{opcode:02x}.bin"), "wb").write(l3)


if __name__ == "__main__":
    main()
