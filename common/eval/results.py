"""Results files: one JSON per (model, task, scale, seed), after MTEB's results layout: a
:class:`ResultRecord`, whose JSON schema is written beside it (``ResultRecord.schema.json``,
:mod:`common.records`) and checked before it is written and whenever a report reads it: ``scores`` holds a
``main_score`` that is a number, and every number of the record is finite.
"""
from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from common.io import sha256_files, sha256_json, write_json
from common.records import check, read_record, write_schema

PACKAGES = ("torch", "transformers", "tokenizers", "deepspeed", "numpy", "scipy")


def config_hash(config: dict[str, Any]) -> str:
    return sha256_json(config)


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


@dataclass(frozen=True)
class ResultRecord:
    """One evaluation of one model on one task (its results JSON)."""

    task_name: str
    split: str
    languages: list[str]
    # the task's metrics, ``main_score`` among them (a number: a task with nothing to score is an error, not a null)
    scores: dict[str, Any] = field(metadata={"schema": {"required": ["main_score"],
                                                        "properties": {"main_score": {"type": "number"}}}})
    model: dict[str, Any]  # name, path and the embedder's description
    scale: str
    seed: int
    config_hash: str  # sha256 of the resolved config
    git_commit: str | None
    versions: dict[str, str]  # python and the key packages
    data_sha256: str  # of every data file read
    evaluation_time: float  # seconds


def write_result(path: str | Path, *, task: str, split: str, languages: list[str], scores: dict[str, Any],
                 model: dict[str, Any], scale: str, seed: int, config: dict[str, Any], data_files: Sequence[str | Path],
                 evaluation_time: float) -> dict[str, Any]:
    """Write a results JSON, checked first (:class:`ResultRecord`; nothing is written when it does not fit)."""
    record = ResultRecord(task, split, languages, scores, model, scale, seed, config_hash(config), git_commit(),
                          versions(), sha256_files(sorted(str(p) for p in data_files)), round(evaluation_time, 3))
    check(asdict(record), ResultRecord, path)
    write_json(path, asdict(record))
    write_schema(Path(path).parent, ResultRecord)
    return asdict(record)


def read_result(path: str | Path) -> ResultRecord:
    """A results JSON, checked against :class:`ResultRecord`'s schema (an error names the file and the field)."""
    return read_record(path, ResultRecord)
