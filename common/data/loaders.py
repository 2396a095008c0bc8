"""Loaders for the real data formats the four papers evaluate on.

Each loader validates its input and raises :class:`common.io.DataFormatError`
naming the file and the 1-based line: misaligned line counts, bad UTF-8,
malformed or out-of-range scores, wrong column counts, unknown gold IDs. Empty
is an error too: a Tatoeba side with a blank line, a BUCC side or gold file
without a line (nothing to score is never scored as 0).
"""
from __future__ import annotations

import csv
import io
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from common.io import DataFormatError as DataFormatError  # re-exported: callers catch loaders.DataFormatError
from common.io import iter_lines
from common.io import read_lines as read_lines

PathLike = str | os.PathLike[str]

NLI_LABELS = ("entailment", "neutral", "contradiction")


# --------------------------------------------------------------------------- parallel text
def read_parallel(src_path: PathLike, trg_path: PathLike) -> list[tuple[str, str]]:
    """Line-aligned parallel files (``.gz`` allowed): line i of one translates line i of the other."""
    src, trg = read_lines(src_path), read_lines(trg_path)
    if len(src) != len(trg):
        raise DataFormatError(
            trg_path, min(len(src), len(trg)) + 1,
            f"misaligned parallel files: {src_path} has {len(src)} lines, {trg_path} has {len(trg)}",
        )
    return list(zip(src, trg))


def iter_parallel(src_path: PathLike, trg_path: PathLike) -> Iterator[tuple[str, str]]:
    """:func:`read_parallel` streamed, for files of any size: the pairs one at a time. A file that ends before the
    other is an error naming the other file and its first line without a translation, raised when the stream gets
    there (what came before has been yielded)."""
    for n, (a, b) in enumerate(itertools.zip_longest(iter_lines(src_path), iter_lines(trg_path)), start=1):
        if a is None or b is None:
            short, longer = (src_path, trg_path) if a is None else (trg_path, src_path)
            raise DataFormatError(longer, n, f"misaligned parallel files: {short} ends after {n - 1} lines, "
                                             f"{longer} goes on")
        yield a, b


def read_tsv(path: PathLike, ncols: int, *, header: bool = False) -> list[list[str]]:
    """Tab-separated rows with exactly ``ncols`` columns (a row with more or fewer is an error)."""
    rows = read_lines(path)
    out = []
    for lineno, line in enumerate(rows, start=1):
        if header and lineno == 1:
            continue
        if line == "" and lineno == len(rows):
            continue
        cols = line.split("\t")
        if len(cols) != ncols:
            raise DataFormatError(path, lineno, f"expected {ncols} tab-separated columns, found {len(cols)}")
        out.append(cols)
    return out


def read_tsv_pairs(path: PathLike) -> list[tuple[str, str]]:
    """``sentence1<TAB>sentence2`` per line."""
    return [(a, b) for a, b in read_tsv(path, 2)]


# --------------------------------------------------------------------------- Tatoeba
def tatoeba_paths(root: PathLike, lang: str) -> tuple[Path, Path]:
    root = Path(root)
    return root / f"tatoeba.{lang}-eng.{lang}", root / f"tatoeba.{lang}-eng.eng"


def read_tatoeba(root: PathLike, lang: str) -> tuple[list[str], list[str]]:
    """LASER Tatoeba v1: ``tatoeba.xxx-eng.xxx`` and ``tatoeba.xxx-eng.eng``, line-aligned."""
    src, trg = tatoeba_paths(root, lang)
    pairs = read_parallel(src, trg)
    if not pairs:  # an accuracy over no sentences is undefined (a mean of nothing)
        raise DataFormatError(src, None, f"no Tatoeba pairs for {lang}")
    for path, side in ((src, 0), (trg, 1)):  # a blank query or key would be scored like a sentence
        blank = next((n for n, p in enumerate(pairs, start=1) if not p[side].strip()), None)
        if blank is not None:
            raise DataFormatError(path, blank, "blank line; every line of a Tatoeba file is a sentence")
    return [p[0] for p in pairs], [p[1] for p in pairs]


def tatoeba_languages(root: PathLike) -> list[str]:
    """The languages of a Tatoeba v1 folder (a folder without any is an error naming it, never no languages)."""
    from common.data.corpora import matching

    langs = sorted({p.name.split(".")[1].split("-")[0] for p in matching(Path(root), "tatoeba.*-eng.eng")})
    return [lang for lang in langs if lang != "eng"]


# --------------------------------------------------------------------------- BUCC
@dataclass
class BuccSplit:
    """One split of a BUCC 2017/2018 language pair (``xx-en``)."""

    src: dict[str, str]
    trg: dict[str, str]
    gold: set[tuple[str, str]] = field(default_factory=set)


def bucc_paths(root: PathLike, pair: str, split: str) -> tuple[Path, Path, Path]:
    src_lang, trg_lang = pair.split("-")
    base = Path(root) / f"{pair}.{split}"
    return Path(f"{base}.{src_lang}"), Path(f"{base}.{trg_lang}"), Path(f"{base}.gold")


