"""Training corpora read by position from disk: nothing holds a corpus in a Python list or maps it into memory.

A training file (UTF-8, one example per line) gets an index of its lines' byte spans, built once in one streaming
pass and kept beside it (``<file>.lines.v2.i64``, int64 pairs; ``<file>.nonblank.v2.i64`` for the lines with
text), written atomically, so every rank of a job opens the same index. The index starts with the file's size and
modification time in nanoseconds: a file replaced by another of another size or time, even an older time (as
``cp -p`` or ``rsync -a`` leave it), gets a new index. (``v2``: the layout with that header; an index of the first
layout, ``<file>.lines.i64``, is never read.) Example ``i`` is read (two ``pread`` calls) and decoded when the
trainer's sampler asks for it, so a rank reads only its own slice of each step's global batch
(:class:`common.training.sampler.StepSampler`) and a resumed run starts at its step's sample offset without reading
what came before. Resident memory does not grow with the corpus (``scripts/bench_stream_rss.py``).

Tokenization stays in each paper's collator, per batch: the collators tokenize the two sides of a pair together
(TLM's joint input, RTL's targets, HICTL's reorderings), so one pre-tokenized form could not serve them all; a
fast tokenizer takes milliseconds per batch.

Sequences compose: :class:`TsvPairs` (two tab-separated columns), :class:`Mapped` (a function of each item, e.g.
adding a language id), :class:`Concat` (files one after another, in order), :class:`Picked` (items at given
positions; :func:`without_sources`: a training file less some of its sources).
"""
from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar, overload

import numpy as np

from common.io import DataFormatError

T = TypeVar("T")
CHUNK = 1 << 22  # bytes per pass of the index builder (its memory: about 3 x this)


class Positional(Sequence[T]):
    """A sequence read by position: ``_get(i)`` for ``0 <= i < len``; negative positions and slices (a list of
    the items) as for a list."""

    def _get(self, i: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._get(i % len(self))


def _write_line_spans(path: Path, out: IO[bytes]) -> None:
    """Write (start, end) byte offsets of every line, line end excluded (a last line without a newline included),
    as int64 pairs, chunk by chunk: the index never sits in memory whole."""
    size, offset, start = path.stat().st_size, 0, 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10).astype(np.int64) + offset
            if len(ends):
                starts = np.concatenate([[start], ends[:-1] + 1])
                out.write(np.stack([starts, ends], axis=1).tobytes())
                start = int(ends[-1]) + 1
            offset += len(chunk)
    if start < size:
        out.write(np.array([start, size], dtype=np.int64).tobytes())


def _write_nonblank_spans(path: Path, out: IO[bytes]) -> None:
    """Write (start, end) of the lines with text besides whitespace (``str.strip``'s sense), in blocks."""
    block: list[int] = []
    offset = 0
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                block += (offset, offset + len(raw.rstrip(b"\n")))
            offset += len(raw)
            if len(block) >= 1 << 17:
                out.write(np.asarray(block, dtype=np.int64).tobytes())
                block.clear()
    out.write(np.asarray(block, dtype=np.int64).tobytes())


def _stamp(path: Path) -> bytes:
    """The index's header: the file's size and modification time (ns), as two int64."""
    st = path.stat()
    return np.array([st.st_size, st.st_mtime_ns], dtype=np.int64).tobytes()


def _index(path: Path, skip_blank: bool) -> Path:
    """``<file>.lines.v2.i64`` / ``<file>.nonblank.v2.i64`` beside ``path``: the file's stamp, then (start, end)
    int64 pairs; written (atomically) when missing or stamped for another version of the file."""
    index = path.with_name(path.name + (".nonblank.v2.i64" if skip_blank else ".lines.v2.i64"))
    stamp = _stamp(path)  # before the pass: a file changed during it gets a new index the next time
    try:
        with open(index, "rb") as fh:
            fresh = fh.read(16) == stamp
    except FileNotFoundError:
        fresh = False
    if not fresh:
        tmp = index.with_name(f"{index.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as out:
            out.write(stamp)
            (_write_nonblank_spans if skip_blank else _write_line_spans)(path, out)
        os.replace(tmp, index)
    return index


class IndexedLines(Positional[str]):
    """The lines of a UTF-8 file by position (without their line ends; with ``skip_blank``, the non-blank ones).
    Each item is two positioned reads (``os.pread``: its span in the index, then its bytes), so nothing of the
    file or the index is mapped into the process: resident memory stays flat however large the corpus (a memory
    map would count every page it touched, ``scripts/bench_stream_rss.py``). Bad UTF-8 is a
    :class:`DataFormatError` naming the file and the line."""

    def __init__(self, path: str | os.PathLike[str], *, skip_blank: bool = False):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such file")
        index = _index(self.path, skip_blank)
        self._len = index.stat().st_size // 16 - 1  # less the header
        self._index_fd, self._fd = os.open(index, os.O_RDONLY), os.open(self.path, os.O_RDONLY)

    def __del__(self) -> None:
        for fd in (getattr(self, "_index_fd", None), getattr(self, "_fd", None)):
            if fd is not None:
                os.close(fd)

    def __len__(self) -> int:
        return self._len

    def span(self, i: int) -> tuple[int, int]:
        start, end = np.frombuffer(os.pread(self._index_fd, 16, 16 * (i + 1)), dtype=np.int64).tolist()
        return start, end

    def _get(self, i: int) -> str:
        start, end = self.span(i)
        raw = os.pread(self._fd, end - start, start)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataFormatError(self.path, self.line_number(i),
                                  f"invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
        text = text.removesuffix("\r")
        return text.lstrip("\ufeff") if start == 0 else text

    def line_number(self, i: int) -> int:
        """The 1-based line of the file that item ``i`` is (blank lines skipped by the index still count)."""
        start, newlines = self.span(i)[0], 0
        with open(self.path, "rb") as fh:
            while start > 0 and (chunk := fh.read(min(CHUNK, start))):
                newlines += _count_newlines(chunk)
                start -= len(chunk)
        return newlines + 1


def _count_newlines(data: bytes) -> int:
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))


class TsvPairs(Positional[tuple[str, str]]):
    """``a<TAB>b`` per line, as :func:`common.data.loaders.read_tsv_pairs` reads it, by position."""

    def __init__(self, path: str | os.PathLike[str]):
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


def tagged(base: Sequence[tuple[Any, ...]], *fields: Any) -> Mapped[tuple[Any, ...]]:
    """Each tuple of ``base`` with ``fields`` appended (e.g. a pair and its language id)."""
    return Mapped(base, lambda item: (*item, *fields))


def without_sources(pairs: Sequence[T], spans: Sequence[Sequence[Any]], exclude: Collection[str],
                    where: str | os.PathLike[str]) -> Sequence[T]:
    """A training file's items less those of the sources in ``exclude``; ``spans`` are the file's runs of one source,
    ``[source, count]`` in file order (a mini corpus manifest's ``train_sources``; ``where`` names the file)."""
    if sum(int(n) for _, n in spans) != len(pairs):
        raise DataFormatError(where, None, f"the manifest's train_sources count {sum(int(n) for _, n in spans)} "
                                           f"pairs, the file has {len(pairs)}")
    starts = np.cumsum([0, *(int(n) for _, n in spans)])
    keep = [np.arange(starts[k], starts[k + 1]) for k, (source, _) in enumerate(spans) if source not in exclude]
    return Picked(pairs, np.concatenate(keep) if keep else np.zeros(0, dtype=np.int64))
