#!/usr/bin/python3
"""Holds an ODP region on DEV until killed, after writing "ready" to
FILE: the odp test deletes the device under it (ib_core then
disassociates the context and deregisters the region on the process's
behalf).  usage: odp_holder.py DEV FILE"""
import ctypes
import mmap
import sys
import time

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD

ctx = Context(name=sys.argv[1])
pd = PD(ctx)
m = mmap.mmap(-1, 1 << 20)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
mr = MR(pd, 1 << 20, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_ON_DEMAND, address=addr)
with open(sys.argv[2], "w") as f:
    f.write("ready")
time.sleep(600)
