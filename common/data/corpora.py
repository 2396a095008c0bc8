"""The corpus registry: each corpus module (``common/data/corpus*.py``) registers the builder of its kinds with
:func:`register_corpus`; :func:`builder` imports those modules once, by their names' prefix, so the registry
names none of them.

A builder writes a corpus under ``out`` and returns its manifest; it is called as
``build(out, data_root, spec, downloader, cleaner)`` (paper kinds download through ``downloader`` and pass their
training bitext through ``cleaner``, a :class:`common.data.cleaning.PairCleaner`).

A kind that reads files in place from ``data_root`` (public evaluation sets that no pinned URL serves, the mini
scale's real data) or elsewhere (the ``files`` kind's own pairs) also registers, with :func:`reads_in_place`, a
function of ``data_root`` and the kind's config section listing them (a glob pattern for a folder whose matching
files are read); :func:`in_place` is what the workflow checks when it plans a run
(:mod:`common.workflow.data_root`), the preflight and the GPU acceptance, with :func:`absent`, before anything runs.
A reader that globs a folder takes its files through :func:`matching`, which refuses to match nothing.
"""
from __future__ import annotations

import glob
import importlib
import pkgutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from common.registry import registrar

Builder = Callable[..., dict[str, Any]]
BUILDERS: dict[str, Builder] = {}
InPlace = Callable[[Path, dict[str, Any]], list[Path]]  # (data_root, config section) -> the folders and files read
IN_PLACE: dict[str, InPlace] = {}
PREFIX = "corpus"  # the modules of common.data that hold corpus builders


# kinds whose builder can write the evaluation data alone (``spec[EVALUATION_ONLY]``: no training files), for
# scoring a model that is not trained here
EVALUATION_ONLY = "evaluation_only"
EVALUATION_ONLY_KINDS: set[str] = set()
register_corpus = registrar(BUILDERS, "corpus kind")  # @register_corpus("mini") on a builder
reads_in_place = registrar(IN_PLACE, "corpus kind's in-place files")  # @reads_in_place("paper_vmsst")


def _load() -> None:
    import common.data

    for info in pkgutil.iter_modules(common.data.__path__):
        if info.name.startswith(PREFIX):
            importlib.import_module(f"common.data.{info.name}")


def builder(kind: str) -> Builder:
    """The builder of corpus ``kind``."""
    _load()
    if kind not in BUILDERS:
        raise ValueError(f"unknown corpus kind {kind!r}; registered: {', '.join(sorted(BUILDERS))}")
    return BUILDERS[kind]


def in_place(kind: str, data_root: Path, spec: dict[str, Any] | None = None) -> list[Path]:
    """The folders and files that corpus ``kind``'s builder reads in place with the config section ``spec`` (none
    for a kind that downloads everything it reads)."""
    builder(kind)  # an unknown kind is an error here too
    return IN_PLACE[kind](Path(data_root), spec or {}) if kind in IN_PLACE else []


def absent(paths: Iterable[Path]) -> list[Path]:
    """Those of ``paths`` that are missing; a path whose name is a glob pattern (``STS.input.*.txt``) is missing
    when nothing in its folder matches."""
    return [p for p in paths if not (any(p.parent.glob(p.name)) if glob.has_magic(p.name) else p.exists())]


def matching(folder: Path, pattern: str) -> list[Path]:
    """The files of ``folder`` (recursively where ``pattern`` says ``**``) that match ``pattern``, sorted; matching
    nothing is an error naming the folder and the pattern (a missing or emptied folder never reads as no data)."""
    found = sorted(Path(folder).glob(pattern))
    if not found:
        why = "" if Path(folder).is_dir() else " (the folder does not exist)"
        raise FileNotFoundError(f"{folder}: no file matches {pattern!r}{why}")
    return found
