"""Training corpora read by position through memory maps: nothing holds a corpus in a Python list.

A training file (UTF-8, one example per line) gets an index of its line starts, built once in one streaming pass
and kept beside it (``<file>.lines.i64``, int64; ``<file>.nonblank.i64`` for the lines with text), written
atomically, so every rank of a job opens the same index. The file itself is memory-mapped: example ``i`` is
decoded when the trainer's sampler asks for it, so a rank reads only its own slice of each step's global batch
(:class:`common.training.sampler.StepSampler`) and a resumed run starts at its step's sample offset without reading
what came before. Resident memory is the pages touched, not the corpus (``scripts/bench_stream_rss.py``).

Tokenization stays in each paper's collator, per batch: the collators tokenize the two sides of a pair together
(TLM's joint input, RTL's targets, HICTL's reorderings), so one pre-tokenized form could not serve them all; a
fast tokenizer takes milliseconds per batch.

Sequences compose: :class:`TsvPairs` (two tab-separated columns), :class:`Mapped` (a function of each item, e.g.
adding a language id), :class:`Concat` (files one after another, in order).
"""
from __future__ import annotations

import bisect
import mmap
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from common.io import DataFormatError

T = TypeVar("T")
CHUNK = 1 << 24  # bytes per pass of the index builder


class Positional(Sequence[T]):
    """A sequence read by position: ``_get(i)`` for ``0 <= i < len``; negative positions and slices (a list of
    the items) as for a list."""

    def _get(self, i: int) -> T:
        raise NotImplementedError

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._get(i % len(self))


def _write_line_starts(path: Path, out) -> None:
    """Write the start offset of every line (a last line without a newline included) as int64, chunk by chunk:
    the index never sits in memory whole."""
    size = path.stat().st_size
    if size:
        out.write(np.zeros(1, dtype=np.int64).tobytes())
    offset = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            starts = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10).astype(np.int64) + offset + 1
            out.write(starts[starts < size].tobytes())  # no line after a final newline
            offset += len(chunk)


def _write_nonblank_starts(path: Path, out) -> None:
    """Write the start offsets of the lines with text besides whitespace (``str.strip``'s sense), in blocks."""
    block, offset = [], 0
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                block.append(offset)
            offset += len(raw)
            if len(block) >= 1 << 16:
                out.write(np.asarray(block, dtype=np.int64).tobytes())
                block.clear()
    out.write(np.asarray(block, dtype=np.int64).tobytes())


def _index(path: Path, skip_blank: bool) -> np.ndarray:
    """The line starts of ``path`` (int64, memory-mapped), from ``<file>.lines.i64`` / ``<file>.nonblank.i64``,
    written beside it (atomically) when missing or older than the file."""
    index = path.with_name(path.name + (".nonblank.i64" if skip_blank else ".lines.i64"))
    if not index.exists() or index.stat().st_mtime < path.stat().st_mtime:
        tmp = index.with_name(f"{index.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as out:
            (_write_nonblank_starts if skip_blank else _write_line_starts)(path, out)
        os.replace(tmp, index)
    if index.stat().st_size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.memmap(index, dtype=np.int64, mode="r")


class IndexedLines(Positional[str]):
    """The lines of a UTF-8 file by position (without their line ends; with ``skip_blank``, the non-blank ones).
    Bad UTF-8 is a :class:`DataFormatError` naming the file and the line."""

    def __init__(self, path: str | os.PathLike, *, skip_blank: bool = False):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such file")
        self.starts = _index(self.path, skip_blank)
        size = self.path.stat().st_size
        self._map: mmap.mmap | bytes = b""
        if size:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                self._map = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            finally:
                os.close(fd)
        self._size = size

    def __len__(self) -> int:
        return len(self.starts)

    def _get(self, i: int) -> str:
        start = int(self.starts[i])
        end = self._map.find(b"\n", start)
        raw = self._map[start:self._size if end < 0 else end]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataFormatError(self.path, self.line_number(i),
                                  f"invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
        text = text.removesuffix("\r")
        return text.lstrip("\ufeff") if start == 0 else text

    def line_number(self, i: int) -> int:
        """The 1-based line of the file that item ``i`` is (blank lines skipped by the index still count)."""
        return _count_newlines(self._map[:int(self.starts[i])]) + 1


def _count_newlines(data) -> int:
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))


class TsvPairs(Positional[tuple[str, str]]):
    """``a<TAB>b`` per line, as :func:`common.data.loaders.read_tsv_pairs` reads it, by position."""

    def __init__(self, path: str | os.PathLike):
        self.lines = IndexedLines(path)

    def __len__(self) -> int:
        return len(self.lines)

    def _get(self, i: int) -> tuple[str, str]:
        cols = self.lines[i].split("\t")
        if len(cols) != 2:
            raise DataFormatError(self.lines.path, self.lines.line_number(i),
                                  f"expected 2 tab-separated columns, found {len(cols)}")
        return cols[0], cols[1]


class Mapped(Positional[T]):
    """``fn(item)`` of each item of ``base``, computed when asked."""

    def __init__(self, base: Sequence[Any], fn: Callable[[Any], T]):
        self.base, self.fn = base, fn

    def __len__(self) -> int:
        return len(self.base)

    def _get(self, i: int) -> T:
        return self.fn(self.base[i])


class Concat(Positional[T]):
    """Sequences one after another (positions continue from one to the next)."""

    def __init__(self, parts: list[Sequence[T]]):
        self.parts = [p for p in parts if len(p)]
        self.ends = list(np.cumsum([len(p) for p in self.parts]).tolist())

    def __len__(self) -> int:
        return self.ends[-1] if self.ends else 0

    def _get(self, i: int) -> T:
        k = bisect.bisect_right(self.ends, i)
        return self.parts[k][i - (self.ends[k - 1] if k else 0)]


class Picked(Positional[T]):
    """The items of ``base`` at ``positions`` (an int64 array), in that order."""

    def __init__(self, base: Sequence[T], positions: np.ndarray):
        self.base, self.positions = base, np.asarray(positions, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.positions)

    def _get(self, i: int) -> T:
        return self.base[int(self.positions[i])]


def tagged(base: Sequence[tuple], *fields: Any) -> Mapped[tuple]:
    """Each tuple of ``base`` with ``fields`` appended (e.g. a pair and its language id)."""
    return Mapped(base, lambda item: (*item, *fields))
