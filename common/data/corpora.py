"""The corpus registry: each corpus module (``common/data/corpus*.py``) registers the builder of its kinds with
:func:`register_corpus`; :func:`builder` imports those modules once, by their names' prefix, so the registry
names none of them.

A builder writes a corpus under ``out`` and returns its manifest; it is called as
``build(out, data_root, spec, downloader, cleaner)`` (paper kinds download through ``downloader`` and pass their
training bitext through ``cleaner``, a :class:`common.data.cleaning.PairCleaner`).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from common.registry import registrar

Builder = Callable[..., dict[str, Any]]
BUILDERS: dict[str, Builder] = {}
PREFIX = "corpus"  # the modules of common.data that hold corpus builders


register_corpus = registrar(BUILDERS, "corpus kind")  # @register_corpus("mini") on a builder


def builder(kind: str) -> Builder:
    """The builder of corpus ``kind``."""
    import common.data

    for info in pkgutil.iter_modules(common.data.__path__):
        if info.name.startswith(PREFIX):
            importlib.import_module(f"common.data.{info.name}")
    if kind not in BUILDERS:
        raise ValueError(f"unknown corpus kind {kind!r}; registered: {', '.join(sorted(BUILDERS))}")
    return BUILDERS[kind]
