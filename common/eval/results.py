"""Results files: one JSON per (model, task, scale, seed), after MTEB's results layout.

Fields: ``task_name``, ``split``, ``languages``, ``scores`` (with ``main_score``),
``model`` (name, path, variant), ``scale``, ``seed``, ``config_hash`` (sha256 of the
resolved config), ``git_commit``, ``versions`` (python and key packages), ``data_sha256``
(hash of every data file read) and ``evaluation_time`` in seconds.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import subprocess
from pathlib import Path

from common.io import sha256_files, write_json

PACKAGES = ("torch", "transformers", "tokenizers", "deepspeed", "numpy", "scipy")


def config_hash(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


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


def write_result(path: str | Path, *, task: str, split: str, languages: list[str], scores: dict, model: dict,
                 scale: str, seed: int, config: dict, data_files: list[str | Path], evaluation_time: float) -> dict:
    if "main_score" not in scores:
        raise ValueError(f"{task}: scores must contain main_score")
    record = {
        "task_name": task, "split": split, "languages": languages, "scores": scores, "model": model,
        "scale": scale, "seed": seed, "config_hash": config_hash(config), "git_commit": git_commit(),
        "versions": versions(), "data_sha256": sha256_files(sorted(str(p) for p in data_files)),
        "evaluation_time": round(evaluation_time, 3),
    }
    write_json(path, record)
    return record