def _read_id_sentences(path: PathLike) -> dict[str, str]:
    out: dict[str, str] = {}
    for lineno, line in enumerate(read_lines(path), start=1):
        if line == "":
            raise DataFormatError(path, lineno, "empty line; expected 'id<TAB>sentence'")
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0]:
            raise DataFormatError(path, lineno, "expected 'id<TAB>sentence'")
        if parts[0] in out:
            raise DataFormatError(path, lineno, f"duplicate sentence id {parts[0]!r}")
        out[parts[0]] = parts[1]
    if not out:
        raise DataFormatError(path, None, "no sentences; a BUCC side needs 'id<TAB>sentence' lines")
    return out


def read_bucc(root: PathLike, pair: str, split: str) -> BuccSplit:
    """BUCC files ``{pair}.{split}.{lang}`` (``id<TAB>sentence``) and ``{pair}.{split}.gold``
    (``src_id<TAB>trg_id``); the gold file is optional (the official test split has none)."""
    src_path, trg_path, gold_path = bucc_paths(root, pair, split)
    src, trg = _read_id_sentences(src_path), _read_id_sentences(trg_path)
    gold: set[tuple[str, str]] = set()
    if gold_path.exists():
        for lineno, line in enumerate(read_lines(gold_path), start=1):
            parts = line.split("\t")
            if len(parts) != 2:
                raise DataFormatError(gold_path, lineno, "expected 'src_id<TAB>trg_id'")
            if parts[0] not in src:
                raise DataFormatError(gold_path, lineno, f"unknown source id {parts[0]!r} (not in {src_path})")
            if parts[1] not in trg:
                raise DataFormatError(gold_path, lineno, f"unknown target id {parts[1]!r} (not in {trg_path})")
            gold.add((parts[0], parts[1]))
        if not gold:  # F1 against no gold pairs is 0 whatever is mined: never a score
            raise DataFormatError(gold_path, None, "no gold pairs; a gold file needs 'src_id<TAB>trg_id' lines")
    return BuccSplit(src=src, trg=trg, gold=gold)


# --------------------------------------------------------------------------- STS
@dataclass
class StsPairs:
    """Scored sentence pairs of one STS subset."""

    name: str
    sent1: list[str]
    sent2: list[str]
    scores: list[float]

    def __len__(self) -> int:
        return len(self.scores)


def _parse_score(path: PathLike, lineno: int, text: str, lo: float = 0.0, hi: float = 5.0) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataFormatError(path, lineno, f"malformed score {text!r}") from None
    if not math.isfinite(value) or not lo <= value <= hi:
        raise DataFormatError(path, lineno, f"score {value} outside [{lo}, {hi}]")
    return value


def _scored(path: PathLike, pairs: StsPairs) -> StsPairs:
    """``pairs``, if a correlation with its scores is defined: at least two pairs, not all scored alike."""
    if len(set(pairs.scores)) < 2:
        raise DataFormatError(path, None, f"{len(pairs.scores)} scored pairs, {len(set(pairs.scores))} distinct "
                              "score(s): a correlation needs two different scores")
    return pairs


def read_sts_senteval(input_path: PathLike, gold_path: PathLike, name: str | None = None) -> StsPairs:
    """SentEval STS12-16 layout: ``STS.input.X.txt`` (``s1<TAB>s2``) and ``STS.gs.X.txt``
    (one score per line; an empty gold line marks an unscored pair, skipped as SentEval does)."""
    inputs, golds = read_lines(input_path), read_lines(gold_path)
    if golds and golds[-1] == "" and len(golds) == len(inputs) + 1:
        golds = golds[:-1]
    if len(inputs) != len(golds):
        raise DataFormatError(gold_path, min(len(inputs), len(golds)) + 1,
                              f"{input_path} has {len(inputs)} lines but {gold_path} has {len(golds)}")
    s1, s2, sc = [], [], []
    for lineno, (line, gold) in enumerate(zip(inputs, golds), start=1):
        if gold.strip() == "":
            continue
        cols = line.split("\t")
        if len(cols) != 2:  # a third column would be a tab inside a sentence, which would cut sentence 2
            raise DataFormatError(input_path, lineno, f"expected 'sentence1<TAB>sentence2', found {len(cols)} columns")
        s1.append(cols[0])
        s2.append(cols[1])
        sc.append(_parse_score(gold_path, lineno, gold.strip()))
    return _scored(gold_path, StsPairs(name or Path(input_path).name, s1, s2, sc))


def read_stsb(path: PathLike) -> StsPairs:
    """Original STS Benchmark TSV: genre, file, year, id, score, s1, s2 [, extra columns]."""
    s1, s2, sc = [], [], []
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) < 7:
            raise DataFormatError(path, lineno, f"expected at least 7 tab-separated columns, found {len(cols)}")
        sc.append(_parse_score(path, lineno, cols[4]))
        s1.append(cols[5])
        s2.append(cols[6])
    return _scored(path, StsPairs(Path(path).name, s1, s2, sc))


