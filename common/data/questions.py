"""Question files of question retrieval (JSON lines ``{"id", "question", "answers": [...]}``, an optional
``"exclude"``: the bank id a query must not retrieve), streamed and in shards; the protocol is
:mod:`common.eval.question_retrieval`."""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from common.io import DataFormatError, iter_json_lines


def iter_questions(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a JSON-lines question file, streamed; a malformed line is an error naming file and line."""
    for _, rec in _numbered(path):
        yield rec


def _numbered(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, rec in iter_json_lines(path):
        if (not isinstance(rec, dict) or not {"id", "question", "answers"} <= rec.keys()
                or not isinstance(rec["question"], str) or not isinstance(rec["answers"], list) or not rec["answers"]
                or not all(isinstance(a, str) for a in rec["answers"])):  # a string's letters would be its answers
            raise DataFormatError(path, lineno, "expected {'id', 'question': str, 'answers': [str, ...]} with an "
                                  "answer")
        yield lineno, rec


def read_questions(path: str | Path) -> list[dict[str, Any]]:
    """A query file whole: at least one question, each id once."""
    records, seen = [], set()
    for lineno, rec in _numbered(path):
        if rec["id"] in seen:
            raise DataFormatError(path, lineno, f"question id {rec['id']!r} given twice")
        seen.add(rec["id"])
        records.append(rec)
    if not records:
        raise DataFormatError(path, None, "no questions")
    return records


def shards(records: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """``records`` in lists of at most ``size``."""
    it = iter(records)
    while shard := list(itertools.islice(it, size)):
        yield shard
