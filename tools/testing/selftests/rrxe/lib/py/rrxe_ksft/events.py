"""Asynchronous events (ibv_get_async_event) with a deadline."""
import threading

import pyverbs.enums as e

# An event type's IBV_EVENT_* name.
EVENT_NAMES = {getattr(e, n): n for n in dir(e) if n.startswith("IBV_EVENT_")}


def next_event(ctx, timeout=10.0):
    """The type of the next asynchronous event of context `ctx`
    (acknowledged), or None if none comes within `timeout` seconds.
    (pyverbs may hold the interpreter lock while it waits, so a missing
    event can hang the program: the tests run them under `timeout`,
    and the callers expect an event.)"""
    got = []
    t = threading.Thread(target=lambda: got.append(ctx.get_async_event()), daemon=True)
    t.start()
    t.join(timeout)
    if not got:
        return None
    got[0].ack()
    return got[0].event_type


def event_name(ev):
    """Event type `ev` by its IBV_EVENT_* name (`ev` itself if it has
    none, as None)."""
    return EVENT_NAMES.get(ev, ev)