def read_stsb_multi_mt(path: PathLike) -> StsPairs:
    """stsb-multi-mt CSV (no header): sentence1,sentence2,score."""
    text = "\n".join(read_lines(path))
    s1, s2, sc = [], [], []
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row:
            continue
        if len(row) != 3:
            raise DataFormatError(path, lineno, f"expected 3 CSV fields, found {len(row)}")
        s1.append(row[0])
        s2.append(row[1])
        sc.append(_parse_score(path, lineno, row[2]))
    return _scored(path, StsPairs(Path(path).name, s1, s2, sc))


def read_sick(path: PathLike) -> StsPairs:
    """SICK (SentEval split files): header then pair_ID, sentence_A, sentence_B, relatedness (1-5), judgment."""
    rows = read_lines(path)
    if not rows or not rows[0].startswith("pair_ID"):
        raise DataFormatError(path, 1, "expected a header line starting with 'pair_ID'")
    s1, s2, sc = [], [], []
    for lineno, line in enumerate(rows[1:], start=2):
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) < 4:
            raise DataFormatError(path, lineno, f"expected at least 4 tab-separated columns, found {len(cols)}")
        s1.append(cols[1])
        s2.append(cols[2])
        sc.append(_parse_score(path, lineno, cols[3], 1.0, 5.0))
    return _scored(path, StsPairs(Path(path).name, s1, s2, sc))


def read_sts17(input_path: PathLike, gold_path: PathLike, *, allow_gold_prefix: bool = False) -> StsPairs:
    """SemEval-2017 Task 1: ``STS.input.trackN.xx-yy.txt`` + ``STS.gs.trackN.xx-yy.txt``.

    The distributed tr-en input has 500 lines but its gold file 250 scores, and nothing in
    the release says which 250 lines are scored. The loader refuses such a mismatch unless
    ``allow_gold_prefix=True``, which scores the first ``len(gold)`` input lines; callers that
    opt in must report that assumption beside the number.
    """
    inputs, golds = read_lines(input_path), [g for g in read_lines(gold_path)]
    while golds and golds[-1].strip() == "":
        golds.pop()
    if len(inputs) != len(golds):
        if not (allow_gold_prefix and len(golds) < len(inputs)):
            raise DataFormatError(
                gold_path, len(golds) + 1,
                f"{gold_path} has {len(golds)} scores for {len(inputs)} lines of {input_path}; "
                "the alignment is not documented (pass allow_gold_prefix=True to score the first lines)")
        inputs = inputs[: len(golds)]
    s1, s2, sc = [], [], []
    for lineno, (line, gold) in enumerate(zip(inputs, golds), start=1):
        cols = line.split("\t")
        if len(cols) != 2:
            raise DataFormatError(input_path, lineno, f"expected 2 tab-separated columns, found {len(cols)}")
        s1.append(cols[0])
        s2.append(cols[1])
        sc.append(_parse_score(gold_path, lineno, gold.strip()))
    return _scored(gold_path, StsPairs(Path(input_path).name, s1, s2, sc))


# --------------------------------------------------------------------------- NLI
@dataclass
class NliExamples:
    premise: list[str]
    hypothesis: list[str]
    label: list[int]  # index into NLI_LABELS

    def __len__(self) -> int:
        return len(self.label)


def read_xnli_tsv(path: PathLike) -> NliExamples:
    """XTREME XNLI TSV: premise<TAB>hypothesis<TAB>label (entailment/neutral/contradiction)."""
    prem, hyp, lab = [], [], []
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            raise DataFormatError(path, lineno, f"expected 3 tab-separated columns, found {len(cols)}")
        label = cols[2].strip()
        if label not in NLI_LABELS:
            raise DataFormatError(path, lineno, f"unknown label {label!r}; expected one of {NLI_LABELS}")
        prem.append(cols[0])
        hyp.append(cols[1])
        lab.append(NLI_LABELS.index(label))
    return NliExamples(prem, hyp, lab)


def read_pawsx_tsv(path: PathLike) -> NliExamples:
    """PAWS-X TSV (x-final release): a header ``id<TAB>sentence1<TAB>sentence2<TAB>label``, label 0 or 1
    (paraphrase); returned as sentence pairs (``premise`` = sentence1) with integer labels."""
    a, b, lab = [], [], []
    lines = read_lines(path)
    if not lines or lines[0].split("\t")[:4] != ["id", "sentence1", "sentence2", "label"]:
        raise DataFormatError(path, 1, "expected the header 'id, sentence1, sentence2, label'")
    for lineno, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        cols = line.split("\t")
        if len(cols) != 4 or cols[3].strip() not in ("0", "1"):
            raise DataFormatError(path, lineno, "expected id<TAB>sentence1<TAB>sentence2<TAB>label (0 or 1)")
        a.append(cols[1])
        b.append(cols[2])
        lab.append(int(cols[3]))
    return NliExamples(a, b, lab)


# --------------------------------------------------------------------------- multi30k
def read_multi30k(root: PathLike, split: str, src_lang: str, trg_lang: str) -> list[tuple[str, str]]:
    """Multi30k task1 raw: ``{split}.{lang}.gz`` line-aligned across languages."""
    root = Path(root)
    return read_parallel(root / f"{split}.{src_lang}.gz", root / f"{split}.{trg_lang}.gz")
