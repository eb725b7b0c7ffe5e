"""Work done beside Blender's calls, on a second core.

bpy holds Python's lock through every call into Blender, but numpy's long loops
(sorts, takes, comparisons of large arrays) and hashlib's digests of large
buffers let go of it. So an import hands the pure array work whose input is
ready (the fingerprint's digests, the vertex groups' sort) to one worker thread
and goes on with Blender's calls; it waits for the result only where it needs
it. The worker never touches bpy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None


def submit(fn: Callable, /, *args) -> Future:
    """``fn(*args)`` on the worker thread (one: the tasks run in the order given)."""
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rigport")
        return _POOL.submit(fn, *args)


def shutdown() -> None:
    """Finish the queued work and end the worker (the add-on's unregister)."""
    global _POOL
    with _LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=True)


@contextmanager
def ended_after() -> Iterator[None]:
    """The worker ends with the block (an import operator's run), its queued work
    done first: a failed import's unclaimed tasks never run beside what the artist
    does next, and no idle thread stays in Blender between imports. The next
    :func:`submit` starts a new one (a thread's start costs well under a
    millisecond)."""
    try:
        yield
    finally:
        shutdown()
