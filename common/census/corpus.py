"""The census of the paper-scale corpus jobs (rule ``corpus``): host memory and disk, before anything is submitted.

A paper-scale corpus job (``common/data/corpus_*.py``) downloads its sources, reads every evaluation set into the
leakage rule's filter, then draws each language's sample in one pass (reservoir sampling), filters it and writes it
before the next language is drawn. What it holds at once is therefore the filter and one language's sample
(MoCo-BERT's one language pools its corpora for the de-duplication). Counted here from the paper's config:

* **samples**: the pairs (or CC-100 lines) kept per language, at most, from the config's caps;
* **held bytes**: what CPython allocates to hold a pair as the sampler does (a tuple of two ``str``), measured with
  ``tracemalloc`` on NTREX-128 (``data_root/ntrex128``: 1,997 human-translated news sentences per language, 73
  languages, sentences of the length of the papers' news, UN and Europarl text; subtitles and Tanzil verses are
  shorter) -- the largest language's mean, so scripts stored in 2 or 4 bytes a character are covered; a line: one
  side of it;
* **the leakage filter**: the evaluation sentences the job reads, at most (the public sizes of
  :data:`common.census.evaluation.SETS`; both sides of every pair), each a normalized ``str`` in a set, measured
  the same way;
* **disk**: the training text written (UTF-8, a tab and a newline a pair), at the same largest mean;
* **mem_mb** for Slurm: (filter + the largest sample) x ``MARGIN`` + the interpreter with the corpus code imported
  (measured: a fresh process's peak RSS), which the ``corpus`` rule reads at paper scale.

Not counted: the downloads (their sizes are known only online: the preflight reads each Content-Length and checks
the disk) and the wall time, which the downloads and their decompression bound (the config's
``resources.corpus.runtime``). HICTL's per-setting NMT data jobs (``nmt_data``) stream their files
(``common/nmt/data.py``, ``common/nmt/binarize.py``: ``CHUNK`` pairs tokenized at a time) and hold the test
sentences' filter only.
"""
from __future__ import annotations

import gzip
import logging
import math
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from common.census import evaluation
from common.census.estimate import GIB

log = logging.getLogger(__name__)
MARGIN = 1.5  # the reservoir's list growth, sources whose sentences run longer than news
MIB = 2**20
SNLI_TRAIN = 550_152  # Bowman et al. 2015: SNLI 1.0 train pairs
NMT_TEST_PAIRS = 10_000  # each IWSLT tst / WMT newstest / FLoRes test set: below 10k pairs (IWSLT'14 De-En: 6,750)


@dataclass(frozen=True)
class Sizes:
    """Bytes per item, measured (:func:`measure`)."""

    held_pair: float  # a (foreign, English) tuple of two str, as the sampler holds it
    held_line: float  # one str
    filter_sentence: float  # a normalized str in the leakage filter's set
    disk_pair: float  # UTF-8 text, a tab and a newline
    language: str  # the NTREX-128 language whose pairs take the most bytes held
    interpreter_mb: float  # peak RSS of a process that imported the corpus code


# ``...``: mypy cannot match the callers' default-argument lambdas against a no-argument ``Callable[[], object]``
def _held_bytes(make: Callable[..., object]) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        obj = make()
        size = tracemalloc.get_traced_memory()[0] - base
        del obj
        return size
    finally:
        tracemalloc.stop()


@cache
def measure(data_root: str) -> Sizes:
    """Bytes per pair, line and filter sentence on NTREX-128, the largest language's mean (``Sizes``)."""
    from common.data.leakage import LeakageFilter

    root = Path(data_root) / "ntrex128"
    files = sorted(root.glob("*-eng.tsv.gz"))
    if not files:
        raise FileNotFoundError(f"{root}: no NTREX-128 files (*-eng.tsv.gz) to measure sentence sizes on")
    best: tuple[float, float, float, float, str] | None = None
    for path in files:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        rows = [line.split("\t") for line in text.splitlines() if line]
        # fresh str objects, as a reader makes them (the sampler holds its own copies), both sides in one list; then
        # one list slot a pair and the 2-tuple, whose allocation CPython's tuple free list can hide from tracemalloc
        sides = _held_bytes(lambda rows=rows: [s.encode().decode() for row in rows for s in row]) / len(rows)
        pairs = sides - 8 + sys.getsizeof(("", ""))
        if best is None or pairs > best[0]:
            lines = _held_bytes(lambda rows=rows: [f.encode().decode() for _, f in rows]) / len(rows)
            sents = [s for row in rows for s in row]
            filt = _held_bytes(lambda sents=sents: LeakageFilter(sents)) / len(sents)
            disk = sum(len(e.encode()) + len(f.encode()) + 2 for e, f in rows) / len(rows)
            best = (pairs, lines, filt, disk, path.name.split("-")[0])
    assert best is not None  # files is not empty
    return Sizes(*best, interpreter_mb=interpreter_peak_mb("common.data.corpus"))


