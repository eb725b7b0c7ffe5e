"""Worker processes for ``batch.py --jobs N``: files handed out one at a time.

Each worker is a ``batch.py --worker`` process (with bpy for the Blender
commands). It reads JSON lines on stdin: a header (the command and its
options), then one task per line; it writes JSON lines on stdout: ``ready``
once set up, then one result per task. Whatever else it prints goes to its
stderr, of which the last lines are kept to explain a worker that dies. A
worker gets its next file only when it has answered for the last one, so the
work balances itself, and a crash (a segmentation fault in Blender) is pinned
on one file: that file fails, and a new worker takes the rest.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from . import UsageError

TAIL_LINES = 12


@dataclass
class _Worker:
    proc: subprocess.Popen
    tail: deque = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    task: int | None = None  # the index of the file it is on
    ready: bool = False
    stderr_done: threading.Event = field(default_factory=threading.Event)


def _read_results(w: _Worker, events: queue.Queue) -> None:
    for line in w.proc.stdout:
        try:
            doc = json.loads(line)
        except ValueError:  # not ours: a library printing to the results pipe
            w.tail.append(line.rstrip("\n"))
            continue
        events.put(("message", w, doc))
    events.put(("ended", w, None))


def _read_stderr(w: _Worker) -> None:
    for line in w.proc.stderr:
        w.tail.append(line.rstrip("\n"))
    w.stderr_done.set()


def _why(w: _Worker) -> str:
    """How a worker ended, and the last thing it printed."""
    code = w.proc.wait()
    w.stderr_done.wait(5)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        how = f"the worker process was killed by {name}"
    else:
        how = f"the worker process exited with status {code}"
    last = next((ln.strip() for ln in reversed(w.tail) if ln.strip()), "")
    return how + (f" ({last})" if last else "")


def run(
    argv: list[str],
    header: dict,
    tasks: list[tuple[int, dict]],
    jobs: int,
    on_result: Callable[[int, dict | None, str], bool],
) -> dict:
    """Run ``tasks`` (index, task document) on up to ``jobs`` workers started with
    ``argv``. ``on_result(index, result, why)`` gets each result (None and the
    reason when the worker died on that file) and returns False to hand out no
    more files; the files already handed out still finish. A worker that cannot
    start is a UsageError with its last words. Returns the first worker's
    ``ready`` message (what it runs on)."""
    events: queue.Queue = queue.Queue()
    pending = deque(tasks)
    workers: list[_Worker] = []
    stopping = False
    first_ready: dict = {}
    idle_deaths = 0  # workers that ended with files left and none of their own

    def start() -> None:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        w = _Worker(proc)
        workers.append(w)
        threading.Thread(target=_read_results, args=(w, events), daemon=True).start()
        threading.Thread(target=_read_stderr, args=(w,), daemon=True).start()
        send(w, header)

    def send(w: _Worker, doc: dict) -> bool:
        try:
            w.proc.stdin.write(json.dumps(doc) + "\n")
            w.proc.stdin.flush()
            return True
        except OSError:  # it died: its "ended" event follows
            return False

    def hand_out(w: _Worker) -> None:
        while pending and not stopping:
            index, doc = pending.popleft()
            w.task = index
            if send(w, doc):
                return
            w.task = None
            pending.appendleft((index, doc))
            return
        try:
            w.proc.stdin.close()  # no more files: the worker ends
        except OSError:
            pass

    try:
        for _ in range(min(jobs, len(pending))):
            start()
        alive = len(workers)
        while alive:
            kind, w, doc = events.get()
            if kind == "message":
                if doc.get("ready"):
                    w.ready = True
                    first_ready = first_ready or doc
                else:
                    index, w.task = w.task, None
                    if not on_result(index, doc, ""):
                        stopping = True
                hand_out(w)
                continue
            alive -= 1
            why = _why(w)
            if not w.ready:
                raise UsageError(f"a worker process could not start: {why}")
            if w.task is not None:  # it died on this file: the file fails
                index, w.task = w.task, None
                if not on_result(index, None, why):
                    stopping = True
            elif pending and not stopping:  # it died between two files
                idle_deaths += 1
                if idle_deaths > jobs:
                    raise UsageError(f"the worker processes keep ending: {why}")
            if pending and not stopping:
                start()
                alive += 1
        return first_ready
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
            w.proc.wait()
