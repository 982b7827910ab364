"""Test data: byte patterns, and words read from registered memory."""
import struct


def ramp(n, step, start=0):
    """`n` bytes counting up by `step` from `start` (modulo 256): data in
    which a byte's value depends on its offset."""
    return bytes((i * step + start) & 0xff for i in range(n))


def u64(mr, off):
    """The little-endian 64-bit word at offset `off` of MR `mr`."""
    return struct.unpack("<Q", mr.read(8, off))[0]