def interpreter_peak_mb(module: str) -> float:
    """Peak RSS (MB) of a fresh interpreter that imported ``module``: VmHWM, the peak of the process's own address
    space. Not ``ru_maxrss``: Linux starts a forked child's at its parent's peak, so a census that had built a large
    model first measured 14 GB here instead of ~400 MB."""
    code = f"import {module}\nfrom common.rss import peak_rss_bytes\nprint(peak_rss_bytes() // 1024)\n"
    kib = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return int(kib) / 1024


def samples(kind: str, spec: dict[str, Any]) -> tuple[list[tuple[str, int, str]], bool]:
    """(name, items at most, ``pair`` or ``line``) per sample a corpus kind draws, and whether the job holds them
    all at once (MoCo-BERT's pooled en-zh corpora) rather than one at a time."""
    if kind == "paper":  # DAP
        return [(xx, int(spec["max_pairs_per_language"]), "pair") for xx in spec["opus_languages"]], False
    if kind == "paper_hictl":
        mono = spec["monolingual"]
        return ([(xx, int(e["pairs"]), "pair") for xx, e in spec["parallel"].items()]
                + [(f"{xx} (CC-100)", int(mono["sentences_per_language"]), "line") for xx in mono["languages"]]), False
    if kind == "paper_vmsst":  # English-Spanish is sampled once, as Spanish-English
        return [(xx, int(n), "pair") for xx, n in spec["languages"].items() if xx != "en"], False
    if kind == "paper_enzh":  # every corpus of the one language pooled for the de-duplication
        return [(name, int(n), "pair") for name, n in spec["sample_sizes"].items()], True
    raise KeyError(f"no corpus census for corpus kind {kind!r}")


def eval_sentences(kind: str, spec: dict[str, Any]) -> dict[str, int]:
    """The evaluation sentences a corpus kind's leakage filter reads, at most, by set (both sides of a pair)."""
    from common.data import download as dl

    sets, langs = evaluation.SETS, evaluation.LANGUAGES
    pins = evaluation.TATOEBA_PINS.get(kind)
    tatoeba = len(dl.tatoeba_pins(pins, spec.get("tatoeba_languages"))) if pins else 1  # MoCo-BERT: cmn only
    out = {"tatoeba": 2 * sets["tatoeba"].items * tatoeba,
           "bucc": 2 * 3 * sets["bucc"].items * len(spec["bucc_pairs"])}  # both sides of its three splits
    if kind in ("paper", "paper_hictl"):
        out["xnli"] = 2 * sets["xnli"].items * langs["xnli"]
    if kind == "paper_hictl":
        out["pawsx"] = 2 * sets["pawsx"].items * langs["pawsx"]
        out["qa"] = sum(2 * sets[t].items * langs[t] for t in ("xquad", "mlqa", "tydiqa"))  # question and context
        out["nmt tests"] = 2 * NMT_TEST_PAIRS * _nmt_test_sets(spec.get("translation"))
    if kind in ("paper_vmsst", "paper_enzh"):
        out["sts-en"] = 2 * sets["sts-en"].items
    if kind == "paper_vmsst":
        out["sts17"] = 2 * sets["sts17"].items * langs["sts17"]
        out["questions"] = sets["nq"].items + sets["mkqa"].items * len(spec["mkqa_languages"])
    return out


def _nmt_test_sets(spec: dict[str, Any] | None) -> int:
    from common.data.translation_paper import LANGUAGES

    if not spec:
        return 0
    return sum(len(tests) for xx in spec["languages"] for tests in LANGUAGES[xx].tests.values())


