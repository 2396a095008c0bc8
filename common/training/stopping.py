"""When a run must checkpoint and exit before ``max_steps``: the job's wall-clock limit is near, or the job was
asked to stop (SIGTERM: Slurm's preemption, ``scancel``; SIGUSR1: a warning signal such as ``--signal=USR1@600``).

The deadline is the job's end time: ``XLING_DEADLINE`` (seconds since the epoch; any scheduler, and tests), else
``SLURM_JOB_END_TIME`` (Slurm 23.02 and later), else ``squeue -h -j $SLURM_JOB_ID -o %L`` (the job's time left;
the Slurm executor's job step keeps only SLURM_JOB_ID of the job's variables). The trainer stops once less than
``margin`` seconds plus two of its recent steps remain, after saving a checkpoint; the process then exits with
:data:`EXIT_RESUME` and a rerun (Snakemake's ``retries`` in ``profiles/slurm``) resumes from that checkpoint.
Reading the deadline from the job itself needs no signal to reach the Python process: Slurm's warning signal
goes to every process of the job step, Snakemake's own included, whose default action for SIGUSR1 is to exit.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

log = logging.getLogger(__name__)

EXIT_RESUME = 75  # EX_TEMPFAIL: checkpointed before a limit; rerun the same command to resume
SIGNALS = (signal.SIGTERM, signal.SIGUSR1)
_Handler = Callable[[int, FrameType | None], Any] | int | None  # what signal.signal takes and returns


def parse_slurm_time(text: str) -> float | None:
    """Seconds of a Slurm duration (``[days-][[hours:]minutes:]seconds``); None for UNLIMITED / NOT_SET."""
    text = text.strip()
    if not text or text.upper() in ("UNLIMITED", "NOT_SET", "INVALID", "N/A"):
        return None
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    seconds: int = sum(v * 60 ** i for i, v in enumerate(reversed(parts)))
    return seconds + (int(days) * 86400 if days else 0)


def job_deadline(env: Mapping[str, str] | None = None, now: float | None = None) -> float | None:
    """The job's end time in seconds since the epoch, or None when the job has no limit or none is known."""
    env = os.environ if env is None else env
    now = time.time() if now is None else now
    if env.get("XLING_DEADLINE"):
        return float(env["XLING_DEADLINE"])
    if env.get("SLURM_JOB_END_TIME"):
        return float(env["SLURM_JOB_END_TIME"])
    job = env.get("SLURM_JOB_ID")
    if not job:
        return None
    try:
        out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("cannot read the time limit of Slurm job %s (%s); no deadline", job, exc)
        return None
    left = parse_slurm_time(out.stdout) if out.returncode == 0 else None
    return None if left is None else now + left


class StopConditions:
    """Tracks the reasons to stop early; ``reason()`` is None while the run may go on."""

    def __init__(self, deadline: float | None, margin: float):
        self.deadline, self.margin = deadline, margin
        self.signal: int | None = None
        self._previous: dict[signal.Signals, _Handler] = {}

    def install(self) -> StopConditions:
        """Answer SIGTERM / SIGUSR1 by asking for a stop (the main thread only; a no-op elsewhere)."""
        def handler(signum: int, _frame: FrameType | None) -> None:
            log.warning("received %s: checkpointing at the next step", signal.Signals(signum).name)
            self.signal = signum

        try:
            self._previous = {s: signal.signal(s, handler) for s in SIGNALS}
        except ValueError:  # not the main thread
            self._previous = {}
        return self

    def uninstall(self) -> None:
        for s, h in self._previous.items():
            signal.signal(s, h)
        self._previous = {}

    def reason(self, step_seconds: float, now: float | None = None) -> str | None:
        if self.signal is not None:
            return f"signal {signal.Signals(self.signal).name}"
        now = time.time() if now is None else now
        if self.deadline is not None and now + self.margin + 2 * step_seconds >= self.deadline:
            return f"time limit ({self.deadline - now:.0f} s left, margin {self.margin:.0f} s)"
        return None
