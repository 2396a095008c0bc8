"""Measurement logs: one JSON line per run of a benchmark or timing, written by the script that measured it.

Documents quote a figure and link the log row it comes from; the history of a figure is its log, never prose. A log
is a JSON-lines file under ``figures/logs/`` (or beside the figures it belongs to, e.g. ``figures/gpu/``); each row
holds the date, the commit, the machine (host name, CPU model, its matrix-product flags, the GPU where one ran), the
command and the figures::

    append("figures/logs/bench.jsonl", "python scripts/bench_chunked_nll.py", {"plain_mb": 3210.5})

The CPU's flags are part of every row because this repository's CPU timings differ by up to 20x between machines
sold under one model name (AVX2 only, AVX-512 BF16, AMX).
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from common.finite import NonFiniteError
from common.io import DataFormatError

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "figures" / "logs"
# the extensions that decide a CPU's speed in this repository's benchmarks (bf16 native or emulated)
SPEED_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def cpu_model(cpuinfo: str) -> str:
    """The ``model name`` of the first CPU in the text of ``/proc/cpuinfo`` (the platform's name elsewhere)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return platform.processor() or "unknown"


def cpu_flags(cpuinfo: str) -> list[str]:
    """The first CPU's flags among ``SPEED_FLAGS``, in that order."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            have = set(value.split())
            return [f for f in SPEED_FLAGS if f in have]
    return []


def machine(gpu: str | None = None) -> dict[str, Any]:
    """This machine as a log row names it."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        cpuinfo = ""
    return {"host": platform.node(), "cpu": cpu_model(cpuinfo), "cores": os.cpu_count(),
            "cpu_flags": cpu_flags(cpuinfo), "gpu": gpu}


def commit(root: Path = ROOT) -> str:
    """The checkout's commit, ``-dirty`` when tracked files differ from it; ``unknown`` outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return head + ("-dirty" if dirty else "") if head else "unknown"


def row(command: str, figures: Mapping[str, Any], gpu: str | None = None, **extra: Any) -> dict[str, Any]:
    """One log row: date (UTC), commit, machine, command, figures, and any ``extra`` fields."""
    return {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": commit(), "machine": machine(gpu), "command": command, "figures": dict(figures), **extra}


def append(log: str | Path, command: str, figures: Mapping[str, Any], gpu: str | None = None,
           **extra: Any) -> dict[str, Any]:
    """Append one row to ``log`` (created with its folder when missing); returns the row.

    A figure that is not a finite number is refused (:class:`NonFiniteError`): a log is read by documents and
    reports as measured fact. The row is written with one ``write`` of a complete line, so that an interrupted run
    leaves either the row or nothing."""
    entry = row(command, figures, gpu, **extra)
    try:
        text = json.dumps(entry, allow_nan=False, sort_keys=False) + "\n"
    except ValueError as e:
        raise NonFiniteError(f"{log}: refusing a row with a non-finite figure: {figures}") from e
    path = Path(log)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
    return entry


def read(log: str | Path) -> list[dict[str, Any]]:
    """Every row of ``log``, oldest first; a line that is not a JSON object is an error naming the file and line."""
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(Path(log).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataFormatError(log, n, f"not JSON: {e.msg}") from e
        if not isinstance(value, dict) or "figures" not in value or "command" not in value:
            raise DataFormatError(log, n, "not a measurement row (needs 'command' and 'figures')")
        rows.append(value)
    return rows


def latest(log: str | Path, command_contains: str = "") -> dict[str, Any] | None:
    """The newest row of ``log`` whose command contains ``command_contains``; ``None`` when there is none."""
    found = [r for r in read(log) if command_contains in r["command"]]
    return found[-1] if found else None
