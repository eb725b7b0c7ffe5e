"""Worker processes for ``batch.py --jobs N``: files handed out one at a time.

Each worker is a ``batch.py --worker`` process (with bpy for the Blender
commands). It reads JSON lines on stdin: a header (the command and its
options), then one task per line; it writes JSON lines on stdout: ``ready``
once set up, then one result per task. Whatever else it prints goes to its
stderr, of which the last lines are kept to explain a worker that dies. A
worker gets its next file only when it has answered for the last one, so the
work balances itself, and a crash (a segmentation fault in Blender) is pinned
on one file: that file fails, and a new worker takes the rest. When the run
is interrupted, the workers get SIGTERM (a worker then removes the temporary
file of the output it was writing and ends), SIGKILL if they have not ended
after ``STOP_SECONDS``; the results that came in meanwhile still count.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from . import UsageError

TAIL_LINES = 12
STOP_SECONDS = 5.0


@dataclass
class _Worker:
    proc: subprocess.Popen
    tail: deque = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    task: int | None = None  # the index of the file it is on
    ready: bool = False
    stderr_done: threading.Event = field(default_factory=threading.Event)
    reader: threading.Thread | None = None  # the thread reading its results


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


@dataclass
class Job:
    """What ``run`` hands out: the ``tasks`` (index, task document) on up to ``jobs``
    workers started with ``argv``, each sent ``header`` first."""

    argv: list[str]
    header: dict
    tasks: list[tuple[int, dict]]
    jobs: int


@dataclass
class _Pool:
    """The workers of one run and the files still to hand out."""

    job: Job
    on_result: Callable[[int, dict | None, str], bool]
    events: queue.Queue = field(default_factory=queue.Queue)
    pending: deque = field(init=False)
    workers: list[_Worker] = field(default_factory=list)
    alive: int = 0
    stopping: bool = False  # on_result asked for no more files
    first_ready: dict = field(default_factory=dict)
    idle_deaths: int = 0  # workers that ended with files left and none of their own

    def __post_init__(self) -> None:
        self.pending = deque(self.job.tasks)

    def start(self) -> None:
        proc = subprocess.Popen(
            self.job.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        w = _Worker(proc)
        self.workers.append(w)
        self.alive += 1
        w.reader = threading.Thread(target=_read_results, args=(w, self.events), daemon=True)
        w.reader.start()
        threading.Thread(target=_read_stderr, args=(w,), daemon=True).start()
        _send(w, self.job.header)

    def hand_out(self, w: _Worker) -> None:
        """The next file to ``w``; with none left, its stdin closes and it ends."""
        if self.pending and not self.stopping:
            index, doc = self.pending.popleft()
            w.task = index
            if not _send(w, doc):
                w.task = None
                self.pending.appendleft((index, doc))
            return
        try:
            w.proc.stdin.close()
        except OSError:
            pass

    def message(self, w: _Worker, doc: dict) -> None:
        """A worker is ready, or answered for its file: it gets the next one."""
        if doc.get("ready"):
            w.ready = True
            self.first_ready = self.first_ready or doc
        else:
            index, w.task = w.task, None
            if not self.on_result(index, doc, ""):
                self.stopping = True
        self.hand_out(w)

    def ended(self, w: _Worker) -> None:
        """A worker ended: the file it was on fails, and a new worker takes the rest."""
        self.alive -= 1
        why = _why(w)
        if not w.ready:
            raise UsageError(f"a worker process could not start: {why}")
        if w.task is not None:  # it died on this file: the file fails
            index, w.task = w.task, None
            if not self.on_result(index, None, why):
                self.stopping = True
        elif self.pending and not self.stopping:  # it died between two files
            self.idle_deaths += 1
            if self.idle_deaths > self.job.jobs:
                raise UsageError(f"the worker processes keep ending: {why}")
        if self.pending and not self.stopping:
            self.start()

    def close(self) -> None:
        """Stop the workers still running: SIGTERM, then SIGKILL after STOP_SECONDS."""
        live = [w for w in self.workers if w.proc.poll() is None]
        for w in live:
            w.proc.terminate()
        deadline = time.monotonic() + STOP_SECONDS
        for w in self.workers:
            try:
                w.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()

    def drain(self) -> None:
        """After an interruption: the results the stopped workers sent before they
        ended (their outputs are complete)."""
        for w in self.workers:
            w.reader.join(STOP_SECONDS)  # every line the worker wrote is in the queue
        while True:
            try:
                kind, w, doc = self.events.get_nowait()
            except queue.Empty:
                return
            if kind == "message" and not doc.get("ready") and w.task is not None:
                index, w.task = w.task, None
                self.on_result(index, doc, "")


def _send(w: _Worker, doc: dict) -> bool:
    try:
        w.proc.stdin.write(json.dumps(doc) + "\n")
        w.proc.stdin.flush()
        return True
    except OSError:  # it died: its "ended" event follows
        return False


def run(job: Job, on_result: Callable[[int, dict | None, str], bool]) -> dict:
    """Run ``job``'s tasks. ``on_result(index, result, why)`` gets each result (None
    and the reason when the worker died on that file) and returns False to hand out
    no more files; the files already handed out still finish. A worker that cannot
    start is a UsageError with its last words. Returns the first worker's ``ready``
    message (what it runs on). A KeyboardInterrupt (SIGINT, or SIGTERM as batch.py
    turns it into one) stops the workers, passes on the results they sent until
    then, and is raised again."""
    pool = _Pool(job, on_result)
    try:
        for _ in range(min(job.jobs, len(pool.pending))):
            pool.start()
        while pool.alive:
            kind, w, doc = pool.events.get()
            if kind == "message":
                pool.message(w, doc)
            else:
                pool.ended(w)
        return pool.first_ready
    except KeyboardInterrupt:
        pool.stopping = True
        pool.close()
        pool.drain()
        raise
    finally:
        pool.close()
