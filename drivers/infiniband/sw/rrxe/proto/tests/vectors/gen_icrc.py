#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent generator of RoCEv2 ICRC known-answer vectors for rrxe-proto.

This is a separate reimplementation of the IBTA annex A17 ICRC, written
from the specification / C rxe facts with Python's zlib.crc32 and struct,
sharing no code with the Rust crate:

  ICRC = zlib.crc32( 8 x 0xff                      (masked LRH)
                   | IP header, variant fields = 1s (v4: TOS, TTL, checksum;
                                                     v6: traffic class,
                                                     flow label, hop limit)
                   | UDP header, checksum = 0xffff
                   | BTH, byte 4 (FECN/BECN/resv6a) = 0xff
                   | rest of the packet up to the ICRC )
  wire bytes = struct.pack('<I', ICRC)

Before writing anything it checks itself against a real RoCEv2 CNP packet
captured on a Mellanox ConnectX-4 Lx (hardware ICRC), as published in
scapy's test/contrib/roce.uts, and against the ICRC scapy's independent
implementation asserts for its example UC packet.

Packets are built here by hand, field by field.  "rxe" mode lines reproduce
C rxe's FLUSH quirk (the FLUSH headers are covered twice, see icrc.rs).

Usage (from the crate root):  python3 tests/vectors/gen_icrc.py
Writes tests/vectors/icrc_vectors.txt and fuzz/corpus/parse_validate/*.bin.
"""

import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CRATE = os.path.dirname(os.path.dirname(HERE))


def icrc(l3, mode="ibta"):
    ver = l3[0] >> 4
    iplen = 20 if ver == 4 else 40
    ip = bytearray(l3[:iplen])
    udp = bytearray(l3[iplen:iplen + 8])
    if ver == 4:
        ip[1] = 0xFF            # TOS
        ip[8] = 0xFF            # TTL
        ip[10:12] = b"\xff\xff"  # header checksum
    else:
        ip[0] |= 0x0F           # traffic class, high nibble
        ip[1:4] = b"\xff\xff\xff"  # traffic class low nibble + flow label
        ip[7] = 0xFF            # hop limit
    udp[6:8] = b"\xff\xff"      # UDP checksum
    udplen = struct.unpack(">H", bytes(udp[4:6]))[0]
    roce = l3[iplen + 8:iplen + udplen]
    bth = bytearray(roce[:12])
    bth[4] = 0xFF
    data = b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth)
    if mode == "rxe" and roce[0] == 0x1C:   # RC FLUSH: FETH(4) + RETH(16)
        data += roce[12:32] + roce[:-4]
    else:
        data += roce[12:-4]
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16(b):
    s = 0
    for i in range(0, len(b), 2):
        s += (b[i] << 8) | b[i + 1]
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, l4len, tos, ttl, ident):
    h = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + l4len, ident,
                              0x4000, ttl, 17, 0, bytes(src), bytes(dst)))
    h[10:12] = struct.pack(">H", csum16(h))
    return bytes(h)


def ipv6(src, dst, l4len, tc, flow, hop):
    w = (6 << 28) | (tc << 20) | flow
    return struct.pack(">IHBB16s16s", w, l4len, 17, hop, bytes(src), bytes(dst))


def udp(sport, roce_len):
    return struct.pack(">HHHH", sport, 4791, 8 + roce_len, 0)


def bth(op, qpn, psn, pad, se=0, ack=0, fecn=0, becn=0, pkey=0xFFFF):
    flags = (se << 7) | (pad << 4)
    w1 = (fecn << 31) | (becn << 30) | qpn
    w2 = (ack << 31) | psn
    return struct.pack(">BBHII", op, flags, pkey, w1, w2)


def roce(op, qpn, psn, ext, payload, **kw):
    pad = (-len(payload)) & 3
    return bth(op, qpn, psn, pad, **kw) + ext + payload + b"\x00" * pad + b"\x00" * 4


def l3v4(r, tos=0, ttl=64, ident=0x1234, sport=0xC000):
    return ipv4([192, 0, 2, 1], [192, 0, 2, 2], 8 + len(r), tos, ttl, ident) + udp(sport, len(r)) + r


def l3v6(r, tc=0, flow=0, hop=64, sport=0xC000):
    s = bytes.fromhex("20010db8000000000000000000000001")
    d = bytes.fromhex("20010db8000000000000000000000002")
    return ipv6(s, d, 8 + len(r), tc, flow, hop) + udp(sport, len(r)) + r


def fill(l3, mode="ibta"):
    return l3[:-4] + struct.pack("<I", icrc(l3, mode))


def self_check():
    # ConnectX-4 Lx CNP (IPv4 part of the capture); hardware ICRC 82fd002a.
    cnp = bytes.fromhex(
        "45c2003c718c400040119161 0a001101 0a001201 000012b700280000"
        "8100ffff40000118 00000000" + "00" * 16 + "82fd002a")
    assert struct.pack("<I", icrc(cnp)) == cnp[-4:], "hardware vector"
    # scapy's example UC SEND ONLY (pad 2): scapy ICRC reads 0x78f353f3.
    pay = b"F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P"
    r = bth(0x24, 211, 13571856, 2) + pay + b"\x00\x00" + b"\x00" * 4
    r = bytearray(r)
    r[1] |= 0x40  # MigReq
    l3 = ipv4([192, 168, 0, 7], [192, 168, 0, 7], 8 + len(r), 0x01, 64, 1144)
    l3 = l3 + struct.pack(">HHHH", 49152, 4791, 8 + len(r), 0xACA2) + bytes(r)
    assert struct.pack("<I", icrc(l3)) == bytes.fromhex("78f353f3"), "scapy vector"
    return [("cx4lx_cnp_capture", "ibta", cnp), ("scapy_uc_send_only", "ibta", fill(l3))]


def vectors():
    out = []
    out.append(("v4_rc_send_only", "ibta", fill(l3v4(
        roce(0x04, 0x11, 0x100, b"", b"hello", se=1, ack=1), tos=0x02))))
    reth = struct.pack(">QII", 0x00007F0012345000, 0xABCD, 1024)
    out.append(("v6_rc_write_first", "ibta", fill(l3v6(
        roce(0x06, 0x123456, 0xFFFFFE, reth, bytes(i & 0xFF for i in range(256))),
        tc=0x68, flow=0x12345, hop=64, sport=0xC123))))
    deth = struct.pack(">II", 0x80010000, 1)
    out.append(("v4_ud_send_imm_ecn", "ibta", fill(l3v4(
        roce(0x65, 1, 7, deth + bytes.fromhex("deadbeef"), b"payload", fecn=1, becn=1),
        tos=0x03, ttl=1))))
    out.append(("v4_rc_ack", "ibta", fill(l3v4(
        roce(0x11, 0x11, 0x100, struct.pack(">I", 0x1F000005), b"")))))
    atm = struct.pack(">QIQQ", 0x1000, 0x42, 0x1111, 0x2222)
    out.append(("v6_rc_cmp_swap", "ibta", fill(l3v6(
        roce(0x13, 0x22, 9, atm, b"", ack=1)))))
    flush = struct.pack(">I", 0x01) + struct.pack(">QII", 0x2000, 7, 64)
    fl = l3v4(roce(0x1C, 0x33, 10, flush, b"", ack=1))
    out.append(("v4_rc_flush", "ibta", fill(fl, "ibta")))
    out.append(("v4_rc_flush", "rxe", fill(fl, "rxe")))
    return out


def main():
    vs = self_check() + vectors()
    path = os.path.join(HERE, "icrc_vectors.txt")
    with open(path, "w") as f:
        f.write("# Generated by gen_icrc.py (independent Python ICRC); do not edit.\n")
        f.write("# name mode icrc_wire_bytes l3_packet_hex_including_icrc\n")
        for name, mode, pkt in vs:
            f.write("%s %s %s %s\n" % (name, mode, pkt[-4:].hex(), pkt.hex()))
    corpus = os.path.join(CRATE, "fuzz", "corpus", "parse_validate")
    os.makedirs(corpus, exist_ok=True)
    seeds = {name: pkt for name, mode, pkt in vs if mode == "ibta"}
    base = seeds["v4_rc_send_only"]
    seeds["bad_tver"] = base[:29] + bytes([base[29] | 0x01]) + base[30:]
    seeds["unknown_opcode"] = base[:28] + b"\x15" + base[29:]
    seeds["truncated"] = base[:40]
    for name, pkt in sorted(seeds.items()):
        with open(os.path.join(corpus, name + ".bin"), "wb") as f:
            f.write(pkt)
    print("wrote %d vectors, %d corpus files" % (len(vs), len(seeds)))


if __name__ == "__main__":
    main()
