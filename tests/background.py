"""The suite's long end-to-end runs, started together when the session starts (docs/tests.md, "the test budget").

The smoke run (``snakemake all``, tests/test_workflow.py) and the ci rehearsal (the GPU acceptance's CPU fallback,
tests/test_rehearsal.py) are each many short jobs, most of whose time is interpreter start-up. Run one after
the other, each left part of the two cores idle between its jobs, and together they took most of CI's 40 minutes.
Here a test module declares its run with :func:`declare`; the session fixture in ``tests/conftest.py`` starts every
declared run that a selected test needs (through its fixture) before the first test, in the background, and each
run's fixture waits for its own with :func:`wait`. The runs fill each other's idle gaps, and the unit tests run
beside them.

A run writes its output to a file (not a pipe a busy test would leave unread), has a deadline counted from its
start, and is killed with its process group at the deadline or when the session ends first.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

Command = Callable[[Path, list[pytest.Item]], list[str]]  # (the run's folder, the selected tests that need it)


@dataclass
class Run:
    """One declared run: ``command(workdir, tests)`` started in ``workdir``'s own folder, stopped after ``timeout`` s;
    ``tests`` are the selected tests that need it, so a run can do just what they read."""

    fixture: str
    command: Command
    timeout: float
    requires: Path | None = None  # a file that must exist (the shared data), else the run's tests skip
    env: dict[str, str] = field(default_factory=dict)
    workdir: Path | None = None
    output: Path | None = None
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0

    def start(self, tmp_path_factory: pytest.TempPathFactory, tests: list[pytest.Item]) -> None:
        if self.proc is not None or (self.requires is not None and not self.requires.exists()):
            return
        self.workdir = tmp_path_factory.mktemp(self.fixture)
        self.output = tmp_path_factory.mktemp(f"{self.fixture}-output") / "output.txt"
        with open(self.output, "wb") as out:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(self.command(self.workdir, tests), stdout=out, stderr=subprocess.STDOUT,
                                         env={**os.environ, **self.env}, start_new_session=True)
        self.started = time.time()

    def wait(self) -> int:
        """The run's exit status, once it has ended; a run past its deadline is stopped and fails the test."""
        if self.proc is None:
            pytest.skip(f"{self.fixture}: not started ({self.requires} not found)")
        try:  # returns at once for a run that has ended
            return self.proc.wait(timeout=max(0.0, self.started + self.timeout - time.time()))
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"{self.fixture} ran past {self.timeout:.0f} s and was stopped:\n"
                                 f"{self.tail()}") from None

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc is not None else None

    def seconds(self) -> float | None:
        """How long the run ran, once it has ended: from its start to the last write of its output (it writes a line
        as it ends, Snakemake its summary, the acceptance its report's path)."""
        if self.proc is None or self.proc.poll() is None or self.output is None or not self.output.exists():
            return None
        return self.output.stat().st_mtime - self.started

    def tail(self, chars: int = 6000) -> str:
        return self.output.read_text(errors="replace")[-chars:] if self.output and self.output.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the run's whole process group: Snakemake and its jobs
            self.proc.wait()


RUNS: dict[str, Run] = {}


def declare(fixture: str, timeout: float, requires: Path | None = None,
            env: dict[str, str] | None = None) -> Callable[[Command], Command]:
    """Declare the background run that the session fixture ``fixture`` waits for; decorates its command builder,
    which gets the run's folder and the selected tests that need the run."""
    def register(command: Command) -> Command:
        if fixture in RUNS:
            raise ValueError(f"a background run for fixture {fixture!r} is declared twice")
        RUNS[fixture] = Run(fixture, command, timeout, requires, env or {})
        return command
    return register


def start_needed(items: list[pytest.Item], tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    """Start the declared runs whose fixture a selected test uses (directly or through another fixture)."""
    runs = []
    for name, run in RUNS.items():
        tests = [item for item in items if name in getattr(item, "fixturenames", ())]
        if tests:
            run.start(tmp_path_factory, tests)
            runs.append(run)
    return runs


def wait(fixture: str) -> Run:
    """The finished run of ``fixture`` (its exit status in ``returncode``, its folder in ``workdir``)."""
    run = RUNS[fixture]
    run.wait()
    return run
