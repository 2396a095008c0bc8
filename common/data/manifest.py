"""The corpus manifest (``results/<scale>/<experiment>/corpus/manifest.json``) as a typed record: what every job
after the corpus job reads to find its training pairs and evaluation data. The corpus job checks it against
:class:`CorpusManifest`'s schema before writing it (the schema goes beside it) and every reader checks it again
(:func:`load_manifest`): a key no builder writes, a missing one or a wrong type is an error naming the file and the
field, not a ``KeyError`` in a later job. The code reads it as the dict it is."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.data.corpus_parts import BUCC_SPLITS
from common.io import read_json, write_json
from common.records import check, write_schema


@dataclass
class CorpusManifest:
    """A corpus job's manifest: the training pairs, the evaluation data's places, the leakage counts."""

    kind: str  # the builder (common/data/corpora.py): synthetic, mini, files, paper, paper_enzh, paper_hictl,
    # paper_vmsst
    train: dict[str, str]  # a training language (or language-pivot) -> its TSV of pairs
    train_languages: list[str]
    leakage: dict[str, Any]  # what the leakage rule dropped (common/data/leakage.py), per language and in total
    tatoeba_dir: str
    tatoeba_languages: list[str]
    bucc_dir: str
    bucc_pairs: list[str]
    # BUCC 2018's (tune, report) splits (paper scale): the two every BUCC task reads (common/eval/builtin_tasks.py)
    bucc_splits: dict[str, str] | None = field(default=None, metadata={"schema": {
        "required": ["tune", "test"], "additionalProperties": False,
        "properties": {"tune": {"enum": list(BUCC_SPLITS)}, "test": {"enum": list(BUCC_SPLITS)}}}})
    bucc_benchmark: dict[str, Any] | None = None  # mini's BUCC-style benchmark, its counts per pair
    sts_dir: str | None = None
    sts_kind: str | None = None  # senteval7 or synthetic
    sts17: list[dict[str, Any]] | None = None  # the scorable STS 2017 sets: name, languages, input, gold
    sts17_excluded: dict[str, str] | None = None  # the sets left out, each with why
    nli_dir: str | None = None
    nli_languages: list[str] | None = None
    nli_train: str | None = None  # English NLI pairs (MoCo-BERT's multi-task data, the XNLI fine-tuning)
    xnli_train: str | None = None
    xnli_translate_train: dict[str, Any] | None = None
    pair_classification: dict[str, Any] | None = None  # PAWS-X (HICTL's XTREME tasks)
    token_classification: dict[str, Any] | None = None  # UD-POS, PAN-X
    qa: dict[str, Any] | None = None  # XQuAD, MLQA, TyDiQA
    question_retrieval: dict[str, Any] | None = None  # VMSST's NQ / MKQA retrieval
    translation: dict[str, Any] | None = None  # NMT fine-tuning and test pairs (HICTL)
    monolingual: dict[str, str] | None = None  # HICTL's CC-100 text per language
    sampled: dict[str, int] | None = None  # MoCo-BERT's Table 7: pairs sampled from each corpus
    opus_skipped: list[str] | None = None  # OPUS corpora without the language pair
    cleaning: dict[str, Any] | None = None  # what the pair cleaner dropped from downloaded bitext (paper kinds)
    # a language -> its file's pairs as runs of one source, [[source, pairs], ...] in file order (mini)
    train_sources: dict[str, list[list[Any]]] | None = None


def write_manifest(out: str | os.PathLike[str], manifest: dict[str, Any]) -> Path:
    """``<out>/manifest.json``, checked first, with ``CorpusManifest.schema.json`` beside it."""
    path = Path(out) / "manifest.json"
    check(manifest, CorpusManifest, path)
    write_json(path, manifest)
    write_schema(out, CorpusManifest)
    return path


def load_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A corpus manifest, checked against :class:`CorpusManifest`'s schema."""
    manifest: dict[str, Any] = read_json(path)
    check(manifest, CorpusManifest, path)
    return manifest


def source_languages(manifest: dict[str, Any]) -> dict[str, list[str]]:
    """Groups of training languages by source, from ``train_sources`` (empty without it): ``"<source>"`` -> the
    languages with pairs of that source, ``"<source> alone"`` -> those with pairs of no other source."""
    by_lang = {lang: {source for source, _ in spans} for lang, spans in (manifest.get("train_sources") or {}).items()}
    sources = sorted({s for found in by_lang.values() for s in found})
    groups = {s: sorted(lang for lang, found in by_lang.items() if s in found) for s in sources}
    groups |= {f"{s} alone": sorted(lang for lang, found in by_lang.items() if found == {s}) for s in sources}
    return groups
