#!/usr/bin/env python3
"""Compare two `ibv_devinfo -v` outputs field by field.

Each line becomes a (section, key, occurrence) -> value entry; flag lists
under a key (indented lines without a colon) are folded into that key.
Fields in EXCLUDED may differ; every other field must match exactly and be
present on both sides.  Prints each compared and excluded difference.
"""
import re
import sys

# Fields that differ by design (identity) ...
IDENTITY = {"hca_id", "node_guid", "sys_image_guid", "GID"}
# ... and capabilities rrxe does not claim until it implements them
# (Documentation/rrxe/compat.rst lists them with the issue that adds each).
NOT_YET = {"device_cap_flags", "device_cap_flags_ex"}
EXCLUDED = IDENTITY | NOT_YET


def parse(path):
    fields = {}
    key = None
    seen = {}
    for raw in open(path):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        m = re.match(r"^\s*(GID)\[\s*(\d+)\]:\s*(.*)$", line)
        if m:
            k = ("GID", m.group(2))
            fields[k] = m.group(3)
            key = k
            continue
        m = re.match(r"^\s*([A-Za-z_][\w ]*?):\s*(.*)$", line)
        # "Unknown flags: 0x.." belongs to the flag list above it.
        if m and m.group(1) != "Unknown flags":
            name = m.group(1).strip()
            n = seen.get(name, 0)
            seen[name] = n + 1
            key = (name, str(n))
            fields[key] = m.group(2).strip()
        elif key is not None:
            fields[key] = fields[key] + " | " + line.strip()
    return fields


def main():
    a, b = parse(sys.argv[1]), parse(sys.argv[2])
    bad = 0
    compared = 0
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        if k[0] in EXCLUDED:
            if va != vb:
                print(f"  excluded  {k[0]}: {va!r} vs {vb!r}")
            continue
        compared += 1
        if va != vb:
            print(f"  DIFFERS   {k[0]}: {va!r} vs {vb!r}")
            bad += 1
    print(f"  compared {compared} fields, {bad} differ")
    return 1 if bad or compared < 40 else 0


if __name__ == "__main__":
    sys.exit(main())
