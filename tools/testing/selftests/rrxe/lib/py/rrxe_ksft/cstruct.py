"""The C structs behind pyverbs objects that do not expose them (pyverbs
44 has no attach_mcast, no PD pointer): found by scanning the object's
fields.  Test-only."""
import ctypes
import struct


def readable_ranges():
    """The readable mappings of this process (start, end), from
    /proc/self/maps."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if "r" in line.split()[1]:
                out.append((lo, hi))
    return out


def find_struct(obj, size, match):
    """A pointer field of pyverbs object `obj` (which does not expose its
    C struct) to `size` readable bytes for which `match(p)` holds: the
    object's fields are scanned.  Test-only."""
    maps = readable_ranges()
    for off in range(16, 256, 8):
        p = struct.unpack("<Q", ctypes.string_at(id(obj) + off, 8))[0]
        if p and p % 8 == 0 and any(lo <= p and p + size <= hi for lo, hi in maps) and match(p):
            return p
    return None