def job_row(paper: str, cfg: dict[str, Any], data_root: str) -> dict[str, Any]:
    """The census row of a paper's corpus job."""
    kind = cfg["corpus"]["kind"]
    spec = cfg["corpus"][kind]
    drawn, pooled = samples(kind, spec)
    sizes = measure(data_root)
    per_item = {"pair": sizes.held_pair, "line": sizes.held_line}
    held = [n * per_item[unit] for _, n, unit in drawn]
    largest = max(range(len(drawn)), key=held.__getitem__)
    sample_bytes = sum(held) if pooled else held[largest]
    # MoCo-BERT's multi-task NLI rows (MultiNLI and SNLI train; appendix B) are read whole: a row, two sentences
    nli_rows = evaluation.SETS["multinli"].items + SNLI_TRAIN if kind == "paper_enzh" else 0
    sample_bytes += nli_rows * 2 * sizes.held_line
    evals = eval_sentences(kind, spec)
    filter_bytes = sum(evals.values()) * sizes.filter_sentence
    disk = sum(n * (sizes.disk_pair if unit == "pair" else sizes.disk_pair / 2) for _, n, unit in drawn)
    mem_mb = math.ceil((sample_bytes + filter_bytes) * MARGIN / MIB + sizes.interpreter_mb)
    return {"paper": paper, "kind": "corpus", "job": "corpus", "seeds": 1, "gpus": 0, "nodes": 1,
            "corpus_kind": kind, "samples": len(drawn), "pooled": pooled,
            "items": {unit: sum(n for _, n, u in drawn if u == unit) for unit in ("pair", "line")},
            "largest_sample": {"name": drawn[largest][0], "items": drawn[largest][1], "unit": drawn[largest][2]},
            "eval_sentences": evals, "nli_rows": nli_rows, "held_sample_gib": sample_bytes / GIB,
            "filter_gib": filter_bytes / GIB, "text_disk_gib": disk / GIB, "mem_mb": mem_mb,
            "configured_mem_mb": int(cfg["resources"]["corpus"]["mem_mb"]),
            "sizes": asdict(sizes)}


def markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The corpus jobs' table (one row per paper) and how its bytes were measured."""
    if not rows:
        return []
    s = rows[0]["sizes"]
    lines = ["## Corpus jobs", "",
             "One `corpus` job per paper, on the host (`common/census/corpus.py`): it holds the leakage filter and one "
             "language's sample at a time (MoCo-BERT: its pooled corpora and its NLI rows). Bytes measured with "
             f"`tracemalloc` on NTREX-128's largest language ({s['language']}): {s['held_pair']:.0f} per pair held, "
             f"{s['held_line']:.0f} per line, {s['filter_sentence']:.0f} per filter sentence, {s['disk_pair']:.0f} per "
             f"pair of text on disk; the interpreter with the corpus code {s['interpreter_mb']:.0f} MB. `mem_mb` = "
             f"(filter + held sample) x {MARGIN} + the interpreter, which the rule asks Slurm for at paper scale. The "
             "downloads' sizes and the wall time are not counted (only online; the preflight checks the disk "
             "against each Content-Length).", "",
             "| paper | samples | pairs kept, at most (M) | CC-100 lines (M) | largest sample | evaluation sentences "
             "in the filter, at most (M) | held: sample + filter (GiB) | training text (GiB) | mem_mb (config had) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        big = r["largest_sample"]
        held = "all pooled" if r["pooled"] else f"{big['name']}: {big['items'] / 1e6:,.1f}M {big['unit']}s"
        lines.append(f"| {r['paper']} | {r['samples']} | {r['items']['pair'] / 1e6:,.1f} | "
                     f"{r['items']['line'] / 1e6:,.1f} | {held} | {sum(r['eval_sentences'].values()) / 1e6:,.2f} | "
                     f"{r['held_sample_gib']:.1f} + {r['filter_gib']:.1f} | {r['text_disk_gib']:.1f} | "
                     f"{r['mem_mb']:,} ({r['configured_mem_mb']:,}) |")
    return [*lines, "", "Evaluation sentences by set: " + "; ".join(
        f"{r['paper']}: " + ", ".join(f"{k}: {v}" for k, v in r["eval_sentences"].items())
        for r in rows) + ".", ""]
