"""Progress of an evaluation job: items done, rate and time left, to its log and its TensorBoard folder.

An evaluation is a sequence of stages, each with a known number of items: the sentences of one ``encode`` call, the
optimizer steps of a fine-tuning task. The loops count (:meth:`Progress.advance`: an addition, nothing else); a
heartbeat thread (:class:`Heartbeat`) reports every ``interval`` seconds (30 by default), so a report comes even
while one long batch runs, and the loops pay no clock reads. A report says the task, the stage, items done of
the stage's total, the rate since the stage began and the time left at that rate, and adds them as TensorBoard
scalars (``eval_progress/<task>/...``, against seconds since the job began). :func:`active` is the job's tracker
(a silent one outside a job), so the fine-tuning loops need no extra argument.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("common.eval.progress")
INTERVAL = 30.0  # seconds between reports


@dataclass
class Report:
    task: str
    stage: str
    done: int
    total: int
    rate: float  # items per second since the stage began
    left: float | None  # seconds, at that rate (None before the first item)
    elapsed: float  # seconds since the job began
    job_done: int = 0  # items of every stage so far

    def line(self) -> str:
        left = "?" if self.left is None else fmt_seconds(self.left)
        return (f"{self.task}: {self.stage}: {self.done:,}/{self.total:,} items, {self.rate:.1f} items/s, "
                f"~{left} left of the stage; job: {self.job_done:,} items in {fmt_seconds(self.elapsed)}")


def fmt_seconds(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Progress:
    """The counters of the running stage; ``clock`` is injectable (tests use a fake one)."""

    def __init__(self, tensorboard: str | None = None, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.tensorboard = tensorboard
        self._writer: Any = None
        self.started = clock()
        self.task, self.stage, self.total, self.done = "", "", 0, 0
        self.finished = 0  # items of the stages before this one
        self.stage_started = self.started
        self.reports: list[Report] = []  # every report made (a job makes a few hundred at most)

    def start(self, stage: str, total: int, task: str | None = None) -> None:
        """A new stage of ``total`` items (of ``task``, or of the current task)."""
        self.task = task if task is not None else self.task
        self.finished += self.done
        self.stage, self.total, self.done = stage, total, 0
        self.stage_started = self.clock()

    def advance(self, n: int = 1) -> None:
        self.done += n

    def snapshot(self) -> Report:
        now = self.clock()
        spent = max(now - self.stage_started, 1e-9)
        rate = self.done / spent
        left = (self.total - self.done) / rate if self.done else None
        return Report(self.task, self.stage, self.done, self.total, rate, left, now - self.started,
                      self.finished + self.done)

    def report(self) -> Report | None:
        """Log the running stage's progress (nothing before the first stage) and add it to TensorBoard."""
        if not self.stage:
            return None
        r = self.snapshot()
        self.reports.append(r)
        log.info("%s", r.line())
        if self.tensorboard:
            if self._writer is None:
                from torch.utils.tensorboard import SummaryWriter

                self._writer = SummaryWriter(self.tensorboard)
            step = int(r.elapsed)
            for key, value in (("items_done", r.done), ("items_total", r.total), ("items_per_s", r.rate),
                               ("seconds_left", r.left if r.left is not None else float("nan"))):
                self._writer.add_scalar(f"eval_progress/{r.task}/{key}", value, step)
            self._writer.flush()
        return r

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


class Heartbeat:
    """Calls ``progress.report()`` every ``interval`` seconds until stopped (a daemon thread)."""

    def __init__(self, progress: Progress, interval: float = INTERVAL):
        self.progress, self.interval = progress, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="eval-progress", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.progress.report()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


_SILENT = Progress()
_active: Progress = _SILENT


def active() -> Progress:
    """The running job's tracker (a silent one outside :func:`tracking`)."""
    return _active


@contextmanager
def tracking(tensorboard: str | None = None, interval: float = INTERVAL) -> Iterator[Progress]:
    """Track a job: its tracker is :func:`active` and a heartbeat reports every ``interval`` seconds."""
    global _active
    progress = Progress(tensorboard)
    _active = progress
    try:
        with Heartbeat(progress, interval):
            yield progress
    finally:
        _active = _SILENT
        progress.report()
        progress.close()
