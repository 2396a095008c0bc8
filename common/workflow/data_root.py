"""What the planned jobs read from ``data_root`` (and from a config's own files), checked when Snakemake plans the
workflow: a dry run stops where a run would, before any job, with one message naming what is missing and the
command that rebuilds it (``snakemake data``, :mod:`common.data.rebuild`).

The rules call :func:`check` from an input function (evaluated while the DAG is built, once per planned job that
reads ``data_root``: each experiment's corpus job, the benchmarks' BUCC-style set, the rehearsal's mirror, the
census); it returns no input, so it never changes what a job depends on.
"""
from __future__ import annotations

import glob
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from common.data import corpora
from common.data.rebuild import REBUILD_COMMAND


class DataRootError(FileNotFoundError):
    """Files the planned jobs read are missing."""


def corpus_reads(cfg: dict[str, Any], data_root: str | Path) -> list[Path]:
    """What an experiment's corpus job reads in place with its config ``cfg`` (its corpus kind's listing,
    :func:`common.data.corpora.in_place`)."""
    kind = cfg["corpus"]["kind"]
    return corpora.in_place(kind, Path(data_root), cfg["corpus"].get(kind))


def _shown(path: Path, root: Path) -> str:
    """A missing path as the message shows it: its highest missing folder under ``root`` when a whole folder is
    missing (one line for the folder, not one per file); a glob pattern that matches nothing, as such."""
    top = path
    while top.parent != root and root in top.parent.parents and not top.parent.exists():
        top = top.parent
    if top != path:
        return f"{top}/  (the whole folder)"
    return f"{path}  (no file matches)" if glob.has_magic(path.name) else str(path)


def missing_message(paths: Iterable[Path], data_root: str | Path, reader: str) -> str | None:
    """The one message naming what of ``paths`` is missing (None when nothing is)."""
    root = Path(data_root)
    missing = corpora.absent(paths)
    if not missing:
        return None
    if not root.is_dir():
        listed = [f"{root}/  (data_root itself does not exist)"]
    else:
        listed = list(dict.fromkeys(_shown(p, root) for p in missing))
    inside = [p for p in missing if root in p.parents]
    fix = (f"Rebuild data_root from its public sources with one command (docs/data.md):\n"
           f"  {REBUILD_COMMAND.format(data_root=data_root)}\n"
           "or point data_root at the folder that holds them: --config data_root=DIR") if inside else \
        "These are files the config names outside data_root: put them there or change the config."
    return (f"data_root '{data_root}' lacks what {reader} reads ({len(missing)} missing, checked before any job "
            f"runs):\n  " + "\n  ".join(listed[:20]) + (f"\n  ... and {len(listed) - 20} more" if len(listed) > 20
                                                       else "") + "\n" + fix)


def check(paths: Iterable[Path], data_root: str | Path, reader: str) -> list[str]:
    """Raise :class:`DataRootError` with :func:`missing_message` when something is missing; the empty input list of
    a Snakemake input function otherwise."""
    message = missing_message(list(paths), data_root, reader)
    if message:
        raise DataRootError(message)
    return []
