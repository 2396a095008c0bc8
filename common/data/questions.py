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
    for lineno, rec in iter_json_lines(path):
        if not isinstance(rec, dict) or not {"id", "question", "answers"} <= rec.keys() or not rec["answers"]:
            raise DataFormatError(path, lineno, "expected {'id', 'question', 'answers': [...]} with an answer")
        yield rec


def read_questions(path: str | Path) -> list[dict[str, Any]]:
    return list(iter_questions(path))


def shards(records: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """``records`` in lists of at most ``size``."""
    it = iter(records)
    while shard := list(itertools.islice(it, size)):
        yield shard
