"""Non-finite numbers (NaN, +inf, -inf): where they are, and the one error that names them.

A NaN does not fail loudly: it turns a Tatoeba accuracy of 100 into 5, a BUCC F1 into 0, and a JSON file into text
that is not JSON (Python writes a bare ``NaN``). So every number the repository writes or reads back is checked:
JSON files and records (:mod:`common.io`, :mod:`common.records`), the embeddings and metrics of every evaluation
(:mod:`common.eval.task_types`), a saved model's weights (:mod:`common.models.model_files`) and training's loss,
gradient norm and weights (:mod:`common.training.finite`). This module holds what they share; it imports nothing
heavy (tensors are only asked for their own methods), so the workflow's light modules may use it.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


class NonFiniteError(ValueError):
    """A number that must be finite is NaN or infinite; the message names where (a file, a key, a step, a row)."""


def first_nonfinite(value: Any, path: str = "") -> tuple[str, float] | None:
    """The key path (``scores/per_language/de/xx2en``; list items by index) and value of the first non-finite float
    in a JSON-like value (dicts in key order, lists in order), or None where every number is finite."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path or "the value", value)
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = first_nonfinite(item, f"{path}/{key}" if path else str(key))
        if found is not None:
            return found
    return None


def require_finite(value: Any, where: str) -> None:
    """Raise :class:`NonFiniteError` naming ``where`` and the key of the first non-finite number in ``value``."""
    found = first_nonfinite(value)
    if found is not None:
        raise NonFiniteError(f"{where}: {found[0]} is {found[1]}, not a finite number")


def nonfinite_rows(matrix: torch.Tensor) -> list[int]:
    """The indices of the rows of a (N, D) tensor that hold a NaN or an infinity (one host sync)."""
    bad = ~matrix.isfinite().all(dim=-1) if matrix.ndim > 1 else ~matrix.isfinite()  # (N,)
    rows: list[int] = bad.nonzero().flatten().tolist()
    return rows


def require_finite_rows(matrix: torch.Tensor, where: str, labels: list[str] | None = None) -> None:
    """Raise :class:`NonFiniteError` when a row of ``matrix`` (N, D) is not finite, naming ``where``, how many rows
    and the first (with its label, e.g. the sentence, where given)."""
    rows = nonfinite_rows(matrix)
    if rows:
        first = rows[0]
        label = f" ({labels[first][:80]!r})" if labels is not None and first < len(labels) else ""
        raise NonFiniteError(f"{where}: {len(rows)} of {matrix.shape[0]} rows are not finite (NaN or inf), the first "
                             f"row {first}{label}")
