"""What word overlap alone scores on English STS, beside saved models (VMSST's "Eng." column, sts-en@years-pearson).

Scores the STS12-16 years of a corpus manifest three ways under the same protocol (each year the mean Pearson of its
datasets, then the mean over the years: :func:`common.eval.sts_tasks.years_scores`):

* the SemEval token-cosine baseline (:mod:`common.eval.lexical`: binary white-space tokens, cosine);
* the same cosine over the pieces of the first model's tokenizer, cut where its encoder cuts them;
* each ``--model``: the cosine of its embeddings, as the task computes it.

For each model it also gives how far its cosines follow the first model's token cosine: the Pearson r x 100 between
the two over each dataset's pairs, averaged over the datasets. The first model must be a one-encoder folder (its
tokenizer gives the pieces). Writes ``<out>.md``, ``.csv``, ``.tex`` and prints the table::

    python scripts/lexical_sts.py --corpus results/mini/vmsst/corpus/manifest.json \\
        --model "2 layers, step 0, seed 1=results/mini/vmsst/models/l2/init/seed1/model" \\
        --precision bf16 --note "<the paper's Table 1, Eng.>" --out figures/vmsst/calibration/lexical_sts
"""
from __future__ import annotations

import argparse
import logging
import statistics
from pathlib import Path

import numpy as np
import torch
from scipy.stats import pearsonr

from common.data.manifest import load_manifest
from common.data.sts_benchmark import english_sts
from common.eval import sts
from common.eval.lexical import piece_tokens, token_cosine, whitespace_tokens
from common.eval.sts_tasks import years_of, years_scores
from common.models.embedder import SentenceEncoderEmbedder, load_embedder
from common.report.tables import Table, to_markdown, write_table

log = logging.getLogger("lexical_sts")


def labelled(spec: str) -> tuple[str, Path]:
    """``LABEL=PATH`` or a bare path (labelled by itself)."""
    label, _, path = spec.rpartition("=")
    return (label or path), Path(path)


def cached(score):
    """A pair scorer that scores each dataset once (keyed by the object: years share dataset names, e.g. headlines
    in STS13-16), so a scorer serves both its own Pearson and the agreement column."""
    memo = {}

    def once(s):
        if id(s) not in memo:
            memo[id(s)] = np.asarray(score(s))
        return memo[id(s)]
    return once


def agreement(datasets: dict, a, b) -> float:
    """Mean over the datasets of the Pearson r x 100 between two pair scorers."""
    return 100 * statistics.fmean(float(pearsonr(a(s), b(s)).statistic)
                                  for subsets in years_of(datasets).values() for s in subsets)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", required=True, help="corpus manifest.json (its English STS sets)")
    p.add_argument("--model", action="append", required=True, help="LABEL=MODEL_DIR, a saved model (repeatable)")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32", help="the models' encoding precision")
    p.add_argument("--note", action="append", default=[], help="a note under the table: the paper's number")
    p.add_argument("--out", required=True, help="output path without suffix")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    torch.set_num_threads(1)
    datasets, _ = english_sts(load_manifest(a.corpus))
    models = [labelled(m) for m in a.model]
    if len({label for label, _ in models}) < len(models):
        p.error("two --model share a label")
    embedders = {label: load_embedder(path, batch_size=256, precision=a.precision) for label, path in models}
    first = embedders[models[0][0]]
    if not isinstance(first, SentenceEncoderEmbedder):
        p.error(f"the first --model must be a one-encoder folder (its tokenizer gives the pieces): {models[0][1]} is "
                f"a '{first.kind}'")
    pieces_of = piece_tokens(first.tokenizer, first.max_length)

    def overlap(tokens):
        return lambda s: token_cosine(s.sent1, s.sent2, tokens)

    def cosine(label):
        return lambda s: sts.cosine_scores(s, lambda x: embedders[label].encode(x, "en"))

    pieces = cached(overlap(pieces_of))
    scorers = {"token cosine, white-space tokens (SemEval baseline)": (cached(overlap(whitespace_tokens)), False),
               f"token cosine, the pieces of the first model's tokenizer ({models[0][0]})": (pieces, False),
               **{label: (cached(cosine(label)), True) for label, _ in models}}
    years = list(years_of(datasets))
    rows = []
    for name, (score, is_model) in scorers.items():
        out = years_scores(datasets, score)
        follows = f"{agreement(datasets, score, pieces):.1f}" if is_model else "–"
        rows.append([name, *(f"{out['years'][y]['mean_pearson']:.1f}" for y in years),
                     f"{out['average']['mean_pearson']:.1f}", follows])
        log.info("%s: %.2f", name, out["average"]["mean_pearson"])
    caption = "English STS (STS12-16, each year's mean Pearson x 100): word overlap beside models"
    table = Table(Path(a.out).name, caption,
                  ["scorer", *years, "mean of the years", "Pearson with the first model's token cosine"],
                  rows, notes=[f"Corpus: {a.corpus}; models encoded in {a.precision}, at most {first.max_length} "
                               "tokens a sentence, special tokens included (the pieces' token cosine reads the same "
                               "pieces). The last column: Pearson r x 100 between a model's cosines and the token "
                               "cosine over the first model's pieces, the mean over the datasets. Token cosine: "
                               "common/eval/lexical.py. Written by scripts/lexical_sts.py.", *a.note])
    write_table(table, Path(a.out).parent)
    print(to_markdown(table))


if __name__ == "__main__":
    main()
