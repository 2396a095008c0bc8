"""What several corpus builders share (``common/data/corpus*.py``): the training files' layout, BUCC 2018 and
XNLI downloads, STS17's scorable sets, the leakage rule's BUCC sentences and a one-pass reservoir sample."""
from __future__ import annotations

import random
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from common.data import loaders
from common.io import write_lines

if TYPE_CHECKING:
    from common.data.download import Downloader

T = TypeVar("T")

BUCC_SPLITS = ("sample", "training", "test")


def bucc_sentences(root: Path, pairs: list[str], splits: Iterable[str]) -> list[str]:
    """Every sentence of the given BUCC splits (for the leakage rule)."""
    out: list[str] = []
    for pair in pairs:
        for split in splits:
            b = loaders.read_bucc(root, pair, split)
            out += list(b.src.values()) + list(b.trg.values())
    return out


def write_language(out: Path, lang: str, pairs: list[tuple[str, str]]) -> str:
    """One language's training pairs as ``train/<xx>-en.tsv`` (``train/<xx>-<pivot>.tsv`` for a ``<xx>-<pivot>``
    key); the path."""
    path = out / "train" / (f"{lang}.tsv" if "-" in lang else f"{lang}-en.tsv")
    # collapse internal white space: a few real sentences contain tabs (multi30k de)
    write_lines(path, (f"{' '.join(a.split())}\t{' '.join(b.split())}" for a, b in pairs))
    return str(path)


def write_train(out: Path, pairs_by_lang: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    return {lang: write_language(out, lang, pairs) for lang, pairs in sorted(pairs_by_lang.items())}


STS17_TRACKS = {"ar-ar": "track1.ar-ar", "ar-en": "track2.ar-en", "es-es": "track3.es-es", "es-en": "track4a.es-en"}
STS17_EXCLUDED = {
    "tr-en": "track6's input has 500 lines for 250 gold scores and nothing documents which 250 are scored",
    "es-en (track4b)": "the WMT news track; VMSST's es-en is the SNLI track 4a, as in Reimers & Gurevych (2020)",
}


def sts17_sets(data_root: Path) -> list[dict[str, Any]]:
    """SemEval-2017 STS sets of VMSST's Table 10 that can be scored (see ``STS17_EXCLUDED``)."""
    root = Path(data_root) / "sts" / "sts17"
    return [{"name": name, "langs": name.split("-"), "input": str(root / "STS2017.eval.v1.1" / f"STS.input.{t}.txt"),
             "gold": str(root / "STS2017.gs" / f"STS.gs.{t}.txt")} for name, t in STS17_TRACKS.items()]


PUBLIC_BUCC_SPLITS = {"tune": "sample", "test": "training"}  # XTREME: the 2018 test gold is not public
TEST_GOLD_BUCC_SPLITS = {"tune": "training", "test": "test"}  # LASER / DAP appendix B, with the test gold


def bucc2018(d: Downloader, out: Path, langs: list[str], test_gold_dir: str | None) -> tuple[list[str], dict[str, str]]:
    """Download BUCC 2018 (sample, training, test) for ``{xx}-en`` into ``out/bucc``; return the pairs and the
    (tune, report) splits. Without the test gold, the public protocol: threshold on ``sample``, report on
    ``training`` (XTREME). With ``test_gold_dir`` holding ``{xx}-en.test.gold`` (obtained from the organisers),
    DAP's appendix B protocol: threshold on ``training``, report on ``test``."""
    from common.data import download as dl

    for xx in langs:
        for split in ("sample-gold", "training-gold", "test"):
            dl.bucc_layout(dl.extract(d.fetch(dl.bucc2018(f"{xx}-en", split)), out / "tmp_bucc"), out / "bucc")
    pairs = [f"{xx}-en" for xx in langs]
    if not test_gold_dir:
        return pairs, dict(PUBLIC_BUCC_SPLITS)
    for pair in pairs:
        gold = Path(test_gold_dir) / f"{pair}.test.gold"
        if not gold.exists():
            raise FileNotFoundError(f"bucc_test_gold_dir: {gold} is missing (one '{pair}.test.gold' per language pair)")
        shutil.copyfile(gold, out / "bucc" / gold.name)
    return pairs, dict(TEST_GOLD_BUCC_SPLITS)


def reservoir_sample(items: Iterable[T], cap: int, rng: random.Random) -> list[T]:
    """A uniform random sample of at most ``cap`` items of a stream, in one pass (Algorithm R)."""
    out: list[T] = []
    for seen, item in enumerate(items, start=1):
        if len(out) < cap:
            out.append(item)
        elif (j := rng.randrange(seen)) < cap:
            out[j] = item
    return out


def xnli_paper(d: Downloader, out: Path) -> list[str]:
    """XNLI 1.0 test (``xnli/test-{lang}.tsv``) and English MultiNLI train (``xnli/train-en.tsv``); the languages."""
    from common.data import download as dl

    xnli_dir = dl.extract(d.fetch(dl.xnli()), out / "tmp_xnli")
    nli_langs = dl.split_xnli_test(xnli_dir / "XNLI-1.0" / "xnli.test.tsv", out / "xnli")
    mnli_dir = dl.extract(d.fetch(dl.multinli()), out / "tmp_mnli")
    dl.multinli_train_to_tsv(mnli_dir / "multinli_1.0" / "multinli_1.0_train.txt", out / "xnli" / "train-en.tsv")
    return nli_langs
