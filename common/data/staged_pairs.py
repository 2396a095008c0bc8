"""The parallel training sources staged in ``data_root`` for the mini scale, one ``<iso3>-eng.tsv.gz``
per language against English:

* ``anki_pairs/``: manythings.org's Anki files (Tatoeba sentences; ``english<TAB>foreign``). They share Tatoeba's
  domain and hundreds of their sentences are Tatoeba test sentences: the leakage rule (normalised match,
  :mod:`common.data.leakage`) drops them and the corpus reports the count per source and language;
* ``ntrex128/``: NTREX-128, 1,997 news sentences with professional translations per language (same layout);
* ``bible_corpus/``: verse-aligned New Testaments or partial Bibles against the KJV (``verse id<TAB>english<TAB>
  foreign``). Its MANIFEST.md flags Estonian verses cut short in the source file; ``min_length_ratio`` drops a pair
  whose foreign side is shorter than that fraction of the English one (0.25 as the manifest suggests).

Every file is checked against the sha256 its folder's MANIFEST.md lists before it is read; a row with another
number of columns stops with the file and line (:class:`common.io.DataFormatError`)."""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.data.loaders import read_tsv
from common.io import DataFormatError, read_lines, sha256_file

COLUMNS = {"anki_pairs": 2, "ntrex128": 2, "bible_corpus": 3}


@dataclass(frozen=True)
class Selection:
    """What a corpus config takes of one source: languages, the share of each file and an optional cap per language
    (a seeded sample, in file order) and the length-ratio filter."""

    languages: tuple[str, ...]
    share: float = 1.0
    max_pairs: int | None = None
    min_length_ratio: float = 0.0
    seed: int = 1

    @classmethod
    def from_config(cls, spec: dict[str, Any]) -> Selection:
        return cls(tuple(spec["languages"]), float(spec.get("share", 1.0)), spec.get("max_pairs"),
                   float(spec.get("min_length_ratio", 0.0)), int(spec.get("seed", 1)))


def manifest_checksums(folder: Path) -> dict[str, str]:
    """File name -> sha256 from the folder's MANIFEST.md table (the row's cells under 'file' and 'sha256')."""
    path = folder / "MANIFEST.md"
    header: list[str] | None = None
    sums: dict[str, str] = {}
    for lineno, line in enumerate(read_lines(path), start=1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        if header is None and "file" in cells and "sha256" in cells:
            header = cells
        elif header is not None and len(cells) == len(header):
            name = cells[header.index("file")]
            if name in sums:
                raise DataFormatError(path, lineno, f"{name} listed twice")
            sums[name] = cells[header.index("sha256")]
    if not sums:
        raise DataFormatError(path, None, "no table with 'file' and 'sha256' columns")
    return sums


def read_source(folder: Path, lang: str) -> list[tuple[str, str]]:
    """(foreign, English) pairs of one language of a staged source, in file order, after the checksum check."""
    source = folder.name
    if source not in COLUMNS:
        raise ValueError(f"unknown parallel source {source!r}; expected one of {sorted(COLUMNS)}")
    path = folder / f"{lang}-eng.tsv.gz"
    expected = manifest_checksums(folder).get(path.name)
    if expected is None:
        raise FileNotFoundError(f"{folder / 'MANIFEST.md'} lists no {path.name}")
    if sha256_file(path) != expected:
        raise DataFormatError(path, None, f"sha256 differs from the one {folder / 'MANIFEST.md'} lists")
    rows = read_tsv(path, COLUMNS[source])
    return [(row[-1], row[-2]) for row in rows]


def select(pairs: list[tuple[str, str]], sel: Selection, lang: str) -> tuple[list[tuple[str, str]], int]:
    """The pairs ``sel`` keeps of one language's file and how many the length-ratio filter dropped: the filter
    first, then a seeded sample of ``share`` of them, at most ``max_pairs`` (in file order). A sample, not the
    head: the Anki files are sorted by length, their first pairs the shortest."""
    kept = [(xx, en) for xx, en in pairs if len(xx) >= sel.min_length_ratio * len(en)]
    short = len(pairs) - len(kept)
    size = round(sel.share * len(kept))
    if sel.max_pairs is not None:
        size = min(size, sel.max_pairs)
    if size < len(kept):
        chosen = sorted(random.Random(f"{sel.seed}:{lang}").sample(range(len(kept)), size))
        kept = [kept[i] for i in chosen]
    return kept, short
