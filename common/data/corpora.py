"""The corpus registry: each corpus module (``common/data/corpus*.py``) registers the builder of its kinds with
:func:`register_corpus`; :func:`builder` imports those modules once, by their names' prefix, so the registry
names none of them.

A builder writes a corpus under ``out`` and returns its manifest; it is called as
``build(out, data_root, spec, downloader, cleaner)`` (paper kinds download through ``downloader`` and pass their
training bitext through ``cleaner``, a :class:`common.data.cleaning.PairCleaner`).

A kind that reads files in place from ``data_root`` (public evaluation sets that no pinned URL serves) also
registers, with :func:`reads_in_place`, a function of ``data_root`` listing them (a glob pattern for a folder
whose matching files are read); :func:`in_place` is what the preflight and the GPU acceptance look for, with
:func:`absent`, before anything runs.
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
InPlace = Callable[[Path], list[Path]]  # data_root -> the folders and files a kind reads there
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


def in_place(kind: str, data_root: Path) -> list[Path]:
    """The folders and files under ``data_root`` that corpus ``kind``'s builder reads in place (none for a kind
    that downloads everything it reads)."""
    builder(kind)  # an unknown kind is an error here too
    return IN_PLACE[kind](Path(data_root)) if kind in IN_PLACE else []


def absent(paths: Iterable[Path]) -> list[Path]:
    """Those of ``paths`` that are missing; a path whose name is a glob pattern (``STS.input.*.txt``) is missing
    when nothing in its folder matches."""
    return [p for p in paths if not (any(p.parent.glob(p.name)) if glob.has_magic(p.name) else p.exists())]
